import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * The bookbag: what a crew hands to the graders (seed 000). Written by dispatch-crew, read by
 * drain-grading; this schema is the one definition both use.
 *
 * Directory `bookbags/<crew_id>/`:
 *   bookbag.json      this record (written atomically, N2.2)
 *   diff.patch        the crew's change against base_sha (`git diff --binary`), the bytes collected
 *                     from its worktree exactly: never redacted, never re-encoded (empty when the
 *                     change was refused, `refusal`)
 *   report.md         the student's report
 *   verification.log  the verification command's output (redacted)
 *   brief.md          the brief the student received (for reviewers; optional)
 *   session-store.json  a CLI agent's own session files, for a revision to resume (optional;
 *                     ./session-store.ts)
 *   done.flag         written last, after the data: its presence means the bookbag is complete
 *
 * One writer (`writeBookbag`) and one reader (`readBookbag`, scoped by reader, N4.2) live in
 * src/crew/bookbag.ts; grading reads through that reader as `{ role: 'grader' }`.
 */
export const BOOKBAG_FILES = {
  record: 'bookbag.json',
  diff: 'diff.patch',
  report: 'report.md',
  verificationLog: 'verification.log',
  brief: 'brief.md',
  sessionStore: 'session-store.json',
  done: 'done.flag',
} as const;

/** The digest the done flag, the record and the verification record use (hex SHA-256). */
export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A crew id as it may appear in a bookbag path: no separators, no `..` (N4.2). */
export const CREW_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const verificationRecordSchema = z.object({
  command: z.array(z.string()),
  exitCode: z.number().int().nullable(),
  passed: z.boolean(),
  durationMs: z.number().nonnegative(),
  /** SHA-256 of the full verification log. */
  logDigest: z.string(),
  baseSha: z.string(),
  diffSha: z.string(),
  timedOut: z.boolean().default(false),
  /**
   * The school's failure, not the crew's (src/crew/checkout/base-run.ts): the install failed, a program or
   * the runner was missing, the run was killed by a signal, or the base itself fails and no named
   * results tell the crew's part apart. No verdict is passed on the crew (docs/grading.md).
   */
  environment: z
    .object({
      kind: z.enum(['install_failed', 'program_missing', 'killed', 'base_red', 'checkout_failed']),
      reason: z.string(),
    })
    .optional(),
  /** The patch does not apply at its base: git's message (verdict `patch_does_not_apply`). */
  notApplied: z.string().optional(),
  /** The unchanged base's verification (once per base, cached): its exit and the tests failing there. */
  base: z
    .object({
      exitCode: z.number().int().nullable(),
      passed: z.boolean(),
      /** Named results were read at the base. */
      named: z.boolean(),
      /** Tests failing at the base (named results), at most `MAX_NAMES`. */
      failing: z.array(z.string()).optional(),
      failingCount: z.number().int().nonnegative().optional(),
      passingCount: z.number().int().nonnegative().optional(),
    })
    .optional(),
  /** Tests failing at the base that pass with the patch (FAIL_TO_PASS), at most `MAX_NAMES`. */
  failToPass: z.array(z.string()).optional(),
  /** Tests passing at the base that still pass (PASS_TO_PASS), at most `MAX_NAMES`; `passToPassCount` is all. */
  passToPass: z.array(z.string()).optional(),
  passToPassCount: z.number().int().nonnegative().optional(),
  /** Tests that fail with the patch and did not fail at the base (the crew's failures). */
  broken: z.array(z.string()).optional(),
  /** Base test files and test definitions the patch changed, put back to the base's bytes for the run. */
  reset: z.array(z.string()).optional(),
});
export type VerificationRecord = z.infer<typeof verificationRecordSchema>;
/** What a verification run says beyond its exit: the record's optional fields (src/crew/checkout/base-run.ts). */
export type VerificationFindings = Pick<
  VerificationRecord,
  'environment' | 'notApplied' | 'base' | 'failToPass' | 'passToPass' | 'passToPassCount' | 'broken' | 'reset'
