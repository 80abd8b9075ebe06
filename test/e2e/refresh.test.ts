import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bookbagSchema } from '../../src/bookbag/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { deliveryFor } from '../../src/delivery/setup.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { readFeedback } from '../../src/feedback/log.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';
import { githubSource } from '../../src/github/issues-source.js';
import { octokitPulls } from '../../src/github/pulls-port.js';
import { createGitHubClient } from '../../src/github/client.js';
import { octokitPort } from '../../src/github/issues-port.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { memoryLogger } from '../../src/log.js';
import { runLoop } from '../../src/loop/loop.js';
import { StateLayout } from '../../src/state/layout.js';
import { EventLog } from '../../src/state/event-log.js';
import type { SpendEvent } from '../../src/dispatch/gates/spend.js';
import { launcher } from '../crew/helpers.js';
import { GitHubFake } from '../support/github-fake.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { gitOut } from '../delivery/helpers.js';

/**
 * Refresh on base drift (docs/delivery.md, "Refresh") end to end, the way `school loop --repo` wires
 * it: real git with a bare repository as origin, the GitHub API in msw (the GitHub fake, which
 * answers `mergeable` and `compare` from that origin), crews as real processes in the default
 * sandbox running a deterministic command student. A crew delivers a pull request; someone pushes to
 * the base so that the pull request conflicts: a refresh crew of the same agent starts from the school's merge with the conflict
 * marked, resolves it, is judged again and delivered as a merge commit containing the new base; the
 * same base move plans nothing again.
 */
const tmp = tempDir('school-refresh-');
afterAll(() => tmp.cleanup());

/**
 * First brief: writes helper.txt and a test for it. A refresh: resolves each conflict in helper.txt
 * by keeping both sides' lines, or, merged cleanly, adds the base's value to the helper.
 */
const STUDENT = `
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [briefPath] = process.argv.slice(2);
const brief = readFileSync(briefPath, 'utf8');
const wt = process.env.SCHOOL_WORKTREE;
const file = join(wt, 'helper.txt');
if (brief.includes('This round is a refresh')) {
  const text = readFileSync(file, 'utf8');
  if (text.includes('<<<<<<<')) {
    writeFileSync(file, text.replace(/^<<<<<<< .*\\n([\\s\\S]*?)^=======\\n([\\s\\S]*?)^>>>>>>> .*\\n/gm, '$1$2'));
  } else {
    writeFileSync(file, text + 'export const withBase = true;\\n');
  }
} else {
  writeFileSync(file, 'export const helper31 = 31;\\n');
  writeFileSync(
    join(wt, 'helper.test.mjs'),
    "import { test } from 'node:test';\\nimport assert from 'node:assert';\\nimport { readFileSync } from 'node:fs';\\n" +
      "test('the helper is there, without conflict markers', () => assert.ok(!readFileSync(new URL('./helper.txt', import.meta.url), 'utf8').includes('<<<<<<<')));\\n",
  );
}
writeFileSync(process.env.SCHOOL_USAGE_FILE, JSON.stringify({ inputTokens: 10, outputTokens: 5, costUsd: 0.01 }));
`;

/** The spend ledger's rows of one crew. */
function spentBy(layout: StateLayout, crewId: string) {
  return new EventLog<SpendEvent>(layout.file('spend'))
    .read()
    .events.filter((e) => e.type === 'spend.recorded' && e.data.crewId === crewId);
}

