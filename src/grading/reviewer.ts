import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { SchoolError } from '../errors.js';
import { redact, redactText } from '../security/redact.js';
import type { VerificationRecord } from '../bookbag/schema.js';
import { childEnv, type ChildEnv } from '../process/env.js';
import { ProgramNotFoundError } from '../sandbox/index.js';
import { runProcess } from '../process/run.js';
import { reviewerVerdictSchema, type JudgeFinding, type ReviewerVerdict } from './verdict.js';
import type { ReviewerConfig } from '../config/schema.js';
import { runAgentReviewer } from './agent-reviewer.js';
import type { Usage } from '../bookbag/schema.js';

/**
 * The configured reviewer (docs/architecture.md): `grading.reviewer` is a command (argv) or a Claude Code /
 * Codex reviewer (./agent-reviewer.ts). Command protocol: the command (argv, no shell)
 * receives one JSON document on stdin — `{jobKey, issueNumber, crewId, agent, fences, brief, diff,
 * verification, role, report?}` — and the same parts as files named by `SCHOOL_REVIEW_BRIEF`, `SCHOOL_REVIEW_DIFF`
 * and `SCHOOL_REVIEW_VERIFICATION`. It prints a JSON verdict `{approve, score, reasons}` as its
 * last stdout line (or as all of stdout). A reviewer that crashes, times out or prints something
 * else is a grader failure (the job is retried, then dead-lettered), never an approval.
 */
export class ReviewerError extends SchoolError {
  override readonly code = 'reviewer';
  constructor(message: string) {
    super(message);
    this.name = 'ReviewerError';
  }
}

export interface ReviewInput {
  jobKey: string;
  issueNumber: number;
  crewId: string;
  agent: string;
  fences: string[];
  brief: string;
  diff: string;
  verification: VerificationRecord | null;
  /** The crew's role: for research, triage and docs the report is the work (there is no diff). */
  role?: string;
  report?: string;
}

export function parseReviewerOutput(stdout: string): ReviewerVerdict {
  const trimmed = stdout.trim();
  const lines = trimmed
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  // An LLM often wraps its answer in a ```json fence: the fence's content is a candidate too.
  const fenced = [...trimmed.matchAll(/```(?:json)?\s*\n([\s\S]*?)\n\s*```/g)]
    .map((m) => m[1]!.trim())
    .reverse();
  const candidates = [trimmed, ...fenced, ...lines.reverse()];
  let lastProblem = 'no output';
  for (const c of candidates) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(c);
    } catch {
      continue;
    }
    const r = reviewerVerdictSchema.safeParse(parsed);
    if (r.success) return r.data;
    lastProblem = r.error.issues.map((i) => `${i.path.join('.') || '(verdict)'}: ${i.message}`).join('; ');
  }
  throw new ReviewerError(
    `reviewer printed no valid verdict (${lastProblem}); expected one JSON line {"approve": boolean, "score": 0..1, "reasons": [string]}`,
  );
}

