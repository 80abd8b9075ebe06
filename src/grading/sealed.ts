import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { childEnv } from '../process/env.js';
import { describeMissing, missingProgram } from '../sandbox/index.js';
import { redactText } from '../security/redact.js';
import type { JudgeFinding } from './verdict.js';
import { applyPatch, tampering } from './sealed-patch.js';
import { declaredNames, fileEntry, judgeReport, type ReportContext } from './sealed-results.js';
import { checkCanary, isCanary } from './sealed-guard.js';
import { testId, type TestCase } from './junit.js';
import {
  gitTail,
  inCheckout,
  layoutOf,
  runSuite,
  suiteFiles,
  type Checkout,
  type SuiteOptions,
  type SuiteRun,
} from './sealed-run.js';

import { SealedTestsError } from './sealed-run.js';

export { SealedTestsError };

/**
 * Sealed tests: a command the student never saw, run by the grader on the crew's patch applied to a
 * *fresh* worktree of the repository at the recorded base commit. Nothing the student wrote into its
 * own worktree or bookbag (a fake "passed", a doctored log) reaches this worktree: only the diff
 * does. With `grading.sealedResults` the verdict is the runner's report of named tests
 * (./sealed-results.ts) and its exit code; without it, the exit code alone.
 *
 * The suite stays sealed: its files come from `grading.sealedDir`, a directory outside the
 * repository, laid into the checkout at their own paths (`grading.sealedLayout: into`, like a test
 * patch: a repository's own test file runs as it does upstream, with the base's installed
 * dependencies) or copied next to it and named by `{sealed}` (`beside`). The patch is applied by git
 * to the fresh checkout and what git changed is listed back from it (./sealed-patch.ts): a path of
 * the laid suite or in `grading.sealedProtect`, a symlink out of the checkout, a submodule or a
 * `.gitattributes` is tampering, and nothing runs; and the command runs with the base environment
 * only, no token.
 *
 * Out of the code's reach (./sealed-guard.ts): the judge's preload freezes the assertion library and
 * the runner, its canary test must be reported failing, and the report is the judge's own reporter's.
 *
 * Leaking nothing: a finding's reasons hold counts and the names the suite declares, never the
 * runner's output or a failure's message (the code under test writes those: an assertion message
 * can carry the sealed test's own source). The full output goes to `outputFile`, which only
 * maintainers read (docs/grading.md, "What the sealed judge tells").
 */
export interface SealedOptions extends SuiteOptions {
  bookbag: SuiteOptions['bookbag'];
  diff: string;
  /** Globs of repository paths the patch may not touch. */
  protect?: readonly string[];
  /** Where the run's full output is written (maintainers only, never a crew or a brief). */
  outputFile?: string;
  /** An alert for the maintainers (a sealed suite that proves nothing at the base). */
  onAlert?: (kind: string, detail: string) => unknown;
}

/**
 * Where the judges put each sealed run's full output, under the state's `views/` (never checkpointed
 * to the state branch, never in a bookbag, a brief or a finding): `views/sealed-output/<crew>.log`.
 */
export const SEALED_OUTPUT = 'sealed-output';

function fail(code: string, reasons: string[]): JudgeFinding {
  return { judge: 'sealed', passed: false, code, reasons, score: 0 };
}

/** What the suite does at a base commit: the names its report gives there, or why not. */
type AtBase =
  | {
      names: string[];
      /** The judge's canary reported failing there: it is required of every crew's run. */
      canary: boolean;
      /** Nothing failed at the base: the suite cannot tell a fix from no change. */
      green: boolean;
    }
  | { note: string; green: boolean };
const atBaseRuns = new Map<string, Promise<AtBase>>();

/** Digest of the suite's files (paths and contents): part of the key of what it declares. */
function suiteDigest(dir: string | undefined): string {
  const h = createHash('sha256');
  for (const rel of suiteFiles(dir))
    h.update(rel)
      .update('\0')
      .update(readFileSync(join(resolve(dir!), rel)))
      .update('\0');
  return h.digest('hex');
}

function contextOf(o: SealedOptions, c: Checkout, r: SuiteRun): ReportContext {
  return { format: o.results?.format ?? 'junit', cwd: c.wt, roots: r.roots };
}

/**
 * Runs the suite on the base commit without the patch (only the base's own code runs there): the
 * names of the tests it reports, passed or failed (skipped ones are not required), whether the
 * judge's canary holds there, and whether anything fails there at all — a suite green at the base
 * cannot be the evidence that a fix is real, and the maintainers are told at once. Once per base,
 * command and suite content in this process: crews of one cycle share a base.
 */
