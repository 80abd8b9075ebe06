import { describe, expect, it } from 'vitest';
import { createGitHubClient } from '../../src/github/client.js';
import { parseConfig } from '../../src/config/load.js';
import { feedbackFold, type FeedbackState } from '../../src/feedback/log.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';
import { scanFeedback, schoolCommand, type Delivered, type ScanOptions } from '../../src/feedback/scan.js';
import { deliveredPullRequests } from '../../src/feedback/watch.js';
import { StateLayout } from '../../src/state/layout.js';
import { recordDelivered } from '../support/deliveries.js';
import { feedbackScanner } from '../support/feedback-scan.js';
import { GitHubFake } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';

/** A repository with `n` delivered pull requests, and a scan that folds its own events. */
function world(n = 3, over: Partial<ScanOptions> = {}) {
  const fake = new GitHubFake({ owner: 'o', repo: 'r' });
  const delivered: Delivered[] = [];
  for (let i = 0; i < n; i++) {
    const issue = fake.addIssue({ title: `issue ${i}` });
    const sha = String(i + 1)
      .repeat(40)
      .slice(0, 40);
    const pr = fake.openPull({ head: `school/issue-${issue.number}`, headSha: sha });
    delivered.push({ issue: issue.number, pr, crewId: `crew-${issue.number}`, sha });
  }
  const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
  let state: FeedbackState = feedbackFold.empty();
  const scan = async (collect: 'all' | 'settlement' = 'all') => {
    // Scans are a cycle apart (minutes): GitHub's clock moves between them. A change in the same
    // second as a read is read again by the next scan (whole-second times), one that came before
    // is not.
    fake.advance(60_000);
    const port = octokitFeedback(client, 'o/r');
    const r = await scanFeedback({
      port,
      state,
      delivered,
      collect,
      trust: parseConfig({}).curriculum.trust,
      bots: [],
      firstSince: '2025-12-31T00:00:00Z',
      now: new Date(),
      ...over,
    });
    for (const e of r.events) state = feedbackFold.apply(state, e);
    return { ...r, requests: port.requests };
  };
  return { fake, delivered, scan };
}

