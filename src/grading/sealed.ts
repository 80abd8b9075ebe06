import { createHash, randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { SealedResultsConfig } from '../config/schema.js';
import { childEnv, type ChildEnv } from '../process/env.js';
import { removeTreeSync } from '../process/remove-tree.js';
import { ProgramNotFoundError } from '../sandbox/sandbox.js';
import { describeMissing, missingProgram } from '../sandbox/not-found.js';
import { runProcess, type RunResult } from '../process/run.js';
import { SchoolError } from '../errors.js';
import { redactText } from '../security/redact.js';
import type { Bookbag } from '../bookbag/schema.js';
import type { TestCase } from './junit.js';
import type { JudgeFinding } from './verdict.js';
import { applyPatch, git, tampering } from './sealed-patch.js';
import { declaredNames, instrument, judgeReport, readReport } from './sealed-results.js';

/**
 * Sealed tests: a command the student never saw, run by the grader on the crew's patch applied to a
 * *fresh* worktree of the repository at the recorded base commit. Nothing the student wrote into its
 * own worktree or bookbag (a fake "passed", a doctored log) reaches this worktree: only the diff
 * does. With `grading.sealedResults` the verdict is the runner's report of named tests
 * (./sealed-results.ts) and its exit code; without it, the exit code alone.
 *
 * The suite stays sealed: its files come from `grading.sealedDir`, a directory outside the
 * repository, copied next to (never into) the checkout and named by `{sealed}` in the command; the
 * patch is applied by git to the fresh checkout and what git changed is listed back from it
 * (./sealed-patch.ts): a path in `grading.sealedProtect` (say `package.json`, whose test script a
 * command like `npm test` would run), a symlink out of the checkout, a submodule or a
 * `.gitattributes` is tampering, and nothing runs; and the command runs with the base environment
 * only, no token.
 *
 * Nothing tells the code under test that it is being judged: no marker variable, no "sealed" in the
 * paths of the checkout or the suite's copy. It can still guess (a crew's own runs carry its
 * SCHOOL_* variables, this one does not), which is why named results are what a judge should
 * pass on.
 */
export class SealedTestsError extends SchoolError {
  constructor(message: string) {
    super(message);
    this.name = 'SealedTestsError';
  }
}

export interface SealedOptions {
  repoPath: string;
  argv: readonly string[];
  bookbag: Bookbag;
  diff: string;
  timeoutMs: number;
  /** The sealed suite's files, outside the repository. */
  sealedDir?: string;
  /** Globs of repository paths the patch may not touch. */
  protect?: readonly string[];
  /** Named results: the judge passes on the runner's report (grading.sealedResults). */
  results?: SealedResultsConfig;
  /**
   * How the suite is started: the sandbox, with the patched checkout and the suite's copy visible
   * read-only (nothing of the grader's checkout, not even the git directory behind the checkout) and
   * only the report's place writable.
   */
  confine?: (
    argv: readonly string[],
    env: ChildEnv,
    view: { cwd: string; readOnly: string[]; writable: string[] },
  ) => Promise<{ argv: string[]; env: ChildEnv }>;
}

const TAIL = 1500;

function tail(text: string): string {
  const t = redactText(text).trim();
  return t.length > TAIL ? `…${t.slice(-TAIL)}` : t;
}

function fail(code: string, reasons: string[]): JudgeFinding {
  return { judge: 'sealed', passed: false, code, reasons, score: 0 };
}

interface Checkout {
  /** Private to this run: the checkout, the suite's copy, the report. */
  tmp: string;
  wt: string;
}

/** A fresh detached worktree of the repository at `baseSha`, removed after `fn`. */
async function inCheckout<T>(o: SealedOptions, fn: (c: Checkout) => Promise<T>): Promise<T> {
  const repo = resolve(o.repoPath);
  const tmp = mkdtempSync(join(tmpdir(), 'school-'));
  // Unique basename: git names the worktree admin dir after it, and graders run concurrently.
  const wt = join(
    tmp,
    `wt-${o.bookbag.crewId.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(3).toString('hex')}`,
  );
  const add = await git(repo, ['worktree', 'add', '--detach', '--quiet', wt, o.bookbag.baseSha]);
  if (!add.ok) {
    removeTreeSync(tmp);
    throw new SealedTestsError(
      `sealed tests: could not create a worktree of ${repo} at base ${o.bookbag.baseSha}: ${tail(add.output)}`,
    );
  }
  try {
    return await fn({ tmp, wt });
  } finally {
    // The suite ran code from the patch here: a tree deeper than PATH_MAX or a directory made 0000
    // stops git and rmSync, not removeTreeSync.
    await git(repo, ['worktree', 'remove', '--force', wt]);
    removeTreeSync(tmp);
    await git(repo, ['worktree', 'prune']);
  }
}

interface SuiteRun {
  run: RunResult;
  output: string;
  /** With named results: the report's test cases, or why there is none. */
  report?: TestCase[] | string;
}

/**
 * Runs the sealed command once in the checkout. The one place a sealed command is started: argv
 * (with `{sealed}` and the judge's reporter), the checkout as cwd, the base environment, the timeout.
 */
async function runSuite(o: SealedOptions, c: Checkout): Promise<SuiteRun> {
  let sealed: string | undefined;
  if (o.sealedDir) {
    sealed = join(c.tmp, 'suite');
    cpSync(resolve(o.sealedDir), sealed, { recursive: true });
  }
  let argv = o.argv.map((a) => (sealed ? a.split('{sealed}').join(sealed) : a));
  let report: string | undefined;
  if (o.results) {
    // The judge's own file, outside the checkout; or the configured one inside it, which the
    // patch may not touch (tampering) and which is removed before the run.
    mkdirSync(join(c.tmp, 'results'), { recursive: true });
    report = o.results.file ? join(c.wt, o.results.file) : join(c.tmp, 'results', 'report.xml');
    removeTreeSync(report);
    argv = instrument(argv, o.results, report);
  }
  let started = { argv, env: childEnv() };
  if (o.confine) {
    // A report inside the checkout is bound writable as a file of its own: it must exist first.
    if (report && o.results?.file) writeFileSync(report, '');
    try {
      started = await o.confine(argv, started.env, {
        cwd: c.wt,
        readOnly: [c.wt, ...(sealed ? [sealed] : [])],
        writable: report ? [o.results?.file ? report : dirname(report)] : [],
      });
    } catch (e) {
      if (e instanceof ProgramNotFoundError) {
        const missing = missingProgram({
          output: '',
          exitCode: null,
          command: o.argv,
          hostPath: started.env.PATH ?? '',
          notFound: e.program,
        })!;
        throw new SealedTestsError(describeMissing(missing, 'sealed tests: could not start them'));
      }
      throw e;
    }
  }
  const run = await runProcess(started.argv, {
    cwd: c.wt,
    timeoutMs: o.timeoutMs,
    env: started.env,
    output: { maxBytes: 1_000_000 },
  });
  if (run.spawnError)
    throw new SealedTestsError(`sealed tests: could not start ${o.argv[0]}: ${run.spawnError}`);
  return {
    run,
    output: run.stdout.toString('utf8') + run.stderr.toString('utf8'),
    ...(report && o.results ? { report: readReport(report, o.results.format) } : {}),
  };
}

/** What the suite declares at a base commit: the names its report gives there, or why not. */
type Declared = { names: string[] } | { note: string };
const declaredAt = new Map<string, Promise<Declared>>();

/** Digest of the suite's files (paths and contents): part of the key of what it declares. */
function suiteDigest(dir: string | undefined): string {
  const h = createHash('sha256');
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else if (e.isFile())
        h.update(r)
          .update('\0')
          .update(readFileSync(join(d, e.name)))
          .update('\0');
    }
  };
  if (dir) walk(resolve(dir), '');
  return h.digest('hex');
}

