import { resolve } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { SchoolError } from '../errors.js';
import { configSource } from '../config/source.js';
import { patchFiles, type PatchFile } from '../process/patch-files.js';
import { runGit } from '../process/git.js';
import { fencesName, protectedPaths } from '../delivery/protected-paths.js';
import { diffFiles } from './rubric.js';
import { testSurface } from './test-surface.js';
import type { JudgeFinding } from './verdict.js';

/**
 * The policy judge (docs/grading.md): what a patch may not change whatever the tests say, run on
 * every crew after verification and before the sealed tests and the reviewer, with a reviewer
 * configured too. Over the patch as git applies it at its base (src/process/patch-files.ts):
 *
 * - `protected_path`: it touches a protected path (src/delivery/protected-paths.ts) that neither
 *   the issue's fences nor `grading.allowProtected` name;
 * - `tests_changed`: it modifies, renames, deletes or skips a test file the base has, or changes a
 *   file that defines how tests run (./test-surface.ts; content-aware for package.json and the
 *   Python and Cargo manifests). The base owns what "passed" means (SWE-bench's rule); tests the
 *   patch adds are welcome. The issue's fences naming the files, or `grading.allowTestChanges`,
 *   let the change through `policy_flagged`: the verdict's reasons carry it to the reviewer's
 *   verdict and the board.
 */
export interface PolicyInput {
  repoPath: string;
  baseSha: string;
  diff: string;
  fences: readonly string[];
  grading: Pick<
    SchoolConfig['grading'],
    'testPatterns' | 'testDefinitions' | 'allowTestChanges' | 'allowProtected'
  >;
  /** The absolute path of the school's config file, when it was loaded from one. */
  configFile?: string | undefined;
  /**
   * A revision crew's repository base (the first crew's): a test its own base has that this one
   * lacks is the school's delivered work, not the repository's, and may be changed.
   */
  originalBase?: string;
}

const ZERO = /^0+$/;

/**
 * The repository lacks the crew's base commit (a shallow checkout): the judge cannot do its work.
 * A grader failure, retried — never a verdict about the student.
 */
export class PolicyBaseMissingError extends SchoolError {
  override readonly code = 'policy-base-missing';
  constructor(message: string) {
    super(message);
    this.name = 'PolicyBaseMissingError';
  }
}

export async function policyFinding(o: PolicyInput): Promise<JudgeFinding> {
  // A crew that changed nothing (a research or triage report) touches nothing: no git to ask.
  if (o.diff.length === 0) return passed();
  const base = await runGit(['cat-file', '-e', `${o.baseSha}^{commit}`], { cwd: resolve(o.repoPath) });
  if (base.exitCode !== 0)
    throw new PolicyBaseMissingError(
      `the policy judge could not read base ${o.baseSha} in ${o.repoPath}: the repository lacks that commit (fetch it, or check out with enough history); the grading job is retried`,
    );
  const touched = await patchFiles(resolve(o.repoPath), o.baseSha, o.diff);
  if (!touched.ok)
    return fail('patch_does_not_apply', [
      `git cannot apply the patch at its base: ${touched.output.trim().slice(0, 300)}`,
    ]);
  const guard = protectedPaths({
    repoPath: o.repoPath,
    configFile: o.configFile,
    allow: o.grading.allowProtected,
    fences: o.fences,
  });
  const surface = testSurface({ tests: o.grading.testPatterns, definitions: o.grading.testDefinitions });
  const isSurface = (p: string): boolean => surface.kind(p) !== undefined;

  const refusedProtected = touched.files.map((f) => f.path).filter((p) => guard.refused(p));
  const allowedProtected = touched.files
    .map((f) => f.path)
    .filter((p) => guard.isProtected(p) && !guard.refused(p));

  const renamedTo = new Map(
    diffFiles(touched.files)
      .filter((d) => d.oldPath !== undefined)
      .map((d) => [d.oldPath!, d.path]),
  );
  const changes: Array<{ path: string; what: string }> = [];
  for (const f of touched.files) {
    const kind = surface.kind(f.path);
    if (kind === 'test') {
      // A test the patch adds is not the base's: only changes to the base's tests count.
      if (ZERO.test(f.oldSha)) continue;
      // A revision may change the tests the school delivered: only the repository's own count.
      if (o.originalBase && !(await hasPath(o.repoPath, o.originalBase, f.path))) continue;
      changes.push({ path: f.path, what: await testChange(o.repoPath, f, renamedTo.get(f.path)) });
    } else if (kind === 'definition') {
      const before = await blob(o.repoPath, f.oldSha, f.oldMode);
      const after = await blob(o.repoPath, f.newSha, f.newMode);
      if (surface.definitionChanged(f.path, before, after))
        changes.push({ path: f.path, what: describeDefinition(f) });
    }
  }
  // A CI config is protected and a test definition: what lets it through as one (fences, or
  // grading.allowProtected) lets it through as the other.
  const fencedOrAllowed = (p: string): boolean =>
    o.grading.allowTestChanges ||
    fencesName(p, o.fences, isSurface) ||
    (guard.isProtected(p) && !guard.refused(p));
  const refusedTests = changes.filter((c) => !fencedOrAllowed(c.path));
  const allowedTests = changes.filter((c) => fencedOrAllowed(c.path));
  const list = (cs: Array<{ path: string; what: string }>): string =>
    cs
      .slice(0, 10)
      .map((c) => `${c.path} (${c.what})`)
      .join(', ') + (cs.length > 10 ? ` and ${cs.length - 10} more` : '');

  if (refusedProtected.length > 0) {
    const reasons = [
      `the patch changes protected path(s) ${refusedProtected.slice(0, 10).join(', ')}: workflows, the school's configuration, git attributes and package-manager or CI settings run with the repository's trust once pushed. Leave them out of the change; an issue that must change them names them in its fences, or grading.allowProtected does.`,
    ];
    if (refusedTests.length > 0)
      reasons.push(`it also changes the base's tests or test definitions: ${list(refusedTests)}`);
    return fail('protected_path', reasons);
  }
  if (refusedTests.length > 0)
    return fail('tests_changed', [
      `the patch changes the base's tests or how they run: ${list(refusedTests)}. The base's tests decide what "passed" means; fix the code and add new tests instead. An issue about the tests themselves names these files in its fences, or grading.allowTestChanges: true lets such changes through for a reviewer to check.`,
    ]);
  const flags: string[] = [];
  if (allowedTests.length > 0)
    flags.push(
      `flagged for review: changes the base's tests or how they run, allowed by ${o.grading.allowTestChanges ? 'grading.allowTestChanges' : allowedTests.some((c) => guard.isProtected(c.path)) ? "the issue's fences or grading.allowProtected" : "the issue's fences"}: ${list(allowedTests)}`,
    );
  if (allowedProtected.length > 0)
    flags.push(
      `flagged for review: changes protected path(s), allowed by the issue's fences or grading.allowProtected: ${allowedProtected.slice(0, 10).join(', ')}`,
    );
  if (flags.length > 0)
    return { judge: 'policy', passed: true, code: 'policy_flagged', reasons: flags, score: 1 };
  return passed();
}