function atBase(o: SealedOptions): Promise<AtBase> {
  const key = JSON.stringify([
    resolve(o.repoPath),
    o.bookbag.baseSha,
    o.argv,
    o.results ?? null,
    layoutOf(o),
    suiteDigest(o.sealedDir),
  ]);
  const known = atBaseRuns.get(key);
  if (known) return known;
  const p = inCheckout(o, async (c): Promise<AtBase> => {
    const r = await runSuite(o, c);
    if ('refused' in r) return { note: r.refused.join('; '), green: false };
    if (r.run.timedOut)
      return { note: `the run at the base commit timed out after ${o.timeoutMs} ms`, green: false };
    if (!o.results) return { note: 'no named results', green: r.run.exitCode === 0 };
    if (typeof r.report === 'string' || !r.report)
      return { note: `the run at the base commit: ${r.report ?? 'no report'}`, green: false };
    const ctx = contextOf(o, c, r);
    const canary = checkCanary(r.report, r.guard, {
      required: true,
      fileOf: (f) => testId({ name: f, suites: [], file: f, status: 'passed' }, ctx),
      isFileEntry: (t) => fileEntry(t, c.wt),
    });
    const own = canary.cases.filter((t) => t.status !== 'skipped');
    const green =
      exitOk(r.run.exitCode, r.report, r) && own.length > 0 && own.every((t) => t.status === 'passed');
    return { names: declaredNames(own, ctx), canary: canary.held, green };
  });
  atBaseRuns.set(key, p);
  // Only a report is remembered: a failure to learn the names is tried again by the next job.
  p.then(
    (d) => {
      if ('note' in d && o.results) atBaseRuns.delete(key);
      else if (d.green)
        void o.onAlert?.(
          'sealed-green-at-base',
          `the sealed suite (${o.argv.join(' ')}) passes at base ${o.bookbag.baseSha.slice(0, 12)} without any change: it cannot show that a fix is real. Give it tests that fail on the bug (grading.sealedDir).`,
        );
    },
    () => atBaseRuns.delete(key),
  );
  return p;
}

/**
 * A pass is `sealed_tests_passed`, unless the suite passed at the base too: then it is
 * `sealed_tests_green_at_base`, still a pass (the crew is not to blame for the suite), never the
 * evidence that a fix is real (./evidence.ts takes only `sealed_tests_passed`).
 */
function passedCode(base: AtBase): string {
  return base.green ? 'sealed_tests_green_at_base' : 'sealed_tests_passed';
}

const GREEN =
  'sealed tests: the suite passes at the base commit too, without the change: it cannot show that a fix is real (the maintainers are alerted)';

/** Names of node:assert's and node:test's exports: an attempt on one shows in a freeze error. */
const NAMES =
  'ok|fail|equal|notEqual|deepEqual|notDeepEqual|deepStrictEqual|notDeepStrictEqual|partialDeepStrictEqual|strictEqual|notStrictEqual|throws|rejects|doesNotThrow|doesNotReject|ifError|match|doesNotMatch|AssertionError|CallTracker|strict|test|describe|it|suite|before|after|beforeEach|afterEach|mock|skip|todo|only';
// V8's words for a write to a frozen function's property (`assert` and `test` are functions).
const BUILTIN_EXPORTS = new RegExp(
  `Cannot (?:assign to read only property|add property|delete property) '(${NAMES})' of function '|Cannot (?:redefine|define) property: (${NAMES})\\b`,
);

/**
 * Whether the command's exit says "nothing failed": 0, or 1 when the judge's canary — which must
 * fail — is reported failing (node --test, pytest, jest and vitest exit 1 on a failure, mocha with
 * the number of failures). The suite's own failures are read from the report.
 */
function exitOk(code: number | null, report: SuiteRun['report'], r: SuiteRun): boolean {
  if (code === 0) return true;
  const canaryFailed =
    Array.isArray(report) && report.some((t) => isCanary(t, r.guard) && t.status === 'failed');
  return code === 1 && canaryFailed;
}

