import { MAX_NAMES } from '../bookbag/schema.js';
import type { SealedResultsConfig } from '../config/schema.js';
import { fullName, type TestCase } from './junit.js';
import { fileEntry } from './sealed-results.js';

/**
 * A crew graded on the difference from its base, as SWE-bench grades (docs/grading.md,
 * "Verification"): the unchanged base's verification names the tests that pass and fail there;
 * with the patch, a test failing at the base that now passes is FAIL_TO_PASS, a test passing there
 * must still pass (PASS_TO_PASS), and a test already failing at the base is not the crew's to carry.
 * A test the patch adds that fails, or a base test no longer reported as passed, is the crew's.
 */
export interface NamedResults {
  /** Full names (`suite > name`) of the tests reported as passed. */
  passed: string[];
  /** … and as failed (a node:test file that reported no test of its own counts as a failed one). */
  failed: string[];
}

/** The report's tests by outcome; skipped ones are neither (a skip is not a pass). */
export function namedResults(
  cases: readonly TestCase[],
  o: { format: SealedResultsConfig['format']; cwd: string },
): NamedResults {
  const passed: string[] = [];
  const failed: string[] = [];
  for (const c of cases) {
    // A file entry of `node --test`: the file ended before its tests reported (never a pass).
    const file = o.format === 'node-test' && fileEntry(c, o.cwd);
    if (c.status === 'passed' && !file) passed.push(fullName(c));
    else if (c.status === 'failed' || file) failed.push(fullName(c));
  }
  return { passed, failed };
}

export interface Difference {
  passed: boolean;
  failToPass: string[];
  passToPass: string[];
  passToPassCount: number;
  /** Failing with the patch and not at the base, or passing at the base and not reported passing now. */
  broken: string[];
  /** Failing at the base and still failing (not counted against the crew). */
  stillFailing: string[];
  reasons: string[];
}

const LIST = 10;
const list = (xs: readonly string[]) =>
  xs.slice(0, LIST).join('; ') + (xs.length > LIST ? `; … (${xs.length})` : '');

/**
 * Judges the run with the patch against the base's. `exits`: the two exit codes, for a command that
 * runs more than the tests (`npm test` = lint + tests): a base that exited 0 must still exit 0.
 */
export function judgeDifference(
  base: NamedResults,
  now: NamedResults,
  exits: { base: number | null; now: number | null },
): Difference {
  const nowPassed = new Set(now.passed);
  const baseFailed = new Set(base.failed);
  const basePassed = new Set(base.passed);
  const uniq = (xs: Iterable<string>) => [...new Set(xs)];
  const failToPass = uniq(base.failed.filter((n) => nowPassed.has(n) && !basePassed.has(n)));
  const passToPass = uniq(base.passed.filter((n) => nowPassed.has(n)));
  const lost = uniq(base.passed.filter((n) => !nowPassed.has(n)));
  const newlyFailing = uniq(now.failed.filter((n) => !baseFailed.has(n) && !lost.includes(n)));
  const stillFailing = uniq(base.failed.filter((n) => !nowPassed.has(n)));
  const reasons: string[] = [];
  if (lost.length) reasons.push(`${lost.length} test(s) passing at the base no longer pass: ${list(lost)}`);
  if (newlyFailing.length)
    reasons.push(`${newlyFailing.length} test(s) fail that did not fail at the base: ${list(newlyFailing)}`);
  if (!now.passed.length && !now.failed.length) reasons.push('the run reported no test');
  const exitRegressed = exits.base === 0 && exits.now !== 0;
  if (exitRegressed && !lost.length && !newlyFailing.length)
    reasons.push(
      `the command exited with ${exits.now ?? 'no code'} though it exited 0 at the base and no named test failed (a step besides the tests failed)`,
    );
  return {
    passed: reasons.length === 0,
    failToPass: failToPass.slice(0, MAX_NAMES),
    passToPass: passToPass.slice(0, MAX_NAMES),
    passToPassCount: passToPass.length,
    broken: [...lost, ...newlyFailing].slice(0, MAX_NAMES),
    stillFailing,
    reasons,
  };
}

/** The sentence a passed verdict carries: what the patch turned and what stayed failing. */
export function differenceSummary(d: Difference): string {
  const parts = [
    `${d.failToPass.length} test(s) failing at the base now pass${d.failToPass.length ? ` (${list(d.failToPass)})` : ''}`,
    `${d.passToPassCount} passing at the base still pass`,
  ];
  if (d.stillFailing.length)
    parts.push(
      `${d.stillFailing.length} failing at the base still fail (not counted against the crew): ${list(d.stillFailing)}`,
    );
  return parts.join('; ');
}
