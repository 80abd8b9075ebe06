import { describe, expect, it } from 'vitest';
import { orderCandidates, tailGuardThreshold } from '../../src/dispatch/choice/order.js';
import { candidate } from './helpers.js';

describe('dispatch.order', () => {
  const batch = () => [
    candidate(1, { size: 10 }),
    candidate(2, { size: 200 }),
    candidate(3, { size: 20 }),
    candidate(4, { size: 120 }),
    candidate(5, { size: 5, repair: true, attempt: 2 }),
    candidate(6, { size: 15 }),
  ];

  it('smallest-first (the default): repairs, then smallest', () => {
    expect(orderCandidates(batch()).map((c) => c.issueNumber)).toEqual([5, 1, 6, 3, 4, 2]);
    expect(orderCandidates(batch(), { order: 'smallest-first', slots: 2 }).map((c) => c.issueNumber)).toEqual(
      [5, 1, 6, 3, 4, 2],
    );
  });

  it('tail-guard: repairs, then fresh items ≥ ¾ of the backlog per slot (largest first), then smallest', () => {
    // Σ size 370 over 2 slots: the threshold is 138.75, so #2 (200) is promoted.
    expect(tailGuardThreshold(370, 2)).toBe(138.75);
    expect(orderCandidates(batch(), { order: 'tail-guard', slots: 2 }).map((c) => c.issueNumber)).toEqual([
      5, 2, 1, 6, 3, 4,
    ]);
    // With more slots the backlog per slot is smaller and more items count as the tail.
    // (10 slots: threshold 27.75, so #4 at 120 joins; #3 at 20 stays below.)
    expect(orderCandidates(batch(), { order: 'tail-guard', slots: 10 }).map((c) => c.issueNumber)).toEqual([
      5, 2, 4, 1, 6, 3,
    ]);
    // A caller that shows a window of its backlog passes the whole backlog's work.
    expect(
      orderCandidates(batch(), { order: 'tail-guard', slots: 2, backlogSize: 10_000 }).map(
        (c) => c.issueNumber,
      ),
    ).toEqual([5, 1, 6, 3, 4, 2]);
  });

  it('a repair is never overtaken, however large the fresh work', () => {
    const out = orderCandidates(
      [candidate(9, { size: 1000 }), candidate(8, { size: 1, repair: true, attempt: 2 })],
      {
        order: 'tail-guard',
        slots: 1,
      },
    );
    expect(out.map((c) => c.issueNumber)).toEqual([8, 9]);
  });
});
