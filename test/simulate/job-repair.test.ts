import { describe, expect, it } from 'vitest';
import { DEFAULT_DEPLOYED, simulateDeployed, type IdleCauses } from '../../lab/simulate/deployed.js';
import { resolveSimOptions } from '../../lab/simulate/options.js';
import type { SimIssue, Workload } from '../../lab/simulate/workload.js';

/** One daemon with one slot; every issue estimated at its first run's duration. */
function oneSlot(issues: Array<Array<[number, 'success' | 'failure']>>): Workload {
  const options = resolveSimOptions({
    issues: issues.length,
    fleet: { daemons: 1, slotsPerDaemon: 1, daemonClasses: ['standard'] },
    weightMix: [0, 1, 0, 0],
  });
  const list: SimIssue[] = issues.map((runs, i) => ({
    number: i + 1,
    weight: 'standard',
    priority: 2,
    size: runs[0]![0],
    runs: runs.map(([duration, outcome]) => ({ duration, outcome })),
  }));
  const chains = list.map((i) => i.runs.reduce((s, r) => s + r.duration, 0));
  const totalWork = chains.reduce((a, b) => a + b, 0);
  return {
    options,
    issues: list,
    slots: [{ index: 0, daemon: 'd001', slot: 0, class: 'standard' }],
    totalWork,
    longestChain: Math.max(...chains),
    lowerBound: Math.max(totalWork, ...chains),
  };
}

const starts = (r: ReturnType<typeof simulateDeployed>) =>
  r.timeline.map((t) => [t.issue, t.attempt, t.start] as const);

describe('the GitHub cadence: crew ends reach the office at the grade; a crew job repairs its own crews', () => {
  // #1 fails after 30 min and its repair takes 20; #2 takes 10. Smallest-first puts #2 first.
  const w = oneSlot([
    [
      [30, 'failure'],
      [20, 'success'],
    ],
    [[10, 'success']],
  ]);
  const options = {
    workflow: DEFAULT_DEPLOYED,
    cadence: 'standby' as const,
    order: 'smallest-first' as const,
    crewTimeoutMinutes: 40,
  };

  it('the job that ran the failed crew starts its repair at once, before the rest of its standby', () => {
    const r = simulateDeployed(w, options);
    // #2 first (the first wave), then #1 on standby; its repair in the same job when it fails.
    expect(starts(r)).toEqual([
      [2, 1, 1],
      [1, 1, 11],
      [1, 2, 41],
    ]);
  });

  it('without it (and without the next cycle) the repair waits for the grade and the next cron', () => {
    const idle: IdleCauses = { noJob: 0, queued: 0, window: 0, empty: 0 };
    const r = simulateDeployed(w, { ...options, repairInJob: false, nextCycle: { runs: 0 }, idle });
    // The job ends at 41; its grade hands the failure to the office at 46; the next cron is at 120.
    expect(starts(r)).toEqual([
      [2, 1, 1],
      [1, 1, 11],
      [1, 2, 121],
    ]);
    // The slot waited with the repair known (46–120) and not yet known (41–46): 79 minutes with no job.
    expect(idle.noJob).toBeCloseTo(79, 5);
  });

  it('a run that ends with work waiting starts the next run after its grade (nextCycle)', () => {
    const r = simulateDeployed(w, { ...options, repairInJob: false, nextCycle: { minutes: 2 } });
    // Grade at 46, plan at 48, its crew job a minute later.
    expect(starts(r).at(-1)).toEqual([1, 2, 49]);
  });

  it("a plan before a run's grade sees that run's crews as planned: their daemon's slots stay held", () => {
    // Two 10-minute issues; a 30-minute job holds one (a crew timeout of 20 and the reserve leave no
    // room for standby). The job ends at 11, its grade comes at 71; the cron ticks at 30, 60 and 90.
    const two = oneSlot([[[10, 'success']], [[10, 'success']]]);
    const r = simulateDeployed(two, {
      ...options,
      workflow: { ...DEFAULT_DEPLOYED, scheduleMinutes: 30, jobTimeoutMinutes: 30 },
      crewTimeoutMinutes: 20,
      gradeMinutes: 60,
      nextCycle: { runs: 0 },
    });
    // Not at 31 or 61: until the grade the state shows #1 planned on the only slot.
    expect(starts(r)).toEqual([
      [1, 1, 1],
      [2, 1, 91],
    ]);
  });
});
