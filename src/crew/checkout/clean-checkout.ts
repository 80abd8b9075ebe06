import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MAX_NAMES, type VerificationFindings } from '../../bookbag/schema.js';
import type { CleanCheckoutOptions } from '../../grading/judge-verify.js';
import { testSurface } from '../../grading/test-surface.js';
import { fencesName } from '../../delivery/protected-paths.js';
import { differenceSummary, judgeDifference } from '../../grading/verify-difference.js';
import type { ChildEnv } from '../../process/env.js';
import { patchFiles, type PatchFile } from '../../process/patch-files.js';
import { appendCapped } from '../../process/capped-log.js';
import { describeMissing, type MissingAt, missingProgram } from '../../sandbox/index.js';
import { baseVerification, runVerification, type BaseRecord, type CheckoutRun } from './base-run.js';
import { addCheckout, CheckoutError, git, removeCheckout, showDependencies } from './checkout-run.js';
import { INSTALL_RETRY_MS, InstallFailedError, installedDependencies } from './clean-install.js';
import { removeTree } from './slot-reset.js';

export { installedDependencies } from './clean-install.js';

/**
 * Verification in an environment the student never wrote (docs/crews.md, docs/grading.md): a fresh
 * detached checkout of the repository at the crew's base, exactly the frozen patch applied by git,
 * the base's tests and test definitions put back over whatever the patch did to them (the base owns
 * what "passed" means; tests the patch adds run too), dependencies (when `dispatch.install` is set)
 * copied in from a cache made once per base (./clean-install.ts); then the verification command in
 * the sandbox, the checkout writable for the run and thrown away after. What the student left outside
 * its patch — an ignored `node_modules/.bin/node` shim, an untracked helper — is not there.
 *
 * The crew is judged against the unchanged base (./base-run.ts): with named results on the
 * difference (tests failing at the base are not its to carry), without them on the exit code when
 * the base is green. What is the school's failure — an install that fails, a program or the runner
 * missing, a run killed by a signal, a red base nothing tells apart from the crew's run — is
 * `environment`: no verdict on the crew, no correction turn, an alert (docs/grading.md).
 */
export interface CleanRun extends VerificationFindings {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  signal?: string | null;
  /** A program the install or the verification did not find, when that is the school's failure. */
  missing?: MissingAt;
  /** The verdict on the crew's run; undefined when there is none (`environment`). */
  passed?: boolean;
  /** Why it passed or failed, in words (the difference from the base, the exit). */
  reasons?: string[];
  /** This run was the first to meet a red base: what the `base-red` alert says (once per base). */
  baseRed?: string;
}

const list = (xs: readonly string[], n = 10) =>
  xs.slice(0, n).join('; ') + (xs.length > n ? `; … (${xs.length})` : '');

/** The test-surface patterns `grading` adds, when the configuration has them. */
function surfaceExtra(o: CleanCheckoutOptions): { tests?: string[]; definitions?: string[] } {
  const g = o.config.grading as { testPatterns?: string[]; testDefinitions?: string[] } | undefined;
  return {
    ...(g?.testPatterns ? { tests: g.testPatterns } : {}),
    ...(g?.testDefinitions ? { definitions: g.testDefinitions } : {}),
  };
}

/** package.json's test keys (src/grading/test-surface.ts); the rest of the patch's version stays. */
const PACKAGE_TEST_KEYS = ['scripts', 'jest', 'mocha', 'ava', 'tap', 'nyc', 'c8', 'vitest'];

/**
 * Puts the base's tests and test definitions back in the checkout, after the patch (issue 43's rule,
 * SWE-bench's): a base test file the patch changed, renamed or deleted is restored to the base's
 * bytes; a definition whose test-relevant part changed too (package.json: only its test keys, so a
 * dependency or an `exports` change stays). Files the patch adds stay. Returns the paths put back.
 */
