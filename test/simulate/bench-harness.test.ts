import { describe, expect, it } from 'vitest';
import { median, renderTable, summarize } from '../../bench/run.js';
import type { BenchFigure } from '../../bench/types.js';

const round = (value: number, base: number, met?: boolean): BenchFigure[] => [
  {
    figure: 'plan 10k',
    value,
    unit: 'ms',
    baseline: { label: 'sort', value: base },
    goal: '≤ 250 ms',
    target: { op: '<=', value: 250 },
  },
  { figure: 'flag', value, unit: 'x', ...(met === undefined ? {} : { met }) },
];

describe('bench harness', () => {
  it('reports medians, judges a target on the median and a plain flag by majority', () => {
    const rows = summarize('plan', [
      round(900, 10, true),
      round(100, 30, false),
      round(200, 20, true),
      round(240, 40, false),
      round(230, 50, true),
    ]);
    const plan = rows.find((r) => r.figure === 'plan 10k')!;
    expect(plan.value).toBe(230);
    expect(plan.baseline).toEqual({ label: 'sort', value: 30 });
    expect(plan.met).toBe(true);
    expect(rows.find((r) => r.figure === 'flag')!.met).toBe(true);
    const table = renderTable(rows);
    expect(table).toMatch(/plan 10k\s+230 ms\s+30\.00 ms \(sort\)\s+7\.67×\s+≤ 250 ms\s+yes/);
  });

  it('judges a ratio target against the baseline and shows error rows', () => {
    const fig = (v: number): BenchFigure[] => [
      {
        figure: 'scale',
        value: v,
        unit: 'ms',
        baseline: { label: '10k', value: 10 },
        target: { op: '<=', value: 12, of: 'ratio' },
      },
    ];
    expect(summarize('s', [fig(130), fig(130), fig(130), fig(130), fig(130)])[0]!.met).toBe(false);
    expect(summarize('s', [fig(110), fig(110), fig(110), fig(110), fig(110)])[0]!.met).toBe(true);
    const table = renderTable([{ bench: 'x', figure: 'x', value: NaN, unit: '', rounds: 0, error: 'boom' }]);
    expect(table).toContain('x: ERROR  boom');
    expect(median([3, 1, 2, 4])).toBe(2.5);
  });
});
