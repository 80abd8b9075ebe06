import { CAPACITY_CLASSES, type CapacityClass } from '../../src/config/schema.js';
import { classRank, type SimOptions } from './options.js';
import { createRng, type Rng } from './prng.js';

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
  /** The size estimate the scheduler sees (minutes); the true duration differs by `durations.estimateNoise`. */
  size: number;
  /**
   * The issue's domain and difficulty, as the curriculum classifies them (the office sees them; the
   * failure rate of the cell does not show). Absent on hand-made issues: the office's defaults.
   */
  domain?: string;
  difficulty?: number;
  /** Runs in the order they happen; ends with a success or the second consecutive failure. */
  runs: SimRun[];
}

/**
 * The world's hidden truth per domain × difficulty: each run's chance to fail. Drawn from the seed,
 * the same for the backlog and for its history.
 */
export interface FailureCells {
  domains: readonly string[];
  /** `rate(domain index, difficulty 1–5)`. */
  rates: number[][];
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
  /**
   * Earlier cycles of the same school: issues of the same world (the same hidden failure rates per
   * cell), all run before the backlog starts. What the office's records hold at minute 0 when the
   * simulation gives it a history (./office-adapter.ts). Numbered after the backlog.
   */
  history?: SimIssue[];
  /** The hidden failure rate per domain × difficulty (the truth, for reports and tests). */
  cells?: FailureCells;
}

/** The simulated curriculum's domains, with their shares of the issues. */
export const SIM_DOMAINS = ['docs', 'tests', 'frontend', 'backend', 'infra', 'data'] as const;
const DOMAIN_SHARES = [0.15, 0.15, 0.2, 0.25, 0.1, 0.15];

/**
 * Difficulty 1–5: 3 + DIFFICULTY_BY_SIZE × the issue's duration in log-σ units + DIFFICULTY_NOISE ×
 * a standard normal, rounded and clamped. Harder issues take longer, loosely: the curriculum's
 * classification is a label, not a measurement.
 */
const DIFFICULTY_BY_SIZE = 0.8;
const DIFFICULTY_NOISE = 0.8;
/** A difficulty step multiplies the failure rate by e^0.45 ≈ 1.57 (0.41× at 1, 2.46× at 5, × spread). */
const FAILURE_PER_DIFFICULTY = 0.45;
/** Log-σ of a domain's failure multiplier (× spread). */
const FAILURE_DOMAIN_SIGMA = 0.5;
/** No cell fails more often than this. */
const MAX_CELL_FAILURE = 0.9;

export function daemonId(i: number): string {
  return `d${String(i + 1).padStart(3, '0')}`;
}

export function fits(weight: CapacityClass, slotClass: CapacityClass): boolean {
  return classRank(weight) <= classRank(slotClass);
}

