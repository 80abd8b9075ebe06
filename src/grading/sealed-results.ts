import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { SealedResultsConfig } from '../config/schema.js';
import { readUntrusted } from '../security/untrusted-file.js';
import { fullName, JUnitError, parseJUnit, testId, type IdRoots, type TestCase } from './junit.js';

/**
 * Named results (`grading.sealedResults`): the sealed judge passes on the test runner's report of
 * named tests, never on an exit code alone. A patch that exits 0 early — at import, or as soon as a
 * test calls it — leaves tests unreported (or, under `node --test`, a file reported in place of its
 * tests), and that fails.
 *
 * - `node-test`: the command is `node --test …`; the judge adds node's built-in JUnit reporter
 *   writing to a file it chooses, next to a `spec` reporter on stdout for the log.
 * - `junit`: any runner that writes JUnit XML, to `{results}` in its argv or to `file` in the
 *   checkout.
 *
 * The tests that must pass are `expect`, else every test the suite reports at the base commit
 * (where only the base's own code runs): the judge learns their names from a run there first.
 */
export const MAX_REPORT_BYTES = 32 * 1024 * 1024;
/** The placeholder a `junit` command writes its report to. */
export const RESULTS_PLACEHOLDER = '{results}';

/** The command with the judge's reporter added (node-test) or `{results}` replaced (junit). */
export function instrument(argv: readonly string[], results: SealedResultsConfig, report: string): string[] {
  if (results.format === 'junit') return argv.map((a) => a.split(RESULTS_PLACEHOLDER).join(report));
  const at = argv.indexOf('--test');
  return [
    ...argv.slice(0, at + 1),
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=junit',
    `--test-reporter-destination=${report}`,
    ...argv.slice(at + 1),
  ];
}

/** The report's test cases, or why there is no usable report. */
export function readReport(path: string, format: SealedResultsConfig['format']): TestCase[] | string {
  // The report is written by the tests of the student's patch: data, read as such.
  const read = readUntrusted(path, { maxBytes: MAX_REPORT_BYTES, name: 'the test report' });
  if (!read.ok) return read.missing ? 'the command wrote no test report' : read.why;
  try {
    const cases = parseJUnit(read.bytes.toString('utf8'));
    // Node's junit reporter escapes `"` in attributes twice (`&amp;quot;`).
    if (format === 'node-test') for (const c of cases) c.name = c.name.replaceAll('&quot;', '"');
    return cases;
  } catch (e) {
    if (e instanceof JUnitError) return e.message;
    throw e;
  }
}

/**
 * Under `node --test` a file that reported no tests of its own — it exited, at import or in its
 * first test, before they reported — shows up as one test named by the file's path. Never a pass.
 */
export function fileEntry(c: TestCase, cwd: string): boolean {
  if (c.suites.length) return false;
  const p = isAbsolute(c.name) ? c.name : resolve(cwd, c.name);
  try {
    return existsSync(p) && statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Names a test answers to in `expect`: its full id (./junit.ts `testId`: `tests/test_a.py::test_x`,
 * `test/a.test.js > suite > name`), and the short forms earlier configurations used: its own name,
 * with its suites (`a > b`), `classname.name`.
 */
function answersTo(c: TestCase, id: string, name: string): boolean {
  return (
    id === name ||
    c.name === name ||
    fullName(c) === name ||
    (c.classname !== undefined && `${c.classname}.${c.name}` === name)
  );
}

const LIST = 10;
const list = (xs: string[]) => xs.slice(0, LIST).join('; ') + (xs.length > LIST ? `; … (${xs.length})` : '');

export interface ResultsVerdict {
  passed: boolean;
  reasons: string[];
}

/** Where a report's test ids are read from (./junit.ts `IdRoots`), and its format. */
export interface ReportContext extends IdRoots {
  format: SealedResultsConfig['format'];
}

/**
 * Judges a report. `declared`: the full ids the suite reported at the base commit (a multiset),
 * used when `expect` is not configured; undefined when the base run gave no names (then every
 * reported test must pass, and at least one must).
 *
 * What the reasons say is counts and the names the suite declares (or `expect` lists): never a
 * failure's message, never a name only this run reported. The code under test writes both — an
 * assertion message that quotes what `answer()` returned, a test it registers under a name of its
 * choosing — and a verdict's reasons reach the repair crew's brief, the board and the public comment.
 */
export function judgeReport(
  cases: readonly TestCase[],
  o: ReportContext & { expect?: readonly string[]; declared?: readonly string[] },
): ResultsVerdict {
  const files = o.format === 'node-test' ? cases.filter((c) => fileEntry(c, o.cwd)) : [];
  const tests = cases.filter((c) => !files.includes(c));
  const ids = new Map(tests.map((c) => [c, testId(c, o)]));
  const passed = tests.filter((c) => c.status === 'passed');
  const reasons: string[] = [];
  const known = new Set(o.declared ?? []);
  /** What a test may be called in a reason: a declared id, else the `expect` name it answers to. */
  const nameable = (c: TestCase) =>
    known.has(ids.get(c)!) ? ids.get(c)! : o.expect?.find((n) => answersTo(c, ids.get(c)!, n));
  const failed = tests.filter((c) => c.status === 'failed');
  if (failed.length) {
    const named = failed.map(nameable).filter((n): n is string => n !== undefined);
    const others = failed.length - named.length;
    reasons.push(
      `sealed test(s) failed (${failed.length})${named.length ? `: ${list(named)}` : ''}${others ? `${named.length ? ';' : ':'} ${others} more the suite does not declare at the base commit (not named)` : ''}`,
    );
  }
  if (files.length)
    reasons.push(
      `sealed test file(s) that reported no test of their own (ended before their tests ran): ${list(files.map((c) => testId(c, o)))}`,
    );
  if (o.expect) {
    const missing: string[] = [];
    const notPassed: string[] = [];
    for (const name of o.expect) {
      const matching = tests.filter((c) => answersTo(c, ids.get(c)!, name));
      if (!matching.length) missing.push(name);
      else if (matching.some((c) => c.status !== 'passed')) notPassed.push(name);
    }
    if (missing.length) reasons.push(`sealed test(s) expected but not reported: ${list(missing)}`);
    if (notPassed.length) reasons.push(`sealed test(s) expected that did not pass: ${list(notPassed)}`);
  } else if (o.declared) {
    const have = new Map<string, number>();
    for (const c of passed) have.set(ids.get(c)!, (have.get(ids.get(c)!) ?? 0) + 1);
    const missing: string[] = [];
    for (const name of o.declared) {
      const n = have.get(name) ?? 0;
      if (n > 0) have.set(name, n - 1);
      else missing.push(name);
    }
    if (missing.length)
      reasons.push(
        `sealed test(s) the suite declares (reported at the base commit) not reported as passed: ${list(missing)}`,
      );
  }
  if (!passed.length) reasons.push('sealed tests: no test passed');
  return { passed: reasons.length === 0, reasons };
}

/** The full ids a base run reported, file entries left out: the tests the suite declares. */
export function declaredNames(cases: readonly TestCase[], o: ReportContext): string[] {
  return cases.filter((c) => !(o.format === 'node-test' && fileEntry(c, o.cwd))).map((c) => testId(c, o));
}
