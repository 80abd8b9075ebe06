import type { SchoolConfig } from '../config/schema.js';
import type { JudgeFinding } from './verdict.js';
import { matchesAny } from '../curriculum/glob.js';
import type { PatchFile, PatchFiles } from '../process/patch-files.js';

/**
 * The built-in reviewer (docs/architecture.md): a rubric over the crew's patch as git applies it at
 * its base (src/process/patch-files.ts) — not the file list a crew reports about itself, and not the
 * patch's text, whose headers quote unusual paths and name renames apart from where they land.
 * Checks: the patch is not empty, every touched path (both sides of a rename) lies inside the
 * issue's fences, and the change stays within the size limits of `grading.rubric`. What a patch may
 * not change at all — the base's tests and test definitions, protected paths — is the policy
 * judge's (./policy.ts), which runs before the rubric and before any configured reviewer.
 */
export interface DiffFile {
  path: string;
  /** Where a moved file came from (its blob unchanged under a new path). */
  oldPath?: string;
  deleted: boolean;
  added: number;
  removed: number;
}

/**
 * The files of a patch as git lists them, with a move (a path deleted and its unchanged blob added
 * under another path) counted as one file of no changed lines, as `git diff -M` shows it.
 */
export function diffFiles(touched: readonly PatchFile[]): DiffFile[] {
  const ZERO = /^0+$/;
  const added = new Map<string, PatchFile[]>();
  for (const f of touched)
    if (f.status === 'A' && !ZERO.test(f.newSha)) added.set(f.newSha, [...(added.get(f.newSha) ?? []), f]);
  const movedTo = new Map<PatchFile, PatchFile>();
  for (const f of touched) {
    if (f.status !== 'D' || ZERO.test(f.oldSha)) continue;
    const to = added.get(f.oldSha)?.shift();
    if (to) movedTo.set(to, f);
  }
  const moved = new Set(movedTo.values());
  return touched
    .filter((f) => !moved.has(f))
    .map((f) => {
      const from = movedTo.get(f);
      return from
        ? { path: f.path, oldPath: from.path, deleted: false, added: 0, removed: 0 }
        : { path: f.path, deleted: f.status === 'D', added: f.added, removed: f.removed };
    });
}

export function insideFences(path: string, fences: readonly string[]): boolean {
  if (fences.length === 0) return true;
  return matchesAny(path, fences);
}

/**
 * `role` other than `coding` (research, triage, docs — the bot classroom): the work is the report,
 * so a non-empty report is required instead of a non-empty diff; a diff, if any, is still checked.
 */
export function rubricFinding(
  /** What the patch touches, from `patchFiles` (git's listing), or git's refusal to apply it. */
  touched: PatchFiles,
  fences: readonly string[],
  limits: SchoolConfig['grading']['rubric'],
  crew: { role?: string; report?: string | undefined } = {},
): JudgeFinding {
  const coding = (crew.role ?? 'coding') === 'coding';
  const fail = (code: string, reasons: string[]): JudgeFinding => ({
    judge: 'rubric',
    passed: false,
    code,
    reasons,
    score: 0,
  });
  if (!touched.ok)
    return fail('patch_does_not_apply', [
      `git cannot apply the patch at its base: ${touched.output.trim().slice(0, 300)}`,
    ]);
  const files = diffFiles(touched.files);
  if (!coding) {
    if (!crew.report?.trim()) {
      return fail('report_missing', [`a ${crew.role} crew must leave a report (report.md); it left none`]);
    }
    if (files.length === 0) {
      return {
        judge: 'rubric',
        passed: true,
        code: 'rubric_passed',
        reasons: [`${crew.role} crew: report of ${crew.report.trim().length} characters, no code change`],
        score: 1,
      };
    }
  } else if (files.length === 0) return fail('empty_diff', ['the crew changed nothing']);
  const outside = files.flatMap((f) =>
    [f.path, f.oldPath].filter((p): p is string => !!p && !insideFences(p, fences)),
  );
  if (outside.length > 0) {
    const unique = [...new Set(outside)];
    return fail('outside_fences', [
      `${unique.length} path(s) outside the issue's fences (${fences.join(', ')}): ${unique.slice(0, 10).join(', ')}`,
    ]);
  }
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
    reasons: [`${files.length} file(s), ${lines} line(s), inside fences`],
    score: 1,
  };
}
