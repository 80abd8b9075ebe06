import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { actionsJobStatus } from '../../src/github/job-status.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { planDispatch } from '../../src/dispatch/plan.js';
import { crewLog, readRegistry } from '../../src/dispatch/logs/registry.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { createGitHubClient } from '../../src/github/client.js';
import { memoryLogger } from '../../src/log.js';
import type { LeaseOwner } from '../../src/schemas/crew.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config, item } from './helpers.js';

/**
 * Reconciliation in Actions (docs/architecture.md): a crew planned by run R whose crew job for its daemon was
 * cancelled by its concurrency group, or never got a runner, or a run that ended without such a job,
 * must not stay "planned" forever. The jobs API is answered by msw the way GitHub answers it.
 */
type Job = { name: string; status: string; conclusion: string | null; run_attempt?: number };
const runs: Record<string, Job[]> = {};
const calls: string[] = [];
const server = setupServer(
  http.get('https://api.github.com/repos/o/r/actions/runs/:run/jobs', ({ params, request }) => {
    const url = new URL(request.url);
    calls.push(`${String(params.run)}?filter=${url.searchParams.get('filter')}`);
    const jobs = runs[String(params.run)];
    if (!jobs) return HttpResponse.json({ message: 'Not Found' }, { status: 404 });
    return HttpResponse.json({
      total_count: jobs.length,
      jobs: jobs.map((j, i) => ({ id: i + 1, run_attempt: 1, ...j })),
    });
  }),
  // Like GitHub: a run is completed once every job of it is.
  http.get('https://api.github.com/repos/o/r/actions/runs/:run', ({ params }) => {
    const jobs = runs[String(params.run)];
    if (!jobs) return HttpResponse.json({ message: 'Not Found' }, { status: 404 });
    return HttpResponse.json({
      id: Number(params.run),
      status: jobs.every((j) => j.status === 'completed') ? 'completed' : 'in_progress',
    });
  }),
);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => {
  dirs.splice(0).forEach((d) => d.cleanup());
  for (const k of Object.keys(runs)) delete runs[k];
  calls.length = 0;
});

const NOW = new Date('2026-03-01T12:00:00Z');
const RUN_100: LeaseOwner = { kind: 'actions', runId: '100', runAttempt: '1', job: 'crew' };
const RUN_200: LeaseOwner = { kind: 'actions', runId: '200', runAttempt: '1', job: 'crew' };

