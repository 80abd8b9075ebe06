import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { withLock } from '../../state/lock.js';
import { BOOKBAG_FILE_BOUNDS } from '../../bookbag/store.js';
import { SchoolError } from '../../errors.js';
import { git, GitError, runGit } from '../../process/git.js';
import { removeTreeSync } from '../../process/remove-tree.js';
import { makeWritable, removeNestedRepos, resetSlot } from './slot-reset.js';
import { baseTree, foreignEntries, shownPath, walkTree } from './tree-walk.js';

/** Worktree operations of a daemon's slots, all through the hardened git of src/process. */

export async function revParse(repo: string, ref = 'HEAD'): Promise<string> {
  return (await git(repo, 'rev-parse', '--verify', `${ref}^{commit}`)).trim();
}

/**
 * A worktree per daemon slot, created on first use and reused after a clean reset (cheaper than a
 * `worktree add` per crew on large repositories, and a slot's path is stable for leases and logs).
 * Creation is serialized per repository, in its common git directory, across every daemon that
 * shares it: `git worktree prune` deletes an admin entry that has no `gitdir` file yet, and a
 * concurrent `git worktree add` creates its entry before it writes that file (or its `locked`
 * marker), so a prune by one daemon made another daemon's `worktree add` fail and its crew abort
 * before the student ran.
 */
export async function ensureWorktree(repo: string, path: string, base: string): Promise<void> {
  if (existsSync(join(path, '.git'))) return;
  mkdirSync(dirname(path), { recursive: true });
  const common = resolve(repo, (await git(repo, 'rev-parse', '--git-common-dir')).trim());
  await withLock(join(common, 'school-worktree-admin'), async () => {
    if (existsSync(join(path, '.git'))) return;
    await git(repo, 'worktree', 'prune');
    await git(repo, 'worktree', 'add', '--detach', '--quiet', path, base);
  });
}

