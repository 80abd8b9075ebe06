import { describe, expect, it } from 'vitest';
import { expectedMinutes, orderCandidates, REPAIR_FACTOR } from '../../src/dispatch/choice/order.js';
import { Predictor } from '../../src/dispatch/choice/predict.js';
import { RecordBook, type RecordCrew } from '../../src/dispatch/choice/record.js';
import { candidate } from './helpers.js';

const T0 = Date.parse('2026-03-01T00:00:00Z');

/** A finished crew of `issue` by `agent` that ran `minutes` and ended with `outcome`. */
function ran(n: number, issue: number, agent: string, minutes: number, outcome = 'succeeded'): RecordCrew {
  const start = T0 + n * 3_600_000;
  return {
    crewId: `c${issue}-${String(n).padStart(8, '0')}`,
    issueNumber: issue,
    agent,
    status: 'finished',
    startedAt: new Date(start).toISOString(),
    finishedAt: new Date(start + minutes * 60_000).toISOString(),
    outcome,
  };
}

type Cell = { agent: string; domain: string; difficulty: number; count: number; accepted: number };
const cell = (agent: string, domain: string, difficulty: number, count: number, accepted: number): Cell => ({
  agent,
  domain,
  difficulty,
  count,
  accepted,
});

describe('predictions from the records (minutes and failure per agent × domain × difficulty)', () => {
  // Issues 1–3: api/3, estimated 10, 20, 30 minutes; 4: docs/1, 10 minutes.
  const issues = new Map([
    [1, { domain: 'api', difficulty: 3, size: 10 }],
    [2, { domain: 'api', difficulty: 3, size: 20 }],
    [3, { domain: 'api', difficulty: 3, size: 30 }],
    [4, { domain: 'docs', difficulty: 1, size: 10 }],
  ]);
  const cellOf = (n: number) => issues.get(n);

  it('nothing on record: no minutes (the caller keeps its estimate) and no failure chance', () => {
    const p = new Predictor(new RecordBook({ crews: [], cellOf })).predict(40, 'a', 'api', 3);
    expect(p).toEqual({});
  });

  it('scales the estimate by the cell’s miss when its crews agree; one crew per cell: the school’s', () => {
    // a on api/3 ran twice its estimates (three crews); a on docs/1 at its estimate (one crew).
    const p = new Predictor(
      new RecordBook({
        crews: [ran(1, 1, 'a', 20), ran(2, 2, 'a', 40), ran(3, 3, 'a', 60), ran(4, 4, 'a', 10)],
        cellOf,
      }),
    );
    // The api crews agree exactly (no noise within a cell), so the cells' difference is real.
    expect(p.ratio('a', 'api', 3)).toBeCloseTo(2, 10);
    expect(p.predict(40, 'a', 'api', 3).minutes).toBeCloseTo(80, 10);
    expect(p.ratio('a', 'docs', 1)).toBeCloseTo(1, 10);
    // An agent with no crew of its own: the school's mean miss, e^(ln 2 × ¾).
    expect(p.ratio('b', 'api', 3)).toBeCloseTo(Math.pow(2, 3 / 4), 10);
    // One crew per cell: nothing says how noisy a crew is, every cell takes the school's miss.
    const thin = new Predictor(new RecordBook({ crews: [ran(1, 1, 'a', 20), ran(4, 4, 'a', 10)], cellOf }));
    expect(thin.ratio('a', 'api', 3)).toBeCloseTo(Math.SQRT2, 10);
    expect(thin.ratio('a', 'docs', 1)).toBeCloseTo(Math.SQRT2, 10);
  });

  it('leaves interruptions, aborts before the agent and issues without an estimate out of the minutes', () => {
    const book = new RecordBook({
      crews: [
        { ...ran(1, 1, 'a', 500), outcome: 'usage_limit' },
        { ...ran(2, 2, 'a', 500), outcome: 'aborted', preVerify: true },
        { ...ran(3, 3, 'a', 500), outcome: 'failed', infra: true },
        { ...ran(4, 9, 'a', 500), choice: { domain: 'api', difficulty: 3 } }, // no estimate known
      ],
      cellOf,
    });
    expect(new Predictor(book).predict(40, 'a', 'api', 3).minutes).toBeUndefined();
  });

  it('the failure chance is the Beta posterior mean of not accepted, the cell shrunk toward its parents', () => {
    // a: api/5 rejected 6 of 8, docs/1 rejected 0 of 12.
    const book = new RecordBook({
      ledger: { cells: { x: cell('a', 'api', 5, 8, 2), y: cell('a', 'docs', 1, 12, 12) } },
    });
    const p = new Predictor(book);
    // The school: 6 rejected of 20 from a uniform prior, Beta(1 + 6, 1 + 14) → 7/22. Each level
    // below lends its mean as min(its mass, 8) pseudo-crews and adds its own verdicts: the agent
    // (the same 20), api (6 of 8), the cell (6 of 8).
    const school = 7 / 22;
    const agent = (8 * school + 6) / 28;
    const api = (8 * agent + 6) / 16;
    const inCell = (8 * api + 6) / 16;
    expect(p.failure('a', 'api', 5)).toBeCloseTo(inCell, 10);
    const docs = (8 * agent + 0) / 20;
    expect(p.failure('a', 'docs', 1)).toBeCloseTo((8 * docs + 0) / 20, 10);
    // An untried domain of the agent: the agent's mean; the risky cell above it, the safe one below.
    expect(p.failure('a', 'ui', 3)).toBeCloseTo(agent, 10);
    expect(p.failure('a', 'api', 5)!).toBeGreaterThan(agent);
    expect(p.failure('a', 'docs', 1)!).toBeLessThan(agent);
    expect(p.predict(30, 'a', 'api', 5)).toEqual({ pFail: inCell });
  });
});

