import { mkdtempSync, rmSync } from 'node:fs';
import { removeTreeSync } from '../process/remove-tree.js';
import { readLogText } from '../process/capped-log.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import type { VerificationFindings } from '../bookbag/schema.js';
import { childEnv, hostEnvOf, type ChildEnv } from '../process/env.js';
import { describeMissing, type MissingAt, type Sandbox } from '../sandbox/index.js';
import { SchoolError } from '../errors.js';
import { redactText } from '../security/redact.js';
import { boundText, MAX_REASON } from '../security/bound.js';
import {
  defaultGrader,
  readScopedBookbag,
  revisionOrigin,
  verificationFinding,
  type GradeFn,
  type JudgeContext,
} from './judges.js';
import { withJudgeSandbox } from './judge-sandbox.js';
import { combine, type JudgeFinding } from './verdict.js';

/**
 * The judges of the judge job (docs/grading.md, "Where each judge runs"). On GitHub the crew's
 * verification record comes from a runner the student worked on: a compromised runner could write
 * any record it likes, so judge 1 is not the record. The record must still exist, name this
 * bookbag's patch and base, and have passed (N5.3: absent is a fail, never a re-run); then the
 * judge runs `dispatch.verify` itself, on a clean checkout of the recorded base with exactly the
 * frozen patch (the bookbag's `diff.patch`, whose digest the record names), dependencies from the
 * configured install, in its own sandbox, with the base environment only (nothing says "judged").
 * Its result replaces the record's finding. Sealed tests and the reviewer follow as everywhere.
 */

const TAIL = 1500;

function tail(text: string): string {
  const t = redactText(text).trim();
  return t.length > TAIL ? `…${t.slice(-TAIL)}` : t;
}

/**
 * What a verification on a clean checkout needs: `verify` runs on a fresh checkout of `baseSha`
 * with exactly `patch` applied (docs/crews.md). The crews' `verifyOnCleanCheckout`
 * (src/crew/checkout/clean-checkout.ts) takes these options; grading sits below crew, so the type lives here
 * and the function is injected.
 */
export interface CleanCheckoutOptions {
  config: Pick<SchoolConfig, 'repoPath' | 'sandbox' | 'dispatch'> &
    // The test-surface patterns it adds (grading.testPatterns, testDefinitions), when given.
    Partial<Pick<SchoolConfig, 'grading'>>;
  /**
   * The fences: a base test or test definition they name explicitly (a fence that matches it
   * and is itself such a path) is the to change, so it runs as the patch left it.
   */
  fences?: readonly string[];
  /**
   * A revision crew's repository base (the first crew's): tests its own base has that this one
   * lacks are the school's delivered work, which the revision may change; they are not put back.
   */
  originalBase?: string | undefined;
  baseSha: string;
  /** The frozen patch, as the bookbag keeps it. */
  patch: string;
  /** A directory of the toolkit's (the crew's runtime directory): checkouts and the dependency cache. */
  scratch: string;
  /** Shared by every crew of the machine: `<runtime>/deps/<digest>/`. */
  depsRoot: string;
  sandbox: Sandbox;
  logFile: string;
  timeoutMs: number;
  graceMs?: number;
  /** The verification's process group, once started (a crew's disk watch kills it on a hit). */
  onSpawn?: (pid: number) => void;
}

/**
 * Runs `verify` on a clean checkout of `baseSha` with exactly `patch` applied, judged against the
 * unchanged base (src/crew/checkout/clean-checkout.ts): `passed` is the verdict (undefined when there is
 * none: `environment`, the school's failure), `notApplied` git's message for a patch that does not
 * apply, the named results' difference from the base in the other fields.
 */
export type CleanVerify = (
  o: CleanCheckoutOptions,
  verify: readonly string[],
  env: ChildEnv,
) => Promise<
  {
    exitCode: number | null;
    timedOut: boolean;
    missing?: MissingAt;
    passed?: boolean;
    reasons?: string[];
  } & VerificationFindings
>;

/**
 * The judge's verification met the school's failure, not the crew's: a program its sandbox lacks
 * (src/sandbox/not-found.ts), an install that fails, a run killed by the machine, a red base that
 * no named results tell apart from the crew's run. Not a verdict. The job's attempt fails (retried, then a dead letter with this
 * message), and nothing is scored against the agent.
 */
export class VerificationInfraError extends SchoolError {
  override readonly code = 'verification-infra';
  constructor(message: string) {
    super(message);
    this.name = 'VerificationInfraError';
  }
}

/** The judge job's grader; `close()` removes its scratch directory when the judge is done. */
export type JudgeGrader = GradeFn & { close(): void };

