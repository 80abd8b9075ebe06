import { describe, expect, it } from 'vitest';
import { renderSummary, type HarnessRun, type TestResult } from './report.js';

const run = (tests: TestResult[], violations: HarnessRun['violations'] = []): HarnessRun => ({
  heading: 'school-core resilience (short: 10 iteration(s) of 20 processes)',
  kills: { total: 200, byOp: { enqueue: 120, drain: 80 } },
  processes: { spawned: 200, exits: 0 },
  seconds: { chaos: 48.2, total: 50.04 },
  operations: { acknowledged: 253, errors: 2 },
  violations,
  tests,
  faults: { 2: 200, 6: 200 },
});

describe('the fault harness report', () => {
  it('without the regression suite prints the measured invariants and no score table', () => {
    const out = renderSummary(run([]));
    expect(out).toContain('injected 200 SIGKILLs (enqueue 120, drain 80), 0 clean exits, 200 processes');
    expect(out).toContain('acknowledged operations: 253; operation errors (not violations): 2');
    expect(out).toContain('invariant violations: 0');
    expect(out).toContain('  6 Concurrent Load: 200');
    expect(out).not.toMatch(/Overall|Score|\| Dim/);
  });

  it('with node tests prints the scored table, violations lowering their dimension', () => {
    const tests: TestResult[] = [
      { title: 'N2.1 replay', node: 'N2.1', dimension: 2, passed: true, knownGap: false },
      { title: 'N6.1 waves', node: 'N6.1', dimension: 6, passed: true, knownGap: false },
    ];
    const out = renderSummary(run(tests, [{ invariant: 'graded-twice', detail: 'job 7' }]));
    expect(out).toContain('invariant violations: 1\n  - graded-twice: job 7');
    expect(out).toContain('| 2 | State Machine | N2.1 | 1/1 | 200 | 1 | 8.0 |');
    expect(out).toContain('| 6 | Concurrent Load | N6.1 | 1/1 | 200 | 0 | 10.0 |');
    expect(out).toMatch(/Overall: 2\.3 \/ 10/);
  });
});
