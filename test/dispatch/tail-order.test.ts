import { describe, expect, it } from 'vitest';
import { orderCandidates, predictedMinutes, QUICK_SHARE, quickCut } from '../../src/dispatch/choice/order.js';
import { Predictor } from '../../src/dispatch/choice/predict.js';
import { RecordBook } from '../../src/dispatch/choice/record.js';
import { crewFold, type CrewRecord } from '../../src/dispatch/logs/registry.js';
import type { CrewPlanned } from '../../src/schemas/crew.js';
import { event } from '../../src/state/event-log.js';
import { candidate } from './helpers.js';

const T0 = Date.parse('2026-03-01T00:00:00Z');

/** A finished crew of `issue` by `agent` that ran `minutes`. */
function ran(
  n: number,
  issue: number,
  agent: string,
  minutes: number,
  over: Partial<CrewRecord> = {},
): CrewRecord {
  const start = T0 + n * 3_600_000;
  return {
    crewId: `c${issue}-${String(n).padStart(8, '0')}`,
    issueNumber: issue,
    daemon: 'd1',
    agent,
    weight: 'standard',
    fences: [],
    attempt: 1,
    repair: false,
    status: 'finished',
    plannedAt: new Date(start).toISOString(),
    startedAt: new Date(start).toISOString(),
    finishedAt: new Date(start + minutes * 60_000).toISOString(),
    outcome: 'succeeded',
    ...over,
  };
}

describe('run-time predictions learn how far each level really differs (random effects)', () => {
  // Deterministic misses around a cell's true factor: ×e^±0.3, the noise of one crew's estimate.
  const noise = [0.3, -0.3, 0.2, -0.2, 0.1, -0.1, 0.25, -0.25];
  /** Crews of `agent` whose runs took `factor` × their issue's 20-minute estimate, with noise. */
  function crews(agent: string, domain: string, factor: number, from: number, n = noise.length) {
    return Array.from({ length: n }, (_, i) =>
      ran(from + i, from + i, agent, 20 * factor * Math.exp(noise[i % noise.length]!), {
        cell: { domain, difficulty: 3, size: 20 },
      }),
    );
  }
  const book = (list: CrewRecord[]) => new RecordBook({ crews: list });

  it('an agent that really runs twice as long keeps its own miss; one that does not, the school’s', () => {
    const p = new Predictor(
      book([
        ...crews('slow', 'api', 2, 100),
        ...crews('fast', 'api', 0.5, 200),
        ...crews('fast', 'ui', 0.5, 300),
      ]),
    );
    // The agents differ far beyond the noise: each keeps nearly all of its own (the noise's s²/2
    // turns the geometric miss into the mean one).
    expect(p.ratio('slow', 'api', 3)!).toBeGreaterThan(1.9);
    expect(p.ratio('slow', 'api', 3)!).toBeLessThan(2.3);
    expect(p.ratio('fast', 'api', 3)!).toBeGreaterThan(0.45);
    expect(p.ratio('fast', 'api', 3)!).toBeLessThan(0.6);
    // A domain of the fast agent not seen yet: the fast agent's miss, not the school's.
    expect(p.ratio('fast', 'docs', 3)!).toBeLessThan(0.6);
  });

  it('cells that differ only by the luck of their few crews take their parent’s miss', () => {
    // Two domains of one agent at the same true factor 1, each with two crews of opposite luck
    // drawn differently: their means differ by luck alone.
    const list = [
      ...crews('a', 'api', 1, 100, 8),
      ran(200, 200, 'a', 20 * Math.exp(0.15), { cell: { domain: 'ui', difficulty: 3, size: 20 } }),
      ran(201, 201, 'a', 20 * Math.exp(-0.05), { cell: { domain: 'ui', difficulty: 3, size: 20 } }),
    ];
    const p = new Predictor(book(list));
    // The ui crews ran 1.05 × their estimates (geometric mean); the noise within cells explains it:
    // ui is predicted as the agent, not as its two crews.
    expect(p.ratio('a', 'ui', 3)).toBeCloseTo(p.ratio('a', 'api', 3)!, 10);
    expect(p.ratio('a', 'ui', 3)!).toBeLessThan(1.15);
  });

  it('a crew whose issue left the curriculum counts by the cell and estimate recorded when planned', () => {
    const list = crews('slow', 'api', 2, 100).map((c) => ({ ...c }));
    const p = new Predictor(new RecordBook({ crews: list, cellOf: () => undefined }));
    expect(p.predict(30, 'slow', 'api', 3).minutes!).toBeGreaterThan(55);
    // Without the planned cell the same crews say nothing about minutes.
    const bare = list.map(({ cell: _, ...c }) => c);
    expect(
      new Predictor(new RecordBook({ crews: bare, cellOf: () => undefined })).predict(30, 'slow', 'api', 3)
        .minutes,
    ).toBeUndefined();
  });
});

