import { z } from 'zod';
import { SchoolError } from '../errors.js';

/**
 * What a grade is (docs/architecture.md): accepted only when verification passed (and the sealed tests, when
 * configured) AND the reviewer approved. Every verdict names the judge that decided and why, and
 * keeps each judge's own finding so a rejection can be explained without re-running anything.
 */
export const JUDGES = ['verification', 'policy', 'sealed', 'evidence', 'reviewer', 'rubric'] as const;
export type JudgeName = (typeof JUDGES)[number];

export interface JudgeFinding {
  judge: JudgeName;
  passed: boolean;
  /** A stable code, e.g. `verification_unavailable`, `sealed_tests_failed`, `outside_fences`. */
  code: string;
  reasons: string[];
  /** 0..1; the reviewer's score, 1 or 0 for pass/fail judges. */
  score: number;
  /** The sealed judge with named results: how many named tests the report gave as passed, failed. */
  tests?: { passed: number; failed: number };
}

export interface Verdict {
  accepted: boolean;
  /** The judge whose finding decided the outcome: the first that failed, else the reviewer. */
  decidedBy: JudgeName;
  code: string;
  reasons: string[];
  /** The task score fed to the ledger: the reviewer's score when accepted, 0 when rejected. */
  score: number;
  findings: JudgeFinding[];
  /**
   * What proved an accepted change (the evidence judge's first reason, src/grading/evidence.ts): "test
   * test/foo.test.mjs fails at the base, passes with the change", "sealed tests", "docs issue: no
   * evidence needed". Kept on the verdict itself: the board and the status comment read verdicts
   * whose findings compaction dropped.
   */
  proof?: string;
}

/** The reviewer protocol: the JSON a configured reviewer command prints on stdout. */
export const reviewerVerdictSchema = z.strictObject({
  approve: z.boolean(),
  score: z.number().min(0).max(1),
  reasons: z.array(z.string()),
});
export type ReviewerVerdict = z.infer<typeof reviewerVerdictSchema>;

/** Combines judge findings in order; the first failing judge decides. */
export function combine(findings: JudgeFinding[]): Verdict {
  const failed = findings.find((f) => !f.passed);
  const last = findings.at(-1);
  const decider = failed ?? last;
  if (!decider) throw new SchoolError('combine: no judge findings', { code: 'grading-bug' });
  const proof = failed ? undefined : findings.find((f) => f.judge === 'evidence')?.reasons[0];
  return {
    accepted: !failed,
    decidedBy: decider.judge,
    code: decider.code,
    // A change the policy judge let through flagged (src/grading/policy.ts) says so first on the
    // verdict itself, where the board (which clips) and the pull request's description read it.
    reasons: failed
      ? decider.reasons
      : [...flagged(findings.filter((f) => f !== decider)), ...decider.reasons],
    score: failed ? 0 : decider.score,
    findings,
    // A rejected verdict carries no proof key at all, not an undefined one.
    ...(proof ? { proof } : {}),
  };
}

function flagged(findings: readonly JudgeFinding[]): string[] {
  return findings
    .filter((f) => f.judge === 'policy' && f.code === 'policy_flagged')
    .flatMap((f) => f.reasons);
}
