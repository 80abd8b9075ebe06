import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FenceSet, literalPrefix } from '../../src/dispatch/gates/fences.js';
import { issueStates, MAX_ORPHANINGS } from '../../src/dispatch/logs/history.js';
import { orderCandidates } from '../../src/dispatch/choice/order.js';
import type { CrewRecord, CrewRegistry } from '../../src/dispatch/logs/registry.js';
import type { CrewOutcome } from '../../src/schemas/crew.js';
import { candidate } from './helpers.js';

describe('order: repairs first, then priority, then smallest, ties by number', () => {
  it('orders a mixed batch', () => {
    const out = orderCandidates([
      candidate(7, { priority: 0, size: 5 }),
      candidate(3, { priority: 2, size: 10 }),
      candidate(9, { priority: 3, size: 1, repair: true, attempt: 2 }),
      candidate(2, { priority: 2, size: 10 }),
      candidate(5, { priority: 2, size: 4 }),
      candidate(4, { priority: 1, size: 60, repair: true, attempt: 2 }),
    ]);
    expect(out.map((c) => c.issueNumber)).toEqual([4, 9, 7, 5, 2, 3]);
  });
});

describe('fences: literal-prefix overlap', () => {
  it('reduces globs to their literal prefix', () => {
    expect(literalPrefix('src/api/**')).toBe('src/api/');
    expect(literalPrefix('./src/a.ts')).toBe('src/a.ts');
    expect(literalPrefix('/docs/{a,b}.md')).toBe('docs/');
    expect(literalPrefix('**')).toBe('');
  });

  it('finds overlaps in both directions and ignores disjoint trees', () => {
    const set = new FenceSet();
    set.claim(['src/api/**'], 'A');
    expect(set.conflict(['src/api/v1/x.ts'])).toEqual({ fence: 'src/api/v1/x.ts', heldBy: 'A' });
    expect(set.conflict(['src/**'])).toEqual({ fence: 'src/**', heldBy: 'A' });
    expect(set.conflict(['src/ui/**', 'docs/**'])).toBeUndefined();
    expect(set.conflict(['  '])).toBeUndefined();
    set.claim(['**'], 'ALL');
    expect(set.conflict(['anything'])).toEqual({ fence: 'anything', heldBy: 'ALL' });
  });
});

function crew(
  crewId: string,
  issueNumber: number,
  status: CrewRecord['status'],
  outcome?: CrewOutcome,
  minute = 0,
): CrewRecord {
  const at = new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
  return {
    crewId,
    issueNumber,
    daemon: 'd',
    agent: 'a',
    weight: 'standard',
    fences: [],
    attempt: 1,
    repair: false,
    status,
    plannedAt: at,
    ...(status === 'finished' ? { finishedAt: at, outcome } : {}),
  };
}

function registry(...crews: CrewRecord[]): CrewRegistry {
  return { crews: Object.fromEntries(crews.map((c) => [c.crewId, c])), leases: {} };
}

