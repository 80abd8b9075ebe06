/**
 * The arithmetic of learning agent choice (docs/dispatch.md, "Choosing an agent"): Beta posteriors
 * on an agent's record, shrunk level by level (agent overall → agent in a domain → agent in a
 * domain at a difficulty), a mean cost per crew shrunk the same way, and a seeded sampler so a
 * plan drawn from the same state draws the same numbers.
 */

/** A Beta distribution over the chance that a crew's work is accepted and merged. */
export interface Beta {
  alpha: number;
  beta: number;
}

/** Weighted evidence: judges' verdicts count once, a merge or an unmerged close counts more. */
export interface Tally {
  successes: number;
  failures: number;
}

/** What an agent nobody has graded starts from: uniform, as wide as a Beta with mass 2 gets. */
export const UNTRIED: Beta = { alpha: 1, beta: 1 };

/**
 * Most pseudo-counts a parent lends a child. A thin cell leans on its parent; a cell with a dozen
 * settled crews speaks for itself, whatever the agent did elsewhere.
 */
export const PARENT_STRENGTH = 8;

export const ZERO: Tally = { successes: 0, failures: 0 };

export function mean(b: Beta): number {
  return b.alpha / (b.alpha + b.beta);
}

/**
 * The child's posterior: the parent's mean as a prior worth min(parent's mass, strength) crews,
 * plus the child's own evidence. An untried parent lends its own (wide) shape, so an agent never
 * graded anywhere is as uncertain in every cell as it is overall.
 */
export function shrink(parent: Beta, own: Tally, strength = PARENT_STRENGTH): Beta {
  const mass = parent.alpha + parent.beta;
  const s = Math.min(mass, strength);
  const m = parent.alpha / mass;
  return { alpha: m * s + own.successes, beta: (1 - m) * s + own.failures };
}

/** Crews and what they cost, for the expected cost of one more. */
export interface CostTally {
  crews: number;
  spendUsd: number;
}

/** Pseudo-crews a parent's mean cost is worth to a child (as `shrink`, for money). */
export const COST_STRENGTH = 2;

/** No crew can be free to the arithmetic: a command student that reports no cost still takes time. */
export const MIN_CREW_COST_USD = 0.01;

/** Mean cost per crew, shrunk toward the parent's mean by `strength` pseudo-crews. */
export function shrinkCost(parentMeanUsd: number, own: CostTally, strength = COST_STRENGTH): number {
  const m = (parentMeanUsd * strength + own.spendUsd) / (strength + own.crews);
  return Math.max(MIN_CREW_COST_USD, m);
}

/** A deterministic source of uniforms in [0, 1) from a string key (sfc32 seeded by a string hash). */
export interface Uniform {
  (): number;
}

/** cyrb128: four well-mixed 32-bit words from a string. */
function hash128(key: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < key.length; i++) {
    const k = key.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

export function seeded(key: string): Uniform {
  return sfc32(hash128(key));
}

/**
 * sfc32 from four 32-bit words, uniforms in [0, 1); the first 12 outputs are dropped (a fresh state
 * mixes poorly for a few rounds). The simulator's seeded streams (lab/simulate/prng.ts) use it too.
 */
export function sfc32(state: readonly [number, number, number, number]): Uniform {
  let [a, b, c, d] = state;
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

function normal(u: Uniform): number {
  const u1 = Math.max(u(), Number.MIN_VALUE);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u());
}

/** Gamma(shape, 1) by Marsaglia and Tsang; a shape below 1 is boosted by U^(1/shape). */
export function gamma(shape: number, u: Uniform): number {
  if (shape < 1) return gamma(shape + 1, u) * Math.pow(Math.max(u(), Number.MIN_VALUE), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(u);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const r = u();
    if (r < 1 - 0.0331 * x * x * x * x) return d * v;
    if (Math.log(Math.max(r, Number.MIN_VALUE)) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** One draw from Beta(alpha, beta). */
export function sampleBeta(b: Beta, u: Uniform): number {
  const x = gamma(b.alpha, u);
  const y = gamma(b.beta, u);
  return x + y > 0 ? x / (x + y) : mean(b);
}
