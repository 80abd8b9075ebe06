import { describe, expect, it } from 'vitest';
import type { CapacityClass } from '../../src/config/schema.js';
import { DEFAULT_DEPLOYED, simulateDeployed, type Cadence } from '../../lab/simulate/deployed.js';
import { measure } from '../../lab/simulate/metrics.js';
import { createOffice } from '../../lab/simulate/office-adapter.js';
import { classRank, resolveSimOptions } from '../../lab/simulate/options.js';
import type { ReadyItem } from '../../lab/simulate/policy.js';
import { RunQueue } from '../../lab/simulate/shared-queue.js';
import { generateWorkload, type SimIssue, type Workload } from '../../lab/simulate/workload.js';

/**
 * Two one-slot daemons, d001 and d002, of the given classes; every issue estimated at 10 min;
 * `durations` are the true run times, `weights` the issues' classes (default standard).
 */
function twoDaemons(
  durations: number[],
  weights: CapacityClass[] = [],
  classes: [CapacityClass, CapacityClass] = ['standard', 'standard'],
): Workload {
  const options = resolveSimOptions({
    issues: durations.length,
    fleet: { daemons: 2, slotsPerDaemon: 1, daemonClasses: classes },
    weightMix: [0, 1, 0, 0],
  });
  const issues: SimIssue[] = durations.map((duration, i) => ({
    number: i + 1,
    weight: weights[i] ?? 'standard',
    priority: 2,
    size: 10,
    runs: [{ duration, outcome: 'success' }],
  }));
  const totalWork = durations.reduce((s, d) => s + d, 0);
  const longestChain = Math.max(...durations);
  return {
    options,
    issues,
    slots: ['d001', 'd002'].map((daemon, index) => ({ index, daemon, slot: 0, class: classes[index]! })),
    totalWork,
    longestChain,
    lowerBound: Math.max(totalWork / 2, longestChain),
  };
}

const itemOf = (issue: SimIssue, seq: number): ReadyItem => ({
  id: `${issue.number}#0`,
  issue,
  run: 0,
  attempt: 1,
  repair: false,
  seq,
});

/** The first plan of `w` as the simulator asks the office for it (minute 0, every slot free). */
function firstPlan(w: Workload, crewTimeoutMinutes: number) {
  const office = createOffice({ slotsPerDaemon: 1, totalSlots: 2, order: 'smallest-first' });
  return office.planStandby(
    w.issues.map(itemOf),
    w.slots.map((s) => ({ id: s.daemon, class: s.class, free: 1, busy: 0 })),
    {
      jobMinutes: DEFAULT_DEPLOYED.jobTimeoutMinutes,
      crewTimeoutMinutes,
      gradingReserveMinutes: DEFAULT_DEPLOYED.gradingReserveMinutes,
      typicalMinutes: crewTimeoutMinutes,
    },
    w.issues.reduce((n, i) => n + i.size, 0),
  );
}

/** The issues `daemon`'s slot ran, in start order. */
function ranOn(w: Workload, r: ReturnType<typeof simulateDeployed>, daemon: string): number[] {
  const slot = w.slots.find((s) => s.daemon === daemon)!.index;
  return r.timeline
    .filter((t) => t.slot === slot)
    .sort((a, b) => a.start - b.start)
    .map((t) => t.issue);
}

const run = (w: Workload, cadence: Cadence) =>
  simulateDeployed(w, {
    workflow: DEFAULT_DEPLOYED,
    cadence,
    order: 'smallest-first',
    crewTimeoutMinutes: 200,
  });

describe('a run queue: the claim rule (dispatch/leases/claims.ts claimOrder)', () => {
  const issue = (number: number, weight: CapacityClass = 'standard'): SimIssue => ({
    number,
    weight,
    priority: 2,
    size: 10,
    runs: [{ duration: 10, outcome: 'success' }],
  });

  it("a daemon claims its own crews first, then the other daemons', in plan order, each once", () => {
    const q = new RunQueue();
    const plan: Array<[number, string]> = [
      [3, 'd1'],
      [4, 'd2'],
      [5, 'd1'],
      [6, 'd2'],
      [7, 'd3'],
      [8, 'd1'],
    ];
    plan.forEach(([n, d], i) => q.add(itemOf(issue(n), i), d, ['d1', 'd2', 'd3']));
    const claims: number[] = [];
    for (let item = q.claim('d2'); item; item = q.claim('d2')) claims.push(item.issue.number);
    expect(claims).toEqual([4, 6, 3, 5, 7, 8]);
    expect(q.size).toBe(0);
    expect(q.claim('d1')).toBeUndefined();
  });

  it("never gives a daemon a crew it is not listed for; the rest stays for the run's end", () => {
    const q = new RunQueue();
    q.add(itemOf(issue(1, 'heavy'), 0), 'd1', ['d1']);
    q.add(itemOf(issue(2), 1), 'd1', ['d1', 'd2']);
    q.add(itemOf(issue(3, 'heavy'), 2), 'd1', ['d1']);
    expect(q.claim('d2')?.issue.number).toBe(2);
    expect(q.claim('d2')).toBeUndefined();
    expect(q.unclaimed().map((i) => i.issue.number)).toEqual([1, 3]);
    expect(q.drain().map((i) => i.issue.number)).toEqual([1, 3]);
    expect(q.size).toBe(0);
  });

  it("eligibility is the plan's (standby.ts sharedEligible): a daemon of a lighter class than the crew is not listed", () => {
    const office = createOffice({ slotsPerDaemon: 2, totalSlots: 4 });
    const daemons = [
      { id: 'd1', class: 'heavy' as const, free: 2, busy: 0 },
      { id: 'd2', class: 'light' as const, free: 2, busy: 0 },
    ];
    // Four light issues fill both daemons' first waves; the rest waits on standby.
    const weights: CapacityClass[] = ['light', 'light', 'light', 'light', 'heavy', 'light', 'standard'];
    const items = weights.map((w, i) => itemOf(issue(i + 1, w), i));
    const plan = office.planStandby(items, daemons, {
      jobMinutes: 720,
      crewTimeoutMinutes: 60,
      gradingReserveMinutes: 10,
      typicalMinutes: 10,
    });
    expect(new Set(plan.first.values())).toEqual(new Set(['d1', 'd2']));
    expect([...plan.standby.keys()].sort()).toEqual(['5#0', '6#0', '7#0']);
    expect(plan.eligible.get('5#0')).toEqual(['d1']);
    expect(plan.eligible.get('7#0')).toEqual(['d1']);
    // Planned daemon first, then the other crew job admission accepts it on.
    const light = plan.eligible.get('6#0')!;
    expect(light[0]).toBe(plan.standby.get('6#0'));
    expect([...light].sort()).toEqual(['d1', 'd2']);
  });
});

