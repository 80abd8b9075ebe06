import { CAPACITY_CLASSES, type CapacityClass } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';

/**
 * What the fleet simulator is asked to simulate. Every field has a default so `school-simulate`
 * with no flags runs a 24-student school; `resolveSimOptions` checks each field and names it in
 * the error with what was found and what is allowed.
 */
export interface SimOptions {
  /** Issues in the curriculum at t = 0. */
  issues: number;
  /** Issues of earlier cycles of the same world, run before the backlog (the office's records). Default: `issues`. */
  historyIssues: number;
  seed: number;
  /** Relative share of issues per weight class, in CAPACITY_CLASSES order. */
  weightMix: readonly number[];
  fleet: SimFleet;
  durations: SimDurations;
  failures: SimFailures;
  pauses: SimPauses;
}

/** The daemons and their slots. */
export interface SimFleet {
  /** Daemons (D). */
  daemons: number;
  /** Worktree slots per daemon (K); students = D × K. */
  slotsPerDaemon: number;
  /** Declared classes of the daemons, repeated round-robin over daemon indexes. */
  daemonClasses: readonly CapacityClass[];
}

/** How long runs take, and how well the scheduler knows it. */
export interface SimDurations {
  /** Median run duration in virtual minutes. */
  medianMinutes: number;
  /** Log-normal sigma of run durations: 0 = all equal, 1+ = a heavy tail. */
  tailSigma: number;
  /** Log-normal sigma of the size estimate the scheduler sees around the true duration. */
  estimateNoise: number;
}

/** Runs that fail (seed 002: a failed run goes back in the backlog as a repair). */
export interface SimFailures {
  /** Probability that one run fails, on average over the issues. */
  rate: number;
  /**
   * How much the failure rate differs between domain × difficulty cells (./workload.ts
   * `failureCells`): 0 = every run fails at `rate`, 1 = the default spread (a hard issue about six
   * times as likely to fail as an easy one; domains apart by about ±50 %).
   */
  spread: number;
}

/** Runs that stop on a usage/credit limit: the school pauses (seed 002). */
export interface SimPauses {
  /** Probability that one run stops on a usage limit. */
  rate: number;
  /** How long a usage-limit pause lasts, in virtual minutes. */
  minutes: number;
}

/** What a caller asks for: any field, or any field of a part, left out keeps its default. */
export type SimOptionsInput = Partial<Pick<SimOptions, 'issues' | 'historyIssues' | 'seed' | 'weightMix'>> & {
  fleet?: Partial<SimFleet>;
  durations?: Partial<SimDurations>;
  failures?: Partial<SimFailures>;
  pauses?: Partial<SimPauses>;
};

export const DEFAULT_SIM_OPTIONS: SimOptions = {
  issues: 240,
  historyIssues: 240,
  seed: 1,
  weightMix: [0.3, 0.5, 0.2, 0],
  fleet: { daemons: 3, slotsPerDaemon: 8, daemonClasses: ['heavy', 'standard', 'standard', 'light'] },
  durations: { medianMinutes: 20, tailSigma: 0.8, estimateNoise: 0.3 },
  failures: { rate: 0.1, spread: 1 },
  pauses: { rate: 0, minutes: 30 },
};

/** The options as one flat record, in the order `school-simulate --json` has always printed them. */
export function flatSimOptions(o: SimOptions): Record<string, unknown> {
  return {
    issues: o.issues,
    daemons: o.fleet.daemons,
    slotsPerDaemon: o.fleet.slotsPerDaemon,
    seed: o.seed,
    medianMinutes: o.durations.medianMinutes,
    tailSigma: o.durations.tailSigma,
    estimateNoise: o.durations.estimateNoise,
    failureRate: o.failures.rate,
    failureSpread: o.failures.spread,
    historyIssues: o.historyIssues,
    pauseRate: o.pauses.rate,
    pauseMinutes: o.pauses.minutes,
    weightMix: o.weightMix,
    daemonClasses: o.fleet.daemonClasses,
  };
}

