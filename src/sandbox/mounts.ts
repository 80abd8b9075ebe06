import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { sep } from 'node:path';

/**
 * The bubblewrap command line of one confined process, built from what it may see. Pure but for
 * reading which system paths exist: every path is bound at its own path, so the brief, the worktree
 * and the usage file have the same names inside and out and nothing needs translating.
 *
 * Inside: an empty, read-only root (bwrap's own tmpfs) with the system read-only (/usr, /etc and the /bin, /lib…
 * links or directories), a fresh /proc of its own PID namespace, a minimal /dev, the private HOME and
 * /tmp, and exactly the paths the caller lists. Everything else — other worktrees, bookbags, the state
 * directory, the toolkit, the runner install, the host's HOME — does not exist in there.
 */
export interface Confinement {
  /** Working directory (must be among the visible paths). */
  cwd: string;
  /** Visible read-write, at the same path. */
  writable: readonly string[];
  /** Visible read-only, at the same path. A file or a directory. */
  readOnly: readonly string[];
  /** Directories inside a visible one that are replaced by an empty, read-only directory. */
  masked?: readonly string[];
  /** Symbolic links made inside (`path` pointing at `target`), parents first, outside every mount. */
  links?: ReadonlyArray<{ path: string; target: string }>;
  /** Visible read-only at another path (`source` on the host seen as `path`). */
  readOnlyAt?: ReadonlyArray<{ source: string; path: string }>;
  /** The private HOME (read-write, at its own path). */
  home: string;
  /** The private temporary directory, seen as /tmp (unless `tmpBytes` makes /tmp a tmpfs). */
  tmp: string;
  /**
   * /tmp as a tmpfs of this size (`sandbox.limits.diskMiB`; bwrap 0.5 and newer) instead of `tmp`
   * bound from the host disk: what the process writes there is bounded when written, and its pages
   * are charged to the sandbox's cgroup (its memory limit holds too). Gone when the process ends.
   */
  tmpBytes?: number;
  /**
   * `none`: loopback only; `host`: the host's network; a socket: loopback plus that proxy socket,
   * seen inside at `at` (a short path: a unix socket's path is bounded).
   */
  network: 'none' | 'host' | { socket: string; at: string };
  /**
   * The size of each tmpfs inside (/dev/shm, the masked directories), for bwrap's `--size` (0.5 and
   * newer); unset: unsized (the kernel's default, half the RAM).
   */
  tmpfsBytes?: number;
}

/** The system, read-only; a path that is a symlink on the host (merged /usr) is the same link inside. */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

type Mount = { kind: 'ro' | 'rw' | 'tmpfs'; path: string; source?: string };

const depth = (p: string) => p.split(sep).filter(Boolean).length;

export function bwrapArgs(c: Confinement, argv: readonly string[], exists = existsSync): string[] {
  const args = ['--unshare-all'];
  if (c.network === 'host') args.push('--share-net');
  // --die-with-parent: the whole namespace dies with the toolkit process that watches it; a new
  // session: no TIOCSTI into the caller's terminal. Capabilities dropped explicitly: bwrap started
  // by root keeps them otherwise, and a process with CAP_SYS_ADMIN remounts the read-only binds.
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--proc', '/proc', '--dev', '/dev');
  // bwrap's /dev is a tmpfs the size of half the RAM and /dev/shm a directory in it: a tmpfs of its own,
  // sized, and /dev read-only below (its device nodes are binds and still work).
  const size = c.tmpfsBytes ? ['--size', String(c.tmpfsBytes)] : [];
  args.push(...size, '--tmpfs', '/dev/shm');
  for (const p of SYSTEM_PATHS) {
    if (!exists(p)) continue;
    const st = lstatSync(p);
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(p), p);
    else args.push('--ro-bind', p, p);
  }
  const mounts: Mount[] = [
    { kind: 'rw', path: c.tmp },
    { kind: 'rw', path: c.home },
    ...c.readOnly.map((path) => ({ kind: 'ro' as const, path })),
    ...c.writable.map((path) => ({ kind: 'rw' as const, path })),
    ...(c.masked ?? []).map((path) => ({ kind: 'tmpfs' as const, path })),
    ...(c.readOnlyAt ?? []).map((m) => ({ kind: 'ro' as const, path: m.path, source: m.source })),
  ];
  if (typeof c.network === 'object')
    mounts.push({ kind: 'ro', path: c.network.at, source: c.network.socket });
  // /tmp first, then parents before children: a later mount over a parent would hide a child.
  if (c.tmpBytes) args.push('--size', String(c.tmpBytes), '--tmpfs', '/tmp');
  else args.push('--bind', c.tmp, '/tmp');
  const order = { tmpfs: 0, ro: 1, rw: 2 } as const;
  const seen = new Set<string>();
  const masks: string[] = [];
  for (const m of mounts
    .filter((m) => m.path !== c.tmp)
    .sort((a, b) => depth(a.path) - depth(b.path) || order[a.kind] - order[b.kind])) {
    const key = `${m.kind}\0${m.source ?? ''}\0${m.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (m.kind === 'tmpfs') {
      args.push(...size, '--tmpfs', m.path);
      masks.push(m.path);
    } else args.push(m.kind === 'ro' ? '--ro-bind' : '--bind', m.source ?? m.path, m.path);
  }
  // Links last: each lies outside every mount, and what it leads to is mounted by now.
  const linked = new Set<string>();
  for (const l of c.links ?? []) {
    if (linked.has(l.path)) continue;
    linked.add(l.path);
    args.push('--symlink', l.target, l.path);
  }
  // Every mount point exists now: the root (bwrap's own tmpfs, unsized), /dev and the masked
  // directories become read-only, so nothing fills host RAM through them; the binds keep their mode.
  for (const p of ['/dev', ...masks, '/']) args.push('--remount-ro', p);
  args.push('--chdir', c.cwd, '--');
  return [...args, ...argv];
}
