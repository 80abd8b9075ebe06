import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CAPACITY_CLASSES } from '../../src/config/schema.js';
import { admit, type AdmissionInput } from '../../src/dispatch/gates/admission.js';
import { literalPrefix } from '../../src/dispatch/gates/fences.js';
import { classRank } from '../../src/dispatch/fleet/fleet.js';
import { orderCandidates } from '../../src/dispatch/choice/order.js';
import { GiB, admission, candidate, daemon } from './helpers.js';

const cls = fc.constantFrom(...CAPACITY_CLASSES);
const fence = fc.constantFrom('src/a/**', 'src/a/x.ts', 'src/b/*', 'docs/**', 'lib', 'lib/c.ts', 'test/**');

const daemonArb = fc.record({
  slots: fc.integer({ min: 1, max: 4 }),
  busy: fc.integer({ min: 0, max: 5 }),
  effectiveClass: cls,
  online: fc.boolean(),
  bot: fc.boolean(),
  diskGiB: fc.integer({ min: 0, max: 20 }),
});

const inputArb = fc
  .record({
    daemons: fc.array(daemonArb, { minLength: 0, maxLength: 6 }),
    cands: fc.array(
      fc.record({
        weight: cls,
        fences: fc.array(fence, { maxLength: 2 }),
        role: fc.constantFrom('coding', 'research'),
        priority: fc.integer({ min: 0, max: 4 }),
        repair: fc.boolean(),
      }),
      { maxLength: 25 },
    ),
    held: fc.array(fence, { maxLength: 2 }),
    maxCrews: fc.integer({ min: 1, max: 30 }),
    active: fc.integer({ min: 0, max: 10 }),
    maxWaves: fc.integer({ min: 1, max: 3 }),
    remainingMin: fc.integer({ min: 0, max: 90 }),
    spent: fc.integer({ min: 0, max: 20 }),
    cap: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
    maxFallbacks: fc.integer({ min: 0, max: 3 }),
  })
  .map((r): AdmissionInput => {
    const candidates = orderCandidates(
      r.cands.map((c, i) => candidate(i + 1, { ...c, attempt: c.repair ? 2 : 1 })),
    );
    return admission({
      candidates,
      daemons: r.daemons.map((d, i) =>
        daemon(`d${i}`, {
          slots: d.slots,
          busy: d.busy,
          effectiveClass: d.effectiveClass,
          online: d.online,
          classroom: d.bot ? 'bot' : 'worktree',
          freeDiskBytes: d.diskGiB * GiB,
        }),
      ),
      heldFences: r.held.length ? [{ fences: r.held, holder: 'crew held' }] : [],
      limits: {
        ...admission().limits,
        maxCrews: r.maxCrews,
        activeCrews: r.active,
        maxFallbacks: r.maxFallbacks,
      },
      time: {
        remainingMs: r.remainingMin * 60_000,
        crewTimeoutMs: 15 * 60_000,
        gradingReserveMs: 5 * 60_000,
        maxWaves: r.maxWaves,
      },
      spend: { spentUsd: r.spent, ...(r.cap !== undefined ? { capUsd: r.cap } : {}) },
    });
  });

const overlaps = (a: string, b: string) => {
  const pa = literalPrefix(a);
  const pb = literalPrefix(b);
  return pa.startsWith(pb) || pb.startsWith(pa);
};

describe('admit: invariants over random fleets and batches', () => {
  it('never over-admits, never mis-places, and accounts for every candidate', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const r = admit(input);
        // Every candidate exactly once: admitted or refused with a reason.
        const seen = [...r.admitted.map((a) => a.candidate.issueNumber), ...r.refused.map((x) => x.issue)];
        expect(seen.sort((a, b) => a - b)).toEqual(
          input.candidates.map((c) => c.issueNumber).sort((a, b) => a - b),
        );
        for (const x of r.refused) expect(x.reason.length).toBeGreaterThan(0);

        expect(r.admitted.length).toBeLessThanOrEqual(
          Math.max(0, input.limits.maxCrews - input.limits.activeCrews),
        );
        if (input.spend.capUsd !== undefined && input.spend.spentUsd >= input.spend.capUsd) {
          expect(r.admitted).toEqual([]);
          expect(r.loud).toMatch(
            /^SPEND CAP REACHED \(\d+\.\d\d >= \d+\.\d\d\) — dispatch halted, 0\/\d+ placed$/,
          );
        }

        const perDaemon = new Map<string, number>();
        for (const a of r.admitted) {
          const d = input.daemons.find((x) => x.id === a.daemon)!;
          expect(d.online).toBe(true);
          expect(d.freeDiskBytes!).toBeGreaterThanOrEqual(input.limits.minFreeDiskBytes);
          expect(classRank(d.effectiveClass)).toBeGreaterThanOrEqual(classRank(a.candidate.weight));
          expect(a.classroom).toBe(d.classroom);
          if (d.classroom === 'bot' && a.candidate.role === 'coding') expect(a.fallback).toBe(true);
          perDaemon.set(d.id, (perDaemon.get(d.id) ?? 0) + 1);
        }
        for (const [id, n] of perDaemon) {
          const d = input.daemons.find((x) => x.id === id)!;
          expect(n).toBeLessThanOrEqual(d.slots * r.waves - d.busy);
        }
        expect(r.admitted.filter((a) => a.fallback).length).toBeLessThanOrEqual(input.limits.maxFallbacks);

        const claimed = input.heldFences.flatMap((h) => h.fences);
        for (const a of r.admitted) {
          for (const f of a.candidate.fences) for (const g of claimed) expect(overlaps(f, g)).toBe(false);
          claimed.push(...a.candidate.fences);
        }
        // Deterministic: the same batch decides the same way.
        expect(admit(input)).toEqual(r);
      }),
      { numRuns: 400 },
    );
  });

  it('with one pool and no fences, admission is maximal: a refused-for-slots crew had no room', () => {
    fc.assert(
      fc.property(
        fc.array(cls, { maxLength: 20 }),
        fc.array(fc.record({ c: cls, k: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 4 }),
        (weights, ds) => {
          const input = admission({
            candidates: weights.map((w, i) => candidate(i + 1, { weight: w })),
            daemons: ds.map((d, i) => daemon(`d${i}`, { effectiveClass: d.c, slots: d.k })),
          });
          const r = admit(input);
          // Re-admitting any slot-refused crew on top of the admitted set must be infeasible.
          for (const x of r.refused.filter((y) => y.code === 'no-free-slot')) {
            const w = classRank(input.candidates[x.issue - 1]!.weight);
            const need = r.admitted.filter((a) => classRank(a.candidate.weight) >= w).length + 1;
            const cap = input.daemons
              .filter((d) => classRank(d.effectiveClass) >= w)
              .reduce((s, d) => s + d.slots, 0);
            const anyLower = CAPACITY_CLASSES.some((_, c) => {
              if (c > w) return false;
              const n = r.admitted.filter((a) => classRank(a.candidate.weight) >= c).length + 1;
              const k = input.daemons
                .filter((d) => classRank(d.effectiveClass) >= c)
                .reduce((s, d) => s + d.slots, 0);
              return n > k;
            });
            expect(need > cap || anyLower).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
