import { afterEach, describe, expect, it } from 'vitest';
import { planStep } from '../../src/loop/steps.js';
import { claimSlot, readCrewState } from '../../src/dispatch/leases/lease.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { silentLogger } from '../../src/log.js';
import { makeSchool, writeIssues, type School } from './helpers.js';
import { crewStep } from '../support/crew-step.js';

/**
 * Dimension 3 — temporal: the time budget of a job decides how many crews are admitted, a wall
 * clock far ahead never makes a live crew's lease look stale, and near the job deadline in-flight
 * crews finish while nothing new starts.
 */
let s: School | undefined;
afterEach(() => s?.cleanup());

async function school(n: number, over: (s: School) => void = () => {}): Promise<School> {
  // A crew's timeout far above what its student and verification take on a loaded machine (20 s
  // left it little room): these tests are about state, not about timeouts.
  s = makeSchool({ worktrees: 2, timeout: 120 });
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.dispatch.maxCrews = 8;
  over(s);
  const src = writeIssues(
    s,
    Array.from({ length: n }, (_, i) => ({ number: i + 1, title: `t${i + 1}`, body: 'b' })),
  );
  await fetchCurriculum({ layout: s.layout, config: s.config, source: src, logger: silentLogger });
  return s;
}

describe('D3 temporal', () => {
  it('N3.1 admission reserves crew timeout + grading per wave: a job that cannot fit a wave admits nobody', async () => {
    const t = await school(4, (x) => {
      x.config.dispatch.jobTimeoutMinutes = 30;
      x.config.dispatch.crewTimeoutSeconds = 900;
      x.config.dispatch.gradingReserveSeconds = 300;
    });
    /** The plan of a job started `minutes` ago. */
    const planAfter = (minutes: number) =>
      planStep({
        config: t.config,
        layout: t.layout,
        logger: silentLogger,
        beat: ['d1'],
        jobStartedAt: new Date(Date.now() - minutes * 60_000),
      });
    // 20 of 30 minutes gone: 600 s left < 900 s crew + 300 s grading.
    const late = await planAfter(20);
    expect(late.assignments).toHaveLength(0);
    expect(late.refused.map((r) => r.code)).toEqual([
      'time-budget',
      'time-budget',
      'time-budget',
      'time-budget',
    ]);
    expect(Object.keys(readCrewState(t.layout).registry.crews)).toHaveLength(0);
    // 8 minutes gone: 1320 s left fits exactly one wave (1200 s), i.e. the K slots of the fleet, no
    // more (two need 2100 s). The planner reads its own clock: two minutes of margin, not 30 s, for a
    // loaded machine between this line and the plan.
    const one = await planAfter(8);
    expect(one.waves).toBe(1);
    expect(one.assignments.length).toBe(2);
  });

  it('N3.2 a wall clock a day ahead never reclaims the lease of a live crew', async () => {
    const t = await school(2, (x) => {
      x.config.fleet.daemons[0]!.worktrees = 1;
      x.config.agents = x.config.agents.filter((a) => a.id === 'slow');
    });
    await planStep({ config: t.config, layout: t.layout, logger: silentLogger, beat: ['d1'] });
    const crews = Object.keys(readCrewState(t.layout).registry.crews);
    expect(crews).toHaveLength(1); // one slot: the second issue waits
    // Only the planned crew: the crew planned below is an attacker's, not work for this driver.
    const running = crewStep(t, {
      logger: silentLogger,
      office: { refill: false },
    });
    // Wait until the crew holds its lease, then try to claim the slot with a skewed clock.
    for (let i = 0; i < 200 && Object.keys(readCrewState(t.layout).registry.leases).length === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    const lease = Object.values(readCrewState(t.layout).registry.leases)[0]!;
    expect(lease).toBeDefined();
    const { plan } = await import('../crew/helpers.js');
    await plan(t, [{ crewId: 'skewed-1', issue: 2 }]);
    const skewed = new Date(Date.now() + 86_400_000);
    await expect(
      claimSlot(t.layout, {
        crewId: 'skewed-1',
        daemon: 'd1',
        slots: 1,
        owner: { kind: 'local', host: 'other-host', pid: 1 },
        process: { crewId: 'skewed-1', kind: 'local', host: 'other-host', pid: 1 },
        leaseMs: 60_000,
        worktreeFor: () => '/nonexistent',
        now: () => skewed,
      } as never),
    ).rejects.toThrow(/slot|held|free/i);
    const r = await running;
    expect(r.finished.map((f) => f.outcome)).toEqual(['succeeded']);
    expect(readCrewState(t.layout).registry.crews[crews[0]!]!.outcome).toBe('succeeded');
  }, 60_000);

  it('N3.3 near the job deadline in-flight crews finish and no new crew starts', async () => {
    const t = await school(2, (x) => {
      x.config.fleet.daemons[0]!.worktrees = 1;
      x.config.dispatch.maxCrews = 2;
    });
    // Two crews planned for a one-slot daemon by an earlier, larger plan.
    x2(t);
    await planStep({ config: t.config, layout: t.layout, logger: silentLogger, beat: ['d1'] });
    t.config.fleet.daemons[0]!.worktrees = 1;
    const planned = Object.keys(readCrewState(t.layout).registry.crews);
    expect(planned).toHaveLength(2);
    let calls = 0;
    const r = await crewStep(t, {
      logger: silentLogger,
      // Plenty of time for the first launch, then the deadline is near.
      remainingMs: () => (calls++ === 0 ? 3_600_000 : 1_000),
    });
    expect(r.finished.map((f) => f.outcome)).toEqual(['succeeded']);
    expect(r.skipped).toHaveLength(1);
    expect(r.skipped[0]!.reason).toMatch(/soft deadline: the time left in this job cannot fit a crew/);
    const reg = readCrewState(t.layout).registry;
    expect(reg.crews[r.skipped[0]!.crewId]!.status).toBe('planned');
    expect(Object.keys(reg.leases)).toHaveLength(0);
  }, 60_000);
});

/** Plans with two slots so that two crews exist for the one-slot run that follows. */
function x2(t: School): void {
  t.config.fleet.daemons[0]!.worktrees = 2;
}
