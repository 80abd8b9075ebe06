import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { ReviewerConfig, SchoolConfig } from '../config/schema.js';
import { recordUsageSpend } from '../agents/usage.js';
import type { GradingJob } from '../schemas/grading.js';
import { curriculumItemSchema } from '../schemas/curriculum.js';
import { readJsonl } from '../state/jsonl.js';
import { STATE_DIRS, type StateLayout } from '../state/layout.js';
import { PatchIntegrityError, patchText, readBookbag } from '../bookbag/store.js';
import { describeSecrets, scanPatch } from '../security/secret-scan.js';
import { message } from '../errors.js';
import { boundText, MAX_REASON } from '../security/bound.js';
import { BOOKBAG_FILES, type Bookbag, type Usage } from '../bookbag/schema.js';
import { rubricFinding } from './rubric.js';
import { cleanRefresh } from '../delivery/refresh-base.js';
import { readRegistry } from '../dispatch/logs/registry.js';
import type { RevisionPlan } from '../schemas/crew.js';
import { PolicyBaseMissingError, policyFinding, policyInput, reviewerNote } from './policy.js';
import { audit } from '../state/audit.js';
import { patchFiles } from '../process/patch-files.js';
import { hostEnvOf } from '../process/env.js';
import type { HostEnv } from '../process/run-context.js';
import { runReviewer } from './reviewer.js';
import { runSealedTests, SEALED_OUTPUT } from './sealed.js';
import { dependenciesOf, type InstalledDependencies } from './sealed-run.js';
import { evidenceFinding } from './evidence.js';
import type { CleanVerify } from './judge-verify.js';
import { withJudgeSandbox } from './judge-sandbox.js';
import { agentAllowList } from '../agents/network.js';
import { combine, type JudgeFinding, type Verdict } from './verdict.js';

/**
 * Grades one job with the judges of docs/architecture.md, in order: (1) the crew's persisted verification,
 * (2) the sealed tests when configured, (3) the reviewer (a configured command, else the rubric).
 * The first judge that fails decides and the later ones are not run. A judge that cannot do its
 * work (a reviewer crash, a base commit the repository lacks) throws: that is a failed drain to
 * retry, not a verdict about the student.
 */
export type GradeFn = (job: GradingJob) => Promise<Verdict>;

export interface JudgeContext {
  config: SchoolConfig;
  layout: StateLayout;
  /** The host environment the judges' sandboxes and reviewer read (default: src/process/env.ts hostEnvOf). */
  host?: HostEnv;
  /**
   * Verification on a clean checkout (src/crew/checkout/clean-checkout.ts `verifyOnCleanCheckout`, injected:
   * grading sits below crew). The evidence judge runs a patch's added tests at the base with it.
   */
  verifyOnCleanCheckout?: CleanVerify;
  /**
   * The base's installed dependencies (src/crew/checkout/clean-checkout.ts `installedDependencies`, injected):
   * a sealed suite laid into the checkout runs with them, as the repository's own tests do.
   */
  installedDependencies?: InstalledDependencies;
}

/**
 * A job's bookbag as the judges see it: read through the one scoped reader (src/crew/bookbag.ts)
 * as `{ role: 'grader' }`, or why it could not be read (→ `verification_unavailable`, N5.3).
 */
export type BookbagRead =
  | { ok: true; dir: string; bookbag: Bookbag; diff: string; brief?: string; report?: string }
  /**
   * `code`: the verdict's, when it is not `verification_unavailable` (`secret_in_patch`);
   * `schoolError`: no verdict at all — the patch is not the one collected (the judge that meets it
   * throws it, and the attempt fails).
   */
  | { ok: false; dir: string; reason: string; code?: string; schoolError?: PatchIntegrityError };

