import { describe, expect, it } from 'vitest';
import { type Delivered } from '../../src/feedback/scan.js';
import { GitHubFake } from '../support/github-fake.js';
import { feedbackScanner } from '../support/feedback-scan.js';
import { fakeClient } from '../support/loop-on-github.js';

/**
 * Failed CI that is not the crew's (docs/delivery.md, "Failed CI"): the scan reruns the failed jobs
 * of the repository's own workflows once, waits for the rerun's attempt, and compares what stays red
 * with the same check on the pull request's base. GitHub is the fake, answering the rerun endpoints
 * with a new check run attempt of the same name on the same commit.
 */
const HEAD = 'a'.repeat(40);
/** The base branch's head now; OPENED its head when the pull request was opened (`base.sha`). */
const BASE = 'b'.repeat(40);
const OPENED = 'c'.repeat(40);

function world(o: { now?: () => Date } = {}) {
  const fake = new GitHubFake({ owner: 'o', repo: 'r' });
  const issue = fake.addIssue({ title: 'Add helper31' });
  const pr = fake.openPull({ head: `school/issue-${issue.number}`, headSha: HEAD, baseSha: OPENED });
  fake.refs.set('heads/main', BASE); // the base moved since: GitHub leaves `base.sha` where it was
  const d: Delivered = { issue: issue.number, pr, crewId: `c${issue.number}-00000001`, sha: HEAD };
  const { scan, state } = feedbackScanner(fakeClient(fake), [d], () => (o.now ? { now: o.now() } : {}));
  return { fake, d, scan, state };
}

const failing = (fake: GitHubFake, sha: string, name = 'test', log = 'FAIL test/h.test.ts: timeout') =>
  fake.addCheckRun({ name, head_sha: sha, status: 'completed', conclusion: 'failure', log });