async function school() {
  const d = tempDir('school-reconcile-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({ fleet: { daemons: [{ id: 'd1', worktrees: 2 }] }, dispatch: { maxCrews: 1 } });
  await recordHeartbeat(layout, cfg, { daemon: 'd1', observedClass: 'xl', freeDiskBytes: 50 * GiB, at: NOW });
  const client = createGitHubClient({
    token: 'ghs_testtokentesttokentesttoken0000',
    baseUrl: 'https://api.github.com',
  });
  const jobStatus = actionsJobStatus(client, 'o/r');
  const logger = memoryLogger();
  const plan = (curriculum: CurriculumItem[], plannedBy: LeaseOwner, now = NOW) =>
    planDispatch({
      config: cfg,
      layout,
      curriculum,
      clock: { now },
      logger,
      owners: { plannedBy, jobStatus },
    });
  return { layout, plan, logger };
}

const plan1 = (status: string, conclusion: string | null): Job[] => [
  { name: 'plan', status: 'completed', conclusion: 'success' },
  { name: 'crew d1', status, conclusion },
];

describe('plan reconciles crews whose Actions crew job never started them', () => {
  it('records the run, attempt, crew job and daemon that is expected to start each planned crew', async () => {
    const { layout, plan } = await school();
    const first = await plan([item(1)], RUN_100);
    const crew = readRegistry(layout).crews[first.assignments[0]!.crewId]!;
    expect(crew.plannedBy).toEqual({ ...RUN_100, daemon: 'd1' });
  });

  for (const [status, conclusion] of [
    ['completed', 'cancelled'],
    ['completed', 'skipped'],
  ] as const) {
    it(`crew job ${status}/${conclusion} without starting it → cancelled, and the issue is planned again`, async () => {
      const { layout, plan, logger } = await school();
      const c1 = (await plan([item(1)], RUN_100)).assignments[0]!.crewId;
      runs['100'] = plan1(status, conclusion);
      const next = await plan([item(1)], RUN_200);
      expect(next.reconciled).toEqual([
        {
          crewId: c1,
          issueNumber: 1,
          outcome: 'cancelled',
          reason: expect.stringContaining('planned by run 100 (attempt 1) but its crew job for daemon d1'),
        },
      ]);
      expect(next.reconciled[0]!.reason).toContain(conclusion);
      // maxCrews is 1: only because the cancelled crew no longer counts is the issue planned again.
      expect(next.assignments.map((a) => [a.issueNumber, a.attempt, a.repair])).toEqual([[1, 1, false]]);
      const reg = readRegistry(layout);
      expect(reg.crews[c1]).toMatchObject({ status: 'finished', outcome: 'cancelled' });
      // Cancelled is no failure: no repair, no two-failure stop, no pause.
      expect(issueStates(reg).get(1)).toEqual({ kind: 'active', crewId: next.assignments[0]!.crewId });
      expect(readSchool(layout).pauses).toEqual([]);
      expect(logger.lines.some((l) => l.message.includes(`reconciled ${c1}`))).toBe(true);
    });
  }

  it('"Re-run failed jobs": a crew job of a later attempt still running keeps the planned crew', async () => {
    const { layout, plan } = await school();
    const c1 = (await plan([item(1)], RUN_100)).assignments[0]!.crewId;
    // Attempt 1's crew job failed before starting the crew; attempt 2 re-runs it with attempt 1's plan.
    runs['100'] = [
      { name: 'plan', status: 'completed', conclusion: 'success', run_attempt: 1 },
      { name: 'crew d1', status: 'completed', conclusion: 'failure', run_attempt: 1 },
      { name: 'crew d1', status: 'in_progress', conclusion: null, run_attempt: 2 },
    ];
    const during = await plan([item(1)], RUN_200);
    expect(during.reconciled).toEqual([]);
    expect(during.assignments).toEqual([]); // the issue is still being worked on: never dispatched twice
    expect(readRegistry(layout).crews[c1]!.status).toBe('planned');
    // The re-run ended too (without handing a start on): now the crew is cancelled and planned again.
    runs['100'][2] = { name: 'crew d1', status: 'completed', conclusion: 'failure', run_attempt: 2 };
    const after = await plan([item(1)], RUN_200);
    expect(after.reconciled.map((r) => [r.crewId, r.outcome])).toEqual([[c1, 'cancelled']]);
    expect(after.assignments.map((a) => a.issueNumber)).toEqual([1]);
  });

  it('a crew job that ended while its run’s grade job has not imported its handoff yet keeps the planned crew', async () => {
    const { layout, plan } = await school();
    const c1 = (await plan([item(1)], RUN_100)).assignments[0]!.crewId;
    // Inside the reusable workflow the API prefixes the caller's job name.
    const crew = { name: 'school / crew d1', status: 'completed', conclusion: 'success' };
    for (const grade of [
      { name: 'school / grade', status: 'queued', conclusion: null },
      { name: 'school / grade', status: 'in_progress', conclusion: null },
    ]) {
      runs['100'] = [{ name: 'school / plan', status: 'completed', conclusion: 'success' }, crew, grade];
      const during = await plan([item(1)], RUN_200);
      // The crew may have run: its events reach the state only when grade saves them.
      expect(during.reconciled).toEqual([]);
      expect(during.assignments).toEqual([]);
      expect(readRegistry(layout).crews[c1]!.status).toBe('planned');
    }
    // Not listed yet (created once the crew jobs end): the run is still going.
    runs['100'] = [
      { name: 'school / plan', status: 'completed', conclusion: 'success' },
      crew,
      { name: 'school / roster d1', status: 'queued', conclusion: null },
    ];
    expect((await plan([item(1)], RUN_200)).reconciled).toEqual([]);
    // Imported (and nothing recorded a start): now it is cancelled and planned again.
    runs['100'] = [
      { name: 'school / plan', status: 'completed', conclusion: 'success' },
      crew,
      { name: 'school / roster d1', status: 'queued', conclusion: null },
      { name: 'school / grade', status: 'completed', conclusion: 'success' },
    ];
    const after = await plan([item(1)], RUN_200);
    expect(after.reconciled.map((r) => [r.crewId, r.outcome])).toEqual([[c1, 'cancelled']]);
    expect(after.reconciled[0]!.reason).toContain('"school / crew d1"');
  });

  it('the run ended with no crew job for that daemon → cancelled', async () => {
    const { plan } = await school();
    const c1 = (await plan([item(1)], RUN_100)).assignments[0]!.crewId;
    runs['100'] = [{ name: 'plan', status: 'completed', conclusion: 'failure' }];
    const next = await plan([item(1)], RUN_200);
    expect(next.reconciled.map((r) => [r.crewId, r.outcome])).toEqual([[c1, 'cancelled']]);
    expect(next.reconciled[0]!.reason).toMatch(/run attempt ended without a job "crew d1"/);
  });

  for (const status of ['queued', 'in_progress', 'waiting']) {
    it(`crew job ${status} → left alone: the issue stays active and nothing is re-planned`, async () => {
      const { layout, plan } = await school();
      const c1 = (await plan([item(1)], RUN_100)).assignments[0]!.crewId;
      runs['100'] = plan1(status, null);
      const next = await plan([item(1)], RUN_200);
      expect(next.reconciled).toEqual([]);
      expect(next.assignments).toEqual([]);
      expect(next.refused).toEqual([expect.objectContaining({ issue: 1, code: 'active-crew' })]);
      expect(readRegistry(layout).crews[c1]!.status).toBe('planned');
    });
  }

  it('another daemon’s crew job ending says nothing about this daemon’s crew', async () => {
    const { plan } = await school();
    await plan([item(1)], RUN_100);
    runs['100'] = [
      { name: 'crew d2', status: 'completed', conclusion: 'cancelled' },
      { name: 'crew d1', status: 'queued', conclusion: null },
    ];
    expect((await plan([item(1)], RUN_200)).reconciled).toEqual([]);
  });

  it('an API failure counts the owner as alive (never cancel what might still start)', async () => {
    const { plan } = await school();
    await plan([item(1)], { ...RUN_100, runId: '404' });
    const next = await plan([item(1)], RUN_200);
    expect(next.reconciled).toEqual([]);
    expect(calls).toEqual(['404?filter=all']);
  });

  it('a running crew whose lease expired and whose Actions job ended is lost (lease released, launches paused)', async () => {
    const { layout, plan } = await school();
    const c1 = (await plan([item(1)], RUN_100)).assignments[0]!.crewId;
    const owner: LeaseOwner = { kind: 'actions', runId: '100', runAttempt: '1', job: 'crew' };
    const expiresAt = new Date(NOW.getTime() + 60_000).toISOString();
    await crewLog(layout).append([
      event(
        'lease.acquired',
        `lease:d1/0:${c1}`,
        { crewId: c1, daemon: 'd1', slot: 0, owner, expiresAt },
        NOW,
      ),
      event(
        'crew.started',
        `started:${c1}`,
        { crewId: c1, daemon: 'd1', slot: 0, worktree: '/w', owner },
        NOW,
      ),
    ]);
    runs['100'] = plan1('completed', 'cancelled');
    // Before the lease expires nothing is touched, however the job ended.
    expect((await plan([item(1)], RUN_200)).reconciled).toEqual([]);
    const later = new Date(NOW.getTime() + 120_000);
    const next = await plan([item(1)], RUN_200, later);
    expect(next.reconciled.map((r) => [r.crewId, r.outcome])).toEqual([[c1, 'lost']]);
    expect(next.reconciled[0]!.reason).toMatch(/lease expired .* owner is gone .*cancelled/);
    const reg = readRegistry(layout);
    expect(reg.leases).toEqual({});
    expect(reg.crews[c1]).toMatchObject({ status: 'finished', outcome: 'lost' });
    // Seed 002: an unexplained end pauses launches until looked at.
    expect(next.paused).toMatch(/lost/);
    expect(next.assignments).toEqual([]);
  });
});
