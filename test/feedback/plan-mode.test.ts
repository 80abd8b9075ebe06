import { describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { memoryLogger } from '../../src/log.js';
import { dispatchJob, type DispatchJobInput } from '../../src/loop/dispatch-job.js';
import { GitHubFake } from '../support/github-fake.js';
import { initRepo, tempDir } from '../support/tmp.js';
import { deliveredIssue, schoolOnDisk } from '../support/planned-school.js';
import { serveForFile } from '../support/github-server.js';

/**
 * dispatch-crew `mode: plan` with a token reads the feedback on delivered pull requests before it
 * plans (the plan job: issues, pull-requests, checks and actions read), so a review requesting
 * changes plans its revision crew in the same cycle; an idle plan costs one conditional request.
 * GitHub is the fake behind a loopback server named by GITHUB_API_URL, as the action sees it.
 */
const tmp = tempDir('school-plan-mode-');
const fake = new GitHubFake({ now: () => new Date() });
const server = serveForFile(fake, { tmp, unstubEnv: true });

describe('dispatch-crew mode plan reads feedback first', () => {
  it('plans the revision a new review asks for in the same run; idle, it asks one conditional request', async () => {
    vi.stubEnv('GITHUB_API_URL', server.url);
    const { configPath, config, layout } = schoolOnDisk(tmp.path, [
      // A repository of the test's own (no origin): the plan's base-drift check asks its origin,
      // which must not be the checkout the tests run from.
      `repoPath: ${initRepo(join(tmp.path, 'repo'))}`,
      'fleet: { daemons: [{ id: d1, worktrees: 1 }] }',
      'agents: [{ id: alpha, command: [node, a.mjs] }, { id: beta, command: [node, b.mjs] }]',
    ]);
    const issue = fake.addIssue({ title: 'Add helper31' });
    const n = issue.number;
    const sha = 'd'.repeat(40);
    const pr = fake.openPull({ head: `school/issue-${n}`, headSha: sha });
    fake.addCheckRun({ name: 'ci', head_sha: sha, status: 'completed', conclusion: 'success' });
    const crewId = await deliveredIssue(
      { config, layout },
      { issue: n, pr, sha, planned: { agent: 'beta' } },
    );
    const plan = (token?: string) => {
      const input: DispatchJobInput = {
        mode: 'plan',
        config: configPath,
        dryRun: false,
        ...(token ? { token } : {}),
      };
      return dispatchJob(input, memoryLogger());
    };

    // Without a token nothing is asked and nothing is planned (the issue is done).
    fake.resetLog();
    const none = await plan();
    expect(fake.requests).toEqual([]);
    expect(none.result.mode === 'plan' && none.result.plan.assignments).toEqual([]);

    fake.addReview(pr, {
      user: 'maintainer',
      association: 'MEMBER',
      state: 'CHANGES_REQUESTED',
      body: 'Rename it.',
      comments: [{ path: 'helper.txt', line: 1, body: 'rename helper31 to helperThirtyOne' }],
    });
    const first = await plan('test-token');
    if (first.result.mode !== 'plan') throw new Error('expected a plan');
    expect(first.result.feedback?.received.map((f) => f.kind)).toEqual(['review']);
    expect(first.result.plan.assignments).toMatchObject([
      { issueNumber: n, agent: 'beta', revision: { round: 1, pr, headSha: sha, revises: crewId } },
    ]);
    // The plan says so on the issue at once (the status comment), not only when the run's grade ends.
    const status = fake.issues
      .get(n)!
      .comments.filter((c) => c.body.includes(`<!-- school-core:status:issue-${n} -->`));
    expect(status).toHaveLength(1);
    expect(status[0]!.body).toMatch(/revision 1 of 3/);

    // Idle: once the cursor settles, the scan is one conditional request answered 304.
    let idle = 0;
    for (; idle < 3; idle++) {
      fake.resetLog();
      const r = await plan('test-token');
      if (r.result.mode === 'plan' && r.result.feedback?.notModified) break;
    }
    expect(idle).toBeLessThan(3);
    expect(fake.requests.map((q) => [q.path, q.status])).toEqual([['/repos/octo/school/issues', 304]]);
  });
});