describe('failed CI that is not the crew’s (item 4)', () => {
  it('a check green on its rerun is flaky: rerun once, waited for, recorded, no feedback', async () => {
    const { fake, d, scan, state } = world();
    fake.addCheckRun({ name: 'lint', head_sha: HEAD, status: 'completed', conclusion: 'success' });
    const failed = failing(fake, HEAD);
    fake.rerunResult = () => 'pending';

    const asked = await scan();
    expect(asked.feedback).toEqual([]);
    // One call reruns the workflow run's failed jobs (its id from the check run's details_url).
    expect(fake.requestsTo('/rerun-failed-jobs', 'POST').map((q) => [q.path, q.status])).toEqual([
      ['/repos/o/r/actions/runs/1/rerun-failed-jobs', 201],
    ]);
    expect(asked.reruns).toMatchObject([{ pr: d.pr, sha: HEAD, check: 'test', jobId: failed.id }]);
    expect(state().watched[d.pr]?.ciSha).toBeUndefined(); // not read to the end: asked again

    // The rerun's attempt is in progress: wait, and do not rerun again.
    expect((await scan()).feedback).toEqual([]);
    const attempt = fake.latestCheckRuns(HEAD).find((c) => c.name === 'test')!;
    expect(attempt.id).not.toBe(failed.id);
    expect(attempt.status).toBe('in_progress');

    attempt.status = 'completed';
    attempt.conclusion = 'success';
    const r = await scan();
    expect(r.feedback).toEqual([]);
    expect(r.excused).toEqual([
      { pr: d.pr, issue: d.issue, crewId: d.crewId, sha: HEAD, check: 'test', outcome: 'flaky' },
    ]);
    expect(Object.values(state().excused ?? {}).map((x) => x.outcome)).toEqual(['flaky']);
    expect(fake.reruns).toEqual([{ runId: 1 }]);

    // Read to the end: the commit's checks are never asked about again.
    fake.resetLog();
    await scan();
    expect(fake.requestsTo('/check-runs')).toHaveLength(0);
  });

  it('a check red on the base too is base-broken: no feedback; a status red on the base is not rerun', async () => {
    const { fake, d, scan } = world();
    failing(fake, HEAD);
    failing(fake, BASE);
    // Green where the pull request was opened: the base broke since, and that is what counts.
    fake.addCheckRun({ name: 'test', head_sha: OPENED, status: 'completed', conclusion: 'success' });
    fake.setStatus({ sha: HEAD, context: 'ci/jenkins', state: 'failure', description: '3 failed' });
    fake.setStatus({ sha: BASE, context: 'ci/jenkins', state: 'error', description: 'broken' });

    expect((await scan()).feedback).toEqual([]); // the rerun is asked; its attempt fails again
    expect(fake.latestCheckRuns(HEAD).find((c) => c.name === 'test')!.conclusion).toBe('failure');
    const r = await scan();
    expect(r.feedback).toEqual([]);
    expect(r.excused?.map((x) => [x.check, x.outcome, x.baseSha])).toEqual([
      ['test', 'base-broken', BASE],
      ['ci/jenkins', 'base-broken', BASE],
    ]);
    // The base is the branch the pull request targets as it is now, asked by its name.
    expect(fake.requestsTo('/commits/main/check-runs')).toHaveLength(1);
    expect(fake.requestsTo('/commits/main/status')).toHaveLength(1);
    expect(fake.requestsTo(`/commits/${OPENED}`)).toHaveLength(0);
    expect(fake.reruns).toHaveLength(1);
    expect(d.sha).toBe(HEAD);
  });

  it('a check red on its rerun and green on the base is the crew’s: ci feedback quoting the rerun’s log', async () => {
    const { fake, d, scan } = world();
    failing(fake, HEAD, 'test', 'FAIL first attempt');
    fake.addCheckRun({ name: 'test', head_sha: BASE, status: 'completed', conclusion: 'success' });
    // Another app's check cannot be rerun: it is compared with the base only.
    fake.addCheckRun({
      name: 'third-party',
      head_sha: HEAD,
      status: 'completed',
      conclusion: 'failure',
      app: 'some-app',
    });
    fake.rerunResult = (run) => {
      run.log = undefined;
      return 'failure';
    };
    const first = await scan();
    expect(first.feedback).toEqual([]);
    const attempt = fake.latestCheckRuns(HEAD).find((c) => c.name === 'test')!;
    attempt.log = 'FAIL second attempt: expected helperThirtyOne';

    const r = await scan();
    expect(r.excused ?? []).toEqual([]);
    expect(r.feedback.map((f) => [f.kind, f.id, f.headSha])).toEqual([['ci', `ci:${HEAD}`, HEAD]]);
    expect(r.feedback[0]!.text).toContain('test: failure (red again on its rerun)');
    expect(r.feedback[0]!.text).toContain('FAIL second attempt: expected helperThirtyOne');
    expect(r.feedback[0]!.text).not.toContain('FAIL first attempt');
    expect(r.feedback[0]!.text).toContain('third-party: failure (a check of some-app');
    expect(fake.reruns).toEqual([{ runId: 1 }]);
    expect(d.pr).toBeGreaterThan(0);
  });

  it('a rerun GitHub refuses (no actions: write) is recorded once; the check is compared with the base only', async () => {
    const { fake, d, scan, state } = world();
    fake.actionsPermission.set('test-token', 'read');
    failing(fake, HEAD);
    const r = await scan();
    expect(fake.requestsTo('/rerun-failed-jobs', 'POST').map((q) => q.status)).toEqual([403]);
    expect(r.reruns).toMatchObject([
      { pr: d.pr, check: 'test', refused: expect.stringMatching(/403 .*actions: write/) },
    ]);
    expect(r.feedback.map((f) => f.id)).toEqual([`ci:${HEAD}`]); // as before: the crew's
    expect(state().reruns?.[`${HEAD}:test`]?.refused).toBeDefined();
    expect(fake.reruns).toEqual([]);
  });

  it('a rerun whose attempt never shows lets the failure stand after a while', async () => {
    let now = Date.parse('2026-03-01T10:00:00Z');
    const { fake, scan } = world({ now: () => new Date(now) });
    failing(fake, HEAD);
    // GitHub accepted the rerun but lists no new attempt (the run was deleted, say).
    fake.rerunResult = () => 'pending';
    await scan();
    const attempt = fake.latestCheckRuns(HEAD).find((c) => c.name === 'test')!;
    fake.checkRuns.splice(fake.checkRuns.indexOf(attempt), 1);
    now += 60_000;
    expect((await scan()).feedback).toEqual([]); // not shown yet: waited for
    now += 15 * 60_000;
    const r = await scan();
    expect(r.feedback.map((f) => f.kind)).toEqual(['ci']);
    expect(fake.reruns).toHaveLength(1);
  });
});