export function generateWorkload(options: SimOptions): Workload {
  const rng = createRng(options.seed);
  // The cells and the history draw from streams of their own, so the backlog's durations, sizes,
  // weights and the draws that decide its runs' outcomes stay those of the seed.
  const cellRng = createRng((options.seed ^ 0x5bd1e995) >>> 0);
  const cells = failureCells(options, cellRng);
  const issues: SimIssue[] = [];
  let totalWork = 0;
  let longestChain = 0;
  for (let n = 1; n <= options.issues; n++) {
    const issue = drawIssue(n, options, cells, rng, cellRng);
    const chain = issue.runs.reduce((s, r) => s + r.duration, 0);
    totalWork += chain;
    longestChain = Math.max(longestChain, chain);
    issues.push(issue);
  }
  const historyRng = createRng((options.seed ^ 0x27d4eb2f) >>> 0);
  const history: SimIssue[] = [];
  for (let n = 1; n <= options.historyIssues; n++)
    history.push(drawIssue(options.issues + n, options, cells, historyRng, historyRng));
  const slots: SimSlot[] = [];
  const { fleet } = options;
  for (let d = 0; d < fleet.daemons; d++) {
    const cls = fleet.daemonClasses[d % fleet.daemonClasses.length]!;
    for (let k = 0; k < fleet.slotsPerDaemon; k++) {
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
    history,
    cells,
  };
}

/**
 * One issue and all its runs. `rng` draws what the backlog always drew (duration, size, weight,
 * the runs), `cellRng` its domain and difficulty.
 */
function drawIssue(n: number, options: SimOptions, cells: FailureCells, rng: Rng, cellRng: Rng): SimIssue {
  const { medianMinutes, tailSigma, estimateNoise } = options.durations;
  const base = rng.logNormal(medianMinutes, tailSigma);
  const size = base * Math.exp(estimateNoise * rng.normal());
  const weight = CAPACITY_CLASSES[rng.pick(options.weightMix)]!;
  const z = tailSigma > 0 ? Math.log(base / medianMinutes) / tailSigma : 0;
  const domainIndex = cellRng.pick(DOMAIN_SHARES);
  const difficulty = clampDifficulty(3 + DIFFICULTY_BY_SIZE * z + DIFFICULTY_NOISE * cellRng.normal());
  const failureRate = cells.rates[domainIndex]![difficulty - 1]!;
  const runs: SimRun[] = [];
  let failures = 0;
  for (;;) {
    if (rng.next() < options.pauses.rate) {
      // The limit hits part-way through; the work so far is lost but no failure is counted.
      runs.push({ duration: Math.max(0.01, base * rng.next()), outcome: 'usage_limit' });
      continue;
    }
    // Seed 002: a repair restarts the whole room from the contract, so it costs about as much.
    const duration = failures === 0 ? base : base * (0.75 + 0.5 * rng.next());
    if (rng.next() < failureRate) {
      runs.push({ duration, outcome: 'failure' });
      if (++failures === 2) break; // seed 002: never a third consecutive attempt
    } else {
      runs.push({ duration, outcome: 'success' });
      break;
    }
  }
  return { number: n, weight, priority: 2, size, domain: cells.domains[domainIndex]!, difficulty, runs };
}

function clampDifficulty(x: number): number {
  return Math.min(5, Math.max(1, Math.round(x)));
}

/**
 * The hidden failure rate of each domain × difficulty: `failures.rate` × the domain's multiplier
 * (log-normal, σ 0.5 × spread) × the difficulty's (e^(0.45 × spread × (d − 3))), divided by the mean
 * multiplier over the issues the workload draws, so a run fails at `failures.rate` on average as
 * before; capped at 0.9. Spread 0: every cell at `failures.rate`.
 */
export function failureCells(options: SimOptions, rng: Rng): FailureCells {
  const spread = options.failures.spread;
  const domainMult = SIM_DOMAINS.map(() => Math.exp(FAILURE_DOMAIN_SIGMA * spread * rng.normal()));
  const diffMult = [1, 2, 3, 4, 5].map((d) => Math.exp(FAILURE_PER_DIFFICULTY * spread * (d - 3)));
  // P(difficulty = d): 3 + N(0, a² + b²) rounded and clamped (z is a standard normal when σ > 0).
  const sd = Math.hypot(options.durations.tailSigma > 0 ? DIFFICULTY_BY_SIZE : 0, DIFFICULTY_NOISE);
  const cdf = (x: number) => 0.5 * (1 + erf((x - 3) / (sd * Math.SQRT2)));
  const pDiff = [1, 2, 3, 4, 5].map((d) => (d === 5 ? 1 : cdf(d + 0.5)) - (d === 1 ? 0 : cdf(d - 0.5)));
  const shares = DOMAIN_SHARES.reduce((s, w) => s + w, 0);
  let meanMult = 0;
  for (const [i, m] of domainMult.entries())
    for (const [j, k] of diffMult.entries()) meanMult += (DOMAIN_SHARES[i]! / shares) * pDiff[j]! * m * k;
  const rates = domainMult.map((m) =>
    diffMult.map((k) => Math.min(MAX_CELL_FAILURE, (options.failures.rate * m * k) / meanMult)),
  );
  return { domains: SIM_DOMAINS, rates };
}

/** Abramowitz–Stegun 7.1.26 (|error| < 1.5e-7). */
function erf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-x * x);
  return x >= 0 ? y : -y;
}
