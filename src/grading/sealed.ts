import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { childEnv } from '../process/env.js';
import { runProcess } from '../process/run.js';
import { randomBytes } from 'node:crypto';
import { SchoolError } from '../errors.js';
import { redactText } from '../security/redact.js';
import type { Bookbag } from '../bookbag/schema.js';
import type { JudgeFinding } from './verdict.js';
import { applyPatch, git, tampering } from './sealed-patch.js';

/**
 * Sealed tests: a command the student never saw, run by the grader on the crew's patch applied to a
 * *fresh* worktree of the repository at the recorded base commit. Nothing the student wrote into its
 * own worktree or bookbag (a fake "passed", a doctored log) reaches this worktree: only the diff
 * does, and the verdict comes from the command's exit code.
 *
 * The suite stays sealed: its files come from `grading.sealedDir`, a directory outside the
 * repository, copied next to (never into) the checkout and named by `{sealed}` in the command; the patch is applied by git to the fresh checkout and what git changed is
 * listed back from it (./sealed-patch.ts): a path in `grading.sealedProtect` (say `package.json`,
 * whose test script a command like `npm test` would run), a symlink out of the checkout, a
 * submodule or a `.gitattributes` is tampering, and nothing runs; and the command runs with the
 * base environment only, no token.
 *
 * Nothing tells the code under test that it is being judged: no marker variable, no "sealed" in the
 * paths of the checkout or the suite's copy. It can still guess (a crew's own runs carry its
 * SCHOOL_* variables, this one does not), which is why a judge passes on named results.
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
}

const TAIL = 1500;

function tail(text: string): string {
  const t = redactText(text).trim();
  return t.length > TAIL ? `…${t.slice(-TAIL)}` : t;
}

/** Runs the sealed tests; throws SealedTestsError when the grader itself cannot set them up. */
export async function runSealedTests(o: SealedOptions): Promise<JudgeFinding> {
  const repo = resolve(o.repoPath);
  const tmp = mkdtempSync(join(tmpdir(), 'school-'));
  // Unique basename: git names the worktree admin dir after it, and graders run concurrently.
  const wt = join(
    tmp,
    `wt-${o.bookbag.crewId.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(3).toString('hex')}`,
  );
  const fail = (code: string, reasons: string[]): JudgeFinding => ({
    judge: 'sealed',
    passed: false,
    code,
    reasons,
    score: 0,
  });
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
      const applied = await applyPatch(wt, patch, o.bookbag.baseSha);
      if (!applied.ok) {
        return fail('patch_does_not_apply', [
          `the crew's diff does not apply at base ${o.bookbag.baseSha}: ${tail(applied.output)}`,
        ]);
      }
      const tampered = tampering(wt, applied.changes, o.protect ?? []);
      if (tampered.length)
        return fail('sealed_tests_tampered', [...tampered, 'the sealed tests did not run']);
    }
    let sealed: string | undefined;
    if (o.sealedDir) {
      sealed = join(tmp, 'suite');
      cpSync(resolve(o.sealedDir), sealed, { recursive: true });
    }
    const argv = o.argv.map((a) => (sealed ? a.split('{sealed}').join(sealed) : a));
    const run = await runProcess(argv, {
      cwd: wt,
      timeoutMs: o.timeoutMs,
      env: childEnv(),
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
