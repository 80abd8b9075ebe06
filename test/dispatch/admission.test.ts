import { describe, expect, it } from 'vitest';
import { admit, type AdmissionResult } from '../../src/dispatch/gates/admission.js';
import { GiB, admission, candidate, config, daemon } from './helpers.js';

const codes = (r: AdmissionResult) => Object.fromEntries(r.refused.map((x) => [x.issue, x.code]));
const placed = (r: AdmissionResult) =>
  Object.fromEntries(r.admitted.map((a) => [a.candidate.issueNumber, a.daemon]));

describe('admit: batch gates', () => {
  it('admits a candidate onto an online daemon with an agent', () => {
    const r = admit(admission());
    expect(r.refused).toEqual([]);
    expect(r.admitted).toEqual([
      { candidate: candidate(1), agent: 'student', daemon: 'd1', classroom: 'worktree', fallback: false },
    ]);
  });

  it('a corrupt registry denies everything with the reason (N5.1)', () => {
    const r = admit(
      admission({
        candidates: [candidate(1), candidate(2)],
        holds: { blocked: 'crews.jsonl corrupt at line 3' },
      }),
    );
    expect(r.admitted).toEqual([]);
    expect(r.refused.map((x) => x.code)).toEqual(['state-corrupt', 'state-corrupt']);
    expect(r.refused[0]!.reason).toContain('crews.jsonl corrupt at line 3');
  });

  it('spend cap reached: exactly the loud line, nothing placed', () => {
    const cands = [candidate(1), candidate(2), candidate(3)];
    const r = admit(admission({ candidates: cands, spend: { spentUsd: 12.5, capUsd: 10 } }));
    expect(r.loud).toBe('SPEND CAP REACHED (12.50 >= 10.00) — dispatch halted, 0/3 placed');
    expect(r.admitted).toEqual([]);
    expect(r.refused.map((x) => x.code)).toEqual(['spend-cap', 'spend-cap', 'spend-cap']);
    // Exactly at the cap is reached, too.
    expect(admit(admission({ spend: { spentUsd: 10, capUsd: 10 } })).loud).toBe(
      'SPEND CAP REACHED (10.00 >= 10.00) — dispatch halted, 0/1 placed',
    );
    // Below the cap places normally and says nothing loud.
    const ok = admit(admission({ spend: { spentUsd: 9.99, capUsd: 10 } }));
    expect(ok.loud).toBeUndefined();
    expect(ok.admitted).toHaveLength(1);
  });

  it('a paused school launches nothing and says why', () => {
    const r = admit(admission({ holds: { paused: 'usage limit reported by crew c1-aa' } }));
    expect(r.admitted).toEqual([]);
    expect(r.refused[0]).toMatchObject({ code: 'paused', reason: 'usage limit reported by crew c1-aa' });
  });

  it('time budget: nothing when not one crew timeout + grading reserve fits (N3.1)', () => {
    const r = admit(
      admission({
        time: {
          remainingMs: 19 * 60_000,
          crewTimeoutMs: 15 * 60_000,
          gradingReserveMs: 5 * 60_000,
          maxWaves: 1,
        },
      }),
    );
    expect(r.waves).toBe(0);
    expect(r.refused[0]!.code).toBe('time-budget');
    expect(r.refused[0]!.reason).toContain('19 min left');
    const fits = admit(
      admission({
        time: {
          remainingMs: 20 * 60_000,
          crewTimeoutMs: 15 * 60_000,
          gradingReserveMs: 5 * 60_000,
          maxWaves: 1,
        },
      }),
    );
    expect(fits.admitted).toHaveLength(1);
  });

  it('time budget: admits fewer when only some waves fit', () => {
    // K = 1, three waves wanted, 2 × 15 + 5 = 35 of 40 minutes fit two waves.
    const r = admit(
      admission({
        candidates: [1, 2, 3].map((n) => candidate(n)),
        time: {
          remainingMs: 40 * 60_000,
          crewTimeoutMs: 15 * 60_000,
          gradingReserveMs: 5 * 60_000,
          maxWaves: 3,
        },
      }),
    );
    expect(r.waves).toBe(2);
    expect(r.admitted.map((a) => a.candidate.issueNumber)).toEqual([1, 2]);
    expect(codes(r)).toEqual({ 3: 'time-budget' });
  });
});

