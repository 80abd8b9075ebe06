import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveriesOf, outboxFold, type OutboxEvent, type OutboxState } from '../../src/outbox/outbox.js';
import { event } from '../../src/state/event-log.js';
import { foldLog } from '../../src/state/fold.js';

/**
 * Compaction keeps of the outbox only what is still used: pending entries (to deliver) and, per
 * issue, the delivery the board links to. Whatever the history and wherever it is cut, folding the
 * rest onto the pruned state must give the same pending entries and the same board links as
 * folding the whole history.
 */
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
// Deliveries weigh double: the board's links are what the cut must not change.
const KINDS = ['labels', 'comment', 'delivery', 'delivery'] as const;

const step = fc.oneof(
  fc.record({ op: fc.constant('record' as const), job: fc.nat({ max: 3 }), kind: fc.constantFrom(...KINDS) }),
  fc.record({
    op: fc.constant('deliver' as const),
    job: fc.nat({ max: 3 }),
    kind: fc.constantFrom(...KINDS),
    sha: fc.constantFrom('a', 'b', 'c'),
    updated: fc.boolean(),
  }),
  fc.record({ op: fc.constant('fail' as const), job: fc.nat({ max: 3 }), kind: fc.constantFrom(...KINDS) }),
  fc.record({ op: fc.constant('refuse' as const), job: fc.nat({ max: 3 }), kind: fc.constantFrom(...KINDS) }),
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

/**
 * The history the steps make, as the outbox writes it: an entry is recorded once (its drain
 * records it when it grades the job, and nothing records it again after that grade is compacted:
 * `missingOutboxEntries`), and ends once, delivered or refused (`delivered:<id>`, `refused:<id>`,
 * under the outbox lock, for pending entries only).
 */
function events(steps: Step[]): OutboxEvent[] {
  const recorded = new Set<string>();
  const ended = new Set<string>();
  const once = steps.filter((s) => {
    const id = `${s.job}:${s.kind}`;
    if (s.op === 'record') {
      if (recorded.has(id)) return false;
      recorded.add(id);
      return true;
    }
    if (!recorded.has(id) || ended.has(id)) return false;
    if (s.op === 'deliver' || s.op === 'refuse') ended.add(id);
    return true;
  });
  return once.map((s, n) => {
    const issueNumber = 1 + (s.job % 2);
    const jobKey = `grade:${issueNumber}:crew-${s.job}`;
    const id = `outbox:${jobKey}:${s.kind}`;
    const at = new Date(T0 + n * 1000);
    switch (s.op) {
      case 'record':
        return event(
          'outbox.recorded',
          id,
          { id, jobKey, issueNumber, kind: s.kind, crewId: `crew-${s.job}`, body: 'a long comment body' },
          at,
        ) as OutboxEvent;
      case 'deliver':
        return event(
          'outbox.delivered',
          `delivered:${id}`,
          { id, result: { branch: `school/${issueNumber}`, sha: s.sha.repeat(40), updated: s.updated } },
          at,
        ) as OutboxEvent;
      case 'fail':
        return event(
          'outbox.failed',
          `failed:${id}:${n}`,
          { id, attempt: n, error: 'HTTP 502' },
          at,
        ) as OutboxEvent;
      case 'refuse':
        return event('outbox.refused', `refused:${id}`, { id, reason: 'digest mismatch' }, at) as OutboxEvent;
    }
  });
}

const pending = (s: OutboxState) =>
  Object.fromEntries(Object.entries(s.items).filter(([, i]) => i.status === 'pending'));

describe('outbox compaction (property)', () => {
  it('keeps the pending entries and the delivery each issue shows, wherever history is cut', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.nat(), (steps, cut) => {
        const all = events(steps);
        const n = cut % (all.length + 1);
        const whole = foldLog(outboxFold, { events: all });
        const pruned = outboxFold.prune(foldLog(outboxFold, { events: all.slice(0, n) }), new Date(T0));
        const resumed = all.slice(n).reduce((s, e) => outboxFold.apply(s, e), structuredClone(pruned));
        expect(pending(resumed)).toEqual(pending(whole));
        expect(deliveriesOf(resumed)).toEqual(deliveriesOf(whole));
        // Nothing else is kept: no delivered labels or comments, no refused items, no verdicts.
        for (const i of Object.values(pruned.items)) {
          if (i.status !== 'pending') {
            expect(i.entry.kind).toBe('delivery');
            expect(i.entry.body).toBeUndefined();
          }
        }
        const perIssue = Object.values(pruned.items).filter((i) => i.status !== 'pending');
        expect(new Set(perIssue.map((i) => i.entry.issueNumber)).size).toBe(perIssue.length);
      }),
      { numRuns: 3000 },
    );
  });

  it('a delivery pending at the cut still replaces the one kept for its issue once delivered', () => {
    const steps: Step[] = [
      { op: 'record', job: 0, kind: 'delivery' },
      { op: 'deliver', job: 0, kind: 'delivery', sha: 'a', updated: true },
      { op: 'record', job: 2, kind: 'delivery' },
      { op: 'deliver', job: 2, kind: 'delivery', sha: 'b', updated: true },
    ];
    const all = events(steps);
    const pruned = outboxFold.prune(foldLog(outboxFold, { events: all.slice(0, 3) }), new Date(T0));
    const resumed = outboxFold.apply(pruned, all[3]!);
    expect(deliveriesOf(resumed).get(1)).toMatchObject({ sha: 'b'.repeat(40), crewId: 'crew-2' });
    expect(deliveriesOf(resumed)).toEqual(deliveriesOf(foldLog(outboxFold, { events: all })));
  });
});
