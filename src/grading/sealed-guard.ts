import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SealedResultsConfig } from '../config/schema.js';
import type { TestCase } from './junit.js';

/**
 * The sealed suite out of the code's reach (docs/grading.md, "The guard"). The code under test runs
 * in the same process as the suite's assertions: under `node --test` a module the test file imports
 * can replace `node:assert`'s functions with no-ops (one builtin object per process), and every
 * assertion then passes. The judge therefore:
 *  - preloads a module of its own (`--import`, from a directory outside the checkout, read-only in
 *    the sandbox) that freezes `node:assert`, `node:assert/strict` and `node:test` and their
 *    functions before the suite imports anything: an assignment to `assert.strictEqual` then throws
 *    in the code that tries it;
 *  - plants a canary: a test of its own, under a random name, registered in each test file's process
 *    once the file's own tests are done (at `beforeExit`), which must fail. It passes only when the
 *    builtins are no longer the ones the preload recorded or a failing assertion no longer reports a
 *    failure; it is missing when the process was ended from inside (`process.exit` in the code under
 *    test) or the check was removed. Either is `sealed_tests_tampered`;
 *  - writes the report with a reporter of its own, in the runner's process (where no code under test
 *    runs), naming each test's file.
 * Runners that write JUnit (pytest, mocha, jest, vitest) get a canary test file laid beside the
 * suite; what each guard cannot stop is in the docs.
 */

export type Runner = 'node-test' | 'pytest' | 'mocha' | 'jest' | 'vitest' | 'other';

/** Which runner a sealed command starts, from its argv (`npx mocha …`, `python3 -m pytest …`). */
export function detectRunner(argv: readonly string[], results?: SealedResultsConfig): Runner {
  if (results?.format === 'node-test' || argv.includes('--test')) return 'node-test';
  const words = argv.map((a) => basename(a));
  const at = (re: RegExp) => words.some((w) => re.test(w));
  if (at(/^(py\.test|pytest)(-[\d.]+)?$/) || argv.some((a, i) => a === '-m' && argv[i + 1] === 'pytest'))
    return 'pytest';
  if (at(/^_?mocha$/)) return 'mocha';
  if (at(/^jest$/)) return 'jest';
  if (at(/^vitest$/)) return 'vitest';
  return 'other';
}

export interface Guard {
  runner: Runner;
  /** The judge's own directory: the preload, the reporter. Outside the checkout, read-only inside. */
  dir: string;
  /** Random, in the canary's name and file name: how the judge tells its canary from the suite. */
  token: string;
  /** The canary test's name. */
  canary: string;
  preload: string;
  reporter: string;
}

/**
 * The preload. `canary` is null when no report is read (an exit code alone): the builtins are frozen
 * all the same. Plain JavaScript, written for every run: nothing of the toolkit is visible inside.
 */
function preloadSource(canary: string | null): string {
  return `// The judge's guard: docs/grading.md, "The guard".
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const CANARY = ${JSON.stringify(canary)};
const names = ['node:assert', 'node:assert/strict', 'node:test'];
const mods = names.map((n) => require(n));
const seen = new Set();
const recorded = [];
function freeze(owner, depth) {
  if (owner === null || (typeof owner !== 'object' && typeof owner !== 'function') || seen.has(owner)) return;
  seen.add(owner);
  for (const key of Reflect.ownKeys(owner)) {
    const d = Object.getOwnPropertyDescriptor(owner, key);
    if (!d || !('value' in d)) continue;
    const v = d.value;
    if (typeof v === 'function') recorded.push([owner, key, v]);
    const plain = v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;
    if (depth < 2 && (typeof v === 'function' || plain)) freeze(v, depth + 1);
  }
  Object.freeze(owner);
}
for (const m of mods) freeze(m, 0);
function intact() {
  try {
    const again = names.map((n) => require(n));
    if (again.some((m, i) => m !== mods[i] || !Object.isFrozen(m))) return false;
    return recorded.every(([owner, key, v]) => owner[key] === v);
  } catch {
    return false;
  }
}
const child = String(process.env.NODE_TEST_CONTEXT ?? '').startsWith('child');
const inProcess = process.execArgv.some((a) => /^--(experimental-)?test-isolation=none$/.test(a));
if (CANARY !== null && (child || inProcess)) {
  const test = mods[2].test;
  const fail = mods[0].strictEqual;
  let planted = false;
  process.on('beforeExit', () => {
    if (planted) return;
    planted = true;
    const before = intact();
    // Named by its file too: the report places a test where test() was called, here the preload.
    test(CANARY + ' ' + (child ? (process.argv[1] ?? '') : ''), () => {
      // Must fail. It passes only when the builtins were altered or a failure no longer reports.
      if (!before || !intact()) return;
      require('node:assert').strictEqual(1, 2);
      fail(1, 2);
    });
  });
}
`;
}