export function judgeGrader(ctx: JudgeContext & { verifyOnCleanCheckout: CleanVerify }): JudgeGrader {
  const { verifyOnCleanCheckout } = ctx;
  const { config, layout } = ctx;
  const inner = defaultGrader(ctx);
  // One scratch directory per judge run: the dependency cache is shared by the jobs of one base.
  // Checkouts where a patch's code ran lived under it: removed by `close()` whatever tree they
  // left (a depth past PATH_MAX, a directory made 0000), which rmSync cannot.
  let scratch: string | undefined;
  const timeoutMs = config.dispatch.crewTimeoutSeconds * 1000;
  const grade = async (job: Parameters<GradeFn>[0]) => {
    const read = await readScopedBookbag(layout, job);
    const recorded = verificationFinding(read);
    if (!recorded.passed || !read.ok) return combine([recorded]);
    if (recorded.code === 'verification_not_applicable') return inner(job);
    const verify = config.dispatch.verify;
    if (!verify) {
      return combine([
        {
          judge: 'verification',
          passed: false,
          code: 'verification_unavailable',
          reasons: ['dispatch.verify is not configured: the judge has no verification to run itself'],
          score: 0,
        },
      ]);
    }
    scratch ??= mkdtempSync(join(tmpdir(), 'school-judge-verify-'));
    const { baseSha, crewId } = read.bookbag;
    const logFile = join(scratch, `${crewId}.log`);
    const { value: run, refused } = await withJudgeSandbox(
      config,
      ctx.host ?? hostEnvOf(undefined),
      (sandbox) =>
        verifyOnCleanCheckout(
          {
            config,
            baseSha,
            fences: read.bookbag.fences,
            originalBase: revisionOrigin(layout, read.bookbag),
            patch: read.diff,
            scratch: join(scratch!, 'checkouts'),
            depsRoot: join(scratch!, 'deps'),
            sandbox,
            logFile,
            timeoutMs,
          },
          verify,
          childEnv(),
        ),
    );
    // The log is capped on disk (dispatch.logMaxBytes) and only its end is read: the reason keeps TAIL.
    const log = readLogText(logFile, 64 * 1024);
    rmSync(logFile, { force: true }); // read: a judge process grading many crews keeps none of their logs
    const what = `the judge ran \`${verify.join(' ')}\` on a clean checkout of base ${baseSha.slice(0, 12)} with the frozen patch`;
    const refusals = refused.length
      ? [
          boundText(
            `the sandbox refused connections to ${refused.slice(0, 10).join(', ')} (not on sandbox.allow)`,
            MAX_REASON,
          ),
        ]
      : [];
    if (run.missing)
      throw new VerificationInfraError(
        describeMissing(
          run.missing,
          `the judge's ${run.missing.stage === 'install' ? 'dispatch.install' : 'dispatch.verify'}`,
        ),
      );
    if (run.environment)
      throw new VerificationInfraError(`the judge's verification: ${run.environment.reason}`);
    // The bytes are the bookbag's, as the crew's collection froze them (the reader checks them):
    // a patch that does not apply at its recorded base is the crew's, named as such.
    if (run.notApplied !== undefined)
      return combine([
        {
          judge: 'verification',
          passed: false,
          code: 'patch_does_not_apply',
          reasons: [
            boundText(
              `the frozen patch does not apply at base ${baseSha.slice(0, 12)}: ${redactText(run.notApplied)}`,
              MAX_REASON,
            ),
          ],
          score: 0,
        },
      ]);
    const passed = run.passed ?? (run.exitCode === 0 && !run.timedOut);
    const how = run.timedOut
      ? 'timed out'
      : run.exitCode === null
        ? 'could not run'
        : `exited with ${run.exitCode}`;
    const said = (run.reasons ?? []).map((r) => boundText(redactText(r), MAX_REASON));
    const finding: JudgeFinding = passed
      ? {
          judge: 'verification',
          passed,
          code: 'verification_passed',
          reasons: [`${what}: passed`, ...said, ...refusals],
          score: 1,
        }
      : {
          judge: 'verification',
          passed,
          code: 'verification_failed',
          reasons: [`${what}: ${how}`, ...said, ...refusals, tail(log)],
          score: 0,
        };
    if (!passed) return combine([finding]);
    const rest = await inner(job);
    // The record was read again: should it fail now, that failure stands.
    if (rest.findings.some((f) => f.judge === 'verification' && !f.passed)) return rest;
    return combine([finding, ...rest.findings.filter((f) => f.judge !== 'verification')]);
  };
  return Object.assign(grade, {
    close() {
      if (scratch) removeTreeSync(scratch);
      scratch = undefined;
    },
  });
}
