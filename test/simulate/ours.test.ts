import { describe, expect, it } from 'vitest';
import { simulate } from '../../lab/simulate/engine.js';
import { createOffice } from '../../lab/simulate/office-adapter.js';
import { resolveSimOptions } from '../../lab/simulate/options.js';
import { officePolicy, type Office } from '../../lab/simulate/ours.js';
import { fits, generateWorkload } from '../../lab/simulate/workload.js';

/** The office under test, with every call and answer recorded. */
function recordingOffice(slotsPerDaemon: number, totalSlots: number) {
  const office = createOffice({ slotsPerDaemon, totalSlots });
  const calls: Array<{ candidates: number; placed: Map<string, string>; paused?: string }> = [];
  const afterRuns: string[] = [];
  const recorded: Office = {
    order: (items) => office.order(items),
    place(now, candidates, daemons, paused) {
      const placed = office.place(now, candidates, daemons, paused);
      calls.push({ candidates: candidates.length, placed, ...(paused ? { paused } : {}) });
      return placed;
    },
    afterRun(item, outcome, now) {
      const step = office.afterRun(item, outcome, now);
      afterRuns.push(`${item.id}:${outcome}:${step.kind}`);
      return step;
    },
  };
  return { office: recorded, calls, afterRuns };
}

describe('our policy drives the dispatch office', () => {
  const options = resolveSimOptions({
    seed: 5,
    issues: 400,
    fleet: { daemons: 8, slotsPerDaemon: 3, daemonClasses: ['light', 'standard', 'heavy', 'xl'] },
    failures: { rate: 0.25 },
    weightMix: [0.3, 0.3, 0.25, 0.15],
  });
  const workload = generateWorkload(options);
  const { office, calls, afterRuns } = recordingOffice(options.fleet.slotsPerDaemon, workload.slots.length);
  const result = simulate(workload, officePolicy(office));
  const slotClass = new Map(workload.slots.map((s) => [s.index, s.class]));
  const weight = new Map(workload.issues.map((i) => [i.number, i.weight]));

  it('launches exactly what the office placed, every time a slot frees', () => {
    const placed = calls.reduce((s, c) => s + c.placed.size, 0);
    expect(calls.length).toBe(result.decisions);
    expect(placed).toBe(result.timeline.length);
    expect(calls.length).toBeGreaterThan(workload.issues.length / 2);
  });

  it('lets the office history decide repairs and the two-failure stop', () => {
    expect(afterRuns).toHaveLength(result.timeline.length);
    const stops = afterRuns.filter((a) => a.endsWith(':failure:stopped'));
    expect(stops.length).toBe(result.issues.filter((i) => i.status === 'stopped').length);
    expect(stops.length).toBeGreaterThan(5);
    expect(afterRuns.filter((a) => a.endsWith(':failure:backlog')).length).toBe(
      result.timeline.filter((t) => t.repair && t.attempt === 2).length,
    );
  });

  it('respects capacity classes: a heavy job never runs on a light daemon', () => {
    for (const t of result.timeline) expect(fits(weight.get(t.issue)!, slotClass.get(t.slot)!)).toBe(true);
    const heavyOnLight = result.timeline.filter(
      (t) => weight.get(t.issue) !== 'light' && slotClass.get(t.slot) === 'light',
    );
    expect(heavyOnLight).toEqual([]);
  });

  it('launches repairs in the backlog before new work and new work smallest first', () => {
    const size = new Map(workload.issues.map((i) => [i.number, i.size]));
    const byStart = [...result.timeline].sort((a, b) => a.start - b.start || a.slot - b.slot);
    for (const fresh of byStart.filter((t) => !t.repair)) {
      // A repair in the backlog before this launch, able to run on this slot, must not still be waiting.
      const waitingRepair = byStart.find(
        (r) =>
          r.repair &&
          r.start > fresh.start &&
          result.timeline.some((f) => f.issue === r.issue && !f.repair && f.end <= fresh.start) &&
          fits(weight.get(r.issue)!, slotClass.get(fresh.slot)!),
      );
      expect(waitingRepair).toBeUndefined();
    }
    const firstWave = byStart.filter((t) => t.start === 0 && slotClass.get(t.slot) === 'xl');
    const sizes = firstWave.map((t) => size.get(t.issue)!);
    expect(sizes.length).toBeGreaterThan(0);
    // The first fresh launches are among the smallest of their class: none bigger than the median.
    const xlSizes = workload.issues
      .filter((i) => i.weight === 'xl')
      .map((i) => i.size)
      .sort((a, b) => a - b);
    for (const s of sizes) expect(s).toBeLessThanOrEqual(xlSizes[xlSizes.length >> 1]!);
  });
});

describe('our policy under usage-limit pauses', () => {
  it('asks the office during a pause, and the office places nothing', () => {
    const options = resolveSimOptions({ seed: 9, issues: 300, pauses: { rate: 0.06, minutes: 40 } });
    const workload = generateWorkload(options);
    const { office, calls } = recordingOffice(options.fleet.slotsPerDaemon, workload.slots.length);
    const result = simulate(workload, officePolicy(office));
    const pausedCalls = calls.filter((c) => c.paused);
    expect(result.pauses.length).toBeGreaterThan(2);
    expect(pausedCalls.length).toBeGreaterThan(0);
    for (const c of pausedCalls) expect(c.placed.size).toBe(0);
    for (const p of result.pauses) {
      expect(result.timeline.filter((t) => t.start >= p.from && t.start < p.to)).toEqual([]);
    }
  });
});