describe('the shared queue cadence (one queue per workflow run)', () => {
  it('a daemon whose slot frees takes standby work planned behind another daemon', () => {
    // #1 runs 190 min against an estimate of 10: behind it, its daemon's standby would wait.
    const w = twoDaemons([190, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]);
    const standby = run(w, 'standby');
    const shared = run(w, 'shared');
    expect(shared.makespan).toBeLessThan(standby.makespan);
    // The ten short issues ran on the other daemon while #1 ran: within #1's 190 min.
    expect(shared.makespan).toBeCloseTo(1 + 190, 5);
    for (const r of [standby, shared]) {
      expect(r.timeline).toHaveLength(w.issues.length);
      expect(r.issues.every((i) => i.status === 'done')).toBe(true);
    }
  });

  it("a freed slot runs its own standby first, then the other daemon's, in plan order", () => {
    const w = twoDaemons([190, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]);
    const { first, standby } = firstPlan(w, 200);
    const long = first.get('1#0')!;
    const other = long === 'd001' ? 'd002' : 'd001';
    const planned = (d: string) =>
      [...standby].filter(([, x]) => x === d).map(([id]) => Number(id.split('#')[0]));
    // The plan gives each daemon standby: the test is about which the free slot takes first.
    expect(planned(long).length).toBeGreaterThan(0);
    expect(planned(other).length).toBeGreaterThan(0);
    const ownFirstWave = [...first].filter(([, d]) => d === other).map(([id]) => Number(id.split('#')[0]));
    const r = run(w, 'shared');
    expect(ranOn(w, r, other)).toEqual([...ownFirstWave, ...planned(other), ...planned(long)]);
    expect(ranOn(w, r, long)).toEqual([1]);
  });

  it('a daemon never claims a crew its class may not take: it waits for a daemon that may', () => {
    // d001 (heavy) is held by #1 for 190 min; the light d002 takes every light crew, never a heavy one.
    const weights: CapacityClass[] = ['heavy', 'light', 'heavy', 'light', 'heavy', 'light', 'light', 'heavy'];
    const w = twoDaemons([190, 10, 10, 10, 10, 10, 10, 10], weights, ['heavy', 'light']);
    const r = run(w, 'shared');
    const light = ranOn(w, r, 'd002');
    expect(light.every((n) => classRank(w.issues[n - 1]!.weight) <= classRank('light'))).toBe(true);
    expect(light.sort((a, b) => a - b)).toEqual([2, 4, 6, 7]);
    expect(ranOn(w, r, 'd001').sort((a, b) => a - b)).toEqual([1, 3, 5, 8]);
    expect(r.timeline).toHaveLength(w.issues.length);
    expect(r.issues.every((i) => i.status === 'done')).toBe(true);
  });

  it('runs every run of a generated workload exactly once, on a class that may take it, never before the lower bound', () => {
    for (const seed of [2, 3]) {
      // The default fleet mixes classes (heavy, standard, standard, light) and weights.
      const w = generateWorkload(resolveSimOptions({ seed, issues: 120 }));
      for (const order of ['tail-guard', 'smallest-first'] as const) {
        const r = simulateDeployed(w, { workflow: DEFAULT_DEPLOYED, cadence: 'shared', order });
        const runs = w.issues.reduce((n, i) => n + i.runs.length, 0);
        expect(r.timeline).toHaveLength(runs);
        // Each issue's runs, each once: as many runs on the timeline as the workload drew for it.
        const perIssue = new Map<number, number>();
        for (const t of r.timeline) perIssue.set(t.issue, (perIssue.get(t.issue) ?? 0) + 1);
        for (const i of w.issues) expect(perIssue.get(i.number)).toBe(i.runs.length);
        for (const t of r.timeline) {
          const weight = w.issues[t.issue - 1]!.weight;
          expect(classRank(w.slots[t.slot]!.class)).toBeGreaterThanOrEqual(classRank(weight));
        }
        expect(measure(w, r).makespanRatio).toBeGreaterThanOrEqual(1);
      }
    }
  });
});
