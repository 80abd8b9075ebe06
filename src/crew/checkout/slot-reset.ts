import { chmodSync, existsSync, lstatSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SchoolError } from '../../errors.js';
import { childEnv } from '../../process/env.js';
import { runGit } from '../../process/git.js';
import { makeOwnerRwxArgv } from '../../process/remove-tree.js';
import { runProcess, type RunResult } from '../../process/run.js';
import { baseTree, foreignOf, nestedGitEntries, shownPath, walkTree } from './tree-walk.js';

/**
 * Putting a slot back at its base whatever the student left, and taking it out of service when that
 * cannot be done.
 *
 * `git clean` fails on a tree deeper than PATH_MAX or in a directory without write permission, and
 * Node's recursive `rmSync` fails on the same depth (ENAMETOOLONG). GNU find and rm walk with
 * directory descriptors and relative names (`openat`/`unlinkat`), so neither depth nor name length
 * stops them; what permissions stop (a directory the crew made 0500 or 0000, owned by the runner's
 * user like everything the student writes) is made `u+rwx` first, each directory before it is read.
 */

/** A nested repository in a student's tree could not be removed: no host git may run there. */
export class NestedRepositoryError extends SchoolError {
  override readonly code = 'nested-repository';
  constructor(
    readonly worktree: string,
    readonly paths: readonly string[],
  ) {
    super(
      `${worktree}: nested repository ${paths.slice(0, 5).join(', ')} could not be removed; no git runs in this tree`,
    );
    this.name = 'NestedRepositoryError';
  }
}

const env = () => childEnv({ set: { LC_ALL: 'C' } });

function tool(argv: string[], cwd: string): Promise<RunResult> {
  return runProcess(argv, { cwd, env: env(), group: false, timeoutMs: 600_000 });
}

function said(r: RunResult): string {
  return (r.spawnError ?? r.stderr.toString('utf8')).trim().split('\n').slice(0, 3).join('; ').slice(0, 400);
}

/**
 * Gives the owner read, write and search permission on every directory of `root`'s tree that lacks
 * one (`-execdir` runs in each directory's parent, before find reads it). The slot's `.git` file at
 * the top is left alone. Returns what could not be changed.
 */
export async function makeWritable(root: string): Promise<string[]> {
  const st = lstatSync(root);
  if (st.isDirectory() && (st.mode & 0o700) !== 0o700) chmodSync(root, st.mode | 0o700);
  const r = await tool(makeOwnerRwxArgv('.git'), root);
  return r.exitCode === 0 && !r.spawnError ? [] : [`chmod: ${said(r)}`];
}

/**
 * Removes every nested repository's `.git` (directory, `gitdir:` file or link) below the top of a
 * student's tree, before host git runs there: git enters a directory holding a `.git` as a
 * repository of its own (a gitlink for `add`, a child `git status` for `diff`), and the child reads
 * that repository's config, which can name filters and an fsmonitor. What the repository held stays
 * as plain files. Returns the removed paths (shortened); throws NestedRepositoryError when one
 * survives.
 */
export async function removeNestedRepos(worktree: string): Promise<string[]> {
  const nested = nestedGitEntries(await walkTree(worktree));
  if (!nested.length) return [];
  await makeWritable(worktree);
  await tool(
    ['find', '.', '-mindepth', '2', '-name', '.git', '-prune', '-execdir', 'rm', '-rf', '--', '{}', '+'],
    worktree,
  );
  const left = nestedGitEntries(await walkTree(worktree));
  if (left.length)
    throw new NestedRepositoryError(
      worktree,
      left.map((e) => shownPath(e.names)),
    );
  return nested.map((e) => shownPath(e.names));
}

async function gitSteps(worktree: string, base: string): Promise<string[]> {
  const problems: string[] = [];
  for (const args of [
    ['checkout', '--quiet', '--force', '--detach', base],
    ['reset', '--quiet', '--hard', base],
    ['clean', '-ffdxq'],
  ]) {
    const r = await runGit(args, { cwd: worktree, timeoutMs: 600_000 });
    if (r.exitCode !== 0) problems.push(`git ${args[0]}: ${said(r)}`);
  }
  return problems;
}

/**
 * Teardown's reset: back to `base` with nothing else in the tree. The git way first (cheap, keeps
 * unchanged files); when git fails or the walk still finds something the base does not hold, every
 * directory is made writable, each top-level entry holding a leftover is removed whole with `rm -rf`
 * (a tracked directory among them is checked out again), and git runs once more. Returns what went
 * wrong on the way; whether the slot is clean is for the caller to check (`foreignChanges`).
 */
export async function resetSlot(worktree: string, base: string): Promise<string[]> {
  await removeNestedRepos(worktree);
  const first = await gitSteps(worktree, base);
  const known = await baseTree(worktree, base);
  const walk = await walkTree(worktree);
  const foreign = foreignOf(walk, known);
  if (!first.length && !foreign.length && !walk.errors.length && !walk.overflowed) return [];
  const problems = await makeWritable(worktree);
  const tops = new Set(foreignOf(await walkTree(worktree), known).map((e) => e.names[0]!));
  for (const top of tops) {
    const r = await tool(['rm', '-rf', '--', top], worktree);
    if (r.exitCode !== 0 || r.spawnError) problems.push(`rm ${shownPath([top])}: ${said(r)}`);
  }
  return [...problems, ...(await gitSteps(worktree, base))];
}

/** Empties and removes a directory of any depth (a bot slot's scratch directory). */
export async function removeTree(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  await makeWritable(dir);
  const r = await tool(['rm', '-rf', '--', dir], '/');
  if (r.exitCode !== 0 || r.spawnError) throw new Error(`could not remove ${dir}: ${said(r)}`);
}

/**
 * A slot whose reset failed is out of service: a marker beside the slot directory (where no student
 * can write), naming why. The claim skips such a slot and the classroom refuses to prepare it until
 * an operator removes the marker; a reset of that slot that succeeds (a collected orphan's teardown)
 * removes it too.
 */
export function outOfServiceMarker(worktree: string): string {
  return `${worktree}.out-of-service`;
}

/** Why the slot is out of service, or undefined when it is in service. */
export function outOfService(worktree: string): string | undefined {
  try {
    return readFileSync(outOfServiceMarker(worktree), 'utf8').trim() || 'a reset failed';
  } catch {
    return undefined;
  }
}

/** How an operator puts the slot back, for alerts and refusals. */
export function clearHint(worktree: string): string {
  return `empty or delete ${worktree} (the next crew makes it afresh), then remove ${outOfServiceMarker(worktree)}`;
}

/** Takes the slot out of service; returns the line that says so (for the teardown alert). */
export function markOutOfService(worktree: string, findings: readonly string[]): string {
  writeFileSync(
    outOfServiceMarker(worktree),
    `${new Date().toISOString()} reset failed: ${findings.slice(0, 10).join('; ').slice(0, 2000)}\n`,
  );
  return `slot taken out of service: no crew is given it until an operator clears it (${clearHint(worktree)})`;
}

export function markInService(worktree: string): void {
  rmSync(outOfServiceMarker(worktree), { force: true });
}
