import type { Comparison } from './compare.js';
import { flatSimOptions } from './options.js';
import type { PolicyMetrics } from './metrics.js';

/** The simulator's goals (docs/simulate.md), judged under our policy with 24+ students. */
export const GOALS = { utilization: 0.95, makespanRatio: 1.1, minStudents: 24 } as const;

export function minutes(m: number): string {
  if (!Number.isFinite(m)) return '–';
  return m >= 120 ? `${(m / 60).toFixed(1)} h` : `${m.toFixed(0)} min`;
}

export function pct(x: number): string {
  return `${(x * 100).toFixed(1)} %`;
}

export function describeScenario(c: Comparison): string {
  const o = c.options;
  return (
    `${o.issues} issues on ${o.fleet.daemons} daemon(s) × ${o.fleet.slotsPerDaemon} slot(s) = ${c.workload.slots.length} students; ` +
    `seed ${o.seed}, durations log-normal (median ${o.durations.medianMinutes} min, tail σ ${o.durations.tailSigma}), ` +
    `failure rate ${o.failures.rate} (spread ${o.failures.spread} per domain × difficulty), usage-limit rate ${o.pauses.rate} (pause ${o.pauses.minutes} min)`
  );
}

/** Goal verdicts for our policy, with by how much a missed goal is missed. */
export function goalLines(c: Comparison): string[] {
  const ours = c.results.find((r) => r.metrics.policy === 'ours')?.metrics;
  const where = { refill: 'the CLI', shared: 'github.com', standby: 'GHES' } as const;
  const deployed = (['refill', 'shared', 'standby'] as const).flatMap((cadence) => {
    const m = c.results.find((r) => r.metrics.policy === `${cadence} · tail-guard`)?.metrics;
    if (!m) return [];
    return [
      `deployed ${cadence} (${where[cadence]}) · tail-guard: makespan ${m.makespanRatio.toFixed(3)} × bound (goal ≤ 1.1 ×: ${m.makespanRatio <= GOALS.makespanRatio ? 'met' : 'missed'}), slots busy ${pct(m.backlogUtilization)} of the time runnable work waits (goal ≥ 95 %: ${m.backlogUtilization >= GOALS.utilization ? 'met' : 'missed'})`,
    ];
  });
  if (!ours) return deployed;
  if (c.workload.slots.length < GOALS.minStudents) {
    return [`goals apply from ${GOALS.minStudents} students; this fleet has ${c.workload.slots.length}.`];
  }
  const u = ours.utilization;
  const r = ours.makespanRatio;
  return [
    ...deployed,
    u >= GOALS.utilization
      ? `utilization goal met: ${pct(u)} ≥ 95 %`
      : `utilization goal missed by ${((GOALS.utilization - u) * 100).toFixed(1)} points: ${pct(u)} < 95 %`,
    r <= GOALS.makespanRatio
      ? `makespan goal met: ${r.toFixed(3)} × lower bound ≤ 1.1 ×`
      : `makespan goal missed by ${(((r - GOALS.makespanRatio) / GOALS.makespanRatio) * 100).toFixed(1)} %: ${r.toFixed(3)} × lower bound > 1.1 ×`,
  ];
}

export function metricsRow(m: PolicyMetrics): string[] {
  return [
    m.policy,
    pct(m.utilization),
    pct(m.backlogUtilization),
    minutes(m.makespan),
    `${m.makespanRatio.toFixed(3)} ×`,
    minutes(m.ttfvP50),
    minutes(m.ttfvP95),
    String(m.runs),
    String(m.repairs),
    String(m.issuesStopped),
    minutes(m.pausedMinutes),
  ];
}

export const METRIC_HEADERS = [
  'policy',
  'utilization',
  'refill util.',
  'makespan',
  'vs bound',
  'TTFV p50',
  'TTFV p95',
  'runs',
  'repairs',
  'stopped',
  'paused',
];

export function textTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

export function renderText(c: Comparison): string {
  return [
    describeScenario(c),
    `lower bound max(Σ durations / slots, longest issue) = ${minutes(c.workload.lowerBound)}`,
    '',
    textTable([METRIC_HEADERS, ...c.results.map((r) => metricsRow(r.metrics))]),
    '',
    ...goalLines(c),
    '',
  ].join('\n');
}

export function renderJson(c: Comparison): string {
  return JSON.stringify(
    {
      options: flatSimOptions(c.options),
      students: c.workload.slots.length,
      totalWork: c.workload.totalWork,
      lowerBound: c.workload.lowerBound,
      policies: c.results.map((r) => ({ label: r.label, ...r.metrics })),
      goals: goalLines(c),
    },
    null,
    2,
  );
}
