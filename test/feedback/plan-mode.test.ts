import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeCurriculum } from '../../src/curriculum/store.js';
import { recordHeartbeat } from '../../src/dispatch/fleet.js';
import { crewLog } from '../../src/dispatch/registry.js';
import { resolveConfig } from '../../src/config/load.js';
import { recordDelivered } from '../support/deliveries.js';
import { memoryLogger } from '../../src/log.js';
import { dispatchJob, type DispatchJobInput } from '../../src/loop/dispatch-job.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { GitHubFake, startGitHubServer } from '../support/github-fake.js';
import { curriculumItem } from '../support/items.js';
import { initRepo, tempDir } from '../support/tmp.js';

/**
 * dispatch-crew `mode: plan` with a token reads the feedback on delivered pull requests before it
 * plans (the plan job: issues, pull-requests, checks and actions read), so a review requesting
 * changes plans its revision crew in the same cycle; an idle plan costs one conditional request.
 * GitHub is the fake behind a loopback server named by GITHUB_API_URL, as the action sees it.
 */
const tmp = tempDir('school-plan-mode-');
const fake = new GitHubFake({ now: () => new Date() });
let server: Awaited<ReturnType<typeof startGitHubServer>>;
beforeAll(async () => {
  server = await startGitHubServer(fake);
});
afterAll(async () => {
  await server.close();
  tmp.cleanup();
});
afterEach(() => vi.unstubAllEnvs());

describe('dispatch-crew mode plan reads feedback first', () => {
  it('plans the revision a new review asks for in the same run; idle, it asks one conditional request', async () => {
    vi.stubEnv('GITHUB_API_URL', server.url);
    const stateDir = join(tmp.path, 'state');
    const configPath = join(tmp.path, 'school.yml');
    writeFileSync(
      configPath,
      [
        'repository: octo/school',
        // A repository of the test's own (no origin): the plan's base-drift check asks its origin,
        // which must not be the checkout the tests run from.
        `repoPath: ${initRepo(join(tmp.path, 'repo'))}`,
        `stateDir: ${stateDir}`,
        'fleet: { daemons: [{ id: d1, worktrees: 1 }] }',
        'agents: [{ id: alpha, command: [node, a.mjs] }, { id: beta, command: [node, b.mjs] }]',
        '',
      ].join('\n'),
    );
    const config = resolveConfig(configPath);
    const layout = new StateLayout(stateDir);
    const issue = fake.addIssue({ title: 'Add helper31' });
    const n = issue.number;
    const sha = 'd'.repeat(40);
    const pr = fake.openPull({ head: `school/issue-${n}`, headSha: sha });
    fake.addCheckRun({ name: 'ci', head_sha: sha, status: 'completed', conclusion: 'success' });
    writeCurriculum(layout, [curriculumItem(n)]);
    await recordHeartbeat(layout, config, {
      daemon: 'd1',
      observedClass: 'standard',
      freeDiskBytes: 100 * 1024 ** 3,
    });
    const crewId = `c${n}-00000001`;
    await crewLog(layout).append([
      event('crew.planned', `planned:${crewId}`, {
        crewId,
        issueNumber: n,
        daemon: 'd1',
        agent: 'beta',
        weight: 'standard',
        fences: [],
        repair: false,
        attempt: 1,
      }) as CrewEvent,
      event('crew.finished', `finished:${crewId}`, {
        crewId,
        issueNumber: n,
        outcome: 'succeeded',
        reason: 'done',
      }) as CrewEvent,
    ]);
    await recordDelivered(layout, { issue: n, crewId, pr, sha, repo: 'octo/school' });
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
