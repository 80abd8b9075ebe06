import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import { ensureRefreshBase, refreshParents } from '../../src/delivery/refresh-base.js';
import type { CrewRegistry } from '../../src/dispatch/logs/registry.js';
import { decideRevision } from '../../src/dispatch/revision.js';
import { checkDrift, ensureRefreshBases } from '../../src/feedback/drift.js';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { event } from '../../src/state/event-log.js';
import { readFeedback } from '../../src/feedback/log.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';
import { createGitHubClient } from '../../src/github/client.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { GitHubFake } from '../support/github-fake.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { gitOut } from '../delivery/helpers.js';

/**
 * Base drift measured (src/feedback/drift.ts) against the GitHub fake over a real bare origin: no
 * request while the base is in the head; after a base move, `mergeable: null` (GitHub computing)
 * measures nothing and is asked again; a conflict is recorded against the base commit and becomes
 * one refresh, whose start is the school's merge of the base into the head, made again identically
 * in another checkout; planning turns it into a refresh round once.
 */
const tmp = tempDir('school-drift-');
afterAll(() => tmp.cleanup());

function setup(name: string, delivery: Record<string, unknown> = {}) {
  const root = join(tmp.path, name);
  const { bare } = initBareRemote(root, { 'README.md': '# project\n' });
  const work = join(root, 'work');
  git(root, 'clone', '-q', bare, work);
  const base = gitOut(bare, 'symbolic-ref', '--short', 'HEAD').out;
  // The delivered change: a commit on school/issue-1, pushed.
  git(work, 'checkout', '-q', '-b', 'school/issue-1');
  writeFileSync(join(work, 'helper.txt'), 'export const helper31 = 31;\n');
  git(work, 'add', 'helper.txt');
  git(work, 'commit', '-q', '-m', 'Add helper31');
  git(work, 'push', '-q', 'origin', 'school/issue-1');
  git(work, 'checkout', '-q', base);
  const head = gitOut(work, 'rev-parse', 'school/issue-1').out;
  const fake = new GitHubFake({
    now: () => new Date(),
    branchHead: (b) => gitOut(bare, 'rev-parse', '-q', '--verify', `refs/heads/${b}`).out || undefined,
  });
  fake.origin = bare;
  const issue = fake.addIssue({ title: 'Add helper31' });
  const pr = fake.openPull({ head: 'school/issue-1', base });
  const config = configSchema.parse({
    repository: 'octo/school',
    repoPath: work,
    stateDir: join(root, 'state'),
    fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
    agents: [{ id: 'student', command: ['true'] }],
    delivery: { author: { name: 'School Bot', email: 'bot@school.test' }, ...delivery },
  });
  const layout = new StateLayout(config.stateDir);
  const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
  const logger = memoryLogger();
  const delivered = [{ issue: issue.number, pr, crewId: 'c1-delivered', sha: head }];
  const check = () =>
    checkDrift({ config, layout, logger, port: octokitFeedback(client, 'octo/school'), delivered });
  return { root, bare, work, base, head, fake, pr, issue, config, layout, logger, check };
}

