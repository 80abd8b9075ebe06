import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { feedbackFold, type FeedbackState } from '../../src/feedback/log.js';
import { scanFeedback, type Delivered, type ScanOptions } from '../../src/feedback/scan.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';
import { createGitHubClient } from '../../src/github/client.js';
import { GitHubFake } from '../support/github-fake.js';

/**
 * `/school stop|steer` in the feedback scan (src/feedback/control-scan.ts), against the GitHub fake:
 * on a delivered pull request they are commands, not revision feedback (any other `/school` stays
 * feedback); on the issue of a running crew with nothing delivered they are read only when the
 * listing shows the issue changed, and only if newer than the crew's plan; a read-only user's are
 * refused with the reason.
 */
function world(over: Partial<ScanOptions> = {}) {
  const fake = new GitHubFake({ owner: 'o', repo: 'r' });
  const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
  let state: FeedbackState = feedbackFold.empty();
  const scan = async (delivered: Delivered[], running: ScanOptions['running'] = []) => {
    const port = octokitFeedback(client, 'o/r');
    const r = await scanFeedback({
      port,
      state,
      delivered,
      collect: 'all',
      trust: parseConfig({}).curriculum.trust,
      bots: [],
      firstSince: '2025-12-31T00:00:00Z',
      now: new Date(),
      running,
      ...over,
    });
    for (const e of r.events) state = feedbackFold.apply(state, e);
    return { ...r, requests: port.requests };
  };
  return { fake, scan };
}

describe('the feedback scan reads /school stop and /school steer', () => {
  it('on a delivered pull request: commands, not revision feedback; any other /school stays feedback', async () => {
    const { fake, scan } = world();
    const issue = fake.addIssue({ title: 'issue' });
    const sha = 'a'.repeat(40);
    const pr = fake.openPull({ head: `school/issue-${issue.number}`, headSha: sha });
    const delivered = [{ issue: issue.number, pr, crewId: 'c1-00000001', sha }];
    fake.setRole('maintainer', 'write');
    fake.setRole('reader', 'read');
    fake.addCommentAs(pr, '/school steer keep the old name as an alias', 'maintainer', 'MEMBER');
    fake.addCommentAs(pr, '/school rename helper31', 'maintainer', 'MEMBER');
    fake.addCommentAs(issue.number, '/school stop', 'reader', 'COLLABORATOR');
    const r = await scan(delivered);
    expect(r.feedback.map((f) => [f.kind, f.text])).toEqual([['command', 'rename helper31']]);
    expect(r.control?.control).toMatchObject([
      {
        issue: issue.number,
        on: pr,
        author: 'maintainer',
        command: { verb: 'steer', text: 'keep the old name as an alias' },
      },
    ]);
    expect(r.control?.refused).toMatchObject([
      { issue: issue.number, on: issue.number, author: 'reader', verb: 'stop' },
    ]);
    expect(r.control?.refused[0]!.reason).toContain('has read access to the repository, not write or higher');
  });

  it("on a running crew's issue: read when the listing shows it changed, only what came after the crew was planned", async () => {
    const { fake, scan } = world();
    const issue = fake.addIssue({ title: 'running' });
    const other = fake.addIssue({ title: 'running too, nobody comments' });
    fake.setRole('maintainer', 'write');
    // Before the crew was planned (more than the minute of slack): not for it.
    fake.addCommentAs(issue.number, '/school stop', 'maintainer', 'MEMBER');
    fake.advance(3_600_000);
    const since = fake.serverTime().toISOString();
    const running = [
      { issue: issue.number, since },
      { issue: other.number, since },
    ];
    fake.addCommentAs(issue.number, '/school steer the tests live in test/unit', 'maintainer', 'MEMBER');
    fake.addCommentAs(issue.number, '/school rename it', 'maintainer', 'MEMBER');
    const first = await scan([], running);
    // Nothing delivered: only the commands, and `/school rename it` is nobody's feedback.
    expect(first.feedback).toEqual([]);
    expect(first.control?.control.map((c) => c.command)).toEqual([
      { verb: 'steer', text: 'the tests live in test/unit' },
    ]);
    // Both issues changed since the first `since`; the next scans ask only about what changed.
    await scan([], running);
    fake.resetLog();
    const idle = await scan([], running);
    expect(idle.notModified).toBe(true);
    expect(idle.requests).toBe(1);
    fake.addCommentAs(issue.number, '/school stop going the wrong way', 'maintainer', 'MEMBER');
    fake.resetLog();
    const next = await scan([], running);
    expect(next.control?.control.map((c) => c.command)).toEqual([
      { verb: 'stop', reason: 'going the wrong way' },
    ]);
    // The listing, that issue's comments and its author's access (once per run): the quiet running
    // issue is not asked about.
    expect(fake.requests.map((q) => q.path)).toEqual([
      '/repos/o/r/issues',
      `/repos/o/r/issues/${issue.number}/comments`,
      '/repos/o/r/collaborators/maintainer/permission',
    ]);
  });
});
