import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildView } from '../../src/board/view.js';
import { bookbagSchema } from '../../src/bookbag/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { readFeedback } from '../../src/feedback/log.js';
import { mergeDelivered } from '../../src/feedback/merge-gate.js';
import { createGitHubClient } from '../../src/github/client.js';
import { octokitMerge } from '../../src/github/pulls-port.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { GitHubFake } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';
import { mergeSchool } from '../support/merge-school.js';
import { gitOut } from './helpers.js';

/**
 * The guarded merge and verdicts bound to the judged commit (docs/delivery.md, "Merging"), the way
 * `school loop --repo` wires them: real git with a bare repository as origin, the GitHub API in
 * msw (the GitHub fake, whose merge endpoint answers as GitHub's: `mergeable: null` while it
 * computes, 409 for a stale `sha`, 405 not mergeable, 422 a required check), crews as real
 * processes in the sandbox running a deterministic command student.
 */
const tmp = tempDir('school-merge-');
afterAll(() => tmp.cleanup());

/** The school of support/merge-school.ts in its own directory `name`. */
const school = (name: string, delivery: Record<string, unknown> = {}) =>
  mergeSchool(join(tmp.path, name), delivery);

const said = (s: { logger: ReturnType<typeof memoryLogger> }) =>
  s.logger.lines.map((l) => l.message).join('\n');

/** GitHub's times have whole seconds: a change in the same second as the last read looks unchanged. */
const nextSecond = () => new Promise((r) => setTimeout(r, 1100));

