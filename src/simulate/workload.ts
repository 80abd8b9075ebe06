import { CAPACITY_CLASSES, type CapacityClass } from '../config/schema.js';
import { classRank, type SimOptions } from './options.js';
import { createRng } from './prng.js';

/**
 * The generated workload: every issue with all the runs it will ever need, drawn up front from the
 * seed. Outcomes belong to the issue, not to the schedule, so every policy faces exactly the same
 * work (same durations, same failures, same usage-limit hits) and the comparison is fair.
 */
export type RunOutcome = 'success' | 'failure' | 'usage_limit';

export interface SimRun {
  /** Virtual minutes the run occupies its slot. */
  duration: number;
  outcome: RunOutcome;
}

export interface SimIssue {
  number: number;
  weight: CapacityClass;
  priority: number;
  /** The size estimate the scheduler sees (minutes); the true duration differs by estimateNoise. */
  size: number;
  /** Runs in the order they happen; ends with a success or the second consecutive failure. */
  runs: SimRun[];
}

export interface SimSlot {
  index: number;
  daemon: string;
  slot: number;
  class: CapacityClass;
}

export interface Workload {
  options: SimOptions;
  issues: SimIssue[];
  slots: SimSlot[];
  /** Σ of every run's duration: the busy slot-time any policy must spend. */
  totalWork: number;
  /** The longest issue's runs back to back: they can never overlap. */
  longestChain: number;
  /** max(totalWork / slots, longestChain): no schedule can finish earlier. */
  lowerBound: number;
}

export function daemonId(i: number): string {
  return `d${String(i + 1).padStart(3, '0')}`;
}

export function fits(weight: CapacityClass, slotClass: CapacityClass): boolean {
  return classRank(weight) <= classRank(slotClass);
}

export function generateWorkload(options: SimOptions): Workload {
  const rng = createRng(options.seed);
  const issues: SimIssue[] = [];
  let totalWork = 0;
  let longestChain = 0;
  for (let n = 1; n <= options.issues; n++) {
    const base = rng.logNormal(options.medianMinutes, options.tailSigma);
    const size = base * Math.exp(options.estimateNoise * rng.normal());
    const weight = CAPACITY_CLASSES[rng.pick(options.weightMix)]!;
    const runs: SimRun[] = [];
    let failures = 0;
    for (;;) {
      if (rng.next() < options.pauseRate) {
        // The limit hits part-way through; the work so far is lost but no failure is counted.
        runs.push({ duration: Math.max(0.01, base * rng.next()), outcome: 'usage_limit' });
        continue;
      }
      // Seed 002: a repair restarts the whole room from the contract, so it costs about as much.
      const duration = failures === 0 ? base : base * (0.75 + 0.5 * rng.next());
      if (rng.next() < options.failureRate) {
        runs.push({ duration, outcome: 'failure' });
        if (++failures === 2) break; // seed 002: never a third consecutive attempt
      } else {
        runs.push({ duration, outcome: 'success' });
        break;
      }
    }
    const chain = runs.reduce((s, r) => s + r.duration, 0);
    totalWork += chain;
    longestChain = Math.max(longestChain, chain);
    issues.push({ number: n, weight, priority: 2, size, runs });
  }
  const slots: SimSlot[] = [];
  for (let d = 0; d < options.daemons; d++) {
    const cls = options.daemonClasses[d % options.daemonClasses.length]!;
    for (let k = 0; k < options.slotsPerDaemon; k++) {
      slots.push({ index: slots.length, daemon: daemonId(d), slot: k, class: cls });
    }
  }
  return {
    options,
    issues,
    slots,
    totalWork,
    longestChain,
    lowerBound: Math.max(totalWork / slots.length, longestChain),
  };
}