function passed(): JudgeFinding {
  return {
    judge: 'policy',
    passed: true,
    code: 'policy_passed',
    reasons: ["no protected path touched; the base's tests and test definitions unchanged"],
    score: 1,
  };
}

function fail(code: string, reasons: string[]): JudgeFinding {
  return { judge: 'policy', passed: false, code, reasons, score: 0 };
}

/** A blob's text, or undefined for a side that does not exist (or is a submodule's commit). */
async function blob(repo: string, sha: string, mode: string): Promise<string | undefined> {
  if (ZERO.test(sha) || mode === '160000') return undefined;
  const r = await runGit(['cat-file', 'blob', sha], {
    cwd: repo,
    timeoutMs: 60_000,
    maxOutputBytes: 64 << 20,
  });
  // A blob git cannot give back cannot be shown unchanged: read as a change (fail closed).
  if (r.exitCode !== 0 || r.overflowed) return `\0unreadable ${sha}`;
  return r.stdout.toString('utf8');
}

/**
 * Skipping a test, as the runners the test surface knows spell it: node:test and the JS runners
 * (`{ skip: true }`, `.skip(`, `.todo(`, `xit(`, `.only(` which skips the rest), pytest and unittest,
 * Go (`t.Skip`), Rust (`#[ignore]`), RSpec (`skip`, `pending`, `xit`).
 */
const SKIP =
  /\bskip\s*:\s*(true|['"`])|\btodo\s*:\s*(true|['"`])|\.(skip|todo|only)\s*\(|\b(xit|xtest|xdescribe|xcontext|xspecify)\s*\(|@pytest\.mark\.(skip|skipif|xfail)|@unittest\.(skip|expectedFailure)|\bpytest\.skip\(|\bt\.Skip(Now|f)?\(|#\[ignore\b|^\s*(skip|pending)\b/m;

async function testChange(repo: string, f: PatchFile, renamedTo: string | undefined): Promise<string> {
  if (renamedTo !== undefined) return `renamed to ${renamedTo}`;
  if (ZERO.test(f.newSha)) return 'deleted';
  const before = (await blob(repo, f.oldSha, f.oldMode)) ?? '';
  const after = (await blob(repo, f.newSha, f.newMode)) ?? '';
  const had = new Set(before.split('\n'));
  const added = after.split('\n').filter((l) => !had.has(l));
  return added.some((l) => SKIP.test(l)) ? 'modified: marks tests skipped' : 'modified';
}

function describeDefinition(f: PatchFile): string {
  if (ZERO.test(f.oldSha)) return 'added';
  if (ZERO.test(f.newSha)) return 'deleted';
  return /(^|\/)package\.json$/.test(f.path) ? 'its scripts or test-runner settings changed' : 'changed';
}

/** The policy judge's input from the grader's context. */
export function policyInput(
  config: SchoolConfig,
  o: { baseSha: string; diff: string; fences: readonly string[] },
): PolicyInput {
  return {
    repoPath: config.repoPath,
    baseSha: o.baseSha,
    diff: o.diff,
    fences: o.fences,
    grading: config.grading,
    configFile: configSource(config),
  };
}

/**
 * What a configured reviewer is told of a change the policy judge let through flagged: appended to
 * the brief it judges against, so the changed tests or protected paths are weighed, not missed.
 */
export function reviewerNote(findings: readonly JudgeFinding[]): string {
  const flags = findings
    .filter((f) => f.judge === 'policy' && f.code === 'policy_flagged')
    .flatMap((f) => f.reasons);
  if (flags.length === 0) return '';
  return `\n\n## Flagged by the school's policy judge\n\n${flags.map((f) => `- ${f}`).join('\n')}\n\nCheck that these changes serve the issue and do not weaken what the tests check.\n`;
}

/** Whether `path` exists at commit `sha` of the repository. */
async function hasPath(repoPath: string, sha: string, path: string): Promise<boolean> {
  const r = await runGit(['cat-file', '-e', `${sha}:${path}`], { cwd: resolve(repoPath) });
  return r.exitCode === 0;
}
