import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CleanCheckoutOptions } from '../../grading/judge-verify.js';
import type { ChildEnv } from '../../process/env.js';
import { appendCapped } from '../../process/capped-log.js';
import { missingProgram, type MissingProgram } from '../../sandbox/index.js';
import { writeTextAtomic } from '../../state/atomic.js';
import {
  addCheckout,
  git,
  logSince,
  logSize,
  logTail,
  removeCheckout,
  runInCheckout,
  singleFlight,
} from './checkout-run.js';
import { removeTree } from './slot-reset.js';
import { SchoolError } from '../../errors.js';

/**
 * The dependencies of a base (`dispatch.install`), installed once per base, install command and
 * lockfile digest into `<depsRoot>/<key>/`, which every crew of the daemon (and the judge's runs)
 * share. One install per key at a time: the install runs under a lock beside the cache, and the
 * crews that waited for it take its result. A failed install is the school's failure, never the
 * crew's (docs/grading.md, "When the school fails"): it is remembered beside the cache for
 * `INSTALL_RETRY_MS`, so the crews of one cycle meet it at once instead of each retrying; the next
 * cycle after that tries once more, and a change of base or of `dispatch.install` is a new key.
 */

/** How long a failed install of the same inputs is not tried again (its crews wait for a cycle). */
export const INSTALL_RETRY_MS = 10 * 60_000;

/** The install failed; `missing` when a program it needed was not there (src/sandbox/not-found.ts). */
export class InstallFailedError extends SchoolError {
  override readonly code = 'install-failed';
  constructor(
    message: string,
    readonly missing?: MissingProgram,
  ) {
    super(message);
    this.name = 'InstallFailedError';
  }
}

/** The cache key: base, install command and the lockfiles' blobs at the base (one `ls-tree`). */
const keys = new Map<string, Promise<string>>();

export function depsKey(o: CleanCheckoutOptions): Promise<string> {
  const install = o.config.dispatch.install!;
  const id = `${resolve(o.config.repoPath)}\0${o.baseSha}\0${JSON.stringify(install)}`;
  let key = keys.get(id);
  if (!key) {
    key = git(o.config.repoPath, [
      'ls-tree',
      '-z',
      '--full-tree',
      o.baseSha,
      '--',
      ...install.lockfiles,
    ]).then((listed) => {
      if (!listed.ok) throw new Error(`could not read the lockfiles at the base: ${listed.output.trim()}`);
      return createHash('sha256').update(`${id}\0`).update(listed.stdout).digest('hex').slice(0, 32);
    });
    keys.set(id, key);
    key.catch(() => keys.delete(id));
  }
  return key;
}

interface Remembered {
  at: number;
  message: string;
  missing?: MissingProgram;
}

function remembered(file: string): Remembered | undefined {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Remembered;
    if (typeof r.at === 'number' && typeof r.message === 'string' && Date.now() - r.at < INSTALL_RETRY_MS)
      return r;
  } catch {
    // None, or unreadable: the install is tried.
  }
  return undefined;
}

/**
 * The installed dependencies for this base, made when missing: the install runs in a checkout of the
 * base, in the sandbox (its network: `sandbox.allow`), and what it produced (`install.paths`) is
 * moved into the cache by a rename, so no crew ever sees half of it.
 */
export async function installedDependencies(
  o: CleanCheckoutOptions,
  env: ChildEnv,
): Promise<string | undefined> {
  const install = o.config.dispatch.install;
  if (!install) return undefined;
  const key = await depsKey(o);
  const dir = join(o.depsRoot, key);
  if (existsSync(dir)) return dir;
  const failedFile = join(o.depsRoot, `${key}.failed.json`);
  const wait = Math.max(o.timeoutMs, 120_000) * 2;
  return singleFlight(join(o.depsRoot, key), wait, async () => {
    // Made by the crew this one waited for, or failed there a moment ago: theirs is the answer.
    if (existsSync(dir)) return dir;
    const before = remembered(failedFile);
    if (before) {
      appendCapped(
        o.logFile,
        `[school] the dependency install failed for this base ${Math.round((Date.now() - before.at) / 1000)} s ago; not tried again before ${new Date(before.at + INSTALL_RETRY_MS).toISOString()}\n`,
        o.config.dispatch.logMaxBytes,
      );
      throw new InstallFailedError(before.message, before.missing);
    }
    try {
      await install1(o, env, dir);
      rmSync(failedFile, { force: true });
      return dir;
    } catch (e) {
      if (e instanceof InstallFailedError)
        writeTextAtomic(
          failedFile,
          JSON.stringify({
            at: Date.now(),
            message: e.message,
            ...(e.missing ? { missing: e.missing } : {}),
          }),
        );
      throw e;
    }
  });
}

async function install1(o: CleanCheckoutOptions, env: ChildEnv, dir: string): Promise<void> {
  const install = o.config.dispatch.install!;
  mkdirSync(o.depsRoot, { recursive: true });
  const work = mkdtempSync(join(o.depsRoot, '.install-'));
  const repo = resolve(o.config.repoPath);
  const command = install.command.join(' ');
  const at = o.baseSha.slice(0, 12);
  try {
    const wt = await addCheckout(repo, work, o.baseSha);
    try {
      appendCapped(
        o.logFile,
        `[school] installing dependencies at the base: ${command}\n`,
        o.config.dispatch.logMaxBytes,
      );
      const from = logSize(o.logFile);
      const query = { command: install.command, hostPath: env.PATH ?? '' };
      const started = await o.sandbox
        .confine(install.command, env, {
          cwd: wt,
          writable: [wt],
          home: o.sandbox.freshHome('install'),
          allow: o.config.sandbox.allow,
        })
        .catch((e: unknown) => {
          if ((e as Error).name !== 'ProgramNotFoundError') throw e;
          const program = (e as { program: string }).program;
          const missing = missingProgram({ ...query, output: '', exitCode: null, notFound: program });
          throw new InstallFailedError(`\`${program}\` was not found on PATH`, missing);
        });
      const r = await runInCheckout(started, wt, o);
      if (r.spawnError || r.timedOut || r.exitCode !== 0) {
        const output = logSince(o.logFile, from);
        const how = r.timedOut
          ? `timed out after ${Math.round(o.timeoutMs / 1000)} s`
          : `exited with ${r.exitCode ?? r.spawnError ?? `signal ${r.signal}`}`;
        throw new InstallFailedError(
          `dispatch.install \`${command}\` ${how} at base ${at}; its output ends: ${logTail(output) || '(nothing)'}`,
          r.timedOut ? undefined : missingProgram({ ...query, output, exitCode: r.exitCode }),
        );
      }
      const kept = join(work, 'kept');
      mkdirSync(kept);
      for (const p of install.paths) {
        if (!existsSync(join(wt, p))) continue;
        mkdirSync(join(kept, p, '..'), { recursive: true });
        renameSync(join(wt, p), join(kept, p));
      }
      try {
        renameSync(kept, dir);
      } catch (e) {
        // Made meanwhile by a process of an earlier version that took no lock: as good as ours.
        if (!existsSync(dir)) throw e;
      }
    } finally {
      await removeCheckout(repo, wt);
    }
  } finally {
    await removeTree(work); // what the install left: any depth, any modes
  }
}
