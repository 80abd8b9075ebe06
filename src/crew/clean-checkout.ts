import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import type { CleanCheckoutOptions } from '../grading/judge-verify.js';
import type { ChildEnv } from '../process/env.js';
import { runGit } from '../process/git.js';
import { patchFiles } from '../process/patch-files.js';
import { runProcess, type RunResult } from '../process/run.js';
import type { Confined } from '../sandbox/sandbox.js';
import { missingProgram, type MissingAt, type MissingProgram } from '../sandbox/not-found.js';
import { appendCapped } from '../process/capped-log.js';
import { withLock } from '../state/lock.js';
import { gitCommonDir } from './git-guard.js';
import { removeTree } from './slot-reset.js';

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
  /** A program the install or the verification did not find, when that is the school's failure. */
  missing?: MissingAt;
}

/** The install failed; `missing` when a program it needed was not there (src/sandbox/not-found.ts). */
class InstallFailedError extends Error {
  constructor(
    message: string,
    readonly missing?: MissingProgram,
  ) {
    super(message);
    this.name = 'InstallFailedError';
  }
}

/** What a process appended to `file` from `from` on (its last 64 KiB): its own output. */
function logSince(file: string, from: number): string {
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

const logSize = (file: string) => (existsSync(file) ? statSync(file).size : 0);

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
  const removed = await git(repo, ['worktree', 'remove', '--force', wt]);
  // A patch may hold paths deeper than PATH_MAX, where git and rmSync stop: removeTree does not.
  await removeTree(wt);
  if (removed.ok) return;
  // Pruned under the lock `addCheckout` takes: a prune drops an entry another `worktree add` is making.
  const common = await gitCommonDir(repo);
  await withLock(join(common, 'school-worktree-admin'), () => git(repo, ['worktree', 'prune']));
}

/** The cache key: base, install command and the lockfiles' blobs at the base (one `ls-tree`). */
const keys = new Map<string, Promise<string>>();
/** A confined command run in the checkout, its output appended to the crew's log (capped). */
function runInCheckout(
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
    ...(onSpawn ? { onSpawn } : {}),
  });
}

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
export async function installedDependencies(
  o: CleanCheckoutOptions,
  env: ChildEnv,
): Promise<string | undefined> {
  const install = o.config.dispatch.install;
  if (!install) return undefined;
  const dir = join(o.depsRoot, await depsKey(o));
  if (existsSync(dir)) return dir;
  mkdirSync(o.depsRoot, { recursive: true });
  const work = mkdtempSync(join(o.depsRoot, '.install-'));
  const repo = resolve(o.config.repoPath);
  const wt = await addCheckout(repo, work, o.baseSha);
  try {
    appendCapped(
      o.logFile,
      `[school] installing dependencies at the base: ${install.command.join(' ')}\n`,
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
    if (r.spawnError || r.timedOut || r.exitCode !== 0)
      throw new InstallFailedError(
        `the dependency install (${install.command.join(' ')}) ${r.timedOut ? 'timed out' : `exited with ${r.exitCode ?? r.spawnError ?? r.signal}`}`,
        r.timedOut
          ? undefined
          : missingProgram({ ...query, output: logSince(o.logFile, from), exitCode: r.exitCode }),
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
    await removeTree(work); // what the install left: any depth, any modes
  }
}

/** Runs `verify` on base + patch in a clean checkout; the log says why when it could not. */
export async function verifyOnCleanCheckout(
  o: CleanCheckoutOptions,
  verify: readonly string[],
  env: ChildEnv,
): Promise<CleanRun> {
  const failed = (why: string, missing?: CleanRun['missing']): CleanRun => {
    appendCapped(o.logFile, `[school] verification could not run: ${why}\n`, o.config.dispatch.logMaxBytes);
    return { exitCode: null, timedOut: false, durationMs: 0, ...(missing ? { missing } : {}) };
  };
  mkdirSync(o.scratch, { recursive: true });
  const repo = resolve(o.config.repoPath);
  let deps: string | undefined;
  try {
    deps = await installedDependencies(o, env);
  } catch (e) {
    const missing = e instanceof InstallFailedError ? e.missing : undefined;
    return failed((e as Error).message, missing && { ...missing, stage: 'install' });
  }
  const work = mkdtempSync(join(o.scratch, 'verify-'));
  let wt: string | undefined;
  try {
    wt = await addCheckout(repo, work, o.baseSha);
    if (o.patch.trim()) {
      // Host git never enters a nested repository, so a crew's collection holds no gitlink: one here
      // means the patch was made elsewhere (docs/security.md, nested repositories).
      const touched = await patchFiles(repo, o.baseSha, o.patch);
      const links = touched.ok ? touched.files.filter((f) => f.gitlink).map((f) => f.path) : [];
      if (links.length)
        return failed(
          `the change adds or changes submodule(s) (gitlink, mode 160000): ${links.slice(0, 10).join(', ')}; a crew's change never holds one`,
        );
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
    const from = logSize(o.logFile);
    const run = await runInCheckout(started, wt, o, o.onSpawn);
    // Exit 127: a program the command (or a script it ran) asked for is not there.
    const missing =
      run.exitCode === 127
        ? missingProgram({
            output: logSince(o.logFile, from),
            exitCode: 127,
            command: verify,
            hostPath: env.PATH ?? '',
          })
        : undefined;
    return missing ? { ...run, missing: { ...missing, stage: 'verify' } } : run;
  } catch (e) {
    if ((e as Error).name === 'ProgramNotFoundError') {
      const missing = missingProgram({
        output: '',
        exitCode: null,
        command: verify,
        hostPath: env.PATH ?? '',
        notFound: verify[0]!,
      });
      return failed(`\`${verify[0]}\` was not found on PATH`, missing && { ...missing, stage: 'verify' });
    }
    return failed((e as Error).message);
  } finally {
    if (wt) await removeCheckout(repo, wt);
    await removeTree(work);
  }
}
