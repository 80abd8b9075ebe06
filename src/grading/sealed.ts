import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { SchoolError } from '../errors.js';
import { redactText } from '../security/redact.js';
import type { Bookbag } from '../schemas/bookbag.js';
import { runCommand } from './run-command.js';
import type { JudgeFinding } from './verdict.js';

/**
 * Sealed tests (DESIGN §4): a command the student never saw, run by the grader on the crew's patch
 * applied to a *fresh* worktree of the repository at the recorded base commit. Nothing the student
 * wrote into its own worktree or bookbag (a fake "passed", a doctored log) reaches this worktree:
 * only the diff does, and the verdict comes from the command's exit code.
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
}

const TAIL = 1500;

async function git(cwd: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  const r = await runCommand(['git', ...args], {
    cwd,
    timeoutMs: 120_000,
    env: { GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
  });
  return { ok: r.exitCode === 0, output: (r.spawnError ?? '') + r.stderr + r.stdout };
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
    const r = await runCommand(o.argv, {
      cwd: wt,
      timeoutMs: o.timeoutMs,
      env: { SCHOOL_SEALED_TESTS: '1' },
    });
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
