import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { globMatcher } from '../curriculum/glob.js';
import { childEnv, type ChildEnv } from '../process/env.js';
import { runGit } from '../process/git.js';
import { runProcess } from '../process/run.js';
import { randomBytes } from 'node:crypto';
import { SchoolError } from '../errors.js';
import { redactText } from '../security/redact.js';
import type { Bookbag } from '../bookbag/schema.js';
import type { JudgeFinding } from './verdict.js';

/**
 * Sealed tests: a command the student never saw, run by the grader on the crew's patch applied to a
 * *fresh* worktree of the repository at the recorded base commit. Nothing the student wrote into its
 * own worktree or bookbag (a fake "passed", a doctored log) reaches this worktree: only the diff
 * does, and the verdict comes from the command's exit code.
 *
 * The suite stays sealed: its files come from `grading.sealedDir`, a directory outside the
 * repository, copied next to (never into) the checkout and named by `{sealed}` in the command and
 * `SCHOOL_SEALED_DIR`; a patch that touches a path in `grading.sealedProtect` (say `package.json`,
 * whose test script a command like `npm test` would run) is rejected as tampering before anything
 * runs; and the command runs with the base environment only, no token.
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
  /**
   * How the suite is started: the sandbox, with the patched worktree and the sealed copy visible
   * read-only (and nothing of the grader's checkout, not even the git directory behind the worktree).
   */
  confine?: (
    argv: readonly string[],
    env: ChildEnv,
    view: { cwd: string; readOnly: string[] },
  ) => Promise<{ argv: string[]; env: ChildEnv }>;
}

/** Paths a unified git diff touches (both sides of renames), from its `diff --git` headers. */
export function patchPaths(diff: string): string[] {
  const paths = new Set<string>();
  for (const m of diff.matchAll(/^diff --git "?a\/(.+?)"? "?b\/(.+?)"?$/gm)) {
    paths.add(m[1]!);
    paths.add(m[2]!);
  }
  for (const m of diff.matchAll(/^(?:---|\+\+\+) "?[ab]\/(.+?)"?$/gm)) paths.add(m[1]!);
  return [...paths];
}

const TAIL = 1500;

async function git(cwd: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  const r = await runGit(args, { cwd, timeoutMs: 120_000 });
  return {
    ok: r.exitCode === 0,
    output: (r.spawnError ?? '') + r.stderr.toString('utf8') + r.stdout.toString('utf8'),
  };
}

function tail(text: string): string {
  const t = redactText(text).trim();
  return t.length > TAIL ? `…${t.slice(-TAIL)}` : t;
}

/** Runs the sealed tests; throws SealedTestsError when the grader itself cannot set them up. */
export async function runSealedTests(o: SealedOptions): Promise<JudgeFinding> {
  const repo = resolve(o.repoPath);
  const tmp = mkdtempSync(join(tmpdir(), 'school-sealed-'));
  // Unique basename: git names the worktree admin dir after it, and graders run concurrently.
  const wt = join(
    tmp,
    `sealed-${o.bookbag.crewId.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(3).toString('hex')}`,
  );
  const fail = (code: string, reasons: string[]): JudgeFinding => ({
    judge: 'sealed',
    passed: false,
    code,
    reasons,
    score: 0,
  });
  const protect = (o.protect ?? []).map(globMatcher);
  const touched = patchPaths(o.diff).filter((p) => protect.some((m) => m(p)));
  if (touched.length) {
    return fail('sealed_tests_tampered', [
      `the patch changes sealed path(s) ${touched.slice(0, 10).join(', ')} (grading.sealedProtect); the sealed tests did not run`,
    ]);
  }
  const add = await git(repo, ['worktree', 'add', '--detach', '--quiet', wt, o.bookbag.baseSha]);
  if (!add.ok) {
    rmSync(tmp, { recursive: true, force: true });
    throw new SealedTestsError(
      `sealed tests: could not create a worktree of ${repo} at base ${o.bookbag.baseSha}: ${tail(add.output)}`,
    );
  }
  try {
    if (o.diff.trim() !== '') {
      const patch = join(tmp, 'crew.patch');
      writeFileSync(patch, o.diff);
      const applied = await git(wt, ['apply', '--binary', '--whitespace=nowarn', patch]);
      if (!applied.ok) {
        return fail('patch_does_not_apply', [
          `the crew's diff does not apply at base ${o.bookbag.baseSha}: ${tail(applied.output)}`,
        ]);
      }
    }
    let sealed: string | undefined;
    if (o.sealedDir) {
      sealed = join(tmp, 'sealed');
      cpSync(resolve(o.sealedDir), sealed, { recursive: true });
    }
    const argv = o.argv.map((a) => (sealed ? a.split('{sealed}').join(sealed) : a));
    const env = childEnv({ set: { SCHOOL_SEALED_TESTS: '1', SCHOOL_SEALED_DIR: sealed } });
    const started = o.confine
      ? await o.confine(argv, env, { cwd: wt, readOnly: [wt, ...(sealed ? [sealed] : [])] })
      : { argv, env };
    const run = await runProcess(started.argv, {
      cwd: wt,
      timeoutMs: o.timeoutMs,
      env: started.env,
      maxOutputBytes: 1_000_000,
    });
    const r = { ...run, stdout: run.stdout.toString('utf8'), stderr: run.stderr.toString('utf8') };
    if (r.spawnError)
      throw new SealedTestsError(`sealed tests: could not start ${o.argv[0]}: ${r.spawnError}`);
    if (r.timedOut) return fail('sealed_tests_timed_out', [`sealed tests timed out after ${o.timeoutMs} ms`]);
    if (r.exitCode !== 0) {
      return fail('sealed_tests_failed', [
        `sealed tests exited with ${r.exitCode ?? r.signal}`,
        tail(r.stdout + r.stderr),
      ]);
    }
    return {
      judge: 'sealed',
      passed: true,
      code: 'sealed_tests_passed',
      reasons: ['sealed tests passed'],
      score: 1,
    };
  } finally {
    await git(repo, ['worktree', 'remove', '--force', wt]);
    rmSync(tmp, { recursive: true, force: true });
    await git(repo, ['worktree', 'prune']);
  }
}
