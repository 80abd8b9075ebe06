import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { HostEnv } from '../process/run-context.js';
import { SYSTEM_PATHS } from './mounts.js';
import { shimManager, versionDirs } from './version-managers.js';

/**
 * What of the host's toolchains a confined process sees, read-only, at the same paths: the programs
 * it runs (the agent CLI, verification, sealed tests, the reviewer) and the interpreters those start
 * (`#!/usr/bin/env node`, `npm` scripts) must resolve inside to the same files as outside.
 *
 * A PATH entry outside the protected paths (HOME, the toolkit, the runner install) is bound as it
 * is. One inside them is bound only when it is recognized as a toolchain's *version directory*,
 * which holds that toolchain and nothing of the user's: `~/.nvm/versions/node/<v>`, never `~/.nvm`;
 * a runner's tool cache entry `<_tool>/<tool>/<version>/<arch>`, never the rest of `_work`. A
 * version manager's shims directory (asdf, pyenv, rbenv, nodenv, mise, volta, rustup's
 * `~/.cargo/bin`) brings the manager's own root, with the variable that names it set inside
 * (./version-managers.ts), when the host environment is given. `~/.local/bin` is left out.
 *
 * A PATH entry or a program reached through symbolic links (nvm's `~/.nvm/current`, a
 * `~/.local/bin/node` linking into nvm's version directory, npm's `bin` links) keeps its links
 * inside: each link on the way is made again at its own path, pointing where it points outside,
 * when what it leads to is visible. A PATH entry that is left out shows only such links of its own
 * (a link names a toolchain's file, never holds anything).
 *
 * A program installed by npm (an agent CLI as a `<prefix>/bin` or `node_modules/.bin` shim, its
 * `bin/*.js`, its native binary) brings its package and everything the package loads, found by
 * Node's resolution over `dependencies` and `optionalDependencies` up the `node_modules` chain.
 */

export interface ToolchainOptions {
  /** The PATH of the confined process. */
  path: string;
  /** Programs it runs (absolute): each with its toolchain or its npm package and what that loads. */
  programs: readonly string[];
  /** Other absolute files it names (a script in argv): the package that holds each. */
  files?: readonly string[];
  /** Paths never made visible but through a recognized toolchain root or a program's own files. */
  protect: readonly string[];
  /** Paths the process may write (its worktree): nothing is resolved from packages found there. */
  untrusted?: readonly string[];
  /** The runner's tool cache directories (RUNNER_TOOL_CACHE, AGENT_TOOLSDIRECTORY), host side. */
  toolCaches?: readonly string[];
  /** Paths the sandbox shows besides these (sandbox.readOnly, the worktree): no link is made in them. */
  visible?: readonly string[];
  /**
   * The host's environment (its HOME, PYENV_ROOT, ASDF_DATA_DIR, …): a version manager's shims
   * directory on PATH is recognized under it. Without it, shims directories are left out.
   */
  env?: HostEnv;
}

/** A symbolic link made inside at `path`, pointing at `target` (as `readlink` says it outside). */
export interface Link {
  path: string;
  target: string;
}

export interface ToolchainMounts {
  readOnly: string[];
  /** Directories inside a visible toolchain replaced by an empty one (npm's global `etc/npmrc`). */
  masked: string[];
  /** Links made inside, parents before children, each outside every visible path. */
  links: Link[];
  /** Variables set inside: the roots of the version managers whose shims are on PATH. */
  env: Record<string, string>;
  /** Host files shown read-only in the private HOME at the same name (`~/.tool-versions`). */
  homeFiles: Array<{ source: string; name: string }>;
}

/** The runner's tool cache directories named by the host's environment. */
export function toolCacheDirs(env: HostEnv): string[] {
  return ['RUNNER_TOOL_CACHE', 'AGENT_TOOLSDIRECTORY']
    .map((k) => env[k])
    .filter((v): v is string => !!v && isAbsolute(v))
    .map((v) => resolve(v));
}

/** Version directories of version managers: the match's first group is the root to bind. */
const VERSION_ROOTS: RegExp[] = [
  // nvm (any NVM_DIR), nodenv, pyenv, rbenv: <manager>/versions/[node/]<version>
  /^(.*\/versions\/(?:node|io\.js)\/[^/]+)(?:\/.*)?$/,
  /^(.*\/\.(?:nodenv|pyenv|rbenv)\/versions\/[^/]+)(?:\/.*)?$/,
  // asdf and mise: <manager>/installs/<tool>/<version>
  /^(.*\/(?:\.asdf|mise)\/installs\/[^/]+\/[^/]+)(?:\/.*)?$/,
  // volta's unpacked images: ~/.volta/tools/image/<tool>/<version>
  /^(.*\/\.volta\/tools\/image\/[^/]+\/[^/]+)(?:\/.*)?$/,
  // rustup: ~/.rustup/toolchains/<toolchain>
  /^(.*\/\.rustup\/toolchains\/[^/]+)(?:\/.*)?$/,
];