describe('base drift (docs/delivery.md, "Refresh")', () => {
  it('asks nothing while the base is in the head; waits while GitHub computes; records a conflict once', async () => {
    const s = setup('conflict');
    // The base has not moved past the delivered change: no request at all.
    expect(await s.check()).toEqual({ measured: [], refreshes: [], computing: [] });
    expect(s.fake.requests).toEqual([]);

    const moved = s.fake.moveBranch(s.base, { 'helper.txt': 'export const fromBase = 1;\n' });
    // GitHub is computing mergeability (`mergeable: null`): nothing recorded, asked again.
    const computing = await s.check();
    expect(computing).toEqual({ measured: [], refreshes: [], computing: [s.pr] });
    expect(readFeedback(s.layout).drift).toBeUndefined();
    expect(s.fake.requestsTo('/compare/')).toEqual([]);

    const r = await s.check();
    expect(r.computing).toEqual([]);
    expect(r.measured).toEqual([
      {
        pr: s.pr,
        issue: s.issue.number,
        base: s.base,
        baseSha: moved,
        headSha: s.head,
        mergeable: false,
        behindBy: 1,
        drifted: true,
      },
    ]);
    expect(r.refreshes).toHaveLength(1);
    const f = r.refreshes[0]!;
    expect(f).toMatchObject({
      kind: 'drift',
      id: `drift:${s.pr}:${moved}:${s.head}`,
      refresh: { base: s.base, baseSha: moved, head: s.head, conflicts: ['helper.txt'] },
    });
    expect(f.text).toContain(`it conflicts with ${s.base}`);
    // The refresh starts from the school's merge: [head, base], the conflict marked in the file.
    expect(await refreshParents(s.work, f.headSha)).toEqual([s.head, moved]);
    expect(await refreshParents(s.work, s.head)).toBeUndefined();
    const marked = gitOut(s.work, 'show', `${f.headSha}:helper.txt`).out;
    expect(marked).toContain('<<<<<<<');
    expect(marked).toContain('export const fromBase = 1;');
    expect(marked).toContain('export const helper31 = 31;');
    const state = readFeedback(s.layout);
    expect(state.drift?.[s.pr]).toMatchObject({ baseSha: moved, drifted: true });
    expect(state.received[f.id]).toMatchObject({ kind: 'drift', headSha: f.headSha });

    // Measured at this base and head: the next cycles ask nothing.
    s.fake.resetLog();
    expect(await s.check()).toEqual({ measured: [], refreshes: [], computing: [] });
    expect(s.fake.requests).toEqual([]);

    // A checkout without the merge (the crew job's, say) makes the same commit again.
    const other = join(s.root, 'other');
    git(s.root, 'clone', '-q', s.bare, other);
    expect(gitOut(other, 'cat-file', '-e', f.headSha).ok).toBe(false);
    expect(await ensureRefreshBase(other, f.headSha, f.refresh!, s.config.delivery.author)).toBeUndefined();
    expect(gitOut(other, 'rev-parse', `${f.headSha}^2`).out).toBe(moved);
    // With another author the merge is another commit: said, not used.
    expect(
      await ensureRefreshBase(join(s.root, 'other'), 'f'.repeat(40), f.refresh!, { name: 'x', email: 'x@x' }),
    ).toContain('merging them here made');

    // Planning: one refresh round from the merge, for the delivered crew's agent; answered, none.
    const registry = {
      crews: {
        'c1-delivered': { crewId: 'c1-delivered', agent: 'student', finishedAt: '2000-01-01T00:00:00Z' },
      },
    } as unknown as CrewRegistry;
    const req = {
      issue: s.issue.number,
      pr: s.pr,
      branch: 'school/issue-1',
      revises: 'c1-delivered',
      deliveredSha: s.head,
      feedback: [{ id: f.id, at: state.received[f.id]!.at, headSha: f.headSha, refresh: f.refresh! }],
    };
    const d = decideRevision(registry, req, 3);
    expect(d).toMatchObject({
      kind: 'plan',
      agent: 'student',
      revision: { round: 1, headSha: f.headSha, feedback: [f.id], refresh: f.refresh },
    });
    (registry.crews as Record<string, unknown>)['c2-refresh'] = {
      crewId: 'c2-refresh',
      status: 'running',
      revision: d.kind === 'plan' ? d.revision : undefined,
    };
    expect(decideRevision(registry, req, 3)).toEqual({ kind: 'none' });
    // Drift measured before the delivered crew finished speaks of an older head: not planned.
    const stale = { crews: { 'c1-delivered': { agent: 'student', finishedAt: '2999-01-01T00:00:00Z' } } };
    expect(decideRevision(stale as unknown as CrewRegistry, req, 3)).toEqual({ kind: 'none' });
  });

  it('behind within delivery.refreshBehindBy is recorded, not refreshed; with revisions off nothing is asked', async () => {
    const s = setup('behind', { refreshBehindBy: 1 });
    const one = s.fake.moveBranch(s.base, { 'docs/a.md': 'a\n' });
    await s.check(); // GitHub computing
    const r = await s.check();
    expect(r.measured).toMatchObject([{ baseSha: one, mergeable: true, behindBy: 1, drifted: false }]);
    expect(r.refreshes).toEqual([]);
    expect(s.logger.lines.map((l) => l.message).join('\n')).toContain('1 commit(s) behind');

    const off = setup('off', { revisions: 0 });
    off.fake.moveBranch(off.base, { 'helper.txt': 'conflict\n' });
    expect(await off.check()).toEqual({ measured: [], refreshes: [], computing: [] });
    expect(off.fake.requests).toEqual([]);
  });

  it('a job that judges or delivers a refresh crew in another checkout makes its starting merge again', async () => {
    const s = setup('judge-job');
    s.fake.moveBranch(s.base, { 'helper.txt': 'export const fromBase = 1;\n' });
    await s.check();
    const f = (await s.check()).refreshes[0]!;
    // The judge job: another checkout, the same state (imported from the crew job).
    const other = join(s.root, 'judge');
    git(s.root, 'clone', '-q', s.bare, other);
    const config = { ...s.config, repoPath: other };
    const revision = {
      round: 1,
      of: 3,
      pr: s.pr,
      branch: 'school/issue-1',
      headSha: f.headSha,
      revises: 'c1-delivered',
      feedback: [f.id],
      refresh: f.refresh!,
    };
    await crewLog(s.layout).append([
      event(
        'crew.planned',
        'planned:c2-refresh',
        {
          crewId: 'c2-refresh',
          issueNumber: s.issue.number,
          daemon: 'd1',
          agent: 'student',
          weight: 'standard',
          fences: [],
          repair: false,
          attempt: 1,
          revision,
        },
        new Date(),
      ),
    ]);
    // Not yet to be graded: nothing made.
    expect(await ensureRefreshBases({ config, layout: s.layout, logger: s.logger })).toBe(0);
    expect(gitOut(other, 'cat-file', '-e', f.headSha).ok).toBe(false);
    await enqueueGradingJob(s.layout, {
      issueNumber: s.issue.number,
      crewId: 'c2-refresh',
      agent: 'student',
      domain: 'general',
      difficulty: 1,
      fences: [],
      bookbag: 'bookbags/c2-refresh',
    });
    expect(await ensureRefreshBases({ config, layout: s.layout, logger: s.logger })).toBe(1);
    expect(gitOut(other, 'rev-parse', `${f.headSha}^1`, `${f.headSha}^2`).out.split('\n')).toEqual([
      s.head,
      f.refresh!.baseSha,
    ]);
  });
});
