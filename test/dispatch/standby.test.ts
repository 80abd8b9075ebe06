import { afterEach, describe, expect, it } from 'vitest';
import { recordHeartbeat } from '../../src/dispatch/fleet.js';
import { planDispatch, type PlanInput } from '../../src/dispatch/plan.js';
import { crewLog, readRegistry } from '../../src/dispatch/registry.js';
import { memoryLogger } from '../../src/log.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config, item } from './helpers.js';

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

const NOW = new Date('2026-03-01T12:00:00Z');
const issues = (n: number, from = 1) => Array.from({ length: n }, (_, i) => item(from + i));

async function school(daemons: Array<{ id: string; worktrees: number }>, dispatch: Record<string, unknown>) {
  const d = tempDir('school-standby-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({ fleet: { daemons }, dispatch });
  for (const dm of cfg.fleet.daemons) {
    await recordHeartbeat(layout, cfg, {
      daemon: dm.id,
      observedClass: 'xl',
      freeDiskBytes: 50 * GiB,
      at: NOW,
    });
  }
  const plan = (curriculum: CurriculumItem[], over: Partial<PlanInput> = {}) =>
    planDispatch({
      config: cfg,
      layout,
      curriculum,
      now: NOW,
      logger: memoryLogger(),
      standby: true,
      ...over,
    });
  return { layout, cfg, plan };
}

/** Crews that ran start to finish in `minutes`, as the crew log records them. */
async function history(layout: StateLayout, minutes: number[]): Promise<void> {
  const t0 = NOW.getTime() - 24 * 3600_000;
  await crewLog(layout).append(
    minutes.flatMap((m, i): CrewEvent[] => {
      const crewId = `c${900 + i}-0000000${i}`;
      const start = new Date(t0 + i * 3600_000);
      const base = { crewId, issueNumber: 900 + i };
      return [
        event('crew.planned', `planned:${crewId}`, {
          ...base,
          daemon: 'd1',
          agent: 'a',
          weight: 'standard',
          fences: [],
          repair: false,
          attempt: 1,
        }),
        event(
          'crew.started',
          `started:${crewId}`,
          {
            crewId,
            daemon: 'd1',
            slot: 0,
            worktree: '/w',
            owner: { kind: 'local' as const, host: 'h', pid: 1 },
          },
          start,
        ),
        event(
          'crew.finished',
          `finished:${crewId}`,
          { ...base, outcome: 'succeeded' as const, reason: 'ok' },
          new Date(start.getTime() + m * 60_000),
        ),
      ];
    }),
  );
}

describe('planDispatch with standby crews behind the first wave', () => {
  it('puts the backlog on standby behind each daemon it placed a first wave on; no issue twice; maxCrews holds for the next plan', async () => {
    const s = await school(
      [
        { id: 'd1', worktrees: 2 },
        { id: 'd2', worktrees: 2 },
        { id: 'd3', worktrees: 2 },
      ],
      { maxCrews: 3, crewTimeoutSeconds: 900, gradingReserveSeconds: 300, jobTimeoutMinutes: 360 },
    );
    const r = await s.plan(issues(20));
    const first = r.assignments.filter((a) => !a.queued);
    const standby = r.assignments.filter((a) => a.queued);
    // The first wave is what maxCrews allows at once; everything else waits on a daemon's standby.
    expect(first).toHaveLength(3);
    expect(standby).toHaveLength(17);
    expect(new Set(r.assignments.map((a) => a.issueNumber)).size).toBe(20);
    const firstDaemons = new Set(first.map((a) => a.daemon));
    expect(standby.every((a) => firstDaemons.has(a.daemon))).toBe(true);
    expect(r.refused).toEqual([]);
    // Recorded as such: the crew job tells its standby crews from its first wave by the registry.
    const reg = readRegistry(s.layout);
    expect(Object.values(reg.crews).filter((c) => c.queued).length).toBe(17);

    // While those standby crews wait, the next plan sees the cap taken: nothing more starts anywhere.
    const next = await s.plan(issues(2, 21));
    expect(next.assignments).toEqual([]);
    expect(next.refused.map((x) => x.code)).toEqual(['global-cap', 'global-cap']);
  });

  it('sizes the standby by the typical crew duration seen so far; with no history, by the crew timeout', async () => {
    const dispatch = {
      maxCrews: 1,
      crewTimeoutSeconds: 900,
      gradingReserveSeconds: 300,
      jobTimeoutMinutes: 30,
    };
    const fresh = await school([{ id: 'd1', worktrees: 1 }], dispatch);
    // 30 min job: the first crew may take its 15 min timeout; 10 min are left after the 5 min reserve,
    // which fits no second 15 min crew.
    const cold = await fresh.plan(issues(10));
    expect(cold.assignments.map((a) => a.queued ?? false)).toEqual([false]);

    const seasoned = await school([{ id: 'd1', worktrees: 1 }], dispatch);
    await history(seasoned.layout, [1, 2, 2, 2, 1.5, 2]);
    const warm = await seasoned.plan(issues(10));
    // Typical (75th percentile) run: 2 min → five more fit in those 10 min.
    expect(warm.assignments.map((a) => a.queued ?? false)).toEqual([false, true, true, true, true, true]);
    expect(warm.refused).toHaveLength(4);
  });

  it('puts nothing on standby without the standby option (the local driver refills from the office instead)', async () => {
    const s = await school([{ id: 'd1', worktrees: 1 }], { maxCrews: 1 });
    const r = await s.plan(issues(3), { standby: false });
    expect(r.assignments).toHaveLength(1);
    expect(r.assignments[0]!.queued).toBeUndefined();
  });
});
