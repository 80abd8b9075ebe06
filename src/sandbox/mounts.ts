import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, resolve, sep } from 'node:path';

/**
 * The bubblewrap command line of one confined process, built from what it may see. Pure but for
 * reading which system paths exist: every path is bound at its own path, so the brief, the worktree
 * and the usage file have the same names inside and out and nothing needs translating.
 *
 * Inside: an empty root (bwrap's own tmpfs) with the system read-only (/usr, /etc and the /bin, /lib…
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
  /** Directories inside a visible one that are replaced by an empty directory. */
  masked?: readonly string[];
  /** Visible read-only at another path (`source` on the host seen as `path`). */
  readOnlyAt?: ReadonlyArray<{ source: string; path: string }>;
  /** The private HOME (read-write, at its own path). */
  home: string;
  /** The private temporary directory, seen as /tmp. */
  tmp: string;
  /**
   * `none`: loopback only; `host`: the host's network; a socket: loopback plus that proxy socket,
   * seen inside at `at` (a short path: a unix socket's path is bounded).
   */
  network: 'none' | 'host' | { socket: string; at: string };
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
  args.push('--bind', c.tmp, '/tmp');
  const order = { tmpfs: 0, ro: 1, rw: 2 } as const;
  const seen = new Set<string>();
  for (const m of mounts
    .filter((m) => m.path !== c.tmp)
    .sort((a, b) => depth(a.path) - depth(b.path) || order[a.kind] - order[b.kind])) {
    const key = `${m.kind}\0${m.source ?? ''}\0${m.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (m.kind === 'tmpfs') args.push('--tmpfs', m.path);
    else args.push(m.kind === 'ro' ? '--ro-bind' : '--bind', m.source ?? m.path, m.path);
  }
  args.push('--chdir', c.cwd, '--');
  return [...args, ...argv];
}

/**
 * Directories a program found on PATH may need, read-only: each PATH entry and the real location of
 * the program (a symlink into a package, the package root of a `node_modules` install). An entry
 * inside (or above) a protected path is left out: PATH may name the host's `~/.local/bin` or a
 * directory of the runner install, and those are exactly what must not be seen.
 */
export function toolPaths(o: {
  path: string;
  programs: readonly string[];
  protect: readonly string[];
}): string[] {
  const out = new Set<string>();
  // A protected path is compared as given and as it resolves (a linked node_modules, a bind).
  const protect = o.protect.flatMap((p) => {
    const r = resolve(p);
    try {
      return [r, realpathSync(r)];
    } catch {
      return [r];
    }
  });
  const blocked = (p: string) =>
    protect.some((q) => p === q || p.startsWith(q + sep) || q.startsWith(p + sep) || p === sep);
  const system = (p: string) => SYSTEM_PATHS.some((s) => p === s || p.startsWith(s + sep));
  const add = (p: string) => {
    if (!isAbsolute(p) || system(p) || !existsSync(p)) return;
    if (!blocked(p)) out.add(p);
  };
  for (const d of o.path.split(delimiter).filter(Boolean)) {
    add(d);
    try {
      add(realpathSync(d));
    } catch {
      /* a PATH entry that does not exist */
    }
  }
  for (const prog of o.programs) {
    if (!isAbsolute(prog) || !existsSync(prog)) continue;
    let real: string;
    try {
      real = realpathSync(prog);
    } catch {
      continue;
    }
    // The program itself is always visible, as a file, even inside a protected directory (a node
    // of the runner install, an agent CLI under the host's HOME): one file shows nothing else.
    out.add(prog);
    if (real !== prog) out.add(real);
    // A package directory holds only the package (the CLI's own files, its native binary).
    const pkg = packageRoot(real);
    if (pkg) out.add(pkg);
  }
  // A path inside another visible one is seen through it: binding it again would ask bwrap to make
  // a mount point inside a read-only bind (and a link's target may not be mounted yet).
  const all = [...out];
  return all.filter((p) => !all.some((q) => q !== p && p.startsWith(q + sep)));
}

/** `…/node_modules/<name>` or `…/node_modules/@scope/<name>` that holds `file`, if any. */
export function packageRoot(file: string): string | undefined {
  const parts = file.split(sep);
  const i = parts.lastIndexOf('node_modules');
  if (i < 0 || i + 1 >= parts.length - 1) return undefined;
  const n = parts[i + 1]!.startsWith('@') ? i + 3 : i + 2;
  if (n > parts.length - 1) return undefined;
  return parts.slice(0, n).join(sep) || undefined;
}