describe('tail-guard weighs the repair a risky issue may need', () => {
  it('expected minutes: predicted × (1 + pFail × repair factor); a repair has no repair after it', () => {
    expect(REPAIR_FACTOR).toBe(1);
    expect(expectedMinutes(candidate(1, { size: 100 }))).toBe(100);
    expect(expectedMinutes(candidate(1, { size: 100, predicted: 120, pFail: 0.25 }))).toBeCloseTo(150);
    expect(expectedMinutes(candidate(1, { size: 100, pFail: 0.5, repair: true, attempt: 2 }))).toBe(100);
  });

  it('starts a long risky issue before a long safe one of the same predicted minutes', () => {
    const items = [
      candidate(1, { size: 10 }),
      candidate(2, { size: 10 }),
      candidate(3, { size: 120, predicted: 120, pFail: 0.05 }), // long, safe
      candidate(4, { size: 120, predicted: 120, pFail: 0.4 }), // long, risky
      candidate(5, { size: 15 }),
    ];
    // Expected: 10, 10, 126, 168, 15 → Σ 329 over 2 slots, threshold 123.4: both long ones are
    // promoted, the risky one first although its number is higher.
    expect(orderCandidates(items, { order: 'tail-guard', slots: 2 }).map((c) => c.issueNumber)).toEqual([
      4, 3, 1, 2, 5,
    ]);
    // Over one slot the threshold is 246.75: nothing reaches it, smallest-first as it is.
    expect(orderCandidates(items, { order: 'tail-guard', slots: 1 }).map((c) => c.issueNumber)).toEqual([
      1, 2, 5, 3, 4,
    ]);
    const blind = items.map(({ pFail: _, ...c }) => c);
    expect(orderCandidates(blind, { order: 'tail-guard', slots: 2 }).map((c) => c.issueNumber)).toEqual([
      3, 4, 1, 2, 5,
    ]);
  });

  it('promotes only the risky one when the threshold falls between them', () => {
    // Σ expected = 12 × 10 + 126 + 168 = 414 over 2 slots: threshold 155.25. The risky one (168)
    // qualifies, the safe one (126) waits its turn by size; without the risk neither would.
    const items = [
      ...Array.from({ length: 12 }, (_, i) => candidate(10 + i, { size: 10 })),
      candidate(3, { size: 120, predicted: 120, pFail: 0.05 }),
      candidate(4, { size: 120, predicted: 120, pFail: 0.4 }),
    ];
    const order = orderCandidates(items, { order: 'tail-guard', slots: 2 }).map((c) => c.issueNumber);
    expect(order[0]).toBe(4);
    expect(order.at(-1)).toBe(3);
    const blind = items.map(({ pFail: _, ...c }) => c);
    expect(orderCandidates(blind, { order: 'tail-guard', slots: 2 })[0]!.issueNumber).toBe(10);
  });
});