/** Porcelain status of everything: tracked changes, untracked and ignored files. */
export async function statusEntries(worktree: string): Promise<string[]> {
  const out = await git(worktree, 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored');
  return out.split('\0').filter(Boolean);
}

/**
 * N4.1: what in this worktree is not the baseline. Empty means clean at `base`. Git's status says
 * what changed in tracked files; the file system walk (./tree-walk.ts) says what else is there, as
 * it is there: a tree deeper than git can list, a directory git cannot read, a nested repository.
 */
export async function foreignChanges(worktree: string, base: string): Promise<string[]> {
  const findings = (await statusEntries(worktree)).map(
    (e) => `${e.slice(0, 2).trim() || '??'} ${e.slice(3)}`,
  );
  const listed = findings.map((f) => f.slice(f.indexOf(' ') + 1).replace(/\/$/, ''));
  const seen = (p: string) => listed.some((l) => l === p || l.startsWith(`${p}/`));
  for (const f of foreignEntries(await walkTree(worktree), await baseTree(worktree, base))) {
    if (!f.startsWith('?? ') || !seen(f.slice(3).replace(/\/$/, ''))) findings.push(f);
  }
  const head = (await git(worktree, 'rev-parse', 'HEAD')).trim();
  if (head !== base) findings.unshift(`HEAD at ${head.slice(0, 12)}, expected base ${base.slice(0, 12)}`);
  return findings;
}

/** Moves a clean worktree to `base` (a reused slot may sit at an older base). */
export async function checkoutBase(worktree: string, base: string): Promise<void> {
  await git(worktree, 'checkout', '--quiet', '--detach', base);
}

export interface CollectedDiff {
  patch: Buffer;
  changedFiles: string[];
  /** Ignored paths the crew left (not part of its change; cleaned at teardown). */
  ignored: string[];
  /** Nested repositories' `.git` entries removed before git ran (their files stay in the change). */
  nested?: string[];
}

/**
 * The largest change a crew hands on: what a bookbag's patch may be when another job imports it. A
 * student that writes more (a gigabyte of random bytes in its worktree) would otherwise have it read
 * into the school's memory, written into its bookbag and kept in every checkpoint.
 */
export const MAX_CHANGE_BYTES = BOOKBAG_FILE_BOUNDS.diff;

/** The crew's change is over MAX_CHANGE_BYTES: the crew failed, its change is not kept. */
export class ChangeTooLargeError extends SchoolError {
  override readonly code = 'change-too-large';
  constructor(readonly max: number) {
    super(
      `the change is over ${Math.round(max / 1024 / 1024)} MiB as a patch (the most a crew hands on); nothing of it was kept`,
    );
    this.name = 'ChangeTooLargeError';
  }
}

/**
 * The crew's change: `git diff --binary <base>` of the working tree, with new files included by
 * marking them intent-to-add first (ignored files are not part of a change). Every nested
 * repository's `.git` is removed first (./slot-reset.ts): host git never enters a repository the
 * student made, and `add --all` of one would make a gitlink instead of its files. A patch over
 * MAX_CHANGE_BYTES stops git there and throws ChangeTooLargeError.
 */
export async function collectDiff(worktree: string, base: string): Promise<CollectedDiff> {
  const nested = await removeNestedRepos(worktree);
  await git(worktree, 'add', '--all', '--intent-to-add');
  // Binary patches must not round-trip through a UTF-8 string.
  const args = ['diff', '--binary', '--no-color', '--no-ext-diff', '--no-textconv', base];
  const diff = await runGit(args, { cwd: worktree, maxOutputBytes: MAX_CHANGE_BYTES });
  if (diff.overflowed) throw new ChangeTooLargeError(MAX_CHANGE_BYTES);
  if (diff.exitCode !== 0)
    throw new GitError(args, worktree, diff.exitCode, diff.spawnError ?? diff.stderr.toString('utf8'));
  const r = diff.stdout;
  const names = await git(worktree, 'diff', '--name-only', '--no-ext-diff', '--no-textconv', '-z', base);
  const ignored = (await statusEntries(worktree)).filter((e) => e.startsWith('!!')).map((e) => e.slice(3));
  return { patch: r, changedFiles: names.split('\0').filter(Boolean), ignored, nested };
}

/**
 * Teardown: back to `base`, every change, untracked and ignored file removed, whatever the depth or
 * the permissions the student left (./slot-reset.ts). Returns what went wrong on the way.
 */
export async function resetClean(worktree: string, base: string): Promise<string[]> {
  return resetSlot(worktree, base);
}

/**
 * A linked worktree's admin directory and the repository's common git directory, as git resolves
 * them. The admin directory must be one of the common directory's `worktrees/<name>`: anything else
 * (a `.git` file pointing elsewhere) is refused, since the sandbox makes that directory writable.
 */
export async function slotGitDirs(worktree: string): Promise<{ common: string; admin: string }> {
  const [admin = '', common = ''] = (
    await git(worktree, 'rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir')
  )
    .trim()
    .split('\n');
  const real = (p: string) => realpathSync(p);
  if (!admin || !common || dirname(real(admin)) !== join(real(common), 'worktrees'))
    throw new Error(`${worktree}: its git directory ${admin} is not a worktree admin directory of ${common}`);
  return { common: real(common), admin: real(admin) };
}

/**
 * Puts a slot's admin directory back after a turn in which its student could write it: a link there
 * (`logs/HEAD` pointing at a file outside) would make the toolkit's own git append to any file the
 * runner can write, and a `HEAD` naming a ref like `$(…)` would be written into that file. So only
 * `commondir` and `gitdir` stay (read-only inside the sandbox, checked here); everything else — the
 * reflogs, per-worktree refs, `config.worktree`, `ORIG_HEAD`, the index — is removed, `HEAD` is written
 * afresh at the base and the index rebuilt from the base tree. Returns the links it found (each one
 * planted: git makes none there).
 */
export async function resetAdminDir(worktree: string, admin: string, base: string): Promise<string[]> {
  // The walk and the removal stop at no depth or permission the student left (./slot-reset.ts).
  await makeWritable(admin);
  const links = (await walkTree(admin)).entries.filter((e) => e.type === 'l').map((e) => shownPath(e.names));
  for (const e of readdirSync(admin)) {
    if ((e === 'commondir' || e === 'gitdir') && lstatSync(join(admin, e)).isFile()) continue;
    removeTreeSync(join(admin, e));
  }
  writeFileSync(join(admin, 'HEAD'), `${base}\n`);
  await git(worktree, 'read-tree', base);
  return links;
}
