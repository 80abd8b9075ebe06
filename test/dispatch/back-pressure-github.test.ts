import { describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { loadView } from '../../src/board/load.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { readFeedback } from '../../src/feedback/log.js';
import { memoryLogger } from '../../src/log.js';
import { dispatchJob } from '../../src/loop/dispatch-job.js';
import { GitHubFake } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';
import { deliveredIssue, schoolOnDisk } from '../support/planned-school.js';
import { serveForFile } from '../support/github-server.js';

/**
 * Back-pressure through the plan job as the action runs it (dispatch-crew `mode: plan` with a
 * token): the feedback scan before planning asks GitHub (the fake behind a loopback server) which
 * delivered pull requests a person merged, so the merge GitHub reports frees the place in the same
 * plan that sees it.
 */
const tmp = tempDir('school-back-pressure-gh-');
const fake = new GitHubFake({ now: () => new Date() });
const server = serveForFile(fake, { tmp, unstubEnv: true });

describe('back-pressure against a GitHub-like server', () => {
  it('holds the next issue while the delivered pull request is open, and plans it once GitHub says it was merged', async () => {
    const { configPath, config, layout } = schoolOnDisk(join(tmp.path, 'school'), [
      'fleet: { daemons: [{ id: d1, worktrees: 2 }] }',
      'agents: [{ id: alpha, command: [node, a.mjs] }]',
      'delivery: { mode: pull-request, maxOpenPullRequests: 1 }',
    ]);
    const first = fake.addIssue({ title: 'Add a helper' }).number;
    const next = fake.addIssue({ title: 'Add another helper' }).number;
    const head = '1'.repeat(40);
    const pr = fake.openPull({ head: `school/issue-${first}`, headSha: head, baseSha: '2'.repeat(40) });
    await deliveredIssue({ config, layout }, { issue: first, more: [next], pr, sha: head });
    const plan = async () => {
      vi.stubEnv('GITHUB_API_URL', server.url);
      const r = await dispatchJob(
        { mode: 'plan', config: configPath, dryRun: false, token: 'test-token' },
        memoryLogger(),
      );
      if (r.result.mode !== 'plan') throw new Error('expected a plan');
      return r.result.plan;
    };

    const held = await plan();
    expect(held.assignments).toEqual([]);
    expect(held.refused.find((r) => r.issue === next)).toMatchObject({ code: 'review-back-pressure' });
    expect(held.review).toMatchObject({ waiting: 1, limit: 1, full: true });
    expect(renderTerminal(loadView({ config: configPath }).view)).toContain(
      'Waiting for review: 1; at the limit delivery.maxOpenPullRequests 1',
    );

    fake.settlePull(pr, 'merged');
    const freed = await plan();
    expect(readFeedback(layout).settled[pr]).toMatchObject({ merged: true, issue: first });
    expect(freed.assignments.map((a) => a.issueNumber)).toEqual([next]);
    expect(freed.review).toMatchObject({ waiting: 0, full: false });
    // Nothing waits for review now: the board has no line for it.
    expect(renderTerminal(loadView({ config: configPath }).view)).not.toContain('Waiting for review');
  });
});
