import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildView } from '../../src/board/view.js';
import { readFeedback } from '../../src/feedback/log.js';
import { octokitMerge } from '../../src/github/pulls-port.js';
import { mergeSchool, nextSecond } from '../support/merge-school.js';
import { tempDir } from '../support/tmp.js';

/**
 * `delivery.merge: queue` (docs/delivery.md, "Merging"): the judged commit handed to GitHub's own
 * machinery — auto-merge, or the base branch's merge queue — with `expectedHeadOid`, through
 * `school loop`'s real jobs, real git with a bare origin, crews in the sandbox, and the GitHub
 * fake's GraphQL endpoint (test/support/github-fake-graphql.ts), which merges on its own once
 * branch protection is met, as GitHub does.
 */
const tmp = tempDir('school-merge-queue-');
afterAll(() => tmp.cleanup());

const school = (name: string, delivery: Record<string, unknown> = {}) =>
  mergeSchool(join(tmp.path, name), { merge: 'queue', ...delivery });

type School = ReturnType<typeof school>;
/** The GraphQL mutations the school asked, with their variables (the reads left out). */
const mutations = (s: School) =>
  s.fake.machinery.operations
    .filter((o) => o.field !== 'node')
    .map((o) => ({ field: o.field, ...o.variables }));
/** The `merge-refused` alerts written to the audit log. */
const refusedAlerts = (s: School) => {
  const path = s.layout.file('audit');
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"crew.alert"') && l.includes('"merge-refused"'))
    : [];
};

