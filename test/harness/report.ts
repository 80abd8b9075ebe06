import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Invariant, Violation } from './invariants.js';

/**
 * The resilience report: per dimension of seed 001, the regression tests of its nodes (passed /
 * total), the faults the harness injected that attack it, the invariant violations attributed to
 * it, and a score:
 *
 *   score = max(0, 10 × passing node tests / node tests − 2 × violations)
 *
 * A test marked as a known gap (`it.fails`, its title ends in "[known gap]") counts as not passing.
 */
export const DIMENSIONS = [
  { n: 1, name: 'Input Boundary' },
  { n: 2, name: 'State Machine' },
  { n: 3, name: 'Temporal' },
  { n: 4, name: 'AuthN/Z Shadow' },
  { n: 5, name: 'Data Integrity' },
  { n: 6, name: 'Concurrent Load' },
  { n: 7, name: 'External Dep' },
  { n: 8, name: 'Brownfield' },
] as const;

/** Which dimension a broken invariant speaks against. */
export const INVARIANT_DIMENSION: Record<Invariant, number> = {
  'secret-persisted': 1,
  'acked-enqueue-lost': 2,
  'acked-plan-lost': 2,
  'acked-grade-lost': 2,
  'graded-twice': 2,
  'ema-applied-twice': 6,
  'partial-file-parsed': 5,
  'checkpoint-unverifiable': 5,
  'job-left-claimed': 7,
  'lease-leaked': 8,
};

export interface TestResult {
  title: string;
  node: string;
  dimension: number;
  passed: boolean;
  knownGap: boolean;
}

/** Runs the regression suite with vitest's JSON reporter (or reads a results file). */
export function regressionResults(resultsFile: string, run: boolean): TestResult[] {
  if (run) {
    spawnSync(
      process.execPath,
      [
        'node_modules/vitest/vitest.mjs',
        'run',
        'test/regression',
        '--reporter=json',
        `--outputFile=${resultsFile}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
  }
  if (!existsSync(resultsFile)) return [];
  const json = JSON.parse(readFileSync(resultsFile, 'utf8')) as {
    testResults: Array<{ assertionResults: Array<{ title: string; status: string }> }>;
  };
  const out: TestResult[] = [];
  for (const f of json.testResults)
    for (const t of f.assertionResults) {
      const m = /^N([1-8])\.([1-3])\b/.exec(t.title);
      if (!m) continue;
      const knownGap = /\[known gap\]/.test(t.title);
      out.push({
        title: t.title,
        node: `N${m[1]}.${m[2]}`,
        dimension: Number(m[1]),
        passed: t.status === 'passed' && !knownGap,
        knownGap,
      });
    }
  return out;
}

export interface Row {
  dimension: number;
  name: string;
  nodes: string;
  tests: string;
  faults: number;
  violations: number;
  score: number;
}

export function rows(
  tests: readonly TestResult[],
  faults: Record<number, number>,
  violations: readonly Violation[],
): Row[] {
  return DIMENSIONS.map(({ n, name }) => {
    const mine = tests.filter((t) => t.dimension === n);
    const passing = mine.filter((t) => t.passed).length;
    const broken = violations.filter((v) => INVARIANT_DIMENSION[v.invariant] === n).length;
    const nodes = [...new Set(mine.map((t) => t.node))].sort().join(' ');
    const base = mine.length ? (10 * passing) / mine.length : 0;
    return {
      dimension: n,
      name,
      nodes,
      tests: `${passing}/${mine.length}${mine.some((t) => t.knownGap) ? ` (${mine.filter((t) => t.knownGap).length} known gap)` : ''}`,
      faults: faults[n] ?? 0,
      violations: broken,
      score: Math.max(0, Math.round((base - 2 * broken) * 10) / 10),
    };
  });
}

export function table(rs: readonly Row[]): string {
  const head = '| Dim | Name | Nodes tested | Node tests passing | Faults injected | Violations | Score |';
  const sep = '|---|---|---|---|---|---|---|';
  const body = rs.map(
    (r) =>
      `| ${r.dimension} | ${r.name} | ${r.nodes} | ${r.tests} | ${r.faults} | ${r.violations} | ${r.score.toFixed(1)} |`,
  );
  const overall = rs.reduce((n, r) => n + r.score, 0) / rs.length;
  return [head, sep, ...body, '', `Overall: ${overall.toFixed(1)} / 10 (mean of the dimension scores)`].join(
    '\n',
  );
}

export interface HarnessRun {
  heading: string;
  kills: { total: number; byOp: Record<string, number> };
  processes: { spawned: number; exits: number };
  seconds: { chaos: number; total: number };
  /** Operations a worker acknowledged (returned and fsynced its ack line), and those that failed
   * without breaking an invariant. */
  operations: { acknowledged: number; errors: number };
  violations: readonly Violation[];
  tests: readonly TestResult[];
  faults: Record<number, number>;
}

/**
 * What the harness prints: its measured invariants (kills, operations, violations), then the scored
 * table when the regression suite ran. Without node tests there is nothing to score, and a table of
 * zeros with "Overall: 0.0 / 10" would read as a failing score: the faults injected per dimension
 * are printed alone.
 */
export function renderSummary(run: HarnessRun): string {
  const scored = run.tests.length > 0;
  const perDimension = rows(run.tests, run.faults, run.violations);
  const byOp = Object.entries(run.kills.byOp)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return [
    run.heading,
    `injected ${run.kills.total} SIGKILLs (${byOp}), ${run.processes.exits} clean exits, ` +
      `${run.processes.spawned} processes, chaos phase ${run.seconds.chaos.toFixed(1)} s, ` +
      `total ${run.seconds.total.toFixed(1)} s`,
    `acknowledged operations: ${run.operations.acknowledged}; ` +
      `operation errors (not violations): ${run.operations.errors}`,
    `invariant violations: ${run.violations.length}`,
    ...run.violations.slice(0, 30).map((v) => `  - ${v.invariant}: ${v.detail}`),
    '',
    ...(scored
      ? [
          table(perDimension),
          '',
          'score = max(0, 10 × passing node tests / node tests − 2 × violations); known gaps count as not passing.',
        ]
      : [
          'faults injected per dimension (no node tests were run, so no score):',
          ...perDimension.map((r) => `  ${r.dimension} ${r.name}: ${r.faults}`),
          '',
          'run without --no-suite (or with --results FILE) for the scored table.',
        ]),
  ].join('\n');
}
