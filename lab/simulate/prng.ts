import { sfc32 } from '../../src/dispatch/choice/posterior.js';

/**
 * A small seeded PRNG for the fleet simulator: the same seed gives the same workload on every
 * machine and every Node version, which `Math.random` cannot promise. sfc32 seeded through
 * splitmix32 (well-distributed 32-bit state from any integer seed).
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
  /** Log-normal with the given median and log-space spread (the "tail" sigma). */
  logNormal(median: number, sigma: number): number;
  /** Picks an index from weights (need not sum to 1). */
  pick(weights: readonly number[]): number;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export function createRng(seed: number): Rng {
  const init = splitmix32(seed);
  const next = sfc32([init(), init(), init(), init()]);
  const normal = (): number => {
    const u = 1 - next(); // (0, 1]: log(0) never happens
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  return {
    next,
    normal,
    logNormal: (median, sigma) => median * Math.exp(sigma * normal()),
    pick(weights) {
      const total = weights.reduce((s, w) => s + w, 0);
      let r = next() * total;
      for (const [i, w] of weights.entries()) {
        if (r < w) return i;
        r -= w;
      }
      return weights.length - 1;
    },
  };
}
