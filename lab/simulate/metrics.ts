import type { SimResult } from './engine.js';
import type { Workload } from './workload.js';

/** The figures a user compares policies on (docs/simulate.md, "The figures"). */
export interface PolicyMetrics {
  policy: string;
  makespan: number;
  lowerBound: number;
  /** makespan / lowerBound: 1.0 is perfect, lower is impossible. */
  makespanRatio: number;
  /** Busy slot-time / (slots × makespan). */
  utilization: number;
  /**
   * Busy slot-time / (busy + idle slot-time an item of the backlog could have used), outside pauses:
   * 1 means no slot ever sat idle while work it could run was waiting.
   */
  backlogUtilization: number;
  /** Time to first verdict per issue (minutes from t = 0), median and 95th percentile. */
  ttfvP50: number;
  ttfvP95: number;
  issuesDone: number;
  issuesStopped: number;
  runs: number;
  repairs: number;
  pausedMinutes: number;
}

/** Nearest-rank percentile (no interpolation: every reported value happened). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function measure(workload: Workload, result: SimResult): PolicyMetrics {
  const busy = result.timeline.reduce((s, t) => s + (t.end - t.start), 0);
  const ttfv = result.issues.flatMap((i) => (i.firstVerdictAt === undefined ? [] : [i.firstVerdictAt]));
  const makespan = result.makespan;
  return {
    policy: result.policy,
    makespan,
    lowerBound: workload.lowerBound,
    makespanRatio: makespan / workload.lowerBound,
    utilization: makespan > 0 ? busy / (workload.slots.length * makespan) : 1,
    backlogUtilization: result.backlog.available > 0 ? result.backlog.busy / result.backlog.available : 1,
    ttfvP50: percentile(ttfv, 50),
    ttfvP95: percentile(ttfv, 95),
    issuesDone: result.issues.filter((i) => i.status === 'done').length,
    issuesStopped: result.issues.filter((i) => i.status === 'stopped').length,
    runs: result.timeline.length,
    repairs: result.timeline.filter((t) => t.repair).length,
    pausedMinutes: result.pauses.reduce((s, p) => s + (p.to - p.from), 0),
  };
}