async function school(name: string, delivery: Record<string, unknown> = {}) {
  const root = join(tmp.path, name);
  const { bare } = initBareRemote(root, { 'README.md': '# project\n' });
  const work = join(root, 'work');
  git(root, 'clone', '-q', bare, work);
  const student = join(root, 'student.mjs');
  writeFileSync(student, STUDENT);
  const config = configSchema.parse({
    repository: 'octo/school',
    repoPath: work,
    stateDir: join(root, 'state'),
    fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
    agents: [{ id: 'student', command: [process.execPath, student, '{brief}'] }],
    dispatch: { verify: [process.execPath, '--test'], crewTimeoutSeconds: 60 },
    delivery: { author: { name: 'School Bot', email: 'bot@school.test' }, ...delivery },
  });
  const layout = new StateLayout(config.stateDir);
  const base = gitOut(bare, 'symbolic-ref', '--short', 'HEAD').out;
  const fake = new GitHubFake({
    now: () => new Date(),
    branchHead: (b) => gitOut(bare, 'rev-parse', '-q', '--verify', `refs/heads/${b}`).out || undefined,
  });
  fake.origin = bare;
  const issue = fake.addIssue({ title: 'Add helper31' });
  const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
  const logger = memoryLogger();
  const cycle = async () =>
    runLoop({
      config,
      layout,
      logger,
      source: githubSource(client, { owner: 'octo', repo: 'school' }),
      launcher: await launcher(),
      ports: {
        github: octokitPort(client, 'octo/school', { retries: 0 }),
        feedback: octokitFeedback(client, 'octo/school'),
        delivery: deliveryFor({
          config,
          layout,
          logger,
          actions: true,
          pulls: (r) => octokitPulls(client, r),
          token: 'test-token',
        })!,
      },
    });
  const branch = `refs/heads/school/issue-${issue.number}`;
  const head = () => gitOut(bare, 'rev-parse', branch).out;
  const crews = () => Object.values(readRegistry(layout).crews);
  // The repository's CI passes on the head (a fresh commit without any check run is asked about
  // again for a while), and GitHub has computed the pull request's mergeability.
  const ciGreen = () =>
    fake.addCheckRun({ name: 'ci', head_sha: head(), status: 'completed', conclusion: 'success' });
  // GitHub answers `mergeable: null` at the first read after a change while it computes: whichever
  // read comes first this cycle (the scan's, the drift check's), the drift is measured in at most two.
  const measuredAt = async (baseSha: string) => {
    let last = await cycle();
    const pr = fake.pulls[0]!.number;
    if (readFeedback(layout).drift?.[pr]?.baseSha !== baseSha) last = await cycle();
    expect(readFeedback(layout).drift?.[pr]?.baseSha).toBe(baseSha);
    return last;
  };
  return { bare, base, config, layout, fake, issue, logger, cycle, measuredAt, branch, head, crews, ciGreen };
}

