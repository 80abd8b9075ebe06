import { describe, expect, it } from 'vitest';
import { DEFAULT_DEPLOYED, simulateDeployed, type Cadence } from '../../src/simulate/deployed.js';
import { measure } from '../../src/simulate/metrics.js';
import { resolveSimOptions } from '../../src/simulate/options.js';
import { generateWorkload, type SimIssue, type Workload } from '../../src/simulate/workload.js';

/** Two one-slot daemons; every issue estimated at 10 min; `durations` are the true run times. */
function twoDaemons(durations: number[]): Workload {
  const options = resolveSimOptions({
    issues: durations.length,
    daemons: 2,
    slotsPerDaemon: 1,
    daemonClasses: ['standard'],
    weightMix: [0, 1, 0, 0],
  });
  const issues: SimIssue[] = durations.map((duration, i) => ({
    number: i + 1,
    weight: 'standard',
    priority: 2,
    size: 10,
    runs: [{ duration, outcome: 'success' }],
  }));
  const totalWork = durations.reduce((s, d) => s + d, 0);
  const longestChain = Math.max(...durations);
  return {
    options,
    issues,
    slots: ['d001', 'd002'].map((daemon, index) => ({ index, daemon, slot: 0, class: 'standard' })),
    totalWork,
    longestChain,
    lowerBound: Math.max(totalWork / 2, longestChain),
  };
}

const run = (w: Workload, cadence: Cadence) =>
  simulateDeployed(w, { ...DEFAULT_DEPLOYED, cadence, order: 'smallest-first', crewTimeoutMinutes: 200 });

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

  it('runs every run of a generated workload exactly once, never before the lower bound', () => {
    for (const seed of [2, 3]) {
      const w = generateWorkload(resolveSimOptions({ seed, issues: 120 }));
      const r = simulateDeployed(w, { ...DEFAULT_DEPLOYED, cadence: 'shared', order: 'tail-guard' });
      const runs = w.issues.reduce((n, i) => n + i.runs.length, 0);
      expect(r.timeline).toHaveLength(runs);
      const ids = r.timeline.map((t) => `${t.issue}#${t.attempt}#${t.start}`);
      expect(new Set(ids).size).toBe(ids.length);
      expect(measure(w, r).makespanRatio).toBeGreaterThanOrEqual(1);
    }
  });
});