describe('finding feedback within the API budget (item 7)', () => {
  it('an idle cycle is one conditional request answered 304, whatever the number of pull requests', async () => {
    const { fake, scan } = world(5);
    const first = await scan();
    expect(first.changed.length).toBeGreaterThan(0);
    await scan(); // the cursor moves to GitHub's clock once
    fake.resetLog();
    const idle = await scan();
    expect(idle.notModified).toBe(true);
    expect(idle.requests).toBe(1);
    expect(fake.requests.map((q) => [q.path, q.status])).toEqual([['/repos/o/r/issues', 304]]);
    expect(fake.requests[0]!.query.state).toBe('all');
  });

  it('a trusted review requesting changes is read with its line comments; only that pull request is asked about', async () => {
    const { fake, delivered, scan } = world(3);
    await scan();
    await scan();
    const target = delivered[1]!;
    fake.addReview(target.pr, {
      user: 'maintainer',
      association: 'MEMBER',
      state: 'CHANGES_REQUESTED',
      body: 'Please rename it.',
      comments: [{ path: 'src/h.ts', line: 31, body: 'rename helper31 to helperThirtyOne' }],
    });
    fake.addReview(target.pr, { user: 'maintainer', association: 'MEMBER', state: 'APPROVED', body: 'ok' });
    fake.resetLog();
    const r = await scan();
    expect(r.changed).toEqual([target.pr]);
    expect(r.feedback).toEqual([
      {
        issue: target.issue,
        pr: target.pr,
        kind: 'review',
        id: expect.stringMatching(/^review:\d+$/),
        author: 'maintainer',
        text: 'Please rename it.',
        // The pull request's head when the review was read: a revision starts there.
        headSha: target.sha,
        lines: [{ path: 'src/h.ts', line: 31, body: 'rename helper31 to helperThirtyOne' }],
      },
    ]);
    const asked = new Set(fake.requests.map((q) => q.path).filter((p) => p.includes('/pulls/')));
    expect([...asked].every((p) => p.includes(`/pulls/${target.pr}`))).toBe(true);
    // Read once: the next cycles find nothing new.
    await scan();
    const again = await scan();
    expect(again.feedback).toEqual([]);
  });

  it('/school from a trusted author is an instruction; an outsider or an unlisted bot is ignored with the reason', async () => {
    const { fake, delivered, scan } = world(1, { bots: ['helper-bot[bot]'] });
    await scan();
    await scan();
    const d = delivered[0]!;
    fake.addCommentAs(d.pr, '/school also update the docs', 'owner1', 'OWNER');
    fake.addCommentAs(d.pr, '/school delete everything', 'stranger', 'NONE');
    fake.addCommentAs(d.issue, '/school add a test', 'random-bot[bot]', 'NONE', 'Bot');
    fake.addCommentAs(d.issue, '/school fix the typo', 'helper-bot[bot]', 'NONE', 'Bot');
    fake.addCommentAs(d.pr, 'looks good, no command', 'owner1', 'OWNER');
    const r = await scan();
    expect(r.feedback.map((f) => [f.kind, f.author, f.text])).toEqual([
      ['command', 'owner1', 'also update the docs'],
      ['command', 'helper-bot[bot]', 'fix the typo'],
    ]);
    expect(r.ignored.map((i) => [i.author, i.reason])).toEqual([
      ['stranger', 'stranger is NONE, not OWNER/MEMBER/COLLABORATOR'],
      ['random-bot[bot]', 'random-bot[bot] is a bot not listed as trusted'],
    ]);
    // `since`: the comments of a changed number are asked from where the last read stopped.
    expect(fake.requestsTo(`/issues/${d.pr}/comments`).at(-1)!.query.since).toBeTruthy();
  });

  it('failed CI on the delivered commit is feedback with the failing job log tail, read once', async () => {
    const { fake, delivered, scan } = world(1);
    const d = delivered[0]!;
    fake.addCheckRun({ name: 'lint', head_sha: d.sha, status: 'completed', conclusion: 'success' });
    const run = fake.addCheckRun({
      name: 'test',
      head_sha: d.sha,
      status: 'in_progress',
      conclusion: null,
      log: 'setup\n'.repeat(2000) + 'FAIL test/h.test.ts: expected helperThirtyOne',
    });
    const pending = await scan();
    expect(pending.feedback).toEqual([]); // not all complete yet: asked again next cycle
    run.status = 'completed';
    run.conclusion = 'failure';
    // Its jobs are rerun once first; the rerun fails too (test/feedback/ci-checks.test.ts).
    expect((await scan()).feedback).toEqual([]);
    const r = await scan();
    expect(r.feedback).toHaveLength(1);
    expect(r.feedback[0]!.kind).toBe('ci');
    expect(r.feedback[0]!.text).toContain('test: failure');
    expect(r.feedback[0]!.text).toContain('expected helperThirtyOne');
    expect(r.feedback[0]!.text.length).toBeLessThan(5_000);
    fake.resetLog();
    await scan();
    expect(fake.requestsTo('/check-runs')).toHaveLength(0);
  });

  it('failed CI reported as a commit status (CI outside Actions) is feedback with its description and link', async () => {
    const { fake, delivered, scan } = world(1);
    const d = delivered[0]!;
    fake.setStatus({ sha: d.sha, context: 'ci/jenkins', state: 'pending', description: 'running' });
    expect((await scan()).feedback).toEqual([]); // pending: asked again next cycle
    fake.setStatus({
      sha: d.sha,
      context: 'ci/jenkins',
      state: 'failure',
      description: '3 tests failed',
      target_url: 'https://ci.example.com/job/42',
    });
    fake.setStatus({ sha: d.sha, context: 'license/cla', state: 'success' });
    const r = await scan();
    expect(r.feedback.map((f) => [f.kind, f.id])).toEqual([['ci', `ci:${d.sha}`]]);
    expect(r.feedback[0]!.text).toContain(
      'ci/jenkins: failure — 3 tests failed (https://ci.example.com/job/42)',
    );
    expect(r.feedback[0]!.text).not.toContain('license/cla');
    fake.resetLog();
    await scan();
    expect(fake.requestsTo('/status')).toHaveLength(0); // read once per delivered commit
  });

  it('a /school comment older than the pull request (the one that started the first cycle) is not feedback on it', async () => {
    const { fake, delivered, scan } = world(1);
    const d = delivered[0]!;
    const asked = fake.addCommentAs(d.issue, '/school please take this one', 'owner1', 'OWNER');
    // Delivered ten minutes after the comment: the comment asked for the work, not for a change.
    fake.advance(600_000);
    d.firstDeliveredAt = new Date(Date.parse(asked.created_at) + 600_000).toISOString();
    expect((await scan()).feedback).toEqual([]);
    // A comment after the delivery is feedback.
    fake.addCommentAs(d.issue, '/school also update the docs', 'owner1', 'OWNER');
    const r = await scan();
    expect(r.feedback.map((f) => f.text)).toEqual(['also update the docs']);
  });

  it('a delivered pull request carries when it was first delivered and when its head was pushed', async () => {
    const tmp = tempDir('school-delivered-at-');
    try {
      const layout = new StateLayout(tmp.path);
      await recordDelivered(layout, { issue: 4, crewId: 'c4-00000001', pr: 9, sha: 'a'.repeat(40) });
      await new Promise((r) => setTimeout(r, 20));
      await recordDelivered(layout, { issue: 4, crewId: 'c4-00000002', pr: 9, sha: 'b'.repeat(40) }); // a revision
      const [d, ...rest] = deliveredPullRequests(layout).delivered;
      expect(rest).toEqual([]);
      expect(d).toMatchObject({ issue: 4, pr: 9, crewId: 'c4-00000002', sha: 'b'.repeat(40) });
      expect(d!.deliveredAt).toBeDefined();
      expect(d!.firstDeliveredAt).toBeDefined();
      expect(d!.firstDeliveredAt! < d!.deliveredAt!).toBe(true);
    } finally {
      tmp.cleanup();
    }
  });

  it('a freshly delivered commit without check runs is asked again until CI had time to start', async () => {
    const { fake, delivered, scan } = world(1);
    const d = delivered[0]!;
    d.deliveredAt = new Date().toISOString();
    await scan(); // no check runs yet: CI has not started on the new commit
    const run = fake.addCheckRun({
      name: 'test',
      head_sha: d.sha,
      status: 'completed',
      conclusion: 'failure',
    });
    run.log = 'FAIL expected helperThirtyOne';
    await scan(); // its jobs are rerun once first; the rerun fails too
    const r = await scan();
    expect(r.feedback.map((f) => [f.kind, f.id])).toEqual([['ci', `ci:${d.sha}`]]);
  });

  it('merged and closed-unmerged pull requests are settled once; then no longer watched', async () => {
    const { fake, delivered, scan } = world(3);
    await scan('settlement');
    await scan('settlement');
    fake.settlePull(delivered[0]!.pr, 'merged');
    fake.settlePull(delivered[2]!.pr, 'closed');
    const r = await scan('settlement');
    expect(r.settled).toEqual([
      { pr: delivered[2]!.pr, issue: delivered[2]!.issue, crewId: delivered[2]!.crewId, merged: false },
      { pr: delivered[0]!.pr, issue: delivered[0]!.issue, crewId: delivered[0]!.crewId, merged: true },
    ]);
    // Settlement mode reads the pull requests' state only.
    expect(fake.requestsTo('/reviews')).toHaveLength(0);
    fake.settlePull(delivered[1]!.pr, 'merged');
    const next = await scan('settlement');
    expect(next.settled.map((s) => s.pr)).toEqual([delivered[1]!.pr]);
  });

  it('reads a /school command only at the start of a comment', () => {
    expect(schoolCommand('/school rename it')).toBe('rename it');
    expect(schoolCommand('  /school\nmulti\nline')).toBe('multi\nline');
    expect(schoolCommand('/school')).toBe('');
    expect(schoolCommand('please /school rename')).toBeUndefined();
    expect(schoolCommand('/schooling')).toBeUndefined();
  });

  it('a command written in the same second as the last read is read by the next scan, once', async () => {
    // GitHub's times have whole seconds: every change and every answer here falls in one second.
    const fake = new GitHubFake({ owner: 'o', repo: 'r', now: () => new Date('2026-03-01T10:00:00.400Z') });
    const issue = fake.addIssue({ title: 'issue' });
    const sha = 'a'.repeat(40);
    const pr = fake.openPull({ head: `school/issue-${issue.number}`, headSha: sha });
    const delivered: Delivered[] = [{ issue: issue.number, pr, crewId: 'crew-a', sha }];
    const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
    const { scan } = feedbackScanner(client, delivered, () => ({ firstSince: '2026-02-01T00:00:00Z' }), {
      received: true,
    });
    expect((await scan()).feedback).toEqual([]);
    fake.addCommentAs(pr, '/school rename the helper', 'owner1', 'OWNER');
    const second = await scan();
    expect(second.feedback.map((f) => [f.kind, f.text])).toEqual([['command', 'rename the helper']]);
    // Read again (still the same second), it is known by its id: not feedback twice.
    expect((await scan()).feedback).toEqual([]);
  });
});