export async function runReviewer(
  reviewer: ReviewerConfig,
  input: ReviewInput,
  o: ReviewerRunOptions & {
    /** Where relative paths in a command reviewer's argv resolve (the repository). */
    cwd: string;
    passEnv?: readonly string[];
  },
): Promise<JudgeFinding> {
  if (!Array.isArray(reviewer) && reviewer.kind !== 'command') return runAgentReviewer(reviewer, input, o);
  // The reviewer runs in the directory of its inputs (it reads what it is given, not the checkout);
  // a script its argv names relative to the repository is named by its absolute path.
  const argv = (Array.isArray(reviewer) ? reviewer : reviewer.command!).map((a, i) =>
    i > 0 && !a.startsWith('-') && !isAbsolute(a) && existsSync(resolve(o.cwd, a)) ? resolve(o.cwd, a) : a,
  );
  const passEnv = Array.isArray(reviewer) ? o.passEnv : reviewer.passEnv;
  // The patch is data: the reviewer reads the bytes that were verified and would be delivered. It
  // holds no credential — a patch adding one never reaches a judge (src/security/secret-scan.ts).
  const payload = { ...redact(input), diff: input.diff };
  const dir = mkdtempSync(join(tmpdir(), 'school-review-'));
  try {
    const files = {
      SCHOOL_REVIEW_BRIEF: join(dir, 'brief.md'),
      SCHOOL_REVIEW_DIFF: join(dir, 'diff.patch'),
      SCHOOL_REVIEW_VERIFICATION: join(dir, 'verification.json'),
    };
    writeFileSync(files.SCHOOL_REVIEW_BRIEF, payload.brief);
    writeFileSync(files.SCHOOL_REVIEW_DIFF, payload.diff);
    writeFileSync(files.SCHOOL_REVIEW_VERIFICATION, JSON.stringify(payload.verification, null, 2));
    // Only what the reviewer is configured to receive (its passEnv), never the grader's token.
    const started = await confined(o, argv, childEnv({ pass: passEnv, set: files }), dir);
    const run = await runProcess(started.argv, {
      cwd: dir,
      timeoutMs: o.timeoutMs,
      input: JSON.stringify(payload),
      env: started.env,
      output: { maxBytes: 1_000_000 },
    });
    const r = { ...run, stdout: run.stdout.toString('utf8'), stderr: run.stderr.toString('utf8') };
    if (r.spawnError) throw new ReviewerError(`reviewer: could not start ${argv[0]}: ${r.spawnError}`);
    if (r.timedOut) throw new ReviewerError(`reviewer: timed out after ${o.timeoutMs} ms`);
    if (r.exitCode !== 0) {
      throw new ReviewerError(
        `reviewer: exited with ${r.exitCode ?? r.signal}: ${redactText(r.stderr.trim()).slice(-300)}`,
      );
    }
    return finding(parseReviewerOutput(r.stdout));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `dispatch.crewBudgetUsd`'s default: a review's cost bound for a caller without the configuration. */
export const DEFAULT_REVIEW_MAX_USD = 10;

export interface ReviewerRunOptions {
  timeoutMs: number;
  /** What an AI reviewer's run used (claude-code, codex), for the spend ledger. */
  onUsage?: (usage: Usage) => Promise<unknown>;
  /**
   * The most one review's cost may count (`dispatch.crewBudgetUsd`, `DEFAULT_REVIEW_MAX_USD` without
   * it): a larger or non-finite figure is recorded as this and alerted (./agent-reviewer.ts).
   */
  maxCostUsd?: number;
  /** Records an alert of the review (`cost-over-budget`). */
  onAlert?: (kind: string, detail: string) => Promise<unknown>;
  /** How the reviewer is started: the sandbox, seeing only its own directory of inputs. */
  confine?: (
    argv: readonly string[],
    env: ChildEnv,
    view: { cwd: string; readOnly: string[] },
  ) => Promise<{ argv: string[]; env: ChildEnv }>;
  /** The reviewer runs in the school's sandbox (a codex reviewer's own sandbox steps aside). */
  sandboxed?: boolean;
}

/** The reviewer's argv and environment as started: in the sandbox when there is one. */
export async function confined(
  o: Pick<ReviewerRunOptions, 'confine'>,
  argv: readonly string[],
  env: ChildEnv,
  dir: string,
): Promise<{ argv: string[]; env: ChildEnv }> {
  if (!o.confine) return { argv: [...argv], env };
  try {
    return await o.confine(argv, env, { cwd: dir, readOnly: [dir] });
  } catch (e) {
    if (e instanceof ProgramNotFoundError)
      throw new ReviewerError(`reviewer: could not start ${argv[0]}: ${e.program} was not found on PATH`);
    throw e;
  }
}

export function finding(v: ReviewerVerdict): JudgeFinding {
  return {
    judge: 'reviewer',
    passed: v.approve,
    code: v.approve ? 'reviewer_approved' : 'reviewer_rejected',
    reasons: v.reasons.map((s) => redactText(s).slice(0, 500)).slice(0, 20),
    score: v.score,
  };
}