describe('refresh on base drift (docs/delivery.md, "Refresh")', () => {
  it(
    'a conflicting base move: one refresh crew of the same agent, judged again, delivered as a merge containing the new base, not planned twice',
    { timeout: 300_000 },
    async () => {
      const s = await school('conflict');
      await s.cycle();
      expect(s.crews()).toHaveLength(1);
      expect(s.fake.pulls).toHaveLength(1);
      const pr = s.fake.pulls[0]!;
      const delivered = s.head();
      s.ciGreen();
      const first = s.crews()[0]!;

      // Someone adds helper.txt on the base too: the pull request conflicts with it.
      const moved = s.fake.moveBranch(s.base, { 'helper.txt': 'export const fromBase = 1;\n' });
      expect(gitOut(s.bare, 'merge-tree', '--write-tree', moved, delivered).ok).toBe(false);

      // The next cycle measures it (GitHub's `mergeable: null` while it computes: the one after, and
      // test/feedback/drift.test.ts): it conflicts. The drift is recorded against the base commit,
      // and a refresh crew of the same agent is planned, runs, is judged and delivered in this cycle.
      const refreshing = await s.measuredAt(moved);
      const drift = readFeedback(s.layout).drift?.[pr.number];
      expect(drift).toMatchObject({ baseSha: moved, headSha: delivered, mergeable: false, drifted: true });
      const planned = refreshing.plan.assignments.find((a) => a.revision);
      expect(planned).toBeDefined();
      expect(planned!.agent).toBe(first.agent);
      const plan = planned!.revision!;
      expect(plan).toMatchObject({
        round: 1,
        pr: pr.number,
        refresh: { base: s.base, baseSha: moved, head: delivered, conflicts: ['helper.txt'] },
      });
      // It starts from the school's merge: parents [head, new base], the conflict marked.
      const start = plan.headSha;
      expect(gitOut(s.config.repoPath, 'rev-parse', `${start}^1`, `${start}^2`).out.split('\n')).toEqual([
        delivered,
        moved,
      ]);
      expect(gitOut(s.config.repoPath, 'show', `${start}:helper.txt`).out).toContain('<<<<<<<');
      const bag = s.layout.bookbag(planned!.crewId);
      const brief = readFileSync(join(bag, 'brief.md'), 'utf8');
      expect(brief).toContain('This round is a refresh');
      expect(brief).toContain(`The base branch ${s.base} moved to ${moved}`);
      const record = bookbagSchema.parse(JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8')));
      expect(record.baseSha).toBe(start);
      expect(record.revision).toMatchObject({ round: 1, pr: pr.number });

      // Judged again like any revision: accepted, with verification run on its own checkout.
      const job = Object.values(new GradingQueue(s.layout).state().jobs).find(
        (j) => j.job.crewId === planned!.crewId,
      );
      expect(job?.verdict?.accepted).toBe(true);
      // A conflict is a student's to resolve: the crew ran its turn (and spent), and it is scored.
      expect(spentBy(s.layout, planned!.crewId).length).toBeGreaterThan(0);
      expect(readFileSync(s.layout.file('scores'), 'utf8')).toContain(planned!.crewId);
      expect(s.crews().find((c) => c.crewId === planned!.crewId)?.noTurn).toBeUndefined();

      // Delivered on the same branch and pull request as a merge of [old head, new base].
      const refreshed = s.head();
      expect(refreshed).not.toBe(delivered);
      expect(gitOut(s.bare, 'rev-parse', `${refreshed}^1`, `${refreshed}^2`).out.split('\n')).toEqual([
        delivered,
        moved,
      ]);
      expect(gitOut(s.bare, 'merge-base', '--is-ancestor', moved, refreshed).ok).toBe(true);
      expect(gitOut(s.bare, 'show', `${s.branch}:helper.txt`).out).toBe(
        'export const helper31 = 31;\nexport const fromBase = 1;',
      );
      expect(s.fake.pulls).toHaveLength(1);
      expect(s.fake.compareJson(s.base, refreshed)).toMatchObject({ behind_by: 0 });
      s.ciGreen();

      // The same base move plans nothing again; the refreshed head contains the base, so no
      // request asks GitHub about it.
      const compares = s.fake.requestsTo('/compare/').length;
      const idle = await s.cycle();
      expect(idle.plan.assignments).toEqual([]);
      expect(s.crews()).toHaveLength(2);
      expect(s.fake.requestsTo('/compare/').length).toBe(compares);
    },
  );

  it(
    'behind the base by more than delivery.refreshBehindBy plans a refresh; within it nothing; a clean merge needs no student turn',
    { timeout: 300_000 },
    async () => {
      const s = await school('behind', { refreshBehindBy: 1 });
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const delivered = s.head();
      s.ciGreen();

      // One commit behind, no conflict: within the limit.
      const one = s.fake.moveBranch(s.base, { 'docs/a.md': 'a\n' });
      await s.measuredAt(one);
      expect(readFeedback(s.layout).drift?.[pr.number]).toMatchObject({
        baseSha: one,
        mergeable: true,
        behindBy: 1,
        drifted: false,
      });
      expect(s.crews()).toHaveLength(1);

      // Two behind: over the limit.
      const two = s.fake.moveBranch(s.base, { 'docs/b.md': 'b\n' });
      const refreshing = await s.measuredAt(two);
      expect(readFeedback(s.layout).drift?.[pr.number]).toMatchObject({
        baseSha: two,
        behindBy: 2,
        drifted: true,
      });
      const planned = refreshing.plan.assignments.find((a) => a.revision);
      expect(planned?.revision?.refresh).toMatchObject({ baseSha: two, head: delivered, conflicts: [] });
      const start = planned!.revision!.headSha;

      // The merge is clean and the round answers nothing else: the crew verified the school's merge
      // before any turn, it passed, and no student ran — nothing spent, an empty change on the merge.
      const bag = s.layout.bookbag(planned!.crewId);
      const record = bookbagSchema.parse(JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8')));
      expect(record).toMatchObject({ baseSha: start, outcome: 'succeeded', correctionTurns: 0 });
      expect(record.usage).toBeUndefined();
      expect(record.verification).toMatchObject({ passed: true, baseSha: start });
      expect(readFileSync(join(bag, 'diff.patch'), 'utf8')).toBe('');
      expect(spentBy(s.layout, planned!.crewId)).toEqual([]);
      const crew = s.crews().find((c) => c.crewId === planned!.crewId)!;
      expect(crew).toMatchObject({ outcome: 'succeeded', agent: s.crews()[0]!.agent });
      expect(crew.reason).toContain("no turn: the school's merge of the base passed verification");
      // None of the agent's work: recorded so, it moves neither its score nor its cost or time records.
      expect(crew.noTurn).toBe(true);
      expect(readFileSync(s.layout.file('scores'), 'utf8')).not.toContain(planned!.crewId);
      // A refresh round like any: counted in delivery.revisions.
      expect(crew.revision).toMatchObject({ round: 1, of: 3, feedback: [expect.stringMatching(/^drift:/)] });

      // Judged again like any revision, not `empty_diff`: the merge is what was judged.
      const job = Object.values(new GradingQueue(s.layout).state().jobs).find(
        (j) => j.job.crewId === planned!.crewId,
      );
      expect(job?.verdict?.accepted).toBe(true);
      expect(job?.verdict?.findings.map((f) => f.code)).toContain('refresh_merged');
      expect(job?.verdict?.findings.map((f) => f.code)).not.toContain('empty_diff');

      // Delivered as the merge [old head, new base], with the merge's tree: the pull request is no
      // longer behind, and its body and the issue's status comment name the newly judged commit.
      const refreshed = s.head();
      expect(gitOut(s.bare, 'rev-parse', `${refreshed}^1`, `${refreshed}^2`).out.split('\n')).toEqual([
        delivered,
        two,
      ]);
      expect(gitOut(s.config.repoPath, 'rev-parse', `${refreshed}^{tree}`).out).toBe(
        gitOut(s.config.repoPath, 'rev-parse', `${start}^{tree}`).out,
      );
      expect(gitOut(s.bare, 'show', `${s.branch}:docs/b.md`).out).toBe('b');
      expect(gitOut(s.bare, 'show', `${s.branch}:helper.txt`).out).toBe('export const helper31 = 31;');
      expect(s.fake.compareJson(s.base, refreshed)).toMatchObject({ behind_by: 0 });
      expect(s.fake.pulls).toHaveLength(1);
      expect(s.fake.pulls[0]!.body).toContain(refreshed.slice(0, 12));
      const status = s.issue.comments.find((c) => c.body.includes('school-core:status'));
      expect(status?.body).toContain(`judged at \`${refreshed.slice(0, 12)}\``);
      expect(status?.body).toContain('revision 1 of 3');

      // At most one refresh per base move: the same move plans nothing again.
      s.ciGreen();
      const idle = await s.cycle();
      expect(idle.plan.assignments).toEqual([]);
      expect(s.crews()).toHaveLength(2);
    },
  );

  it(
    'a clean merge that fails verification: the student gets its turn, told what failed',
    { timeout: 300_000 },
    async () => {
      const s = await school('clean-red', { refreshBehindBy: 0 });
      await s.cycle();
      const delivered = s.head();
      s.ciGreen();

      // The base gains a test the delivered helper does not meet: green on the base alone, red on
      // the merge — which git merges without a conflict.
      const moved = s.fake.moveBranch(s.base, {
        'base.test.mjs':
          "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { existsSync, readFileSync } from 'node:fs';\n" +
          "const helper = new URL('./helper.txt', import.meta.url);\n" +
          "test('a helper knows the base', () => assert.ok(!existsSync(helper) || readFileSync(helper, 'utf8').includes('withBase')));\n",
      });
      const refreshing = await s.measuredAt(moved);
      const planned = refreshing.plan.assignments.find((a) => a.revision);
      expect(planned?.revision?.refresh).toMatchObject({ baseSha: moved, head: delivered, conflicts: [] });
      const bag = s.layout.bookbag(planned!.crewId);
      const record = bookbagSchema.parse(JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8')));
      // The student ran (it spent), on a prompt that says the merge fails verification.
      expect(spentBy(s.layout, planned!.crewId).length).toBeGreaterThan(0);
      expect(record).toMatchObject({ outcome: 'succeeded' });
      expect(readFileSync(join(bag, 'diff.patch'), 'utf8')).toContain('withBase');
      const job = Object.values(new GradingQueue(s.layout).state().jobs).find(
        (j) => j.job.crewId === planned!.crewId,
      );
      expect(job?.verdict?.accepted).toBe(true);
      expect(job?.verdict?.findings.map((f) => f.code)).not.toContain('refresh_merged');
      const refreshed = s.head();
      expect(gitOut(s.bare, 'rev-parse', `${refreshed}^1`, `${refreshed}^2`).out.split('\n')).toEqual([
        delivered,
        moved,
      ]);
      expect(gitOut(s.bare, 'show', `${s.branch}:helper.txt`).out).toContain('withBase');
    },
  );
});