async function resetTestSurface(
  o: CleanCheckoutOptions,
  wt: string,
  touched: readonly PatchFile[],
): Promise<string[]> {
  const surface = testSurface(surfaceExtra(o));
  const restore: string[] = [];
  const reset: string[] = [];
  for (const f of touched) {
    if (f.status === 'A' || f.gitlink) continue; // added by the patch: it runs as well
    const kind = surface.kind(f.path);
    if (!kind) continue;
    // The issue names this file in its fences: changing it is the issue's own request (the policy
    // judge flags it for the reviewer instead of refusing it), so it runs as changed.
    if (fencesName(f.path, o.fences ?? [], (p) => surface.kind(p) !== undefined)) continue;
    // A revision may change the tests the school delivered: only the repository's own are put back.
    if (o.originalBase && !(await git(wt, ['cat-file', '-e', `${o.originalBase}:${f.path}`])).ok) continue;
    const file = join(wt, f.path);
    if (kind === 'definition') {
      const shown = await git(wt, ['show', `${o.baseSha}:${f.path}`]);
      const before = shown.ok ? shown.stdout.toString('utf8') : undefined;
      const after = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
      if (!surface.definitionChanged(f.path, before, after)) continue;
      if (f.path.split('/').at(-1) === 'package.json' && before !== undefined && after !== undefined) {
        const merged = mergePackageTestKeys(before, after);
        if (merged !== undefined) {
          writeFileSync(file, merged);
          reset.push(f.path);
          continue;
        }
      }
    }
    restore.push(f.path);
  }
  if (restore.length) {
    const r = await git(wt, ['--literal-pathspecs', 'checkout', o.baseSha, '--', ...restore]);
    if (!r.ok) throw new CheckoutError(`could not put the base's tests back: ${r.output.trim()}`);
  }
  return [...restore, ...reset];
}

/** The patch's package.json with the base's test keys; undefined when either side is not JSON. */
function mergePackageTestKeys(before: string, after: string): string | undefined {
  try {
    const a = JSON.parse(before) as Record<string, unknown>;
    const b = JSON.parse(after) as Record<string, unknown>;
    if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return undefined;
    for (const k of PACKAGE_TEST_KEYS) {
      if (k in a) b[k] = a[k];
      else delete b[k];
    }
    return `${JSON.stringify(b, null, 2)}\n`;
  } catch {
    return undefined;
  }
}