/**
 * The node:test reporter: JUnit XML with each test's file (node 20's own JUnit reporter has none),
 * its suites as nested <testsuite>s, no failure text (the judge never passes a message on). It runs
 * in the runner's process, which imports no test file.
 */
const REPORTER = `// The judge's node:test reporter: docs/grading.md, "Test names".
const esc = (s) => String(s ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  .replace(/"/g, '&quot;').replace(/\\n/g, '&#10;').replace(/\\r/g, '&#13;')
  .replace(/[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\ufffe\\uffff]/g, '');
export default async function* report(source) {
  const stacks = new Map();
  const parents = new Map();
  let xml = '';
  for await (const event of source) {
    const d = event.data ?? {};
    if (event.type === 'test:start') {
      const stack = stacks.get(d.file) ?? [];
      stack.length = d.nesting;
      stack[d.nesting] = d.name;
      stacks.set(d.file, stack);
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    // Children report before their parent: a parent (a suite, a test with subtests) is seen as one.
    const seen = parents.get(d.file) ?? new Set();
    parents.set(d.file, seen);
    if (d.nesting > 0) seen.add(d.nesting - 1);
    const parent = d.details?.type === 'suite' || seen.has(d.nesting);
    seen.delete(d.nesting);
    // A parent that passed is the sum of its tests, and so is one that failed because they did;
    // one that failed by itself (its body threw, a hook failed) is a failure of its own.
    if (parent && (event.type === 'test:pass' || d.details?.error?.failureType === 'subtestsFailed')) continue;
    const suites = (stacks.get(d.file) ?? []).slice(0, d.nesting);
    const status = event.type === 'test:fail' ? '<failure/>' : d.skip !== undefined || d.todo !== undefined ? '<skipped/>' : '';
    const file = d.file ? \` file="\${esc(d.file)}"\` : '';
    xml += suites.map((s) => \`<testsuite name="\${esc(s)}">\`).join('');
    xml += \`<testcase name="\${esc(d.name)}"\${file}>\${status}</testcase>\`;
    xml += '</testsuite>'.repeat(suites.length) + '\\n';
  }
  yield '<?xml version="1.0" encoding="utf-8"?>\\n<testsuites>\\n' + xml + '</testsuites>\\n';
}
`;

/** Writes the judge's guard into `dir` (created): a fresh token and canary name for this run. */
export function makeGuard(dir: string, runner: Runner, o: { canary: boolean }): Guard {
  mkdirSync(dir, { recursive: true });
  const token = randomBytes(12).toString('hex');
  const canary = `t${token}`;
  const preload = join(dir, `${token}.mjs`);
  const reporter = join(dir, `r${token}.mjs`);
  writeFileSync(preload, preloadSource(o.canary && runner === 'node-test' ? canary : null));
  writeFileSync(reporter, REPORTER);
  return { runner, dir, token, canary, preload, reporter };
}

/**
 * Lays the runner's canary test file into `dir` (the suite's root: the checkout, or the suite's
 * copy beside it) and returns its path; undefined for a runner that gets none here.
 * - pytest: `test_<token>.py`, under whatever conftest.py the checkout holds;
 * - mocha: a spec run last in mocha's own process;
 * - jest, vitest: a test file where their default patterns find it (not when the command names
 *   its files: then the base run does not report it and the guard is off, as the verdict says).
 */
export function layCanary(g: Guard, dir: string): string | undefined {
  const fail = "throw new Error('canary');";
  const files: Partial<Record<Runner, [string, string]>> = {
    pytest: [`test_${g.token}.py`, `def test_${g.canary}():\n    assert 1 == 2\n`],
    mocha: [`${g.token}.spec.cjs`, `it(${JSON.stringify(g.canary)}, function () { ${fail} });\n`],
    jest: [`${g.token}.test.js`, `test(${JSON.stringify(g.canary)}, () => { ${fail} });\n`],
    vitest: [
      `${g.token}.test.mjs`,
      `import { test } from 'vitest';\ntest(${JSON.stringify(g.canary)}, () => { ${fail} });\n`,
    ],
  };
  const f = files[g.runner];
  if (!f) return undefined;
  const path = join(dir, f[0]);
  writeFileSync(path, f[1]);
  return path;
}