export function verificationFinding(read: BookbagRead): JudgeFinding {
  const fail = (code: string, reason: string): JudgeFinding => ({
    judge: 'verification',
    passed: false,
    code,
    reasons: [reason],
    score: 0,
  });
  // N5.3: no persisted verification means FAIL — the gate is never re-run on the clean base.
  if (!read.ok) {
    // The school's error, never a verdict against the student (docs/grading.md, "A patch is data").
    if (read.schoolError) throw read.schoolError;
    return fail(read.code ?? 'verification_unavailable', read.reason);
  }
  // The crew's change was refused at collection (a credential in it) and not kept.
  const refusal = read.bookbag.refusal;
  if (refusal) return fail(refusal.code, `${refusal.code}: ${describeSecrets(refusal.findings)}`);
  const v = read.bookbag.verification;
  if (!v && read.bookbag.role !== 'coding') {
    // N5.3 is about code: a research, triage or docs crew (bot classroom) has no change to verify.
    // The judge abstains and the reviewer or rubric decides — on the report, not on a diff.
    return {
      judge: 'verification',
      passed: true,
      code: 'verification_not_applicable',
      reasons: [`role ${read.bookbag.role} has no code change to verify; the reviewer decides`],
      score: 1,
    };
  }
  if (!v) return fail('verification_unavailable', `crew ${read.bookbag.crewId} has no verification record`);
  if (v.diffSha !== read.bookbag.diffSha || v.baseSha !== read.bookbag.baseSha) {
    return fail(
      'verification_stale',
      'the verification record is for a different diff or base than the bookbag',
    );
  }
  // A patch that does not apply at its base is named as such (git's words), never "exited with null".
  if (v.notApplied !== undefined)
    return fail(
      'patch_does_not_apply',
      boundText(`the change does not apply at base ${v.baseSha.slice(0, 12)}: ${v.notApplied}`, MAX_REASON),
    );
  // The school's failure recorded by the crew: no verdict on it (such a crew is aborted, never graded).
  if (v.environment && !v.passed)
    return fail('verification_environment', boundText(v.environment.reason, MAX_REASON));
  if (!v.passed) {
    const how = v.timedOut
      ? 'timed out'
      : v.exitCode === null
        ? 'could not run'
        : `exited with ${v.exitCode}`;
    const broken = v.broken?.length
      ? [
          boundText(
            `${v.broken.length} test(s) that did not fail at the base fail with the change: ${v.broken.slice(0, 10).join('; ')}`,
            MAX_REASON,
          ),
        ]
      : [];
    const failed = fail('verification_failed', `verification \`${v.command.join(' ')}\` ${how}`);
    return { ...failed, reasons: [...failed.reasons, ...broken] };
  }
  // Graded on the difference from the base (src/grading/verify-difference.ts): what it turned.
  const difference = v.base?.named
    ? [
        boundText(
          `${v.failToPass?.length ?? 0} test(s) failing at the base now pass${v.failToPass?.length ? ` (${v.failToPass.slice(0, 10).join('; ')})` : ''}; ${v.passToPassCount ?? 0} passing at the base still pass${v.base.failingCount ? `; ${v.base.failingCount} failing at the base (not counted against the crew)` : ''}`,
          MAX_REASON,
        ),
      ]
    : [];
  return {
    judge: 'verification',
    passed: true,
    code: 'verification_passed',
    reasons: [`verification \`${v.command.join(' ')}\` passed`, ...difference],
    score: 1,
  };
}

function briefFor(layout: StateLayout, job: GradingJob, fromBookbag: string | undefined): string {
  if (fromBookbag !== undefined) return fromBookbag;
  try {
    const { records } = readJsonl<unknown>(layout.file('curriculum'));
    for (const r of records) {
      const item = curriculumItemSchema.safeParse(r);
      if (item.success && item.data.number === job.issueNumber) {
        return `# ${item.data.title}\n\n${item.data.body}\n`;
      }
    }
  } catch {
    // The brief is context for the reviewer; its absence must not stop grading.
  }
  return '';
}

/**
 * N4.2: a job names its bookbag relative to the state directory; it must be this crew's own
 * `bookbags/<crew_id>` — a path that leaves `<state>/bookbags/` (`../`, absolute) or names another
 * crew's bookbag is refused, never read. The bytes are read by the scoped reader as the grader.
 */