/** Runs `verify` on base + patch in a clean checkout and judges it against the base. */
export async function verifyOnCleanCheckout(
  o: CleanCheckoutOptions,
  verify: readonly string[],
  env: ChildEnv,
): Promise<CleanRun> {
  const note = (line: string) => appendCapped(o.logFile, `[school] ${line}\n`, o.config.dispatch.logMaxBytes);
  const none = { exitCode: null, timedOut: false, durationMs: 0 };
  const environment = (kind: NonNullable<CleanRun['environment']>['kind'], reason: string): CleanRun => {
    note(`verification could not judge the change (the school's failure, not the crew's): ${reason}`);
    return { ...none, environment: { kind, reason } };
  };
  const refused = (why: string, extra: Partial<CleanRun> = {}): CleanRun => {
    note(`verification could not run: ${why}`);
    return { ...none, passed: false, reasons: [why], ...extra };
  };
  mkdirSync(o.scratch, { recursive: true });
  const repo = resolve(o.config.repoPath);
  let deps: string | undefined;
  try {
    deps = await installedDependencies(o, env);
  } catch (e) {
    if (e instanceof InstallFailedError) {
      if (e.missing) {
        const missing: MissingAt = { ...e.missing, stage: 'install' };
        return { ...environment('program_missing', describeMissing(e.missing, 'dispatch.install')), missing };
      }
      return environment(
        'install_failed',
        `${e.message}. Fix the install (a dependency it cannot fetch: sandbox.allow, a git or ssh dependency, the lockfile); the school tries again when the base or dispatch.install changes, or after ${INSTALL_RETRY_MS / 60_000} minutes`,
      );
    }
    return environment('install_failed', `the dependency install could not run: ${(e as Error).message}`);
  }
  const work = mkdtempSync(join(o.scratch, 'verify-'));
  let wt: string | undefined;
  let mine: CheckoutRun;
  let reset: string[] = [];
  try {
    wt = await addCheckout(repo, work, o.baseSha);
    if (o.patch.trim()) {
      // Host git never enters a nested repository, so a crew's collection holds no gitlink: one here
      // means the patch was made elsewhere (docs/security.md, nested repositories).
      const touched = await patchFiles(repo, o.baseSha, o.patch);
      const links = touched.ok ? touched.files.filter((f) => f.gitlink).map((f) => f.path) : [];
      if (links.length)
        return refused(
          `the change adds or changes submodule(s) (gitlink, mode 160000): ${links.slice(0, 10).join(', ')}; a crew's change never holds one`,
        );
      const file = join(work, 'crew.patch');
      writeFileSync(file, o.patch);
      const applied = await git(wt, ['apply', '--binary', '--whitespace=nowarn', file]);
      if (!applied.ok) {
        // The bytes are the crew's as collected: a patch that does not apply at its own base is its
        // verdict, `patch_does_not_apply`, with git's words (never "exited with null").
        const why = applied.stderr.trim() || applied.output.trim();
        return refused(`the change does not apply at the base ${o.baseSha.slice(0, 12)}: ${why}`, {
          notApplied: why.slice(0, 2000),
        });
      }
      // A school that lets patches change the base's tests (grading.allowTestChanges) runs them as changed.
      const allowed = (o.config.grading as { allowTestChanges?: boolean } | undefined)?.allowTestChanges;
      if (touched.ok && !allowed) reset = await resetTestSurface(o, wt, touched.files);
      if (reset.length)
        note(`the base's tests and test definitions put back over the patch: ${list(reset, 20)}`);
    }
    const shown = deps
      ? await showDependencies(deps, o.config.dispatch.install?.paths ?? [], wt, o.sandbox.confined)
      : { readOnlyAt: [], writable: [] };
    mine = await runVerification(o, verify, env, wt, work, shown, o.onSpawn);
  } catch (e) {
    if ((e as Error).name === 'ProgramNotFoundError') {
      const found = missingProgram({
        output: '',
        exitCode: null,
        command: verify,
        hostPath: env.PATH ?? '',
        notFound: verify[0]!,
      });
      const missing: MissingAt | undefined = found && { ...found, stage: 'verify' };
      const why = `\`${verify[0]}\` was not found on PATH`;
      return missing
        ? { ...environment('program_missing', describeMissing(missing, 'dispatch.verify')), missing }
        : refused(why);
    }
    if (e instanceof CheckoutError) return environment('checkout_failed', e.message);
    return environment('checkout_failed', `verification could not run: ${(e as Error).message}`);
  } finally {
    if (wt && existsSync(wt)) await removeCheckout(repo, wt);
    await removeTree(work);
  }
  const judged = await judge(o, verify, env, deps, mine);
  const out: CleanRun = {
    exitCode: mine.run.exitCode,
    timedOut: mine.run.timedOut,
    durationMs: mine.run.durationMs,
    signal: mine.run.signal,
    ...(reset.length ? { reset: reset.slice(0, MAX_NAMES) } : {}),
    ...judged,
  };
  if (out.environment)
    note(
      `verification could not judge the change (the school's failure, not the crew's): ${out.environment.reason}`,
    );
  else if (out.reasons?.length)
    note(`verification ${out.passed ? 'passed' : 'failed'}: ${out.reasons.join('; ')}`);
  return out;
}