describe('admit: per-candidate limits', () => {
  it('global cap: maxCrews minus active crews', () => {
    const cands = [1, 2, 3].map((n) => candidate(n));
    const r = admit(
      admission({
        candidates: cands,
        daemons: [daemon('d1', { slots: 8 })],
        limits: { ...admission().limits, maxCrews: 3, activeCrews: 2 },
      }),
    );
    expect(r.admitted.map((a) => a.candidate.issueNumber)).toEqual([1]);
    expect(codes(r)).toEqual({ 2: 'global-cap', 3: 'global-cap' });
    expect(
      admit(admission({ limits: { ...admission().limits, maxCrews: 1, activeCrews: 1 } })).refused[0]!.code,
    ).toBe('global-cap');
  });

  it('free slots per daemon: K minus busy', () => {
    const r = admit(
      admission({
        candidates: [1, 2, 3].map((n) => candidate(n)),
        daemons: [daemon('d1', { slots: 2, busy: 1 })],
      }),
    );
    expect(r.admitted).toHaveLength(1);
    expect(codes(r)).toEqual({ 2: 'no-free-slot', 3: 'no-free-slot' });
  });

  it('free-disk floor: a daemon below it (or with an unknown figure) takes nothing', () => {
    const low = admit(admission({ daemons: [daemon('d1', { freeDiskBytes: 2 * GiB })] }));
    expect(low.refused[0]!.code).toBe('disk-floor');
    expect(low.refused[0]!.reason).toContain('8.0 GiB floor');
    expect(low.refused[0]!.reason).toContain('d1: 2.0 GiB');
    const unknown = admit(admission({ daemons: [daemon('d1', { freeDiskBytes: undefined })] }));
    expect(unknown.refused[0]!.code).toBe('disk-floor');
    // The other daemon still works.
    const mixed = admit(admission({ daemons: [daemon('d1', { freeDiskBytes: 1 }), daemon('d2')] }));
    expect(placed(mixed)).toEqual({ 1: 'd2' });
  });

  it('an offline daemon is never auto-assigned', () => {
    const r = admit(
      admission({
        candidates: [1, 2].map((n) => candidate(n)),
        daemons: [
          daemon('gone', { online: false, offlineReason: 'last seen 20m ago > TTL 15m', slots: 8 }),
          daemon('here'),
        ],
      }),
    );
    expect(placed(r)).toEqual({ 1: 'here' });
    const none = admit(
      admission({ daemons: [daemon('gone', { online: false, offlineReason: 'no heartbeat recorded' })] }),
    );
    expect(none.refused[0]).toMatchObject({ code: 'fleet-offline' });
    expect(none.refused[0]!.reason).toContain('gone (no heartbeat recorded)');
  });
});

describe('admit: weight classes, best-fit decreasing', () => {
  it('a heavy crew never lands on a light daemon; over-capacity work is refused, not dropped', () => {
    const r = admit(
      admission({
        candidates: [candidate(1, { weight: 'heavy' }), candidate(2, { weight: 'heavy' })],
        daemons: [
          daemon('small', { effectiveClass: 'light', slots: 8 }),
          daemon('big', { effectiveClass: 'heavy' }),
        ],
      }),
    );
    expect(placed(r)).toEqual({ 1: 'big' });
    expect(codes(r)).toEqual({ 2: 'no-free-slot' });

    const over = admit(
      admission({
        candidates: [candidate(1, { weight: 'xl' })],
        daemons: [daemon('d', { effectiveClass: 'heavy' })],
      }),
    );
    expect(over.admitted).toEqual([]);
    expect(over.refused[0]).toMatchObject({ issue: 1, code: 'over-capacity' });
    expect(over.refused[0]!.reason).toContain('largest: heavy');
  });

  it('packs the heavy crew on the big box even when a light crew comes first', () => {
    const r = admit(
      admission({
        candidates: [
          candidate(1, { weight: 'light', priority: 0 }),
          candidate(2, { weight: 'heavy', priority: 1 }),
        ],
        daemons: [daemon('big', { effectiveClass: 'heavy' }), daemon('small', { effectiveClass: 'light' })],
      }),
    );
    expect(placed(r)).toEqual({ 1: 'small', 2: 'big' });
  });

  it('light work spills onto bigger boxes only when the light ones are full', () => {
    const r = admit(
      admission({
        candidates: [1, 2, 3].map((n) => candidate(n, { weight: 'light' })),
        daemons: [
          daemon('big', { effectiveClass: 'xl', slots: 4 }),
          daemon('small', { effectiveClass: 'light', slots: 2 }),
        ],
      }),
    );
    expect(placed(r)).toEqual({ 1: 'small', 2: 'small', 3: 'big' });
  });

  it('least-loaded first, round-robin among equals', () => {
    const r = admit(
      admission({
        candidates: [1, 2, 3, 4, 5, 6].map((n) => candidate(n)),
        daemons: [daemon('a', { slots: 4, busy: 2 }), daemon('b', { slots: 4 }), daemon('c', { slots: 4 })],
      }),
    );
    // b and c are empty: they alternate until they reach a's load, then all three rotate.
    expect(r.admitted.map((x) => x.daemon)).toEqual(['b', 'c', 'b', 'c', 'a', 'b']);
  });
});