function check(ok: boolean, field: string, found: unknown, allowed: string): void {
  if (!ok) throw new ConfigError(`simulate: ${field} must be ${allowed}; found ${JSON.stringify(found)}.`);
}

export function resolveSimOptions(partial: SimOptionsInput = {}): SimOptions {
  const d = DEFAULT_SIM_OPTIONS;
  const o: SimOptions = {
    ...d,
    ...partial,
    historyIssues: partial.historyIssues ?? partial.issues ?? d.issues,
    fleet: { ...d.fleet, ...partial.fleet },
    durations: { ...d.durations, ...partial.durations },
    failures: { ...d.failures, ...partial.failures },
    pauses: { ...d.pauses, ...partial.pauses },
  };
  const { fleet, durations: t, failures, pauses } = o;
  const int = (v: number, min: number, max: number) => Number.isInteger(v) && v >= min && v <= max;
  const num = (v: number, min: number, max: number) => Number.isFinite(v) && v >= min && v <= max;
  check(int(o.issues, 1, 1_000_000), 'issues', o.issues, 'a whole number from 1 to 1,000,000');
  check(int(fleet.daemons, 1, 10_000), 'daemons', fleet.daemons, 'a whole number from 1 to 10,000');
  check(
    int(fleet.slotsPerDaemon, 1, 64),
    'slots',
    fleet.slotsPerDaemon,
    'a whole number from 1 to 64 per daemon',
  );
  check(int(o.seed, 0, 0xffffffff), 'seed', o.seed, 'a whole number from 0 to 4294967295');
  check(num(t.medianMinutes, 0.01, 1e6) && t.medianMinutes > 0, 'medianMinutes', t.medianMinutes, '> 0');
  check(num(t.tailSigma, 0, 3), 'tail', t.tailSigma, 'a log-normal sigma from 0 to 3');
  check(num(t.estimateNoise, 0, 3), 'estimateNoise', t.estimateNoise, 'a sigma from 0 to 3');
  check(num(failures.rate, 0, 0.9), 'failure-rate', failures.rate, 'a probability from 0 to 0.9');
  check(num(failures.spread, 0, 3), 'failureSpread', failures.spread, 'a spread from 0 to 3');
  check(
    int(o.historyIssues, 0, 1_000_000),
    'historyIssues',
    o.historyIssues,
    'a whole number from 0 to 1,000,000',
  );
  check(num(pauses.rate, 0, 0.5), 'pause-rate', pauses.rate, 'a probability from 0 to 0.5');
  check(num(pauses.minutes, 0, 1e6), 'pauseMinutes', pauses.minutes, 'minutes ≥ 0');
  check(
    o.weightMix.length === CAPACITY_CLASSES.length &&
      o.weightMix.every((w) => num(w, 0, 1e9)) &&
      o.weightMix.some((w) => w > 0),
    'weightMix',
    o.weightMix,
    `${CAPACITY_CLASSES.length} non-negative shares (${CAPACITY_CLASSES.join(', ')}), not all 0`,
  );
  check(
    fleet.daemonClasses.length > 0 && fleet.daemonClasses.every((c) => CAPACITY_CLASSES.includes(c)),
    'daemonClasses',
    fleet.daemonClasses,
    `a non-empty list of ${CAPACITY_CLASSES.join(' | ')}`,
  );
  // A weight class no daemon can host would leave issues unplaceable forever: refuse up front.
  const fleetMax = Math.max(
    ...Array.from({ length: fleet.daemons }, (_, i) =>
      classRank(fleet.daemonClasses[i % fleet.daemonClasses.length]!),
    ),
  );
  const heaviest = o.weightMix.reduce((m, w, i) => (w > 0 ? i : m), 0);
  check(
    heaviest <= fleetMax,
    'weightMix',
    o.weightMix,
    `no heavier than the largest daemon class (${CAPACITY_CLASSES[fleetMax]}) among the ${fleet.daemons} daemon(s)`,
  );
  return o;
}

export function classRank(c: CapacityClass): number {
  return CAPACITY_CLASSES.indexOf(c);
}