/**
 * The command with the guard: for node:test the preload before `--test` and, with a report, the
 * judge's reporter after it; for pytest and mocha the canary file named last (pytest without its
 * cache, which a read-only checkout cannot hold and a patch could seed). `NODE_OPTIONS` carries the
 * preload to mocha, which runs the suite in its own process.
 */
export function guardArgv(
  argv: readonly string[],
  g: Guard,
  o: { report?: string; canaryFile?: string },
): { argv: string[]; env: Record<string, string> } {
  if (g.runner === 'node-test') {
    const at = argv.indexOf('--test');
    const reporters = o.report
      ? [
          '--test-reporter=spec',
          '--test-reporter-destination=stdout',
          `--test-reporter=${g.reporter}`,
          `--test-reporter-destination=${o.report}`,
        ]
      : [];
    if (at < 0) return { argv: [...argv], env: {} };
    return {
      argv: [...argv.slice(0, at), `--import=${g.preload}`, '--test', ...reporters, ...argv.slice(at + 1)],
      env: {},
    };
  }
  const extra = o.canaryFile ? [o.canaryFile] : [];
  if (g.runner === 'pytest') return { argv: [...argv, '-p', 'no:cacheprovider', ...extra], env: {} };
  if (g.runner === 'mocha')
    return { argv: [...argv, ...extra], env: { NODE_OPTIONS: `--import=${g.preload}` } };
  return { argv: [...argv], env: {} };
}

/** Whether a reported case is the judge's own (its canary, or a failure of the canary's file). */
export function isCanary(c: TestCase, g: Guard): boolean {
  return [c.name, c.classname ?? '', c.file ?? '', ...c.suites].some((s) => s.includes(g.token));
}

export interface CanaryCheck {
  /** The suite's own cases: the canary taken out (it is never counted or named). */
  cases: TestCase[];
  /** The canary reported failing where it must (for node:test: in every test file that reported). */
  held: boolean;
  /** Why the run was tampered with; empty when the canary held or is not required. */
  tampered: string[];
}

/**
 * Reads the canary out of a report. `required`: the canary must be there, failing (it did so at the
 * base commit, where only the base's code runs). `fileOf` names a test file for a reason.
 */
export function checkCanary(
  cases: readonly TestCase[],
  g: Guard,
  o: { required: boolean; fileOf: (path: string) => string; isFileEntry: (c: TestCase) => boolean },
): CanaryCheck {
  const canaries = cases.filter((c) => isCanary(c, g));
  const own = cases.filter((c) => !isCanary(c, g));
  const tampered: string[] = [];
  const passing = canaries.filter((c) => c.status !== 'failed');
  if (o.required && passing.length)
    tampered.push(
      `the judge's canary test, which must fail, was reported ${passing[0]!.status}: an assertion or the runner's report was altered by the code under test`,
    );
  let missing: string[] = [];
  if (g.runner === 'node-test') {
    // The canary's name is `<canary> <test file>` (the report gives the preload as its file).
    const fileOfCanary = (c: TestCase) => c.name.slice(c.name.indexOf(' ') + 1);
    const failedCanary = new Set(canaries.filter((c) => c.status === 'failed').map(fileOfCanary));
    const files = new Set<string>();
    const crashed = new Set<string>();
    for (const c of own) {
      if (!c.file) continue;
      files.add(c.file);
      // A file that failed as a whole (it could not load, it crashed) never reached the check: its
      // failure already fails the run.
      if (o.isFileEntry(c) && c.status === 'failed') crashed.add(c.file);
    }
    missing = [...files]
      .filter((f) => !crashed.has(f) && !failedCanary.has(f) && !failedCanary.has(''))
      .map(o.fileOf);
  } else if (!canaries.length) missing = ['the report'];
  if (o.required && missing.length)
    tampered.push(
      g.runner === 'node-test'
        ? `test file(s) ended before the judge's closing check ran (an exit from inside the code under test, or the check was removed): ${missing.slice(0, 10).join(', ')}`
        : `the judge's canary test is missing from the report (it reported at the base commit): the runner's report was altered`,
    );
  return { cases: own, held: !passing.length && !missing.length && canaries.length > 0, tampered };
}
