import { afterEach, describe, expect, it } from 'vitest';
import { crewLog, readRegistry } from '../../src/dispatch/logs/registry.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { config, item, heartbeats, standbyPlanner } from './helpers.js';
import { finishedEvent, plannedEvent, startedEvent } from '../support/crew-events.js';

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

const NOW = new Date('2026-03-01T12:00:00Z');
const issues = (n: number, from = 1) => Array.from({ length: n }, (_, i) => item(from + i));

async function school(daemons: Array<{ id: string; worktrees: number }>, dispatch: Record<string, unknown>) {
  const d = tempDir('school-standby-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({ fleet: { daemons }, dispatch });
  await heartbeats(layout, cfg, NOW);
  const plan = standbyPlanner(cfg, layout, NOW);
  return { layout, cfg, plan };
}

/** Crews that ran start to finish in `minutes`, as the crew log records them. */
async function history(
  layout: StateLayout,
  minutes: number[],
  agent = 'a',
  cells: Array<{ domain: string; difficulty: number; size: number }> = [],
): Promise<void> {
  const t0 = NOW.getTime() - 24 * 3600_000;
  await crewLog(layout).append(
    minutes.flatMap((m, i): CrewEvent[] => {
      const crewId = `c${900 + i}-0000000${i}`;
      const start = new Date(t0 + i * 3600_000);
      const issue = 900 + i;
      return [
        plannedEvent(crewId, issue, {
          agent,
          // As a plan records it: the issue has left the curriculum, its estimate is kept here.
          cell: cells[i] ?? { domain: 'general', difficulty: 2, size: 30 },
        }),
        startedEvent(crewId, {}, start),
        finishedEvent(crewId, issue, { reason: 'ok' }, new Date(start.getTime() + m * 60_000)),
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

  it('sizes the standby by the predicted work that fits; with no history, a first crew fills the job', async () => {
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
    // Crews took 10.5 min for six issues estimated 30 min each: each 30 min issue is predicted at
    // about 1.77 min (the mean of their log-normal miss). The slot starts another crew while the work
    // before it ends within 10 min: crews start at 0, 1.77, …, 8.84 (six in all); the seventh would
    // start at 10.6, too late.
    expect(warm.assignments.map((a) => a.queued ?? false)).toEqual([false, true, true, true, true, true]);
    expect(warm.refused).toHaveLength(4);
  });

  it('puts nothing on standby without the standby option (the local driver refills from the office instead)', async () => {
    const s = await school([{ id: 'd1', worktrees: 1 }], { maxCrews: 1 });
    const r = await s.plan(issues(3), { mode: { standby: false } });
    expect(r.assignments).toHaveLength(1);
    expect(r.assignments[0]!.queued).toBeUndefined();
  });

  it('balances predicted work across daemons, not counts: the daemon with long issues gets fewer', async () => {
    const s = await school(
      [
        { id: 'd1', worktrees: 1 },
        { id: 'd2', worktrees: 1 },
      ],
      {
        maxCrews: 2,
        crewTimeoutSeconds: 900,
        gradingReserveSeconds: 300,
        jobTimeoutMinutes: 120,
        order: 'smallest-first',
      },
    );
    // 120 min job: each slot may start crews for 100 min after its first; the last may run 15 more.
    const sizes = [10, 10, 10, 10, 10, 10, 10, 10, 50, 50, 50, 50, 10, 10, 10, 10];
    const r = await s.plan(sizes.map((size, i) => item(i + 1, { size })));
    const work = new Map<string, number>();
    const count = new Map<string, number>();
    for (const a of r.assignments) {
      work.set(a.daemon, (work.get(a.daemon) ?? 0) + sizes[a.issueNumber - 1]!);
      count.set(a.daemon, (count.get(a.daemon) ?? 0) + 1);
    }
    const [w1, w2] = [work.get('d1')!, work.get('d2')!];
    // Each daemon is planned up to its 115 min of work (one item may cross it) and no further.
    for (const w of [w1, w2]) {
      expect(w).toBeGreaterThanOrEqual(115);
      expect(w).toBeLessThan(115 + 50);
    }
    expect(Math.abs(w1 - w2)).toBeLessThanOrEqual(50);
    expect(new Set(r.assignments.map((a) => a.issueNumber)).size).toBe(r.assignments.length);
    // What did not fit waits for the next plan.
    expect(r.assignments.length + r.refused.length).toBe(sizes.length);
  });

  it('orders tail-guard by default; smallest-first stays selectable', async () => {
    const curriculum = [item(1, { size: 10 }), item(2, { size: 10 }), item(3, { size: 400 })];
    const def = await school([{ id: 'd1', worktrees: 1 }], { maxCrews: 1 });
    expect(def.cfg.dispatch.order).toBe('tail-guard');
    expect(
      (await def.plan(curriculum, { mode: { standby: false } })).assignments.map((a) => a.issueNumber),
    ).toEqual([3]);
    const seed = await school([{ id: 'd1', worktrees: 1 }], { maxCrews: 1, order: 'smallest-first' });
    expect(
      (await seed.plan(curriculum, { mode: { standby: false } })).assignments.map((a) => a.issueNumber),
    ).toEqual([1]);
  });

  it('predicts from the run-time history of agent × domain × difficulty: an issue whose kind ran long goes first', async () => {
    const s = await school([{ id: 'd1', worktrees: 1 }], { maxCrews: 1 });
    // Issues 900–902 (domain slow) ran 100 min against an estimate of 10; 903–905 (general) 10 min.
    const kinds = [0, 1, 2, 3, 4, 5].map((i) => ({
      domain: i < 3 ? 'slow' : 'general',
      difficulty: 2,
      size: 10,
    }));
    await history(s.layout, [100, 100, 100, 10, 10, 10], 'student', kinds);
    const past = kinds.map((k, i) => item(900 + i, { size: k.size, domain: k.domain }));
    const fresh = [
      item(1, { size: 10, domain: 'general' }),
      item(2, { size: 20, domain: 'general' }),
      item(3, { size: 10, domain: 'slow' }),
    ];
    // Predicted 10, 20 and 100 min: #3 is above ¾ of the 130 min backlog per slot and starts first.
    const r = await s.plan([...past, ...fresh], { mode: { standby: false } });
    expect(r.assignments.map((a) => a.issueNumber)).toEqual([3]);
    // Without that history #3 is a 10 min issue like #1, and the smallest goes first.
    const cold = await school([{ id: 'd1', worktrees: 1 }], { maxCrews: 1 });
    expect(
      (await cold.plan(fresh, { mode: { standby: false } })).assignments.map((a) => a.issueNumber),
    ).toEqual([1]);
  });

  it("tail-guard orders a daemon's standby as its queue will shrink: a crew long for that queue starts first", async () => {
    // A 100 min crew timeout: no issue below is predicted to outrun it. Each slot starts crews while
    // the work before them ends within 205 − 100 − 5 = 100 min.
    const dispatch = {
      maxCrews: 4,
      crewTimeoutSeconds: 6000,
      gradingReserveSeconds: 300,
      jobTimeoutMinutes: 205,
    };
    // Four 1-min first crews; then, most urgent, twenty 10-min issues and one of 100; then 45-min ones.
    // The whole backlog (3,000+ min) is far too long for #25 to count as long at the plan, but the
    // daemon's queue holds ~435 min over 4 slots, and 100 ≥ ¾ × 435 / 4.
    const curriculum = [
      ...[1, 2, 3, 4].map((n) => item(n, { size: 1, priority: 0 })),
      ...Array.from({ length: 20 }, (_, i) => item(5 + i, { size: 10, priority: 1 })),
      item(25, { size: 100, priority: 1 }),
      ...Array.from({ length: 60 }, (_, i) => item(26 + i, { size: 45, priority: 2 })),
    ];
    const queueOf = async (order: string) => {
      const s = await school([{ id: 'd1', worktrees: 4 }], { ...dispatch, order });
      return (await s.plan(curriculum)).assignments.filter((a) => a.queued).map((a) => a.issueNumber);
    };
    const guarded = await queueOf('tail-guard');
    expect(guarded[0]).toBe(25);
    expect(guarded.slice(1, 21)).toEqual(Array.from({ length: 20 }, (_, i) => 5 + i));
    const seed = await queueOf('smallest-first');
    expect(seed.slice(0, 21)).toEqual([...Array.from({ length: 20 }, (_, i) => 5 + i), 25]);
    // The same crews either way: only their order differs.
    expect([...guarded].sort((a, b) => a - b)).toEqual([...seed].sort((a, b) => a - b));
  });
});