describe('the guarded merge through GitHub: delivery.merge queue', () => {
  it(
    'enables auto-merge with the judged commit as expectedHeadOid; GitHub merges it once the required check is green',
    { timeout: 300_000 },
    async () => {
      const s = school('auto-merge');
      s.fake.machinery.autoMergeAllowed = true;
      // A required check: GitHub enables auto-merge only while something is still to wait for.
      s.fake.protect({ checks: ['ci'] });
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      // GitHub still computing whether it can be merged: nothing asked yet.
      expect(mutations(s)).toEqual([]);

      // The check runs: the commit is handed over at once (GitHub waits for the check itself).
      s.fake.addCheckRun({ name: 'ci', head_sha: judged, status: 'in_progress', conclusion: null });
      await s.cycle();
      expect(mutations(s)).toEqual([
        { field: 'enablePullRequestAutoMerge', id: `PR_${pr.number}`, oid: judged, mergeMethod: 'SQUASH' },
      ]);
      expect(s.fake.machinery.autoMerge.has(pr.number)).toBe(true);
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({
        outcome: 'handed-over',
        via: 'auto-merge',
        sha: judged,
        nodeId: `PR_${pr.number}`,
      });
      expect(s.said()).toContain(`handed to GitHub's auto-merge at the judged commit ${judged.slice(0, 12)}`);
      expect(s.merges()).toEqual([]);

      // Handed over, it is not asked again while it waits.
      await s.cycle();
      expect(mutations(s)).toHaveLength(1);
      expect(s.said()).toContain('auto-merge is enabled at the judged commit');
      expect(s.fake.machinery.merged).toEqual([]);

      // The check goes green: GitHub merges the judged commit on its own; the school merged nothing.
      s.green(judged);
      await nextSecond();
      await s.cycle();
      expect(s.fake.machinery.merged).toEqual([
        { pr: pr.number, sha: judged, method: 'squash', via: 'auto-merge' },
      ]);
      expect(s.merges()).toEqual([]);
      await nextSecond();
      await s.cycle();
      expect(readFeedback(s.layout).settled[pr.number]).toMatchObject({ merged: true });
      expect(mutations(s)).toHaveLength(1);
    },
  );

  it(
    'GitHub enables no auto-merge on a pull request it could merge now ("clean status"): merged as when-green merges, with the judged commit as sha',
    { timeout: 300_000 },
    async () => {
      const s = school('clean');
      s.fake.machinery.autoMergeAllowed = true;
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      s.green(judged);
      await s.cycle();
      expect(mutations(s)).toEqual([
        { field: 'enablePullRequestAutoMerge', id: `PR_${pr.number}`, oid: judged, mergeMethod: 'SQUASH' },
      ]);
      expect(s.fake.machinery.operations.at(-1)).toMatchObject({ error: 'UNPROCESSABLE' });
      expect(s.merges().map((q) => q.body)).toEqual([{ sha: judged, merge_method: 'squash' }]);
      expect(s.fake.merges).toEqual([{ pr: pr.number, sha: judged, method: 'squash' }]);
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({ outcome: 'merged', sha: judged });
    },
  );

  it(
    "enqueues into the base branch's merge queue with the judged commit, which GitHub merges; a REST merge there is refused",
    { timeout: 300_000 },
    async () => {
      const s = school('merge-queue', { mergeMethod: 'merge' });
      s.fake.machinery.mergeQueues.add('main');
      s.fake.protect({ checks: ['ci'] });
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      // GitHub's own guard on a branch with a merge queue: no merge but through the queue.
      const rest = await octokitMerge(s.client, 'octo/school').merge(pr.number, {
        sha: judged,
        method: 'merge',
      });
      expect(rest).toEqual({
        merged: false,
        status: 405,
        message: 'Changes must be made through the merge queue',
      });

      await s.cycle();
      // enqueuePullRequest takes no merge method: the queue's rules say how it merges.
      expect(mutations(s)).toEqual([{ field: 'enqueuePullRequest', id: `PR_${pr.number}`, oid: judged }]);
      expect(s.fake.machinery.queue).toEqual([{ pr: pr.number, sha: judged }]);
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({
        outcome: 'handed-over',
        via: 'merge-queue',
        sha: judged,
      });
      await s.cycle();
      expect(s.said()).toContain('it is in the merge queue at the judged commit');
      expect(mutations(s)).toHaveLength(1);

      s.green(judged);
      await nextSecond();
      await s.cycle();
      expect(s.fake.machinery.merged).toEqual([
        { pr: pr.number, sha: judged, method: 'merge', via: 'merge-queue' },
      ]);
      expect(s.fake.merges).toEqual([]);
    },
  );

  it(
    "auto-merge not allowed: the refusal is recorded with GitHub's words and alerted once, not asked again until something changes",
    { timeout: 300_000 },
    async () => {
      const s = school('not-allowed');
      s.fake.protect({ checks: ['ci'] });
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      s.fake.addCheckRun({ name: 'ci', head_sha: judged, status: 'in_progress', conclusion: null });
      await s.cycle();
      expect(mutations(s)).toEqual([
        { field: 'enablePullRequestAutoMerge', id: `PR_${pr.number}`, oid: judged, mergeMethod: 'SQUASH' },
      ]);
      expect(s.fake.machinery.operations.at(-1)).toMatchObject({ error: 'UNPROCESSABLE' });
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({
        outcome: 'refused',
        type: 'UNPROCESSABLE',
        message: 'Auto merge is not allowed for this repository',
        sha: judged,
      });
      expect(refusedAlerts(s)).toHaveLength(1);
      expect(JSON.stringify(buildView(s.layout, s.config, new Date()))).toContain('merge-refused');
      expect(s.status()).toContain('Merge refused by GitHub: Auto merge is not allowed for this repository');

      // Nothing changed: not asked again, no second alert.
      await s.cycle();
      await s.cycle();
      expect(mutations(s)).toHaveLength(1);
      expect(refusedAlerts(s)).toHaveLength(1);
      expect(s.said()).toContain('nothing changed since, so it is not asked again');

      // The repository allows auto-merge now, and the check moves on: asked again, and enabled.
      s.fake.machinery.autoMergeAllowed = true;
      s.fake.addCheckRun({ name: 'ci', head_sha: judged, status: 'in_progress', conclusion: null });
      await s.cycle();
      expect(mutations(s)).toHaveLength(2);
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({
        outcome: 'handed-over',
        sha: judged,
      });
      expect(refusedAlerts(s)).toHaveLength(1);
    },
  );

  it(
    'a push after auto-merge was enabled takes it back: GitHub does not merge the pushed head on the old verdict',
    { timeout: 300_000 },
    async () => {
      const s = school('pushed', { revisions: 0 });
      s.fake.machinery.autoMergeAllowed = true;
      s.fake.protect({ checks: ['ci'] });
      await s.cycle();
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      s.fake.addCheckRun({ name: 'ci', head_sha: judged, status: 'in_progress', conclusion: null });
      await s.cycle();
      expect(s.fake.machinery.autoMerge.has(pr.number)).toBe(true);

      // Someone with write access pushes: GitHub keeps auto-merge enabled on the new head.
      await nextSecond();
      const pushed = s.pushAsSomeoneElse();
      expect(s.fake.machinery.autoMerge.has(pr.number)).toBe(true);
      await s.cycle();
      // The scan saw the head move: the school disabled auto-merge.
      expect(readFeedback(s.layout).heads?.[pr.number]).toMatchObject({ sha: pushed, judged });
      expect(mutations(s).map((m) => m.field)).toEqual([
        'enablePullRequestAutoMerge',
        'disablePullRequestAutoMerge',
      ]);
      expect(mutations(s)[1]).toEqual({ field: 'disablePullRequestAutoMerge', id: `PR_${pr.number}` });
      expect(s.fake.machinery.autoMerge.has(pr.number)).toBe(false);
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({
        outcome: 'taken-back',
        via: 'auto-merge',
        sha: judged,
      });
      expect(s.said()).toContain("taken back from GitHub's auto-merge: its head moved to");

      // Every check green, on the judged commit and on the pushed one: nothing is merged.
      s.green(judged);
      s.green(pushed);
      await nextSecond();
      await s.cycle();
      await s.cycle();
      expect(s.fake.machinery.merged).toEqual([]);
      expect(s.fake.merges).toEqual([]);
      expect(pr.state).toBe('open');
      // Taken back once; nothing is handed over again for a head nobody judged.
      expect(mutations(s)).toHaveLength(2);
    },
  );
});
