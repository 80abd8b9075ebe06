import { describe, expect, it } from 'vitest';
import { run } from '../../lab/simulate/command.js';
import { LEARNING_POLICIES, simulateLearning } from '../../lab/simulate/learning.js';

/**
 * Issue 36, item 6: `school-simulate --learning`. Goals over seeds 2–6: learning ≥ 1.15 × greedy's
 * merged per dollar on every seed, and ≥ 90 % of the oracle's on the median seed (not on every seed:
 * docs/simulate.md gives the figures).
 */
describe('simulate --learning', () => {
  it('is reproducible: the same seed gives the same figures', () => {
    expect(simulateLearning({ seed: 3, issues: 96 })).toEqual(simulateLearning({ seed: 3, issues: 96 }));
  });

  it('every policy faces the same backlog; the oracle has no regret; learning beats greedy on merged per dollar on seeds 2–6', () => {
    for (const seed of [2, 3, 4, 5, 6]) {
      const r = simulateLearning({ seed });
      expect(r.policies.map((p) => p.label)).toEqual([...LEARNING_POLICIES]);
      for (const p of r.policies) expect(Object.values(p.crews).reduce((a, b) => a + b, 0)).toBe(240);
      const f = (l: string) => r.policies.find((p) => p.label === l)!;
      expect(f('oracle').regret).toBe(0);
      expect(f('learning').mergedPerDollar).toBeGreaterThan(1.15 * f('greedy').mergedPerDollar);
      expect(f('learning').regret).toBeLessThan(f('greedy').regret);
    }
  });

  it("learning reaches 90 % of the oracle's merged per dollar on the median of seeds 2–6, told list prices only", () => {
    const shares = [2, 3, 4, 5, 6].map((seed) => {
      const r = simulateLearning({ seed });
      const f = (l: string) => r.policies.find((p) => p.label === l)!;
      return f('learning').mergedPerDollar / f('oracle').mergedPerDollar;
    });
    expect([...shares].sort((a, b) => a - b)[2]).toBeGreaterThanOrEqual(0.9);
  });

  it('the oracle is an honest upper reference: in expectation no assignment of agents beats it, the by-issue ratio rule included', () => {
    for (const seed of [2, 7, 11]) {
      const r = simulateLearning({ seed, issues: 120 });
      const oracle = r.policies.find((p) => p.label === 'oracle')!;
      expect(oracle.expectedMergedPerDollar).toBeCloseTo(r.oracleTargetPerDollar, 10);
      for (const p of [...r.policies, r.oracleByIssue])
        expect(p.expectedMergedPerDollar).toBeLessThanOrEqual(oracle.expectedMergedPerDollar + 1e-12);
    }
    // The by-issue rule is not the ratio optimum: on seed 2 it falls short by more than rounding.
    const r = simulateLearning({ seed: 2 });
    const oracle = r.policies.find((p) => p.label === 'oracle')!;
    expect(r.oracleByIssue.expectedMergedPerDollar).toBeLessThan(0.95 * oracle.expectedMergedPerDollar);
  });

  it('--json gives policies[] with label, merged, spendUsd, mergedPerDollar and regret; a bad seed names the option', async () => {
    const out: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((s: string) => (out.push(s), true)) as typeof process.stdout.write;
    try {
      expect(await run(['--learning', '--seed', '4', '--issues', '48', '--json'])).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    const json = JSON.parse(out.join('')) as { policies: Array<Record<string, unknown>> };
    expect(json.policies.map((p) => p.label)).toEqual(['greedy', 'random', 'oracle', 'learning']);
    for (const p of json.policies) {
      expect(p).toEqual(
        expect.objectContaining({
          merged: expect.any(Number),
          spendUsd: expect.any(Number),
          mergedPerDollar: expect.any(Number),
          regret: expect.any(Number),
        }),
      );
    }
    await expect(run(['--learning', '--seed', 'x'])).rejects.toThrow(/--seed/);
  });
});
