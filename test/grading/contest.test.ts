import { describe, expect, it } from 'vitest';
import { decideContest, type Entrant } from '../../src/grading/contest.js';
import { combine, type JudgeFinding } from '../../src/grading/verdict.js';

/** Issue 36, deliverable 5: how the judges pick a contest's crew (src/grading/contest.ts). */
const AT = '2026-03-01T12:00:00.000Z';

function entrant(
  crewId: string,
  o: { sealed?: [number, number]; review?: number; accepted?: boolean; cost?: number; ended?: string },
): Entrant {
  const base = { crewId, agent: `agent-${crewId}`, domain: 'general', difficulty: 5 };
  const cost = o.cost !== undefined ? { costUsd: o.cost } : {};
  if (o.ended) return { ...base, ...cost, ended: o.ended };
  const findings: JudgeFinding[] = [
    { judge: 'verification', passed: true, code: 'verification_passed', reasons: [], score: 1 },
  ];
  if (o.sealed) {
    const [passed, failed] = o.sealed;
    findings.push({
      judge: 'sealed',
      passed: failed === 0,
      code: failed === 0 ? 'sealed_tests_passed' : 'sealed_tests_failed',
      reasons: [],
      score: failed === 0 ? 1 : 0,
      tests: { passed, failed },
    });
  }
  if (o.accepted !== false && (!o.sealed || o.sealed[1] === 0))
    findings.push({ judge: 'reviewer', passed: true, code: 'approved', reasons: [], score: o.review ?? 0.8 });
  else if (o.accepted === false)
    findings.push({ judge: 'reviewer', passed: false, code: 'changes_requested', reasons: [], score: 0 });
  return { ...base, ...cost, verdict: combine(findings) };
}

describe('decideContest', () => {
  it('more passed named sealed tests wins; a crew the sealed judge rejected is a loser with its counts', () => {
    const d = decideContest(
      'k7-1',
      7,
      [entrant('c7-b', { sealed: [2, 1] }), entrant('c7-a', { sealed: [3, 0] })],
      AT,
    );
    expect(d.winner).toEqual({ crewId: 'c7-a', agent: 'agent-c7-a', domain: 'general', difficulty: 5 });
    expect(d.why).toBe('c7-a (agent-c7-a) was the only crew of 2 the judges accepted');
    expect(d.losers).toEqual([
      expect.objectContaining({
        crewId: 'c7-b',
        reason: 'rejected by the sealed judge (sealed_tests_failed); 2 named sealed test(s) passed, 1 failed',
      }),
    ]);
    expect(d.decidedAt).toBe(AT);
  });

  it('among accepted crews: sealed tests, then the reviewer, then the lower cost, then the crew id', () => {
    const bySealed = decideContest(
      'k1',
      1,
      [entrant('c1-a', { sealed: [3, 0], review: 0.9 }), entrant('c1-b', { sealed: [4, 0], review: 0.5 })],
      AT,
    );
    expect(bySealed.winner?.crewId).toBe('c1-b');
    expect(bySealed.why).toContain('more named sealed tests passed (c1-b: 4, c1-a: 3)');
    expect(bySealed.losers[0]!.reason).toBe(
      'accepted, not chosen: c1-b had more named sealed tests passed (c1-b: 4, c1-a: 3)',
    );

    const byReviewer = decideContest(
      'k1',
      1,
      [entrant('c1-a', { sealed: [3, 0], review: 0.6 }), entrant('c1-b', { sealed: [3, 0], review: 0.9 })],
      AT,
    );
    expect(byReviewer.winner?.crewId).toBe('c1-b');
    expect(byReviewer.why).toContain("the higher reviewer's score (c1-b: 0.90, c1-a: 0.60)");

    const byCost = decideContest(
      'k1',
      1,
      [entrant('c1-a', { review: 0.9, cost: 0.4 }), entrant('c1-b', { review: 0.9, cost: 0.1 })],
      AT,
    );
    expect(byCost.winner?.crewId).toBe('c1-b');
    expect(byCost.why).toContain('the lower cost (c1-b: $0.10, c1-a: $0.40)');

    const byId = decideContest(
      'k1',
      1,
      [entrant('c1-b', { review: 0.9 }), entrant('c1-a', { review: 0.9 })],
      AT,
    );
    expect(byId.winner?.crewId).toBe('c1-a');
    expect(byId.why).toContain('the lower crew id');
  });

  it('a crew that ended without a grade is decided among the rest; no accepted crew means no winner', () => {
    const rest = decideContest(
      'k2',
      2,
      [entrant('c2-a', { ended: 'aborted (infra)' }), entrant('c2-b', { sealed: [1, 0] })],
      AT,
    );
    expect(rest.winner?.crewId).toBe('c2-b');
    expect(rest.losers).toEqual([
      expect.objectContaining({ crewId: 'c2-a', reason: 'ended without a grade: aborted (infra)' }),
    ]);

    const none = decideContest(
      'k3',
      3,
      [entrant('c3-a', { accepted: false }), entrant('c3-b', { sealed: [0, 2] })],
      AT,
    );
    expect(none.winner).toBeUndefined();
    expect(none.why).toBe('no crew of the 2 was accepted');
    expect(none.losers.map((l) => l.crewId)).toEqual(['c3-a', 'c3-b']);
  });
});
