import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compact } from '../../src/checkpoint/compact.js';
import { parseLog, serializeLog, unionLogs, type ParsedLog } from '../../src/checkpoint/logs.js';
import { splitLog, type StateEvent } from '../../src/state/event-log.js';
import { foldLog, type LogFold } from '../../src/state/fold.js';

/**
 * Bounded dedup memory (a watermark per log instead of every folded key) must not change what a
 * log folds to. The fold below counts how often each event is applied, so an event applied twice
 * or lost shows up in the state itself.
 *
 * Every copy is a prefix of one history (what one writer had at some time), compacted any number
 * of times at horizons up to the first event it does not hold: a writer compacts only history it
 * has completely, which is what `compactAfterDays` buys (events older than it have arrived).
 * Events carry clock skew, so `at` is not in append order and the watermark must fall back to keys
 * for the folded events at or after it.
 */
interface Counted {
  applied: Record<string, number>;
}
const counting: LogFold<Counted, StateEvent> = {
  file: 'grading',
  empty: () => ({ applied: {} }),
  apply(s, e) {
    s.applied[e.key] = (s.applied[e.key] ?? 0) + 1;
    return s;
  },
  prune: (s) => s,
  dedup: 'watermark',
};
const FILE = 'grading.jsonl';
const folds = new Map([[FILE, counting as LogFold<unknown, StateEvent>]]);
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

function historyOf(skews: number[]): StateEvent[] {
  return skews.map((skew, i) => ({
    key: `e${i}`,
    type: 'x',
    at: new Date(T0 + i * 1000 + skew).toISOString(),
    data: { i },
  }));
}

/** The latest horizon a holder of the first `p` events may compact at. */
function clampHorizon(history: StateEvent[], p: number, pick: number): Date {
  const wanted = T0 + pick * 1000;
  const missing = history.slice(p).map((e) => Date.parse(e.at));
  return new Date(Math.min(wanted, ...missing));
}

function compactLog(log: ParsedLog, horizon: Date): ParsedLog {
  const { files } = compact(new Map([[FILE, serializeLog(log)]]), { horizon, folds });
  return parseLog(files.get(FILE)!, 'test');
}

function foldRead(log: ParsedLog): Counted {
  const records = [...(log.snapshot ? [log.snapshot] : []), ...log.records] as StateEvent[];
  return foldLog(counting, splitLog(records));
}

const copyArb = fc.record({
  p: fc.nat(),
  horizons: fc.array(fc.nat({ max: 60 }), { maxLength: 3 }),
});

describe('watermark dedup: stale and fresh copies merge to the same state (property)', () => {
  it('any copies, merged in any order with compactions between, fold every event exactly once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -2500, max: 2500 }), { minLength: 1, maxLength: 40 }),
        fc.array(copyArb, { minLength: 1, maxLength: 5 }),
        fc.array(fc.option(fc.nat({ max: 60 }), { nil: undefined }), { maxLength: 5 }),
        fc.infiniteStream(fc.nat()),
        (skews, specs, between, order) => {
          const history = historyOf(skews);
          const copies = specs.map(({ p: raw, horizons }) => {
            const p = raw % (history.length + 1);
            let log: ParsedLog = { records: history.slice(0, p) as unknown as ParsedLog['records'] };
            for (const pick of horizons) log = compactLog(log, clampHorizon(history, p, pick));
            return { p, log };
          });
          // Any merge order: a random permutation of the copies.
          const pending = [...copies];
          const it = order[Symbol.iterator]();
          const next = () => pending.splice(it.next().value % pending.length, 1)[0]!;
          let acc = next();
          let step = 0;
          while (pending.length > 0) {
            const other = next();
            const p = Math.max(acc.p, other.p);
            let log = unionLogs(acc.log, other.log);
            const pick = between[step++];
            if (pick !== undefined) log = compactLog(log, clampHorizon(history, p, pick));
            acc = { p, log };
          }
          const state = foldRead(acc.log);
          const expected = Object.fromEntries(history.slice(0, acc.p).map((e) => [e.key, 1]));
          expect(state.applied).toEqual(expected);
          // Bounded memory: a remembered key is one at or after the watermark.
          const snap = acc.log.snapshot;
          if (snap?.data.watermark) {
            const atOf = new Map(history.map((e) => [e.key, e.at]));
            for (const k of snap.data.keys) expect(atOf.get(k)! >= snap.data.watermark).toBe(true);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('a compacted in-order history remembers no keys at all, and a stale full copy adds nothing', () => {
    const history = historyOf(Array.from({ length: 30 }, () => 0));
    const fresh = compactLog({ records: history as unknown as ParsedLog['records'] }, new Date(T0 + 20_000));
    expect(fresh.snapshot!.data.keys).toEqual([]);
    expect(fresh.snapshot!.data.watermark).toBe(new Date(T0 + 20_000).toISOString());
    const report = { divergentKeys: 0, belowWatermark: 0 };
    const merged = unionLogs(fresh, { records: history as unknown as ParsedLog['records'] }, report);
    expect(report).toEqual({ divergentKeys: 0, belowWatermark: 20 });
    expect(foldRead(merged)).toEqual(foldRead({ records: history as unknown as ParsedLog['records'] }));
  });
});
