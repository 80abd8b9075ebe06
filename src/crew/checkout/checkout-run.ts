import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { CleanCheckoutOptions } from '../../grading/judge-verify.js';
import { LockError, SchoolError } from '../../errors.js';
import { childEnv } from '../../process/env.js';
import { runGit } from '../../process/git.js';
import { runProcess, type RunResult } from '../../process/run.js';
import type { Confined } from '../../sandbox/index.js';
import { withLock } from '../../state/lock.js';
import { gitCommonDir } from './git-guard.js';
import { removeTree } from './slot-reset.js';

/**
 * The pieces a verification on a clean checkout is made of (./clean-checkout.ts, ./clean-install.ts,
 * ./base-run.ts): git, a detached checkout of the base, a confined command run in it with its output
 * in the crew's log, the installed dependencies copied in, and one-at-a-time work under a lock that
 * may be held as long as an install runs.
 */

/** What a process appended to `file` from `from` on (its last 64 KiB): its own output. */
export function logSince(file: string, from: number): string {
  if (!existsSync(file)) return '';
  const size = statSync(file).size;
  // A capped log cut under the process (it shrank): what is kept of it is the tail.
  const start = Math.max(size < from ? 0 : from, size - 65_536);
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export const logSize = (file: string) => (existsSync(file) ? statSync(file).size : 0);

/** The last `max` characters of a log, trimmed: what an alert quotes. */
export function logTail(text: string, max = 800): string {
  const t = text.trim();
  return t.length > max ? `…${t.slice(-max)}` : t;
}

export type Git = (
  cwd: string,
  args: string[],
) => Promise<{ ok: boolean; output: string; stdout: Buffer; stderr: string }>;
export const git: Git = async (cwd, args) => {
  const r = await runGit(args, { cwd, timeoutMs: 300_000 });
  return {
    ok: r.exitCode === 0,
    output: (r.spawnError ?? '') + r.stderr.toString('utf8') + r.stdout.toString('utf8'),
    stdout: r.stdout,
    stderr: (r.spawnError ?? '') + r.stderr.toString('utf8'),
  };
};

/** The base could not be checked out: the school's failure (its repository lacks the commit). */
export class CheckoutError extends SchoolError {
  override readonly code = 'checkout';
  constructor(message: string) {
    super(message);
    this.name = 'CheckoutError';
  }
}

/** A detached worktree at `base` under `dir`, made under the lock `ensureWorktree` takes. */
export async function addCheckout(repo: string, dir: string, base: string): Promise<string> {
  const wt = join(dir, `checkout-${randomBytes(4).toString('hex')}`);
  const common = await gitCommonDir(repo);
  const add = await withLock(join(common, 'school-worktree-admin'), () =>
    git(repo, ['worktree', 'add', '--detach', '--quiet', wt, base]),
  );
  if (!add.ok)
    throw new CheckoutError(`could not check out the base ${base.slice(0, 12)}: ${add.output.trim()}`);
  return wt;
}

export async function removeCheckout(repo: string, wt: string): Promise<void> {
  const removed = await git(repo, ['worktree', 'remove', '--force', wt]);
  // A patch may hold paths deeper than PATH_MAX, where git and rmSync stop: removeTree does not.
  await removeTree(wt);
  if (removed.ok) return;
  // Pruned under the lock `addCheckout` takes: a prune drops an entry another `worktree add` is making.
  const common = await gitCommonDir(repo);
  await withLock(join(common, 'school-worktree-admin'), () => git(repo, ['worktree', 'prune']));
}

/** A confined command run in the checkout, its output appended to the crew's log (capped). */
export function runInCheckout(
  started: Confined,
  wt: string,
  o: CleanCheckoutOptions,
  onSpawn?: (pid: number) => void,
): Promise<RunResult> {
  return runProcess(started.argv, {
    cwd: wt,
    env: started.env,
    log: { file: o.logFile, maxBytes: o.config.dispatch.logMaxBytes },
    timeoutMs: o.timeoutMs,
    graceMs: o.graceMs,
    onSpawn,
  });
}

/** Whether `cp --reflink=always` works under `dir` (btrfs, XFS): asked once per directory. */
const reflinkable = new Map<string, Promise<boolean>>();
function reflinks(dir: string): Promise<boolean> {
  let known = reflinkable.get(dir);
  if (!known) {
    known = (async () => {
      const probe = join(dir, `.reflink-probe-${randomBytes(4).toString('hex')}`);
      try {
        writeFileSync(`${probe}.a`, 'x');
        const r = await runProcess(['cp', '--reflink=always', '--', `${probe}.a`, `${probe}.b`], {
          cwd: dir,
          env: childEnv(),
          timeoutMs: 30_000,
        });
        return r.exitCode === 0;
      } finally {
        rmSync(`${probe}.a`, { force: true });
        rmSync(`${probe}.b`, { force: true });
      }
    })();
    reflinkable.set(dir, known);
  }
  return known;
}

/** What the sandbox is told to show of the dependencies (nothing when they were copied in). */
export interface ShownDependencies {
  readOnlyAt: Array<{ source: string; path: string }>;
  writable: string[];
}

/** The tool cache directory under an install path (find-cache-dir: eslint, babel, ava, nyc, webpack). */
export const TOOL_CACHE = '.cache';

/**
 * The installed dependencies (`install.paths` of the cache `deps`) in the checkout, writable where
 * tools write and gone with the checkout, so nothing the run writes reaches the cache or the next
 * crew:
 *  - where the file system shares blocks (`cp --reflink=always`: btrfs, XFS), a copy, writable
 *    throughout, that costs no data;
 *  - elsewhere (ext4) a copy of a large `node_modules` costs seconds per verification, so the cache is
 *    shown read-only at its path and its tool cache directory (`node_modules/.cache`, where eslint's
 *    `--cache`, babel, ava and nyc write) is a fresh writable directory of the run's;
 *  - unconfined (`sandbox.kind: none`), a copy: nothing else keeps the run's writes out of the cache.
 * bubblewrap's overlay (`--overlay-src`, 0.11 and later) would make all of it writable for free; the
 * bubblewrap of the machines we run on (0.8) has none.
 */
export async function showDependencies(
  deps: string,
  paths: readonly string[],
  wt: string,
  confined: boolean,
): Promise<ShownDependencies> {
  const shown: ShownDependencies = { readOnlyAt: [], writable: [] };
  const copy = !confined || (await reflinks(dirname(deps)));
  for (const p of paths) {
    const from = join(deps, p);
    if (!existsSync(from)) continue;
    const to = join(wt, p);
    mkdirSync(dirname(to), { recursive: true });
    if (copy) {
      const r = await runProcess(['cp', '-a', '--reflink=auto', '--', from, to], {
        cwd: wt,
        env: childEnv(),
        timeoutMs: 600_000,
      });
      if (r.exitCode !== 0)
        throw new CheckoutError(
          `could not copy the installed ${p} into the checkout: ${(r.spawnError ?? r.stderr.toString('utf8')).trim()}`,
        );
      continue;
    }
    // The mount points: the install path in the checkout, and its tool cache inside the cache (an
    // empty directory, covered in every run by that run's own).
    mkdirSync(to, { recursive: true });
    if (statSync(from).isDirectory()) {
      mkdirSync(join(from, TOOL_CACHE), { recursive: true });
      mkdirSync(join(to, TOOL_CACHE), { recursive: true });
      shown.writable.push(join(to, TOOL_CACHE));
    }
    shown.readOnlyAt.push({ source: from, path: to });
  }
  return shown;
}

/**
 * `fn` run by one process at a time for `target` (a lock file beside it): an install or a base run
 * that others of the same inputs wait for and then reuse. The shared lock gives up after two
 * minutes; an install may take longer, so a waiter keeps waiting up to `waitMs`.
 */
export async function singleFlight<T>(target: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  mkdirSync(dirname(target), { recursive: true });
  for (;;) {
    try {
      return await withLock(target, fn);
    } catch (e) {
      if (!(e instanceof LockError) || performance.now() - started > waitMs) throw e;
    }
  }
}
