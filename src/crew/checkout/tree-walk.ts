import { childEnv } from '../../process/env.js';
import { gitBytes } from '../../process/git.js';
import { runProcess } from '../../process/run.js';

/**
 * A slot's file tree as the file system holds it, not as git reports it. A student can leave what
 * `git status` does not list (a tree deeper than PATH_MAX, a directory git cannot read) and what
 * `git clean` cannot remove, and a nested repository (`vendor/.git`) that host git would enter.
 *
 * The walk is GNU find's (fts over directory descriptors, `openat`): it descends any depth with
 * relative lookups, never follows a link, and prints each entry's type, depth and own name only, so
 * a 600-level tree of 200-byte names costs a few hundred kilobytes of listing, not its full paths.
 * The slot's own `.git` file at the top is left out; everything else is listed.
 */

export interface TreeEntry {
  /** find's `%y`: f, d, l, p, s, c, b. */
  type: string;
  depth: number;
  /** Path components from the walk's root. */
  names: readonly string[];
}

export interface TreeWalk {
  /** Entries in pre-order (a directory before what it holds). */
  entries: TreeEntry[];
  /** What find could not read (a directory without read or search permission), its own words. */
  errors: string[];
  /** The listing passed its bound: the walk is incomplete and must not be taken as clean. */
  overflowed: boolean;
}

/** Bytes of listing a walk may produce (about ten million entries). */
const LISTING_BOUND = 256 * 1024 * 1024;
/** Paths are shortened to this many characters in findings and alerts. */
const SHOWN = 160;

/** Walks `root` (see the module comment). Never throws for what it finds; throws if find is missing. */
export async function walkTree(root: string): Promise<TreeWalk> {
  const r = await runProcess(
    ['find', '.', '-mindepth', '1', '(', '-path', './.git', '-prune', ')', '-o', '-printf', '%y%d/%f\\0'],
    {
      cwd: root,
      env: childEnv({ set: { LC_ALL: 'C' } }),
      group: false,
      timeoutMs: 600_000,
      output: { maxBytes: LISTING_BOUND, overflow: 'kill' },
    },
  );
  if (r.spawnError) throw new Error(`cannot walk ${root}: ${r.spawnError} (GNU find is needed)`);
  const entries: TreeEntry[] = [];
  const stack: string[] = [];
  const out = r.stdout;
  let start = 0;
  for (let i = 0; i < out.length; i++) {
    if (out[i] !== 0) continue;
    const line = out.subarray(start, i).toString('utf8');
    start = i + 1;
    const slash = line.indexOf('/');
    const depth = Number(line.slice(1, slash));
    if (!Number.isInteger(depth) || depth < 1 || depth > stack.length + 1) continue;
    stack.length = depth - 1;
    stack.push(line.slice(slash + 1));
    entries.push({ type: line[0]!, depth, names: [...stack] });
  }
  const errors = r.stderr
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, 20);
  if (r.exitCode !== 0 && !errors.length && !r.overflowed) errors.push(`find exited with ${r.exitCode}`);
  return { entries, errors, overflowed: r.overflowed === true || r.timedOut === true };
}

/** A path for a finding or an alert: long ones shortened, with their depth. */
export function shownPath(names: readonly string[]): string {
  const p = names.join('/');
  return p.length <= SHOWN ? p : `${p.slice(0, SHOWN)}… (${names.length} levels)`;
}

/** Every path of the tree of `base` (files, links, gitlinks) and every directory leading to one. */
export async function baseTree(worktree: string, base: string): Promise<Set<string>> {
  const listed = await gitBytes(['ls-tree', '-r', '-z', '--full-tree', '--name-only', base], {
    cwd: worktree,
  });
  const known = new Set<string>();
  for (const p of listed.toString('utf8').split('\0')) {
    if (!p) continue;
    known.add(p);
    for (let i = p.indexOf('/'); i > 0; i = p.indexOf('/', i + 1)) known.add(p.slice(0, i));
  }
  return known;
}

/**
 * What the walk found that the base does not hold: each foreign entry once (a foreign directory
 * stands for everything below it), unreadable directories, an incomplete walk. Bounded: at most
 * `max` findings are listed, then a count of the rest.
 */
export function foreignEntries(walk: TreeWalk, known: ReadonlySet<string>, max = 200): string[] {
  const foreign = foreignOf(walk, known);
  const findings = foreign.slice(0, max).map((e) => `?? ${shownPath(e.names)}${e.type === 'd' ? '/' : ''}`);
  if (foreign.length > max) findings.push(`… and ${foreign.length - max} more foreign entries`);
  for (const err of walk.errors) findings.push(`unreadable: ${err.slice(0, 300)}`);
  if (walk.overflowed) findings.push('the tree walk stopped at its bound: the slot is not known to be clean');
  return findings;
}

/** The walk's entries the base does not hold, each foreign directory once (not what it holds). */
export function foreignOf(walk: TreeWalk, known: ReadonlySet<string>): TreeEntry[] {
  const out: TreeEntry[] = [];
  let under = Infinity;
  for (const e of walk.entries) {
    if (e.depth > under) continue;
    under = Infinity;
    // A path of more components than PATH_MAX has bytes is in no tree git can hold.
    if (e.names.length < 4096 && known.has(e.names.join('/'))) continue;
    if (e.type === 'd') under = e.depth;
    out.push(e);
  }
  return out;
}

/** The nested repositories' `.git` entries (directory, file or link) anywhere below the top. */
export function nestedGitEntries(walk: TreeWalk): TreeEntry[] {
  return walk.entries.filter((e) => e.depth > 1 && e.names[e.names.length - 1] === '.git');
}