export async function readScopedBookbag(layout: StateLayout, job: GradingJob): Promise<BookbagRead> {
  const root = resolve(layout.root, STATE_DIRS.bookbags);
  const dir = resolve(layout.root, job.bookbag);
  const rel = relative(root, dir);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
    return {
      ok: false,
      dir,
      reason: `bookbag path "${job.bookbag}" is outside the state's bookbags directory`,
    };
  }
  if (dir !== resolve(layout.bookbag(job.crewId))) {
    return {
      ok: false,
      dir,
      reason: `bookbag path "${job.bookbag}" is not the bookbag of crew ${job.crewId} (bookbags/${job.crewId})`,
    };
  }
  let r;
  try {
    r = await readBookbag(layout, job.crewId, { role: 'grader' });
  } catch (e) {
    // Bytes changed after collection: the school's error, an alert and no verdict (docs/grading.md).
    if (e instanceof PatchIntegrityError) return patchAlert(layout, job, dir, e);
    return { ok: false, dir, reason: message(e) };
  }
  // Every judge reads the patch as text: the text must be the collected bytes, exactly.
  let diff: string;
  try {
    diff = patchText(r.patch, job.crewId);
  } catch (e) {
    if (e instanceof PatchIntegrityError) return patchAlert(layout, job, dir, e);
    throw e;
  }
  // Defense in depth: a change that adds a credential is refused at collection; one that reached a
  // bookbag all the same (imported, or kept by an older school) is refused here, before any judge
  // or reviewer sees it.
  const secrets = scanPatch(diff);
  if (secrets.length) {
    const reason = `secret_in_patch: ${describeSecrets(secrets)}`;
    await audit(layout, 'grading.alert', {
      jobKey: job.jobKey,
      crewId: job.crewId,
      kind: 'secret-in-patch',
      detail: reason,
    });
    return { ok: false, dir, reason, code: 'secret_in_patch' };
  }
  return {
    ok: true,
    dir,
    bookbag: r.record,
    diff,
    brief: r.brief,
    report: r.report,
  };
}

/** Records a patch-integrity alert for the maintainers; the read carries the error for the judges to fail with. */
async function patchAlert(
  layout: StateLayout,
  job: GradingJob,
  dir: string,
  e: PatchIntegrityError,
): Promise<BookbagRead> {
  await audit(layout, 'grading.alert', {
    jobKey: job.jobKey,
    crewId: job.crewId,
    kind: 'patch-integrity',
    detail: e.message,
  });
  return { ok: false, dir, reason: e.message, schoolError: e };
}

/** A judge's finding says which connections its sandbox refused (its process tried to reach them). */
function withRefusals(f: JudgeFinding, refused: readonly string[]): JudgeFinding {
  if (!refused.length) return f;
  return {
    ...f,
    reasons: [
      ...f.reasons,
      `the sandbox refused connections to ${refused.slice(0, 10).join(', ')} (not on sandbox.allow)`,
    ],
  };
}

function reviewerAllowList(reviewer: ReviewerConfig, host: HostEnv): string[] {
  if (Array.isArray(reviewer) || reviewer.kind === 'command') return [];
  // A Codex reviewer's model provider set with `-c model_providers.<p>.base_url=…` is allowed too.
  return agentAllowList({ kind: reviewer.kind, passEnv: reviewer.passEnv, args: reviewer.args }, host);
}

