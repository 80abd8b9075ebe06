import { chmodSync, lstatSync, rmSync } from 'node:fs';
import { childEnv } from './env.js';
import { runProcessSync } from './run.js';
import { SchoolError } from '../errors.js';

/**
 * Removes `path` (a file, a link or a tree) whatever a student made of it, synchronously: a HOME, a
 * /tmp, a hand-back directory, a slot's admin directory. Node's `rmSync` first (no process for the
 * common case); where it stops (ENAMETOOLONG on a tree deeper than PATH_MAX, EACCES in a directory
 * made 0000), every directory is made `u+rwx` and `rm -rf` removes the rest: GNU find and rm walk
 * with directory descriptors and relative names, so neither depth nor permissions stop them (as in
 * src/crew/checkout/slot-reset.ts). Throws when something remains.
 */
export function removeTreeSync(path: string): void {
  let first: unknown;
  try {
    rmSync(path, { recursive: true, force: true });
    return;
  } catch (e) {
    first = e;
  }
  const run = (argv: string[], cwd: string) =>
    runProcessSync(argv, { cwd, env: childEnv({ set: { LC_ALL: 'C' } }), timeoutMs: 600_000 });
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return;
  if (st.isDirectory()) {
    if ((st.mode & 0o700) !== 0o700) chmodSync(path, st.mode | 0o700);
    run(makeOwnerRwxArgv(), path);
  }
  const r = run(['rm', '-rf', '--', path], '/');
  if (lstatSync(path, { throwIfNoEntry: false }))
    throw new SchoolError(
      `could not remove ${path}: ${(r.spawnError ?? r.stderr).trim().split('\n').slice(0, 3).join('; ').slice(0, 400) || (first as Error).message}`,
      { code: 'remove-tree' },
    );
}

/**
 * The `find` that gives the owner read, write and search permission on every directory below `.`
 * that lacks one (`-execdir` runs in each directory's parent, before find reads it). `skip`: an
 * entry at the top left alone (a slot's `.git` file).
 */
export function makeOwnerRwxArgv(skip?: string): string[] {
  const chmod = ['-type', 'd', '!', '-perm', '-u=rwx', '-execdir', 'chmod', 'u+rwx', '{}', ';'];
  return skip
    ? ['find', '.', '-mindepth', '1', '(', '-path', `./${skip}`, '-prune', ')', '-o', '(', ...chmod, ')']
    : ['find', '.', '-mindepth', '1', ...chmod];
}
