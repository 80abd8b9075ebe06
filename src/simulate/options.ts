import { CAPACITY_CLASSES, type CapacityClass } from '../config/schema.js';
import { ConfigError } from '../errors.js';

/**
 * What the fleet simulator is asked to simulate. Every field has a default so `school simulate`
 * with no flags runs a 24-student school; `resolveSimOptions` checks each field and names it in
 * the error with what was found and what is allowed.
 */
export interface SimOptions {
  /** Issues in the curriculum at t = 0. */
  issues: number;
  /** Daemons (D). */
  daemons: number;
  /** Worktree slots per daemon (K); students = D × K. */
  slotsPerDaemon: number;
  seed: number;
  /** Median run duration in virtual minutes. */
  medianMinutes: number;
  /** Log-normal sigma of run durations: 0 = all equal, 1+ = a heavy tail. */
  tailSigma: number;
  /** Log-normal sigma of the size estimate the scheduler sees around the true duration. */
  estimateNoise: number;
  /**
   * Probability that one run fails, on average over the issues (seed 002: a failed run goes back in
   * the backlog as a repair).
   */
  failureRate: number;
  /**
   * How much the failure rate differs between domain × difficulty cells (./workload.ts
   * `failureCells`): 0 = every run fails at `failureRate`, 1 = the default spread (a hard issue
   * about six times as likely to fail as an easy one; domains apart by about ±50 %).
   */
  failureSpread: number;
  /** Issues of earlier cycles of the same world, run before the backlog (the office's records). Default: `issues`. */
  historyIssues: number;
  /** Probability that one run stops on a usage/credit limit: the school pauses (seed 002). */
  pauseRate: number;
  /** How long a usage-limit pause lasts, in virtual minutes. */
  pauseMinutes: number;
  /** Relative share of issues per weight class, in CAPACITY_CLASSES order. */
  weightMix: readonly number[];
  /** Declared classes of the daemons, repeated round-robin over daemon indexes. */
  daemonClasses: readonly CapacityClass[];
}

export const DEFAULT_SIM_OPTIONS: SimOptions = {
  issues: 240,
  daemons: 3,
  slotsPerDaemon: 8,
  seed: 1,
  medianMinutes: 20,
  tailSigma: 0.8,
  estimateNoise: 0.3,
  failureRate: 0.1,
  failureSpread: 1,
  historyIssues: 240,
  pauseRate: 0,
  pauseMinutes: 30,
  weightMix: [0.3, 0.5, 0.2, 0],
  daemonClasses: ['heavy', 'standard', 'standard', 'light'],
};

function check(ok: boolean, field: string, found: unknown, allowed: string): void {
  if (!ok) throw new ConfigError(`simulate: ${field} must be ${allowed}; found ${JSON.stringify(found)}.`);
}

export function resolveSimOptions(partial: Partial<SimOptions> = {}): SimOptions {
  const o: SimOptions = {
    ...DEFAULT_SIM_OPTIONS,
    ...partial,
    historyIssues: partial.historyIssues ?? partial.issues ?? DEFAULT_SIM_OPTIONS.issues,
  };
  const int = (v: number, min: number, max: number) => Number.isInteger(v) && v >= min && v <= max;
  const num = (v: number, min: number, max: number) => Number.isFinite(v) && v >= min && v <= max;
  check(int(o.issues, 1, 1_000_000), 'issues', o.issues, 'a whole number from 1 to 1,000,000');
  check(int(o.daemons, 1, 10_000), 'daemons', o.daemons, 'a whole number from 1 to 10,000');
  check(int(o.slotsPerDaemon, 1, 64), 'slots', o.slotsPerDaemon, 'a whole number from 1 to 64 per daemon');
  check(int(o.seed, 0, 0xffffffff), 'seed', o.seed, 'a whole number from 0 to 4294967295');
  check(num(o.medianMinutes, 0.01, 1e6) && o.medianMinutes > 0, 'medianMinutes', o.medianMinutes, '> 0');
  check(num(o.tailSigma, 0, 3), 'tail', o.tailSigma, 'a log-normal sigma from 0 to 3');
  check(num(o.estimateNoise, 0, 3), 'estimateNoise', o.estimateNoise, 'a sigma from 0 to 3');
  check(num(o.failureRate, 0, 0.9), 'failure-rate', o.failureRate, 'a probability from 0 to 0.9');
  check(num(o.failureSpread, 0, 3), 'failureSpread', o.failureSpread, 'a spread from 0 to 3');
  check(
    int(o.historyIssues, 0, 1_000_000),
    'historyIssues',
    o.historyIssues,
    'a whole number from 0 to 1,000,000',
  );
  check(num(o.pauseRate, 0, 0.5), 'pause-rate', o.pauseRate, 'a probability from 0 to 0.5');
  check(num(o.pauseMinutes, 0, 1e6), 'pauseMinutes', o.pauseMinutes, 'minutes ≥ 0');
  check(
    o.weightMix.length === CAPACITY_CLASSES.length &&
      o.weightMix.every((w) => num(w, 0, 1e9)) &&
      o.weightMix.some((w) => w > 0),
    'weightMix',
    o.weightMix,
    `${CAPACITY_CLASSES.length} non-negative shares (${CAPACITY_CLASSES.join(', ')}), not all 0`,
  );
  check(
    o.daemonClasses.length > 0 && o.daemonClasses.every((c) => CAPACITY_CLASSES.includes(c)),
    'daemonClasses',
    o.daemonClasses,
    `a non-empty list of ${CAPACITY_CLASSES.join(' | ')}`,
  );
  // A weight class no daemon can host would leave issues unplaceable forever: refuse up front.
  const fleetMax = Math.max(
    ...Array.from({ length: o.daemons }, (_, i) => classRank(o.daemonClasses[i % o.daemonClasses.length]!)),
  );
  const heaviest = o.weightMix.reduce((m, w, i) => (w > 0 ? i : m), 0);
  check(
    heaviest <= fleetMax,
    'weightMix',
    o.weightMix,
    `no heavier than the largest daemon class (${CAPACITY_CLASSES[fleetMax]}) among the ${o.daemons} daemon(s)`,
  );
  return o;
}

export function classRank(c: CapacityClass): number {
  return CAPACITY_CLASSES.indexOf(c);
}