export function defaultGrader(ctx: JudgeContext): GradeFn {
  const { config, layout } = ctx;
  const host = ctx.host ?? hostEnvOf(undefined);
  const timeoutMs = config.dispatch.crewTimeoutSeconds * 1000;
  return async (job) => {
    const read = await readScopedBookbag(layout, job);
    const findings: JudgeFinding[] = [verificationFinding(read)];
    // The policy judge (./policy.ts) decides first, with a reviewer too: a patch that changes the
    // base's tests or a protected path is refused for that, whatever its verification says.
    if (read.ok) {
      const originalBase = revisionOrigin(layout, read.bookbag);
      const policy = await policyFinding({
        ...policyInput(config, { baseSha: read.bookbag.baseSha, diff: read.diff, fences: job.fences }),
        ...(originalBase ? { originalBase } : {}),
      }).catch((e: unknown) => {
        // No base to read: a failed verification still decides; else a grader failure (retried).
        if (e instanceof PolicyBaseMissingError && !findings[0]!.passed) return undefined;
        throw e;
      });
      // A patch git cannot apply: the verification's own account of that comes first.
      if (policy && !policy.passed)
        return combine(
          policy.code === 'patch_does_not_apply' ? [...findings, policy] : [policy, ...findings],
        );
      if (policy) findings.push(policy);
    }
    if (!findings[0]!.passed || !read.ok) return combine(findings);
    const { bookbag, diff } = read;
    const coding = bookbag.role === 'coding';
    // Sealed tests exercise a code change; a non-coding crew has none to apply.
    if (config.grading.sealedTests && coding) {
      const { value: sealed, refused } = await withJudgeSandbox(config, host, (sandbox) =>
        runSealedTests({
          repoPath: config.repoPath,
          argv: config.grading.sealedTests!,
          bookbag,
          diff,
          timeoutMs,
          sealedDir: config.grading.sealedDir,
          protect: config.grading.sealedProtect,
          results: config.grading.sealedResults,
          layout: config.grading.sealedLayout,
          ...(ctx.installedDependencies && config.dispatch.install
            ? {
                dependencies: dependenciesOf(ctx.installedDependencies, {
                  config,
                  baseSha: bookbag.baseSha,
                  sandbox,
                  depsRoot: join(tmpdir(), 'school-sealed-deps'),
                  timeoutMs,
                }),
              }
            : {}),
          // The full output, for maintainers only: never in a finding, a brief or a checkpoint.
          outputFile: join(layout.view(SEALED_OUTPUT), `${bookbag.crewId}.log`),
          onAlert: (kind, detail) =>
            audit(layout, 'grading.alert', { jobKey: job.jobKey, crewId: job.crewId, kind, detail }),
          confine: (argv, env, view) =>
            sandbox.confine(argv, env, {
              ...view,
              home: sandbox.freshHome('sealed'),
              allow: config.sandbox.allow,
            }),
        }),
      );
      findings.push(withRefusals(sealed, refused));
      if (!sealed.passed) return combine(findings);
    }
    // After the sealed tests (their pass is evidence), before the reviewer (no review of an unshown fix).
    const sealed = findings.find((f) => f.judge === 'sealed');
    const evidence = await evidenceFinding({
      config,
      layout,
      host,
      job,
      bookbag,
      diff,
      sealed,
      verifyOnCleanCheckout: ctx.verifyOnCleanCheckout,
    });
    findings.push(evidence);
    if (!evidence.passed) return combine(findings);
    // A clean refresh that needed no change: the school's merge, verified and sealed-tested above,
    // holds nothing for a reviewer or the rubric to read.
    const merged = mergedRefresh(layout, bookbag, diff);
    if (merged) return combine([...findings, merged]);
    if (config.grading.reviewer) {
      const reviewer = config.grading.reviewer;
      const { value: review, refused } = await withJudgeSandbox(config, host, (sandbox) =>
        runReviewer(
          reviewer,
          {
            jobKey: job.jobKey,
            issueNumber: job.issueNumber,
            crewId: job.crewId,
            agent: job.agent,
            fences: job.fences,
            brief: briefFor(layout, job, read.brief) + reviewerNote(findings),
            diff,
            verification: bookbag.verification,
            role: bookbag.role,
            report: read.report,
          },
          {
            cwd: resolve(config.repoPath),
            timeoutMs,
            passEnv: [],
            onUsage: (usage) => recordReviewSpend(layout, job, reviewer, usage),
            maxCostUsd: config.dispatch.crewBudgetUsd,
            onAlert: (kind, detail) =>
              audit(layout, 'grading.alert', { jobKey: job.jobKey, crewId: job.crewId, kind, detail }),
            confine: (argv, env, view) =>
              sandbox.confine(argv, env, {
                ...view,
                home: sandbox.freshHome('reviewer'),
                allow: [...reviewerAllowList(reviewer, host), ...config.sandbox.allow],
              }),
            sandboxed: sandbox.confined,
          },
        ),
      );
      findings.push(withRefusals(review, refused));
    } else {
      // The paths as git applies the patch at its base, never as its text spells them.
      const touched = await patchFiles(resolve(config.repoPath), bookbag.baseSha, diff);
      findings.push(
        rubricFinding(touched, job.fences, config.grading.rubric, {
          role: bookbag.role,
          report: read.report,
        }),
      );
    }
    return combine(findings);
  };
}