describe('history: two-failure stop, repairs, interruptions', () => {
  it('one failure queues a repair; two consecutive failures stop the issue', () => {
    const s = issueStates(
      registry(
        crew('a1', 1, 'finished', 'failed', 1),
        crew('b1', 2, 'finished', 'failed', 1),
        crew('b2', 2, 'finished', 'timed_out', 2),
      ),
    );
    expect(s.get(1)).toEqual({ kind: 'repair', attempt: 2, failedCrewId: 'a1' });
    expect(s.get(2)).toEqual({ kind: 'stopped', crewIds: ['b1', 'b2'] });
  });

  it('usage limits, overloads and cancellations are not failures', () => {
    const s = issueStates(
      registry(
        crew('a1', 1, 'finished', 'usage_limit', 1),
        crew('a2', 1, 'finished', 'overloaded', 2),
        crew('b1', 2, 'finished', 'failed', 1),
        crew('b2', 2, 'finished', 'usage_limit', 2),
        crew('b3', 2, 'finished', 'cancelled', 3),
      ),
    );
    expect(s.get(1)).toEqual({ kind: 'ready', attempt: 1 });
    expect(s.get(2)).toEqual({ kind: 'repair', attempt: 2, failedCrewId: 'b1' });
  });

  it('a pre-verify abort (dirty slot, N4.1) does not count; any other abort does', () => {
    const dirty = (id: string, issue: number, minute: number) => ({
      ...crew(id, issue, 'finished', 'aborted', minute),
      preVerify: true,
    });
    const s = issueStates(
      registry(
        dirty('a1', 1, 1),
        dirty('a2', 1, 2),
        crew('b1', 2, 'finished', 'failed', 1),
        dirty('b2', 2, 2),
        crew('c1', 3, 'finished', 'aborted', 1),
        crew('c2', 3, 'finished', 'aborted', 2),
      ),
    );
    expect(s.get(1)).toEqual({ kind: 'ready', attempt: 1 });
    expect(s.get(2)).toEqual({ kind: 'repair', attempt: 2, failedCrewId: 'b1' });
    expect(s.get(3)).toEqual({ kind: 'stopped', crewIds: ['c1', 'c2'] });
  });

  it('N7.1: an orphaned crew is not a failed run; MAX_ORPHANINGS in a row stop the issue; a counted run ends the streak; a requeue forgets it', () => {
    const orphan = (id: string, issue: number, minute: number) => ({
      ...crew(id, issue, 'finished', 'aborted', minute),
      orphaned: true,
    });
    const s = issueStates(
      registry(
        // Orphanings alone, one short of the bound: a first attempt again.
        ...Array.from({ length: MAX_ORPHANINGS - 1 }, (_, i) => orphan(`a${i}`, 1, i)),
        // A failure, then orphanings: still the repair of that failure, never a stop by failures.
        crew('b0', 2, 'finished', 'failed', 0),
        orphan('b1', 2, 1),
        orphan('b2', 2, 2),
        // The bound: stopped, said to be the orphanings.
        ...Array.from({ length: MAX_ORPHANINGS }, (_, i) => orphan(`c${i}`, 3, i)),
        // A run of the student's own between orphanings ends the streak.
        ...Array.from({ length: MAX_ORPHANINGS - 1 }, (_, i) => orphan(`d${i}`, 4, i)),
        crew('dx', 4, 'finished', 'failed', 10),
        ...Array.from({ length: MAX_ORPHANINGS - 1 }, (_, i) => orphan(`e${i}`, 4, 11 + i)),
        // Two failures around orphanings still stop it after two failures.
        crew('f0', 5, 'finished', 'failed', 0),
        orphan('f1', 5, 1),
        crew('f2', 5, 'finished', 'timed_out', 2),
        // Interruptions neither count nor end a streak.
        orphan('g0', 6, 0),
        crew('g1', 6, 'finished', 'usage_limit', 1),
        ...Array.from({ length: MAX_ORPHANINGS - 1 }, (_, i) => orphan(`g${i + 2}`, 6, 2 + i)),
      ),
    );
    expect(s.get(1)).toEqual({ kind: 'ready', attempt: 1 });
    expect(s.get(2)).toEqual({ kind: 'repair', attempt: 2, failedCrewId: 'b0' });
    const last = [`c${MAX_ORPHANINGS - 2}`, `c${MAX_ORPHANINGS - 1}`];
    expect(s.get(3)).toEqual({ kind: 'stopped', crewIds: last, orphaned: MAX_ORPHANINGS });
    expect(s.get(4)).toEqual({ kind: 'repair', attempt: 2, failedCrewId: 'dx' });
    expect(s.get(5)).toEqual({ kind: 'stopped', crewIds: ['f0', 'f2'] });
    expect(s.get(6)).toMatchObject({ kind: 'stopped', orphaned: MAX_ORPHANINGS });
    // `school requeue` after the stop: the orphanings before it are forgotten.
    const requeued = issueStates(
      registry(...Array.from({ length: MAX_ORPHANINGS }, (_, i) => orphan(`c${i}`, 3, i))),
      undefined,
      new Map([[3, new Date(Date.UTC(2026, 0, 1, 1)).toISOString()]]),
    );
    expect(requeued.get(3)).toEqual({ kind: 'ready', attempt: 1 });
  });

  it('an active crew blocks the issue (N2.1); a success is done unless grading rejected it', () => {
    const reg = registry(
      crew('a1', 1, 'running'),
      crew('b1', 2, 'finished', 'succeeded', 1),
      crew('c1', 3, 'finished', 'succeeded', 1),
      crew('d1', 4, 'finished', 'failed', 1),
      crew('d2', 4, 'finished', 'succeeded', 2),
    );
    const s = issueStates(reg, (id) => (id === 'c1' || id === 'd2' ? 'rejected' : undefined));
    expect(s.get(1)).toEqual({ kind: 'active', crewId: 'a1' });
    expect(s.get(2)).toEqual({ kind: 'done', crewId: 'b1' });
    expect(s.get(3)).toEqual({ kind: 'repair', attempt: 2, failedCrewId: 'c1' });
    expect(s.get(4)).toEqual({ kind: 'stopped', crewIds: ['d1', 'd2'] });
  });
});

describe('fences: the trie agrees with the naive pairwise check', () => {
  it('tryClaim admits exactly the fence sets a pairwise literal-prefix scan admits', () => {
    const seg = fc.constantFrom('a', 'ab', 'b', 'src', 'x.ts', '*', '**', '{c,d}');
    const glob = fc.array(seg, { minLength: 0, maxLength: 4 }).map((s) => s.join('/'));
    fc.assert(
      fc.property(fc.array(fc.array(glob, { maxLength: 3 }), { maxLength: 12 }), (batches) => {
        const set = new FenceSet();
        const held: string[] = [];
        for (const [i, fences] of batches.entries()) {
          const live = fences.filter((f) => f.trim() !== '');
          const naive = live.some((f) =>
            held.some((h) => {
              const a = literalPrefix(f);
              const b = literalPrefix(h);
              return a.startsWith(b) || b.startsWith(a);
            }),
          );
          const got = set.tryClaim(fences, `o${i}`);
          expect(got !== undefined).toBe(naive);
          if (!got) held.push(...live);
        }
      }),
      { numRuns: 500 },
    );
  });
});