describe('admit: fences', () => {
  it('no two concurrent crews share a fence (held, or admitted in this batch)', () => {
    const r = admit(
      admission({
        candidates: [
          candidate(1, { fences: ['src/api/**'] }),
          candidate(2, { fences: ['src/api/routes.ts'] }),
          candidate(3, { fences: ['docs/**'] }),
          candidate(4, { fences: ['src/ui/*.tsx'] }),
          candidate(5, { fences: ['lib/x.ts'] }),
        ],
        daemons: [daemon('d', { slots: 8 })],
        heldFences: [{ fences: ['docs/guide.md'], holder: 'crew c9-0000 (issue #9)' }],
      }),
    );
    expect(r.admitted.map((a) => a.candidate.issueNumber)).toEqual([1, 4, 5]);
    expect(codes(r)).toEqual({ 2: 'fence-conflict', 3: 'fence-conflict' });
    expect(r.refused.find((x) => x.issue === 3)!.reason).toContain('crew c9-0000 (issue #9)');
  });

  it('a fence of ** runs alone', () => {
    const r = admit(
      admission({
        candidates: [candidate(1, { fences: ['**'] }), candidate(2, { fences: ['a/b'] }), candidate(3)],
        daemons: [daemon('d', { slots: 8 })],
      }),
    );
    // Issue 3 declares no fence: it claims nothing and conflicts with nothing.
    expect(r.admitted.map((a) => a.candidate.issueNumber)).toEqual([1, 3]);
    expect(codes(r)).toEqual({ 2: 'fence-conflict' });
  });
});

describe('admit: agents (N4.3)', () => {
  const agents = config({
    agents: [
      { id: 'junior', command: ['j'], roles: ['coding'], maxDifficulty: 2 },
      { id: 'senior', command: ['s'], roles: ['coding'], domains: ['backend'] },
      { id: 'scribe', command: ['w'], roles: ['docs'], trust: 'high' },
    ],
  }).agents;

  it('forceAgent is honoured only when that agent is allowed for the role', () => {
    const r = admit(
      admission({
        agents,
        daemons: [daemon('d', { slots: 8 })],
        candidates: [
          candidate(1, { forceAgent: 'scribe' }),
          candidate(2, { forceAgent: 'senior', domain: 'frontend' }),
          candidate(3, { forceAgent: 'root' }),
        ],
      }),
    );
    expect(r.admitted.map((a) => [a.candidate.issueNumber, a.agent])).toEqual([[2, 'senior']]);
    expect(codes(r)).toEqual({ 1: 'force-agent-not-allowed', 3: 'force-agent-not-allowed' });
    expect(r.refused.find((x) => x.issue === 1)!.reason).toContain('not allowed for role coding');
  });

  it('chooses by role, domain and difficulty, then by ledger score', () => {
    const base = { agents, daemons: [daemon('d', { slots: 8 })] };
    const r = admit(
      admission({
        ...base,
        candidates: [
          candidate(1, { domain: 'backend', difficulty: 4 }),
          candidate(2, { domain: 'frontend', difficulty: 4 }),
          candidate(3, { role: 'docs' }),
        ],
      }),
    );
    expect(r.admitted.map((a) => [a.candidate.issueNumber, a.agent])).toEqual([
      [1, 'senior'],
      [3, 'scribe'],
    ]);
    expect(codes(r)).toEqual({ 2: 'no-agent' });

    const scored = admit(
      admission({
        ...base,
        candidates: [candidate(1, { domain: 'backend', difficulty: 2 })],
        choice: {
          scores: (agent, ctx) => (agent === 'senior' && ctx.domain === 'backend' ? 0.2 : undefined),
        },
      }),
    );
    // senior scored 0.2 loses to the unscored junior (neutral prior 0.5).
    expect(scored.admitted[0]!.agent).toBe('junior');
  });
});

describe('admit: classrooms and fallbacks (N7.3)', () => {
  it('coding crews fall back to bot daemons only while no worktree daemon is online, at most maxFallbacks', () => {
    const r = admit(
      admission({
        candidates: [1, 2, 3].map((n) => candidate(n)),
        daemons: [daemon('wt', { online: false }), daemon('bot', { classroom: 'bot', slots: 8 })],
        limits: { ...admission().limits, maxFallbacks: 2 },
      }),
    );
    expect(r.admitted.map((a) => [a.daemon, a.fallback])).toEqual([
      ['bot', true],
      ['bot', true],
    ]);
    expect(codes(r)).toEqual({ 3: 'fallback-limit' });
  });

  it('non-coding roles go to bot daemons when there are any; coding never does while worktrees are up', () => {
    const r = admit(
      admission({
        candidates: [candidate(1, { role: 'research' }), candidate(2)],
        daemons: [daemon('bot', { classroom: 'bot', slots: 8 }), daemon('wt')],
      }),
    );
    expect(r.admitted.map((a) => [a.candidate.issueNumber, a.daemon, a.fallback])).toEqual([
      [1, 'bot', false],
      [2, 'wt', false],
    ]);
  });

  it('a coding crew with no worktree classroom at all is refused with the reason', () => {
    const r = admit(admission({ daemons: [daemon('bot', { classroom: 'bot', online: false })] }));
    expect(r.refused[0]!.code).toBe('no-classroom');
  });
});
