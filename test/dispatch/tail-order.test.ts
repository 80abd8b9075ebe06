import { describe, expect, it } from 'vitest';
import { RunTimeHistory } from '../../src/dispatch/history.js';
import { orderCandidates, predictedMinutes } from '../../src/dispatch/order.js';
import type { CrewRecord, CrewRegistry } from '../../src/dispatch/registry.js';
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

const registry = (crews: CrewRecord[]): CrewRegistry => ({
  crews: Object.fromEntries(crews.map((c) => [c.crewId, c])),
  leases: {},
});

describe('run-time history per agent × domain × difficulty', () => {
  const sizes = new Map([
    [1, { size: 10, domain: 'api', difficulty: 3 }],
    [2, { size: 20, domain: 'api', difficulty: 3 }],
    [3, { size: 30, domain: 'api', difficulty: 3 }],
    [4, { size: 10, domain: 'docs', difficulty: 1 }],
  ]);
  const lookup = (n: number) => sizes.get(n);

  it('scales an estimate by what crews of the same key really took', () => {
    // Agent a on api/3 took twice the estimate, three times: a 40 min estimate is predicted at 80.
    const h = new RunTimeHistory(
      registry([ran(1, 1, 'a', 20), ran(2, 2, 'a', 40), ran(3, 3, 'a', 60)]),
      lookup,
      30,
    );
    expect(h.predict(40, { agent: 'a', domain: 'api', difficulty: 3 })).toBeCloseTo(80);
    // Another key without three runs of its own: the school-wide factor (also 2 here).
    expect(h.factor({ agent: 'b', domain: 'docs', difficulty: 1 })).toBeCloseTo(2);
  });

  it('keeps keys apart once each has enough runs', () => {
    const h = new RunTimeHistory(
      registry([
        ran(1, 1, 'a', 20),
        ran(2, 2, 'a', 40),
        ran(3, 3, 'a', 60),
        ran(4, 4, 'b', 5),
        ran(5, 4, 'b', 5),
        ran(6, 4, 'b', 5),
      ]),
      lookup,
      30,
    );
    expect(h.factor({ agent: 'a', domain: 'api', difficulty: 3 })).toBeCloseTo(2);
    expect(h.factor({ agent: 'b', domain: 'docs', difficulty: 1 })).toBeCloseTo(0.5);
    // The same domain and difficulty under another agent is another key: the school's factor.
    expect(h.factor({ agent: 'b', domain: 'api', difficulty: 3 })).toBeCloseTo(135 / 90);
  });

  it('leaves out cancelled runs and runs that never started an agent; no history: as estimated', () => {
    const h = new RunTimeHistory(
      registry([
        ran(1, 1, 'a', 500, { outcome: 'cancelled' }),
        ran(2, 2, 'a', 500, { outcome: 'aborted', preVerify: true }),
        ran(3, 3, 'a', 500, { outcome: 'failed', infra: true }),
      ]),
      lookup,
      30,
    );
    expect(h.predict(40, { agent: 'a', domain: 'api', difficulty: 3 })).toBe(40);
  });

  it('a closed issue (no longer in the curriculum) counts school-wide against the default estimate', () => {
    const h = new RunTimeHistory(
      registry([ran(1, 91, 'a', 15), ran(2, 92, 'a', 15), ran(3, 93, 'a', 15)]),
      lookup,
      30,
    );
    expect(h.factor({ agent: 'a', domain: 'api', difficulty: 3 })).toBeCloseTo(0.5);
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