/** Kinds of PATH directory, for saying why one is left out (a shims directory of a manager whose root is not there, ~/.local/bin). */
const SHIMS: Array<[RegExp, string]> = [
  [/\/\.(?:asdf|pyenv|rbenv|nodenv)\/shims$|\/mise\/shims$/, "a version manager's shims"],
  [/\/\.volta\/bin$/, "volta's shims"],
  [/\/\.cargo\/bin$/, "rustup's proxies (they read ~/.rustup, and ~/.cargo holds the registry token)"],
  [/\/\.local\/bin$/, '~/.local/bin (pip --user and pipx scripts, credential helpers)'],
];

/**
 * The toolchain root a directory or file belongs to, when it is one the sandbox may show although
 * it lies inside a protected path: a version manager's version directory or a tool cache entry.
 */
export function toolchainRoot(p: string, toolCaches: readonly string[] = []): string | undefined {
  const abs = resolve(p);
  const caches = [...toolCaches, ...[...abs.matchAll(/^(.*\/_work\/_tool)(?:\/|$)/g)].map((m) => m[1]!)];
  for (const cache of caches) {
    if (!abs.startsWith(cache + sep)) continue;
    // <cache>/<tool>/<version>/<arch>: one installed version, never the cache's other entries.
    const parts = abs.slice(cache.length + 1).split(sep);
    if (parts.length >= 3) return join(cache, ...parts.slice(0, 3));
  }
  for (const re of VERSION_ROOTS) {
    const m = re.exec(abs);
    if (m) return m[1];
  }
  return undefined;
}

/** Why a PATH entry that is left out of the sandbox is left out, when it is a known kind. */
export function shimKind(dir: string): string | undefined {
  return SHIMS.find(([re]) => re.test(resolve(dir)))?.[1];
}

/** Read-only mounts for what `o.programs` need; the legacy shape (paths only). */
export function toolPaths(o: ToolchainOptions): string[] {
  return toolchainMounts(o).readOnly;
}

export function toolchainMounts(o: ToolchainOptions): ToolchainMounts {
  const plan = new MountPlan(o);
  for (const d of o.path.split(delimiter).filter(Boolean)) plan.addPathEntry(d);
  for (const prog of [...o.programs, ...plan.managed.programs]) plan.addProgram(prog);
  for (const file of o.files ?? []) plan.addFile(file);
  return plan.mounts();
}

const isSystem = (p: string) => SYSTEM_PATHS.some((s) => p === s || p.startsWith(s + sep));
const inside = (p: string, dirs: readonly string[]) => dirs.some((d) => p === d || p.startsWith(d + sep));

/** The paths a confined process is shown, gathered from its PATH, its programs and its files. */
class MountPlan {
  private readonly guard: ReturnType<typeof protection>;
  private readonly caches: readonly string[];
  private readonly untrusted: string[];
  private readonly out = new Set<string>();
  private readonly masked = new Set<string>();
  /** Programs reached through a link: made inside when what it leads to is visible. */
  private readonly linked: string[] = [];
  /** What the version managers whose shims are on PATH add: variables, programs, HOME files. */
  readonly managed = {
    env: {} as Record<string, string>,
    programs: [] as string[],
    homeFiles: new Set<string>(),
  };

  constructor(private readonly o: ToolchainOptions) {
    this.guard = protection(o.protect);
    this.caches = o.toolCaches ?? [];
    this.untrusted = (o.untrusted ?? []).map((p) => resolve(p));
  }

  /**
   * A recognized root may lie inside a protected path. One that holds a protected directory (the
   * toolkit installed globally into an nvm version) is shown with that directory emptied; one that
   * is a protected path, or holds a protected file, is not shown.
   */
  private addRoot(root: string): boolean {
    if (!existsSync(root) || this.guard.is(root)) return false;
    const inner = this.guard.within(root).filter((q) => existsSync(q));
    if (inner.some((q) => !isDirectory(q))) return false;
    this.out.add(root);
    for (const q of inner) this.masked.add(q);
    return true;
  }

  private add(p: string): void {
    if (!isAbsolute(p) || isSystem(p) || !existsSync(p)) return;
    const root = toolchainRoot(p, this.caches);
    if (root) this.addRoot(root);
    else if (!this.guard.blocked(p)) this.out.add(p);
  }

