import { createHash, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import type { CleanCheckoutOptions } from '../grading/judge-verify.js';
import type { ChildEnv } from '../process/env.js';
import { runGit } from '../process/git.js';
import { runProcess } from '../process/run.js';
import { withLock } from '../state/lock.js';
import { gitCommonDir } from './git-guard.js';

/**
 * Verification in an environment the student never wrote (docs/crews.md): a fresh detached checkout
 * of the repository at the crew's base, exactly the frozen patch applied by git, dependencies (when
 * `dispatch.install` is set) from a cache made once per base and lockfile digest by installing in a
 * checkout of the base, shown read-only; then the verification command in the sandbox, the checkout
 * read-only. What the student left outside its patch — an ignored `node_modules/.bin/node` shim, an
 * untracked helper, a rewritten test that deletes itself — is not there.
 */
export interface CleanRun {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
}

type Git = (cwd: string, args: string[]) => Promise<{ ok: boolean; output: string; stdout: Buffer }>;
const git: Git = async (cwd, args) => {
  const r = await runGit(args, { cwd, timeoutMs: 300_000 });
  return {
    ok: r.exitCode === 0,
    output: (r.spawnError ?? '') + r.stderr.toString('utf8') + r.stdout.toString('utf8'),
    stdout: r.stdout,
  };
};

/** A detached worktree at `base` under `dir`, made under the lock `ensureWorktree` takes. */
async function addCheckout(repo: string, dir: string, base: string): Promise<string> {
  const wt = join(dir, `checkout-${randomBytes(4).toString('hex')}`);
  const common = await gitCommonDir(repo);
  const add = await withLock(join(common, 'school-worktree-admin'), () =>
    git(repo, ['worktree', 'add', '--detach', '--quiet', wt, base]),
  );
  if (!add.ok) throw new Error(`could not check out the base ${base.slice(0, 12)}: ${add.output.trim()}`);
  return wt;
}

async function removeCheckout(repo: string, wt: string): Promise<void> {
  await git(repo, ['worktree', 'remove', '--force', wt]);
  rmSync(wt, { recursive: true, force: true });
}

/** The cache key: base, install command and the lockfiles' blobs at the base (one `ls-tree`). */
const keys = new Map<string, Promise<string>>();
function depsKey(o: CleanCheckoutOptions): Promise<string> {
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

/**
 * The installed dependencies for this base, made when missing: the install runs in a checkout of the
 * base, in the sandbox (its network: `sandbox.allow`), and what it produced (`install.paths`) is
 * moved into the cache by a rename, so concurrent crews never see half of it.
 */
async function dependencies(o: CleanCheckoutOptions, env: ChildEnv): Promise<string | undefined> {
  const install = o.config.dispatch.install;
  if (!install) return undefined;
  const dir = join(o.depsRoot, await depsKey(o));
  if (existsSync(dir)) return dir;
  mkdirSync(o.depsRoot, { recursive: true });
  const work = mkdtempSync(join(o.depsRoot, '.install-'));
  const repo = resolve(o.config.repoPath);
  const wt = await addCheckout(repo, work, o.baseSha);
  try {
    appendFileSync(o.logFile, `[school] installing dependencies at the base: ${install.command.join(' ')}\n`);
    const started = await o.sandbox.confine(install.command, env, {
      cwd: wt,
      writable: [wt],
      home: o.sandbox.freshHome('install'),
      allow: o.config.sandbox.allow,
    });
    const r = await runProcess(started.argv, {
      cwd: wt,
      env: started.env,
      logFile: o.logFile,
      timeoutMs: o.timeoutMs,
      graceMs: o.graceMs,
    });
    if (r.spawnError || r.timedOut || r.exitCode !== 0)
      throw new Error(
        `the dependency install (${install.command.join(' ')}) ${r.timedOut ? 'timed out' : `exited with ${r.exitCode ?? r.spawnError ?? r.signal}`}`,
      );
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
      // Another crew made the same cache first: theirs is as good.
      if (!existsSync(dir)) throw e;
    }
    return dir;
  } finally {
    await removeCheckout(repo, wt);
    rmSync(work, { recursive: true, force: true });
  }
}

/** Runs `verify` on base + patch in a clean checkout; the log says why when it could not. */
export async function verifyOnCleanCheckout(
  o: CleanCheckoutOptions,
  verify: readonly string[],
  env: ChildEnv,
): Promise<CleanRun> {
  const failed = (why: string): CleanRun => {
    appendFileSync(o.logFile, `[school] verification could not run: ${why}\n`);
    return { exitCode: null, timedOut: false, durationMs: 0 };
  };
  mkdirSync(o.scratch, { recursive: true });
  const repo = resolve(o.config.repoPath);
  let deps: string | undefined;
  try {
    deps = await dependencies(o, env);
  } catch (e) {
    return failed((e as Error).message);
  }
  const work = mkdtempSync(join(o.scratch, 'verify-'));
  let wt: string | undefined;
  try {
    wt = await addCheckout(repo, work, o.baseSha);
    if (o.patch.trim()) {
      const file = join(work, 'crew.patch');
      writeFileSync(file, o.patch);
      const applied = await git(wt, ['apply', '--binary', '--whitespace=nowarn', file]);
      if (!applied.ok) return failed(`the change does not apply at the base: ${applied.output.trim()}`);
    }
    const shown = (o.config.dispatch.install?.paths ?? [])
      .filter((p) => deps && existsSync(join(deps, p)))
      .map((p) => {
        // Inside the sandbox the cache is bound over a mount point that must exist before the
        // checkout is seen read-only; without one, a link stands in.
        if (o.sandbox.confined) mkdirSync(join(wt!, p), { recursive: true });
        else symlinkSync(join(deps!, p), join(wt!, p));
        return { source: join(deps!, p), path: join(wt!, p) };
      });
    const started = await o.sandbox.confine(verify, env, {
      cwd: wt,
      readOnly: [wt],
      readOnlyAt: shown,
      home: o.sandbox.freshHome('verify'),
      allow: o.config.sandbox.allow,
    });
    return await runProcess(started.argv, {
      cwd: wt,
      env: started.env,
      logFile: o.logFile,
      timeoutMs: o.timeoutMs,
      graceMs: o.graceMs,
    });
  } catch (e) {
    if ((e as Error).name === 'ProgramNotFoundError') return failed(`\`${verify[0]}\` was not found on PATH`);
    return failed((e as Error).message);
  } finally {
    if (wt) await removeCheckout(repo, wt);
    rmSync(work, { recursive: true, force: true });
  }
}