describe('the guarded merge (docs/delivery.md, "Merging")', () => {
  it(
    'waits while GitHub computes mergeable and the checks run, then merges with the judged commit as sha',
    { timeout: 300_000 },
    async () => {
      const s = school('green');
      await s.cycle();
      expect(s.fake.pulls).toHaveLength(1);
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      // The verdict names its commit: the body and the status comment.
      expect(pr.body).toContain(`| Judged at | \`${judged.slice(0, 12)}\``);
      expect(s.status()).toContain(`judged at \`${judged.slice(0, 12)}\``);
      // The first read after the pull request opened: GitHub still computing, no check yet. No merge.
      expect(s.merges()).toEqual([]);
      expect(said(s)).toContain('GitHub is still computing whether it can be merged');

      // Next cycle: mergeable computed, but the check has not finished: still no merge.
      s.fake.addCheckRun({ name: 'ci', head_sha: judged, status: 'in_progress', conclusion: null });
      await s.cycle();
      expect(s.merges()).toEqual([]);
      expect(said(s)).toContain('checks still running: ci');

      // The check completes green: merged, with the judged commit as `sha`, squash by default.
      s.green(judged);
      await s.cycle();
      expect(s.merges()).toHaveLength(1);
      expect(s.merges()[0]!.body).toMatchObject({ sha: judged, merge_method: 'squash' });
      expect(s.fake.merges).toEqual([{ pr: pr.number, sha: judged, method: 'squash' }]);
      expect(Object.values(readFeedback(s.layout).merges ?? {})).toMatchObject([
        { pr: pr.number, sha: judged, outcome: 'merged' },
      ]);
      // The next scan sees the merge as the last judge, and nothing is merged twice.
      await nextSecond();
      await s.cycle();
      expect(s.merges()).toHaveLength(1);
      expect(readFeedback(s.layout).settled[pr.number]).toMatchObject({ merged: true });
      expect(s.status()).toContain('merged');
    },
  );

  it(
    'reports 422 and 405 refusals, asks nothing again until something changes, then merges',
    { timeout: 300_000 },
    async () => {
      const s = school('refused', { mergeMethod: 'merge' });
      // A required check that never reports on the commit: GitHub answers 422.
      s.fake.protect({ checks: ['required-ci'] });
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      s.green(judged);
      await s.cycle();
      expect(s.merges().map((q) => q.status)).toEqual([422]);
      const view = buildView(s.layout, s.config, new Date());
      expect(JSON.stringify(view)).toContain('merge-refused');
      expect(s.status()).toContain('Merge refused by GitHub (422): Required status check');
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({ outcome: 'refused', status: 422 });

      // Nothing changed: the refusal holds, no merge request.
      await s.cycle();
      expect(s.merges()).toHaveLength(1);
      expect(said(s)).toContain('nothing changed since, so it is not asked again');

      // The required check reports green, but branch protection now asks for an approval: 405.
      s.fake.protect({ checks: ['required-ci'], approvals: 1 });
      s.green(judged, 'required-ci');
      await s.cycle();
      expect(s.merges().map((q) => q.status)).toEqual([422, 405]);
      expect(s.status()).toContain(
        'Merge refused by GitHub (405): At least 1 approving review is required by reviewers with write access.',
      );
      await s.cycle();
      expect(s.merges()).toHaveLength(2);

      // A maintainer approves (the pull request changed): asked again, merged with the judged commit.
      s.fake.addReview(pr.number, { user: 'maintainer', association: 'MEMBER', state: 'APPROVED' });
      await nextSecond();
      await s.cycle();
      expect(s.merges().map((q) => q.status)).toEqual([422, 405, 200]);
      expect(s.fake.merges).toEqual([{ pr: pr.number, sha: judged, method: 'merge' }]);
    },
  );

  it(
    'a push after grading voids the verdict: the merge is refused, the pushed head is judged again through a revision crew, and the new commit is merged',
    { timeout: 300_000 },
    async () => {
      const s = school('pushed');
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      s.green(judged);
      // Someone pushes after grading, before the school merged.
      await nextSecond();
      const pushed = s.pushAsSomeoneElse();
      s.green(pushed);

      // The scan sees the head move: recorded, and it plans a revision from the pushed head.
      const second = await s.cycle();
      expect(readFeedback(s.layout).heads?.[pr.number]).toMatchObject({ sha: pushed, judged });
      const revision = second.plan.assignments.find((a) => a.revision);
      expect(revision?.revision).toMatchObject({
        pr: pr.number,
        headSha: pushed,
        feedback: [`push:${pushed}`],
      });
      const bag = s.config.stateDir + `/bookbags/${revision!.crewId}`;
      expect(readFileSync(join(bag, 'brief.md'), 'utf8')).toContain('A push to the branch after the verdict');
      const record = bookbagSchema.parse(JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8')));
      expect(record.baseSha).toBe(pushed);
      // Its commit builds on the pushed one, judged and delivered like every revision.
      const rejudged = s.head();
      expect(rejudged).not.toBe(pushed);
      expect(gitOut(s.bare, 'rev-parse', `${rejudged}^`).out).toBe(pushed);
      // Neither the first verdict's commit nor the unjudged push was ever merged.
      expect(s.fake.merges).toEqual([]);
      expect(s.status()).toContain(`judged at \`${rejudged.slice(0, 12)}\``);

      // Its checks green: merged with the commit the judges accepted now.
      s.green(rejudged);
      await s.cycle();
      expect(s.fake.merges).toEqual([{ pr: pr.number, sha: rejudged, method: 'squash' }]);
    },
  );

  it(
    'without revisions a pushed head stays unjudged: the status says the work is not ready and nothing is merged; a merge asked with the stale judged commit is GitHub 409',
    { timeout: 300_000 },
    async () => {
      const s = school('unjudged', { revisions: 0 });
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      s.green(judged);
      await nextSecond();
      const pushed = s.pushAsSomeoneElse();
      s.green(pushed);
      await s.cycle();
      expect(s.fake.merges).toEqual([]);
      expect(s.merges()).toEqual([]);
      expect(s.status()).toContain(
        `its head \`${pushed.slice(0, 12)}\` has not been judged, so the work is not ready until it is judged again`,
      );
      expect(said(s)).toContain(`its head moved to ${pushed.slice(0, 12)}, which has not been judged`);

      // GitHub's own guard: a merge asked with a commit that is not the head is refused (409).
      const c = await octokitMerge(s.client, 'octo/school').merge(pr.number, {
        sha: judged,
        method: 'squash',
      });
      expect(c).toEqual({
        merged: false,
        status: 409,
        message: 'Head branch was modified. Review and try the merge again.',
      });
      expect(s.fake.merges).toEqual([]);
    },
  );

  it(
    'a push between the read and the merge is GitHub 409: reported with its words and recorded; the next scan records the pushed head',
    { timeout: 300_000 },
    async () => {
      const s = school('race', { revisions: 0 });
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      s.green(judged);
      const real = octokitMerge(s.client, 'octo/school');
      // The first cycle's read found GitHub computing; it has computed since.
      expect(said(s)).toContain('GitHub is still computing whether it can be merged');
      s.fake.resetLog();
      let pushed = '';
      const r = await mergeDelivered({
        config: s.config,
        layout: s.layout,
        logger: s.logger,
        port: {
          // The read sees the judged head; someone pushes before the merge call is made.
          pull: async (n) => {
            const p = await real.pull(n);
            if (!pushed) pushed = s.pushAsSomeoneElse();
            return p;
          },
          checks: (sha) => real.checks(sha),
          merge: (n, p) => real.merge(n, p),
        },
      });
      expect(r.steps).toMatchObject([
        {
          pr: pr.number,
          step: {
            kind: 'refused',
            status: 409,
            message: 'Head branch was modified. Review and try the merge again.',
          },
        },
      ]);
      expect(s.merges().map((q) => [q.status, (q.body as { sha?: string }).sha])).toEqual([[409, judged]]);
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({
        outcome: 'refused',
        status: 409,
        sha: judged,
      });
      expect(said(s)).toContain('GitHub refused to merge pull request #');
      // The next cycle's scan sees the pushed head: the verdict is void, nothing is merged.
      await nextSecond();
      await s.cycle();
      expect(readFeedback(s.layout).heads?.[pr.number]).toMatchObject({ sha: pushed, judged });
      expect(s.fake.merges).toEqual([]);
      expect(s.status()).toContain('Merge refused by GitHub (409)');
    },
  );
});

describe('the guarded merge in the gate alone', () => {
  it('is off by default and asks GitHub nothing', async () => {
    const root = join(tmp.path, 'off');
    const config = configSchema.parse({ stateDir: join(root, 'state'), repoPath: root });
    expect(config.delivery.merge).toBe('off');
    const fake = new GitHubFake();
    const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch });
    const r = await mergeDelivered({
      config,
      layout: new StateLayout(config.stateDir),
      logger: memoryLogger(),
      port: octokitMerge(client, 'octo/school'),
    });
    expect(r.steps).toEqual([]);
    expect(fake.requests).toEqual([]);
  });

  it('refuses a merge with draft pull requests as a config error naming both fields', () => {
    const r = configSchema.safeParse({ delivery: { merge: 'when-green' } });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]).toMatchObject({ path: ['delivery', 'merge'] });
    expect(r.error!.issues[0]!.message).toContain('delivery.draft is true');
    // `queue` (GitHub's auto-merge or merge queue) likewise needs pull requests ready for review.
    expect(configSchema.safeParse({ delivery: { merge: 'queue' } }).success).toBe(false);
    expect(configSchema.safeParse({ delivery: { merge: 'queue', draft: false } }).success).toBe(true);
    expect(
      configSchema.safeParse({ delivery: { merge: 'soon', draft: false } }).error!.issues[0]!.message,
    ).toBe('delivery.merge: expected one of off, when-green, queue');
  });
});