  /** A PATH directory (and where it leads); a version manager's shims: its root, read-only. */
  addPathEntry(d: string): void {
    const o = this.o;
    this.add(d);
    const real = realpathOf(d);
    if (real && real !== d) this.add(real);
    // A version manager's shims: its root, read-only, when nothing protected is in it.
    const shims =
      o.env && isAbsolute(d) && real
        ? (shimManager(d, o.env, o.path) ?? shimManager(real, o.env, o.path))
        : undefined;
    if (!shims || !shims.roots.every((r) => existsSync(r) && this.addRoot(r))) return;
    Object.assign(this.managed.env, shims.env);
    this.managed.programs.push(...shims.programs);
    for (const name of shims.homeFiles) this.managed.homeFiles.add(name);
    // Each installed version may hold npm's global configuration (a registry token): hidden.
    for (const r of shims.roots)
      for (const v of versionDirs(r))
        if (existsSync(join(v, 'etc', 'npmrc'))) this.masked.add(join(v, 'etc'));
  }

  /**
   * A program: its toolchain root, or itself as a file with its npm package and what that loads.
   * One reached through a link is linked inside when what it leads to is visible, else shown as a
   * file at its own path.
   */
  addProgram(prog: string): void {
    const real = isAbsolute(prog) ? realpathOf(prog) : undefined;
    if (!real) return;
    const root = toolchainRoot(real, this.caches) ?? toolchainRoot(prog, this.caches);
    if (root && this.addRoot(root)) {
      if (!isSystem(prog) && !prog.startsWith(root + sep)) this.linked.push(prog);
      return;
    }
    // The program itself is always visible, as a file, even inside a protected directory (a node
    // of the runner install, an agent CLI under the host's HOME): one file shows nothing else.
    if (real !== prog) {
      this.linked.push(prog);
      this.out.add(real);
    } else this.out.add(prog);
    const pkg = packageRoot(real);
    if (!pkg) return;
    // What a student may write is no place to resolve packages from: its package.json would choose.
    if (inside(pkg, this.untrusted)) return;
    for (const dir of packageClosure(pkg)) if (!this.guard.holds(dir)) this.out.add(dir);
  }

  /** Another file the process names (a script in argv): it and the package that holds it. */
  addFile(file: string): void {
    const real = isAbsolute(file) ? realpathOf(file) : undefined;
    if (!real) return;
    this.out.add(file);
    if (real !== file) this.out.add(real);
    const pkg = packageRoot(real);
    if (pkg && !this.guard.holds(pkg)) this.out.add(pkg);
  }

  /** The mounts: the outermost visible paths, what is masked in them, and the links made inside. */
  mounts(): ToolchainMounts {
    const { o, masked, guard } = this;
    // A path inside another visible one is seen through it: binding it again would ask bwrap to make
    // a mount point inside a read-only bind (and a link's target may not be mounted yet).
    // The system is bound whole already (a package under /usr/lib/node_modules is seen through it).
    const all = [...this.out].filter((p) => !isSystem(p));
    const readOnly = all.filter((p) => !all.some((q) => q !== p && p.startsWith(q + sep)));
    // npm's global configuration (`<prefix>/etc/npmrc`) may hold a registry token: hidden.
    for (const r of readOnly) if (existsSync(join(r, 'etc', 'npmrc'))) masked.add(join(r, 'etc'));
    const links = new Map<string, Link>();
    const shown = [...readOnly, ...(o.visible ?? []).map((p) => resolve(p)), ...this.untrusted];
    const seen = (p: string) => (isSystem(p) || inside(p, shown)) && !inside(p, [...masked]);
    const tryLinks = (p: string): boolean => {
      const chain = linkChain(p);
      const real = realpathOf(p);
      if (!chain || !real || !seen(real)) return false;
      // A link inside a visible path is there already; one above a visible path would hide it.
      const make = chain.filter((l) => !seen(l.path));
      if (make.some((l) => guard.is(l.path) || shown.some((q) => q.startsWith(l.path + sep)))) return false;
      for (const l of make) links.set(l.path, l);
      return true;
    };
    for (const prog of this.linked) if (!tryLinks(prog)) readOnly.push(prog);
    for (const d of o.path.split(delimiter).filter((x) => isAbsolute(x) && existsSync(x))) {
      if (seen(resolve(d))) continue;
      if (tryLinks(resolve(d))) continue;
      // An entry left out: its own links into what is visible are made, nothing else of it.
      for (const name of listLinks(d)) tryLinks(join(resolve(d), name));
    }
    const made = [...links.values()].sort((a, b) => depthOf(a.path) - depthOf(b.path));
    return { readOnly, masked: [...masked], links: made, env: this.managed.env, homeFiles: this.homeFiles() };
  }