/**
 * Runs the suite on the base commit without the patch (only the base's own code runs there) and
 * keeps the names of the tests it reports, passed or failed; skipped ones are not required. Once per
 * base, command and suite content in this process: crews of one cycle share a base.
 */
function declaredAtBase(o: SealedOptions, results: SealedResultsConfig): Promise<Declared> {
  const key = JSON.stringify([
    resolve(o.repoPath),
    o.bookbag.baseSha,
    o.argv,
    results,
    suiteDigest(o.sealedDir),
  ]);
  const known = declaredAt.get(key);
  if (known) return known;
  const p = inCheckout(o, async (c): Promise<Declared> => {
    const r = await runSuite(o, c);
    if (r.run.timedOut) return { note: `the run at the base commit timed out after ${o.timeoutMs} ms` };
    if (typeof r.report === 'string' || !r.report) return { note: `the run at the base commit: ${r.report}` };
    const skipped = new Set(r.report.filter((t) => t.status === 'skipped'));
    return {
      names: declaredNames(
        r.report.filter((t) => !skipped.has(t)),
        { format: results.format, cwd: c.wt },
      ),
    };
  });
  declaredAt.set(key, p);
  // Only a report is remembered: a failure to learn the names is tried again by the next job.
  p.then(
    (d) => ('note' in d ? declaredAt.delete(key) : undefined),
    () => declaredAt.delete(key),
  );
  return p;
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
          `the crew's diff does not apply at base ${o.bookbag.baseSha}: ${tail(applied.output)}`,
        ]);
      }
      const protect = [...(o.protect ?? []), ...(results?.file ? [results.file] : [])];
      const tampered = tampering(c.wt, applied.changes, protect);
      if (tampered.length)
        return fail('sealed_tests_tampered', [...tampered, 'the sealed tests did not run']);
    }
    // Without `expect`, what the suite declares: learned on the base commit, in a checkout of its own.
    const declared = results && !results.expect ? await declaredAtBase(o, results) : undefined;
    const { run, output, report } = await runSuite(o, c);
    if (run.timedOut)
      return fail('sealed_tests_timed_out', [`sealed tests timed out after ${o.timeoutMs} ms`]);
    // Exit 127 for a program the sandbox lacks is the school's failure: no verdict, the attempt fails.
    const missing =
      run.exitCode === 127
        ? missingProgram({ output, exitCode: 127, command: o.argv, hostPath: childEnv().PATH ?? '' })
        : undefined;
    if (missing) throw new SealedTestsError(describeMissing(missing, 'sealed tests'));
    const exit = run.exitCode === 0 ? undefined : `sealed tests exited with ${run.exitCode ?? run.signal}`;
    if (!results) {
      if (exit) return fail('sealed_tests_failed', [exit, tail(output)]);
      return {
        judge: 'sealed',
        passed: true,
        code: 'sealed_tests_passed',
        reasons: ['sealed tests passed'],
        score: 1,
      };
    }
    if (typeof report === 'string' || !report) {
      // No report: a failed run is a failed run; a "successful" one proves nothing.
      if (exit) return fail('sealed_tests_failed', [exit, `no test report: ${report}`, tail(output)]);
      return fail('sealed_results_missing', [
        `the sealed tests exited 0 but left no usable ${results.format} report (${report}); an exit code alone is not a pass`,
        tail(output),
      ]);
    }
    const v = judgeReport(report, {
      format: results.format,
      cwd: c.wt,
      ...(results.expect ? { expect: results.expect } : {}),
      ...(declared && 'names' in declared ? { declared: declared.names } : {}),
    });
    const notes =
      declared && 'note' in declared
        ? [`the tests the suite declares are unknown (${declared.note}); every reported test must pass`]
        : [];
    const passed = report.filter((t) => t.status === 'passed').length;
    // What a contest ranks crews by (./contest.ts): more passed named sealed tests first.
    const tests = { passed, failed: report.filter((t) => t.status === 'failed').length };
    if (exit || !v.passed)
      return {
        ...fail('sealed_tests_failed', [...(exit ? [exit] : []), ...v.reasons, ...notes, tail(output)]),
        tests,
      };
    const against = results.expect
      ? `all ${results.expect.length} expected`
      : declared && 'names' in declared
        ? `all ${declared.names.length} the suite declares at the base commit`
        : 'every reported test';
    return {
      judge: 'sealed',
      passed: true,
      code: 'sealed_tests_passed',
      reasons: [`sealed tests passed: ${passed} named test(s) reported passed (${against})`, ...notes],
      score: 1,
      tests,
    };
  });
}