/** Runs the sealed tests; throws SealedTestsError when the grader itself cannot set them up. */
export async function runSealedTests(o: SealedOptions): Promise<JudgeFinding> {
  const results = o.results;
  return inCheckout(o, async (c) => {
    if (o.diff.trim() !== '') {
      const patch = join(c.tmp, 'crew.patch');
      writeFileSync(patch, o.diff);
      const applied = await applyPatch(c.wt, patch, o.bookbag.baseSha);
      if (!applied.ok) {
        return fail('patch_does_not_apply', [
          `the crew's diff does not apply at base ${o.bookbag.baseSha}: ${gitTail(applied.output)}`,
        ]);
      }
      // Laid into the checkout, the suite's own paths are sealed like sealedProtect's.
      const laid = o.sealedDir && layoutOf(o) === 'into' ? suiteFiles(o.sealedDir) : [];
      const protect = [...(o.protect ?? []), ...laid, ...(results?.file ? [results.file] : [])];
      const tampered = tampering(c.wt, applied.changes, protect);
      if (tampered.length)
        return fail('sealed_tests_tampered', [...tampered, 'the sealed tests did not run']);
    }
    const base = await atBase(o);
    const green = base.green ? [GREEN] : [];
    const r = await runSuite(o, c);
    if ('refused' in r) return fail('sealed_tests_tampered', [...r.refused, 'the sealed tests did not run']);
    keepOutput(o, r);
    const { run, output, report } = r;
    if (run.timedOut)
      return fail('sealed_tests_timed_out', [`sealed tests timed out after ${o.timeoutMs} ms`]);
    // Exit 127 for a program the sandbox lacks is the school's failure: no verdict, the attempt fails.
    const missing =
      run.exitCode === 127
        ? missingProgram({ output, exitCode: 127, command: o.argv, hostPath: childEnv().PATH ?? '' })
        : undefined;
    if (missing) throw new SealedTestsError(describeMissing(missing, 'sealed tests'));
    const frozen = BUILTIN_EXPORTS.exec(output);
    if (frozen && (r.guard.runner === 'node-test' || r.guard.runner === 'mocha'))
      return fail('sealed_tests_tampered', [
        `the code under test tried to replace \`${frozen[1] ?? frozen[2]}\` of node:assert or node:test, which the judge froze`,
      ]);
    const exit = exitOk(run.exitCode, report, r)
      ? undefined
      : `sealed tests exited with ${run.exitCode ?? run.signal}`;
    if (!results) {
      if (exit) return fail('sealed_tests_failed', [exit]);
      return {
        judge: 'sealed',
        passed: true,
        code: passedCode(base),
        reasons: ['sealed tests passed', ...green],
        score: 1,
      };
    }
    if (typeof report === 'string' || !report) {
      // No report: a failed run is a failed run; a "successful" one proves nothing.
      if (exit) return fail('sealed_tests_failed', [exit, `sealed tests: no test report (${report})`]);
      return fail('sealed_results_missing', [
        `sealed tests exited 0 but left no usable ${results.format} report (${report}); an exit code alone is not a pass`,
      ]);
    }
    const ctx = contextOf(o, c, r);
    const canary = checkCanary(report, r.guard, {
      required: 'names' in base && base.canary,
      fileOf: (f) => testId({ name: f, suites: [], file: f, status: 'passed' }, ctx),
      isFileEntry: (t) => fileEntry(t, c.wt),
    });
    if (canary.tampered.length) return fail('sealed_tests_tampered', canary.tampered);
    const cases: TestCase[] = canary.cases;
    const v = judgeReport(cases, {
      ...ctx,
      ...(results.expect ? { expect: results.expect } : {}),
      ...('names' in base ? { declared: base.names } : {}),
    });
    const notes = [
      ...('note' in base
        ? [
            `sealed tests: the tests the suite declares are unknown (${base.note}); every reported test must pass`,
          ]
        : []),
      ...('names' in base && !base.canary && r.guard.runner !== 'other'
        ? [
            `sealed tests: the judge's canary did not report at the base commit, so it guards nothing here (${r.guard.runner}; docs/grading.md, "The guard")`,
          ]
        : []),
      ...green,
    ];
    const passed = cases.filter((t) => t.status === 'passed').length;
    // What a contest ranks crews by (./contest.ts): more passed named sealed tests first.
    const tests = { passed, failed: cases.filter((t) => t.status === 'failed').length };
    if (exit || !v.passed)
      return { ...fail('sealed_tests_failed', [...(exit ? [exit] : []), ...v.reasons, ...notes]), tests };
    const against = results.expect
      ? `all ${results.expect.length} expected`
      : 'names' in base
        ? `all ${base.names.length} the suite declares at the base commit`
        : 'every reported test';
    return {
      judge: 'sealed',
      passed: true,
      code: passedCode(base),
      reasons: [`sealed tests passed: ${passed} named test(s) reported passed (${against})`, ...notes],
      score: 1,
      tests,
    };
  });
}

/** The run's whole output, for the maintainers only (redacted: a log, never a patch). */
function keepOutput(o: SealedOptions, r: SuiteRun): void {
  if (!o.outputFile) return;
  try {
    mkdirSync(dirname(o.outputFile), { recursive: true, mode: 0o700 });
    const head = `# sealed tests of crew ${o.bookbag.crewId} at base ${o.bookbag.baseSha}: exit ${r.run.exitCode ?? r.run.signal}${r.run.timedOut ? ' (timed out)' : ''}\n# ${o.argv.join(' ')}\n`;
    writeFileSync(o.outputFile, head + redactText(r.output), { mode: 0o600 });
  } catch {
    // The maintainers' copy is a convenience: its absence never changes a verdict.
  }
}
