import type { SchoolConfig } from '../config/schema.js';
import type { JudgeFinding } from './verdict.js';
import { matchesAny } from '../curriculum/glob.js';

/**
 * The built-in reviewer (docs/architecture.md): a rubric over the crew's diff. The diff is the ground truth —
 * not the file list a crew reports about itself. Checks: the diff is not empty, every touched path
 * lies inside the fences, no test file is deleted, and the change stays within the size
 * limits of `grading.rubric`.
 */
export interface DiffFile {
  path: string;
  oldPath?: string;
  deleted: boolean;
  added: number;
  removed: number;
}

/** Parses a `git diff` into its files and line counts. */
export function parseDiff(diff: string): DiffFile[] {
  const files: DiffFile[] = [];
  let cur: DiffFile | undefined;
  let inHunk = false;
  for (const line of diff.split('\n')) {
    const head = /^diff --git a\/(.+?) b\/(.+)$/.exec(line);
    if (head) {
      cur = { path: head[2]!, oldPath: head[1]!, deleted: false, added: 0, removed: 0 };
      files.push(cur);
      inHunk = false;
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('@@')) inHunk = true;
    else if (!inHunk && line.startsWith('deleted file mode')) cur.deleted = true;
    else if (!inHunk && line.startsWith('rename to ')) cur.path = line.slice('rename to '.length);
    else if (inHunk && line.startsWith('+')) cur.added++;
    else if (inHunk && line.startsWith('-')) cur.removed++;
  }
  return files;
}

export function insideFences(path: string, fences: readonly string[]): boolean {
  if (fences.length === 0) return true;
  return matchesAny(path, fences);
}

const TEST_PATH =
  /(^|\/)(test|tests|__tests__|spec|specs)\/|\.(test|spec)\.[A-Za-z0-9]+$|_test\.(go|py|rb)$|(^|\/)test_[^/]+\.py$/;

export function isTestPath(path: string): boolean {
  return TEST_PATH.test(path);
}

/**
 * `role` other than `coding` (research, triage, docs — the bot classroom): the work is the report,
 * so a non-empty report is required instead of a non-empty diff; a diff, if any, is still checked.
 */
export function rubricFinding(
  diff: string,
  fences: readonly string[],
  limits: SchoolConfig['grading']['rubric'],
  crew: { role?: string; report?: string | undefined } = {},
): JudgeFinding {
  const files = parseDiff(diff);
  const coding = (crew.role ?? 'coding') === 'coding';
  const fail = (code: string, reasons: string[]): JudgeFinding => ({
    judge: 'rubric',
    passed: false,
    code,
    reasons,
    score: 0,
  });
  if (!coding) {
    if (!crew.report?.trim()) {
      return fail('report_missing', [`a ${crew.role} crew must leave a report (report.md); it left none`]);
    }
    if (diff.trim() === '' || files.length === 0) {
      return {
        judge: 'rubric',
        passed: true,
        code: 'rubric_passed',
        reasons: [`${crew.role} crew: report of ${crew.report.trim().length} characters, no code change`],
        score: 1,
      };
    }
  } else if (diff.trim() === '' || files.length === 0)
    return fail('empty_diff', ['the crew changed nothing']);
  const outside = files.flatMap((f) =>
    [f.path, f.oldPath].filter((p): p is string => !!p && !insideFences(p, fences)),
  );
  if (outside.length > 0) {
    const unique = [...new Set(outside)];
    return fail('outside_fences', [
      `${unique.length} path(s) outside the issue's fences (${fences.join(', ')}): ${unique.slice(0, 10).join(', ')}`,
    ]);
  }
  const deletedTests = files.filter((f) => f.deleted && isTestPath(f.path)).map((f) => f.path);
  if (deletedTests.length > 0)
    return fail('deleted_tests', [`deletes test file(s): ${deletedTests.join(', ')}`]);
  const lines = files.reduce((n, f) => n + f.added + f.removed, 0);
  if (files.length > limits.maxChangedFiles) {
    return fail('too_many_files', [`${files.length} files changed; the limit is ${limits.maxChangedFiles}`]);
  }
  if (lines > limits.maxChangedLines) {
    return fail('too_many_lines', [`${lines} lines changed; the limit is ${limits.maxChangedLines}`]);
  }
  return {
    judge: 'rubric',
    passed: true,
    code: 'rubric_passed',
    reasons: [`${files.length} file(s), ${lines} line(s), inside fences, no tests deleted`],
    score: 1,
  };
}