/**
 * A clean refresh's empty change (docs/delivery.md, "Refresh"): the crew of a round that only brings
 * the base in, whose merge left no conflict (src/delivery/refresh-base.ts `cleanRefresh`, as the plan
 * recorded it in the registry — never the crew's own word), started from that merge and changed
 * nothing on it. What is judged is the merge itself — the verification and sealed tests above ran on
 * it — and delivery commits it as the merge of the new base. Any other empty change is the rubric's
 * `empty_diff`.
 */
function mergedRefresh(layout: StateLayout, bookbag: Bookbag, diff: string): JudgeFinding | undefined {
  if (diff.trim() !== '') return undefined;
  let revision: RevisionPlan | undefined;
  try {
    revision = readRegistry(layout).crews[bookbag.crewId]?.revision;
  } catch {
    return undefined;
  }
  const r = revision?.refresh;
  if (!r || !cleanRefresh(revision) || revision!.headSha !== bookbag.baseSha) return undefined;
  return {
    judge: 'rubric',
    passed: true,
    code: 'refresh_merged',
    reasons: [
      `refresh of pull request #${revision!.pr}: ${r.base} at ${r.baseSha.slice(0, 12)} merged without conflicts and the merge needed no change`,
    ],
    score: 1,
  };
}

/**
 * An AI reviewer's cost goes to the spend ledger the cap reads, under its own key per review run
 * (`review:<job key>:<random>`: a retried review ran, and cost, again).
 */
async function recordReviewSpend(
  layout: StateLayout,
  job: { jobKey: string; crewId: string; issueNumber: number },
  reviewer: ReviewerConfig,
  usage: Usage,
): Promise<void> {
  const kind = Array.isArray(reviewer) ? 'command' : reviewer.kind;
  const key = `review:${job.jobKey}:${randomBytes(4).toString('hex')}`;
  await recordUsageSpend(layout, key, { ...job, agent: `reviewer (${kind})` }, usage);
}

/**
 * A revision crew starts from the delivered pull request's head: the tests there that the
 * repository did not have are the school's own delivered work, which a revision may change. The
 * repository's base is the first crew's, found by following `revision.revises` back (each bookbag
 * names the crew it revised). Undefined for a first crew, or when the chain cannot be read (then
 * every test at the crew's own base counts as the repository's: the stricter reading).
 */
export function revisionOrigin(
  layout: StateLayout,
  bookbag: Pick<Bookbag, 'baseSha'> & { revision?: { revises: string } | undefined },
): string | undefined {
  let current: Pick<Bookbag, 'baseSha'> & { revision?: { revises: string } | undefined } = bookbag;
  for (let i = 0; current.revision && i < 20; i++) {
    try {
      const text = readFileSync(join(layout.bookbag(current.revision.revises), BOOKBAG_FILES.record), 'utf8');
      current = JSON.parse(text) as Bookbag;
    } catch {
      return undefined;
    }
  }
  return current.revision || current === bookbag ? undefined : current.baseSha;
}