describe('tail-guard: the quick share first, then the rest longest first', () => {
  it('quickCut is the 55th percentile of every listed estimate', () => {
    expect(QUICK_SHARE).toBe(0.55);
    expect(quickCut([])).toBeUndefined();
    expect(quickCut(Array.from({ length: 20 }, (_, i) => i + 1))).toBe(11);
    expect(quickCut([5])).toBe(5);
  });

  it('keeps quick items in the seed’s order and runs the long ones longest first after them', () => {
    const items = [
      candidate(1, { size: 40 }),
      candidate(2, { size: 5 }),
      candidate(3, { size: 60 }),
      candidate(4, { size: 10 }),
      candidate(5, { size: 50 }),
      candidate(6, { size: 20, repair: true, attempt: 2 }),
    ];
    const order = (quickMinutes?: number) =>
      orderCandidates(items, {
        order: 'tail-guard',
        slots: 4,
        ...(quickMinutes ? { quickMinutes } : {}),
      }).map((c) => c.issueNumber);
    // Σ 185 over 4 slots: nothing reaches the promotion threshold (34.7 × ¾ … no: 185/4 × ¾ = 34.7).
    // Items 1, 3, 5 would be promoted; use 1 slot so none is: threshold 138.75.
    expect(
      orderCandidates(items, { order: 'tail-guard', slots: 1, quickMinutes: 10 }).map((c) => c.issueNumber),
    ).toEqual([6, 2, 4, 3, 5, 1]);
    // Without a cut: smallest-first behind the repair.
    expect(orderCandidates(items, { order: 'tail-guard', slots: 1 }).map((c) => c.issueNumber)).toEqual([
      6, 2, 4, 1, 5, 3,
    ]);
    // Promotion still comes first: over 4 slots the three long ones are promoted, longest first.
    expect(order(10)).toEqual([6, 3, 5, 1, 2, 4]);
  });

  it('the cut over the whole curriculum does not climb as the quick issues finish', () => {
    // The plan passes every listed issue's estimate, done ones included: the cut stays where the
    // backlog put it, and the long items stay longest first to the end.
    const listed = [5, 6, 7, 8, 9, 10, 40, 50, 60, 70];
    const cut = quickCut(listed)!;
    expect(cut).toBe(10);
    const left = [
      candidate(7, { size: 40 }),
      candidate(8, { size: 50 }),
      candidate(9, { size: 60 }),
      candidate(10, { size: 9 }),
    ];
    expect(
      orderCandidates(left, { order: 'tail-guard', slots: 1, quickMinutes: cut }).map((c) => c.issueNumber),
    ).toEqual([10, 9, 8, 7]);
  });
});

describe('tail-guard orders by the prediction, within priority', () => {
  it('promotes an item predicted long although its estimate is small', () => {
    const items = [
      candidate(1, { size: 10 }),
      candidate(2, { size: 10, predicted: 200 }),
      candidate(3, { size: 20 }),
      candidate(4, { size: 15 }),
    ];
    // Σ predicted 245 over 2 slots: threshold 61.25; only #2 is predicted above it.
    expect(orderCandidates(items, { order: 'tail-guard', slots: 2 }).map((c) => c.issueNumber)).toEqual([
      2, 1, 4, 3,
    ]);
    expect(orderCandidates(items, { order: 'smallest-first', slots: 2 }).map((c) => c.issueNumber)).toEqual([
      1, 2, 4, 3,
    ]);
    expect(predictedMinutes(items[0]!)).toBe(10);
  });

  it('never lifts a long item over a more urgent one', () => {
    const items = [candidate(1, { size: 5, priority: 1 }), candidate(2, { size: 500, priority: 2 })];
    expect(orderCandidates(items, { order: 'tail-guard', slots: 1 }).map((c) => c.issueNumber)).toEqual([
      1, 2,
    ]);
    const same = [candidate(1, { size: 5 }), candidate(2, { size: 500 })];
    expect(orderCandidates(same, { order: 'tail-guard', slots: 1 }).map((c) => c.issueNumber)).toEqual([
      2, 1,
    ]);
  });
});

describe('the planned cell in the crew registry', () => {
  const planned = (over: Partial<CrewPlanned> & { crewId: string }) =>
    event('crew.planned', `planned:${over.crewId}`, {
      issueNumber: 7,
      daemon: 'd1',
      agent: 'a',
      weight: 'standard',
      fences: [],
      repair: false,
      attempt: 1,
      ...over,
    } satisfies CrewPlanned);

  it('keeps the cell a plan recorded, and none from a repair a crew job planned itself', () => {
    let state = crewFold.empty();
    const cell = { domain: 'api', difficulty: 3, size: 25 };
    state = crewFold.apply(state, planned({ crewId: 'c7-00000001', cell }));
    state = crewFold.apply(
      state,
      planned({
        crewId: 'c7-00000002',
        repair: true,
        attempt: 2,
        repairOf: 'c7-00000001',
        cell: { ...cell, size: 1e9 },
      }),
    );
    state = crewFold.apply(state, planned({ crewId: 'c7-00000003', cell: { ...cell, size: -1 } }));
    expect(state.crews['c7-00000001']!.cell).toEqual(cell);
    expect(state.crews['c7-00000002']!.cell).toBeUndefined();
    expect(state.crews['c7-00000003']!.cell).toBeUndefined();
  });
});