/** The verdict on the crew's run, against the base's record where one is needed. */
async function judge(
  o: CleanCheckoutOptions,
  verify: readonly string[],
  env: ChildEnv,
  deps: string | undefined,
  mine: CheckoutRun,
): Promise<Partial<CleanRun>> {
  const { run } = mine;
  const command = `\`${verify.join(' ')}\``;
  const at = o.baseSha.slice(0, 12);
  if (mine.missing) {
    const env1 = {
      kind: 'program_missing' as const,
      reason: describeMissing(mine.missing, 'dispatch.verify'),
    };
    return { missing: mine.missing, environment: env1 };
  }
  if (run.timedOut) return { passed: false, reasons: [`${command} timed out`] };
  if (run.exitCode === null)
    // Killed by a signal that was not the crew's timeout (the machine, the OOM killer, a runner
    // stopping): nothing the crew can correct. The disk watch's kill is the crew's, said by the crew.
    return {
      environment: {
        kind: 'killed',
        reason: `${command} ${run.spawnError ? `could not start: ${run.spawnError}` : `was killed by ${run.signal ?? 'a signal'}`} before it ended (not the crew's timeout): the machine or the runner stopped it; the school tries again`,
      },
    };
  const names = !!o.config.dispatch.verifyResults;
  // Without named results a green run needs no base to compare with.
  if (!names && run.exitCode === 0) return { passed: true, reasons: [`${command} passed`] };
  const known = await baseVerification(o, verify, env, deps);
  if ('unknown' in known) {
    const u = known.unknown;
    if (u.missing)
      return {
        missing: u.missing,
        environment: { kind: 'program_missing', reason: describeMissing(u.missing, 'dispatch.verify') },
      };
    return { environment: { kind: 'killed', reason: `the base's own verification could not end: ${u.why}` } };
  }
  const base = known.record;
  const baseRed = redBase(base, known.fresh, command, at);
  const baseState = {
    exitCode: base.exitCode,
    passed: base.exitCode === 0 && !base.named?.failed.length,
    named: !!base.named,
    ...(base.named
      ? {
          failing: base.named.failed.slice(0, MAX_NAMES),
          failingCount: base.named.failed.length,
          passingCount: base.named.passed.length,
        }
      : {}),
  };
  const common = { base: baseState, ...(baseRed ? { baseRed } : {}) };
  if (base.named && mine.named) {
    const d = judgeDifference(base.named, mine.named, { base: base.exitCode, now: run.exitCode });
    return {
      ...common,
      passed: d.passed,
      reasons: d.passed ? [`${command}: ${differenceSummary(d)}`] : d.reasons,
      failToPass: d.failToPass,
      passToPass: d.passToPass,
      passToPassCount: d.passToPassCount,
      ...(d.broken.length ? { broken: d.broken } : {}),
    };
  }
  if (base.named && !mine.named)
    return {
      ...common,
      passed: false,
      reasons: [
        `${command} exited with ${run.exitCode} and wrote no readable test report (${mine.unnamed}); the base's run did`,
      ],
    };
  // No names on either side: the exit code, read against the base's.
  if (run.exitCode === 0) return { ...common, passed: true, reasons: [`${command} passed`] };
  if (base.exitCode === 0)
    return {
      ...common,
      passed: false,
      reasons: [`${command} exited with ${run.exitCode}; it passes at the base ${at}`],
    };
  return {
    ...common,
    environment: {
      kind: 'base_red',
      reason: `the base itself fails: ${command} exits with ${base.exitCode} on the unchanged base ${at}, so the crew's failing run (exit ${run.exitCode}) cannot be told apart from the base's failure. Fix the base, or set dispatch.verifyResults so the school grades each crew on the difference from the base${base.unnamed && names ? ` (the base's run wrote no readable report: ${base.unnamed})` : ''}`,
    },
  };
}

/** What the `base-red` alert says, when this run made the record of a red base. */
function redBase(base: BaseRecord, fresh: boolean, command: string, at: string): string | undefined {
  if (!fresh) return undefined;
  if (base.named?.failed.length)
    return `the base ${at} is red: ${base.named.failed.length} test(s) fail before any change (${list(base.named.failed)}); crews are graded on the difference from it`;
  if (base.exitCode !== 0)
    return `the base ${at} is red: ${command} exits with ${base.exitCode} before any change${base.named ? '' : '; without dispatch.verifyResults no crew can be graded on it'}`;
  return undefined;
}