>;
/** How many test names a verification record keeps per list (the counts say how many there were). */
export const MAX_NAMES = 200;

export const usageSchema = z.object({
  inputTokens: z.number().nonnegative().optional(),
  outputTokens: z.number().nonnegative().optional(),
  /** Part of inputTokens served from a cache (codex `cached_input_tokens`, claude cache reads). */
  cachedInputTokens: z.number().nonnegative().optional(),
  /**
   * Part of inputTokens written to the prompt cache (claude `cache_creation_input_tokens`, codex
   * `cache_write_input_tokens`).
   */
  cacheCreationTokens: z.number().nonnegative().optional(),
  /** Part of outputTokens spent reasoning (codex `reasoning_output_tokens`). */
  reasoningOutputTokens: z.number().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
});
export type Usage = z.infer<typeof usageSchema>;

export const bookbagSchema = z.object({
  schema: z.literal(1),
  crewId: z.string(),
  issueNumber: z.number().int().positive(),
  agent: z.string(),
  daemon: z.string(),
  role: z.string(),
  domain: z.string(),
  difficulty: z.number().int(),
  fences: z.array(z.string()),
  baseSha: z.string(),
  /** SHA-256 of diff.patch: of the bytes collected from the worktree. */
  diffSha: z.string(),
  /** SHA-256 of the brief the student received. */
  briefSha: z.string(),
  changedFiles: z.array(z.string()),
  outcome: z.string(),
  /** Null when the crew never reached verification: graded FAIL verification_unavailable (N5.3). */
  verification: verificationRecordSchema.nullable(),
  usage: usageSchema.optional(),
  /** Correction turns the crew sent after a failed verification (seed 002). */
  correctionTurns: z.number().int().nonnegative().optional(),
  /** The agent session the turns ran in (claude session_id, codex thread_id). */
  agentSession: z.string().optional(),
  /**
   * The agent's session files kept in `session-store.json` for a revision to resume: the file's
   * digest and size, or why none was kept (too large, a link in the way, no session files).
   */
  sessionStore: z
    .discriminatedUnion('kept', [
      z.strictObject({
        kept: z.literal(true),
        sha256: z.string().regex(/^[0-9a-f]{64}$/),
        bytes: z.number().int().nonnegative(),
        files: z.number().int().positive(),
      }),
      z.strictObject({ kept: z.literal(false), why: z.string() }),
    ])
    .optional(),
  /** Set when the crew started from an interrupted crew's change: that crew's id. */
  continuedFrom: z.string().optional(),
  /** A revision crew: the delivered crew it revised, and how its agent session began. */
  revision: z
    .object({
      revises: z.string(),
      round: z.number().int().positive(),
      pr: z.number().int().positive(),
      /**
       * `resumed`: the delivered crew's agent session went on with the feedback as its prompt;
       * `fresh`: a new session got the original brief, the delivered diff and the feedback.
       */
      session: z.enum(['resumed', 'fresh']),
      /** Why the session was fresh (a command agent, no session store kept, the resume refused). */
      why: z.string().optional(),
    })
    .optional(),
  timings: z.object({ startedAt: z.string(), finishedAt: z.string(), durationMs: z.number() }),
  /**
   * Set when the crew's change was refused at collection and not kept (diff.patch is empty):
   * `secret_in_patch`, where the secret scan (src/security/secret-scan.ts) found a credential — the
   * file, the line and the kind, never the value.
   */
  refusal: z
    .object({
      code: z.literal('secret_in_patch'),
      findings: z.array(z.object({ file: z.string(), line: z.number().int(), kind: z.string() })),
    })
    .optional(),
});
export type Bookbag = z.infer<typeof bookbagSchema>;

export const doneFlagSchema = z.object({ crewId: z.string(), recordSha: z.string(), diffSha: z.string() });
export type DoneFlag = z.infer<typeof doneFlagSchema>;