  /** The HOME files the version managers read (`~/.tool-versions`), where the host has them. */
  private homeFiles(): Array<{ source: string; name: string }> {
    const hostHome = this.o.env ? resolve(this.o.env.HOME || homedir()) : undefined;
    return hostHome
      ? [...this.managed.homeFiles]
          .map((name) => ({ source: join(hostHome, name), name }))
          .filter((f) => isFile(f.source))
      : [];
  }
}

const depthOf = (p: string) => p.split(sep).filter(Boolean).length;
/** More entries than this in a left-out PATH directory are not looked through. */
const MAX_ENTRIES = 2000;

/** The names of the symbolic links directly in `dir` (none when it cannot be read). */
function listLinks(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .slice(0, MAX_ENTRIES)
      .filter((e) => e.isSymbolicLink())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/**
 * The symbolic links met while resolving `p`, each at its real place (no link above it), with the
 * links of their targets: made inside in this order, they resolve `p` as outside. Undefined when
 * `p` cannot be resolved (a dangling link, a loop).
 */
export function linkChain(p: string, budget = { left: 40 }): Link[] | undefined {
  const out: Link[] = [];
  let cur: string = sep;
  for (const part of resolve(p).split(sep).filter(Boolean)) {
    const next = join(cur, part);
    let st;
    try {
      st = lstatSync(next);
    } catch {
      return undefined;
    }
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    if (--budget.left < 0) return undefined;
    const target = readlinkSync(next);
    out.push({ path: next, target });
    const further = linkChain(resolve(cur, target), budget);
    if (!further) return undefined;
    out.push(...further);
    const real = realpathOf(next);
    if (!real) return undefined;
    cur = real;
  }
  return out;
}

function protection(protect: readonly string[]) {
  // A protected path is compared as given and as it resolves (a linked node_modules, a bind).
  const list = protect.flatMap((p) => {
    const r = resolve(p);
    const real = realpathOf(r);
    return real && real !== r ? [r, real] : [r];
  });
  return {
    /** Inside, equal to or above a protected path (or the root). */
    blocked: (p: string) =>
      p === sep || list.some((q) => p === q || p.startsWith(q + sep) || q.startsWith(p + sep)),
    /** Equal to or above a protected path: binding it would show that path. */
    holds: (p: string) => p === sep || list.some((q) => p === q || q.startsWith(p + sep)),
    /** A protected path itself (or the root). */
    is: (p: string) => p === sep || list.includes(p),
    /** The protected paths strictly inside `p`. */
    within: (p: string) => [...new Set(list.filter((q) => q.startsWith(p + sep)))],
  };
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function realpathOf(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
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

/** A package name as npm allows it: no `..`, no absolute path, at most one scope. */
const PACKAGE_NAME = /^(?:@[A-Za-z0-9~-][A-Za-z0-9._~-]*\/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*$/;
/** An install with more packages than this is not an agent CLI; the walk stops there. */
const MAX_PACKAGES = 4000;

/**
 * The package directories `pkg` loads: itself and, transitively, every dependency and optional
 * dependency that is installed, each found as Node finds it (`node_modules/<name>` in the package's
 * real directory, then in each directory above it). A package seen through a link is listed at the
 * link's path and at its real one, so both the lookup and the loaded files resolve inside.
 */
export function packageClosure(pkg: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const queue = [pkg];
  while (queue.length && seen.size < MAX_PACKAGES) {
    const dir = queue.shift()!;
    const real = realpathOf(dir);
    if (!real || seen.has(real)) {
      if (real && dir !== real && !out.includes(dir)) out.push(dir);
      continue;
    }
    seen.add(real);
    out.push(dir);
    if (real !== dir) out.push(real);
    for (const name of dependencyNames(real)) {
      const found = resolvePackage(name, real);
      if (found) queue.push(found);
    }
  }
  return out;
}

function dependencyNames(dir: string): string[] {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  } catch {
    return [];
  }
  if (!manifest || typeof manifest !== 'object') return [];
  const names = new Set<string>();
  for (const field of ['dependencies', 'optionalDependencies'] as const) {
    const deps = (manifest as Record<string, unknown>)[field];
    if (deps && typeof deps === 'object' && !Array.isArray(deps))
      for (const n of Object.keys(deps))
        if (PACKAGE_NAME.test(n) && !n.split('/').includes('..')) names.add(n);
  }
  return [...names];
}

/** Node's lookup of a bare package name from a package's directory; undefined when not installed. */
export function resolvePackage(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', name);
      try {
        if (statSync(join(candidate, 'package.json')).isFile()) return candidate;
      } catch {
        /* not here: the directory above */
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}
