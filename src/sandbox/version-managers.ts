import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { which } from '../process/which.js';

/**
 * Version managers whose *shims* directory is on PATH (asdf, pyenv, rbenv, nodenv, mise, volta,
 * rustup's proxies in `~/.cargo/bin`). A shim is a small script or binary that finds the real
 * program through the manager's own root (its scripts, its installed versions, its global version
 * file) and the version files of the working directory (`.tool-versions`, `.python-version`,
 * `rust-toolchain.toml`, a `package.json`'s `volta` key). Inside the sandbox HOME is private, so the
 * manager's root is shown read-only at its own path and the variable that names it is set: the shim
 * then picks the same version inside as outside, from the worktree's files as on the host.
 *
 * What a manager keeps beside its root and may hold secrets is never shown (docs/security.md):
 * mise's `~/.config/mise` (its `[env]` settings), `~/.cargo` but its `bin` (the registry token in
 * `credentials.toml`, `config.toml`'s credential settings, the registry and git caches).
 */
export interface ManagerShims {
  /** The manager, for messages: pyenv, asdf, … */
  manager: string;
  /** Directories shown read-only: the manager's root (or `~/.cargo/bin` and `~/.rustup`). */
  roots: string[];
  /** Variables set inside so the shims find that root although HOME is private. */
  env: Record<string, string>;
  /** Programs the shims start outside the roots (asdf or mise installed elsewhere, a shim's link target). */
  programs: string[];
  /** Files of the host's HOME the manager reads as its global version choice, shown in the private HOME. */
  homeFiles: string[];
}

interface Manager {
  name: string;
  /** The shims directory of the manager under the host environment `env` (its default or its variable). */
  shims: (dir: string, env: NodeJS.ProcessEnv, home: string) => boolean;
  make: (dir: string, env: NodeJS.ProcessEnv, home: string) => Omit<ManagerShims, 'manager'>;
}

const under = (env: NodeJS.ProcessEnv, name: string, fallback: string) =>
  resolve(env[name] && isAbsolute(env[name]!) ? env[name]! : fallback);

/** pyenv, rbenv, nodenv: `<root>/shims/<program>` runs `<root>/libexec/<manager> exec <program>`. */
function rootShims(name: string, variable: string): Manager {
  return {
    name,
    shims: (dir, env, home) =>
      dir === join(under(env, variable, join(home, `.${name}`)), 'shims') ||
      new RegExp(`/\\.${name}/shims$`).test(dir),
    make: (dir) => {
      const root = dirname(dir);
      return { roots: [root], env: { [variable]: root }, programs: [name], homeFiles: [] };
    },
  };
}

const MANAGERS: Manager[] = [
  rootShims('pyenv', 'PYENV_ROOT'),
  rootShims('rbenv', 'RBENV_ROOT'),
  rootShims('nodenv', 'NODENV_ROOT'),
  {
    // asdf: shims run `asdf exec`; its data (plugins, installs) in ASDF_DATA_DIR, its scripts in
    // ASDF_DIR (the same ~/.asdf when cloned there; none for the single binary of 0.16 and later).
    name: 'asdf',
    shims: (dir, env, home) =>
      dir === join(under(env, 'ASDF_DATA_DIR', join(home, '.asdf')), 'shims') || /\/\.asdf\/shims$/.test(dir),
    make: (dir, env) => {
      const data = dirname(dir);
      const install = env.ASDF_DIR && isAbsolute(env.ASDF_DIR) ? resolve(env.ASDF_DIR) : undefined;
      return {
        roots: install && install !== data ? [data, install] : [data],
        env: { ASDF_DATA_DIR: data, ...(install ? { ASDF_DIR: install } : {}) },
        programs: ['asdf'],
        // The global versions and asdf's settings (legacy version files): no secret in either.
        homeFiles: ['.tool-versions', '.asdfrc'],
      };
    },
  },
  {
    // mise: shims are links to the mise binary; installs and plugins in MISE_DATA_DIR. Its global
    // config (~/.config/mise) may set environment variables with secrets: not shown.
    name: 'mise',
    shims: (dir, env, home) =>
      dir === join(under(env, 'MISE_DATA_DIR', join(home, '.local', 'share', 'mise')), 'shims') ||
      /\/mise\/shims$/.test(dir),
    make: (dir) => {
      const root = dirname(dir);
      return {
        roots: [root],
        env: { MISE_DATA_DIR: root },
        programs: ['mise'],
        homeFiles: ['.tool-versions'],
      };
    },
  },
  {
    // volta: `~/.volta/bin/<tool>` links to volta-shim, which reads VOLTA_HOME (tools/image, the
    // default platform in tools/user) and the project's package.json.
    name: 'volta',
    shims: (dir, env, home) =>
      dir === join(under(env, 'VOLTA_HOME', join(home, '.volta')), 'bin') || /\/\.volta\/bin$/.test(dir),
    make: (dir) => {
      const root = dirname(dir);
      return { roots: [root], env: { VOLTA_HOME: root }, programs: [], homeFiles: [] };
    },
  },
  {
    // rustup's proxies (cargo, rustc, … in ~/.cargo/bin) read RUSTUP_HOME. Only the bin directory
    // of ~/.cargo is shown; CARGO_HOME stays unset, so cargo keeps its caches in the private HOME.
    name: 'rustup',
    shims: (dir, env, home) =>
      dir === join(under(env, 'CARGO_HOME', join(home, '.cargo')), 'bin') || /\/\.cargo\/bin$/.test(dir),
    make: (dir, env, home) => {
      const rustup = [
        env.RUSTUP_HOME && isAbsolute(env.RUSTUP_HOME) ? resolve(env.RUSTUP_HOME) : undefined,
        join(dirname(dirname(dir)), '.rustup'),
        join(home, '.rustup'),
      ].find((p): p is string => !!p && existsSync(p));
      return {
        roots: rustup ? [dir, rustup] : [dir],
        env: rustup ? { RUSTUP_HOME: rustup } : ({} as Record<string, string>),
        programs: [],
        homeFiles: [],
      };
    },
  },
];

/**
 * The manager whose shims directory `dir` is, under the host environment `env` (its HOME and the
 * managers' variables); its own program is looked up on `path` (the confined process's PATH).
 */
export function shimManager(dir: string, env: NodeJS.ProcessEnv, path: string): ManagerShims | undefined {
  const home = resolve(env.HOME || homedir());
  const d = resolve(dir);
  const m = MANAGERS.find((x) => x.shims(d, env, home));
  if (!m) return undefined;
  const made = m.make(d, env, home);
  // A shim that is a link (mise, volta) starts its target: shown as a program when outside the roots.
  const targets = linkTargets(d).filter((t) => !made.roots.some((r) => t === r || t.startsWith(r + '/')));
  const found = made.programs.map((p) => which(p, path)).filter((p): p is string => !!p);
  return { manager: m.name, ...made, programs: [...new Set([...found, ...targets])] };
}

/** More entries than this in a shims directory are not looked through. */
const MAX_ENTRIES = 2000;

function linkTargets(dir: string): string[] {
  const out = new Set<string>();
  try {
    for (const e of readdirSync(dir, { withFileTypes: true }).slice(0, MAX_ENTRIES)) {
      if (!e.isSymbolicLink()) continue;
      try {
        out.add(realpathSync(join(dir, e.name)));
      } catch {
        /* a dangling shim: nothing to show */
      }
    }
  } catch {
    /* unreadable: no links */
  }
  return [...out];
}

/**
 * The version directories inside a manager's root (`versions/<v>`, `versions/node/<v>`,
 * `installs/<tool>/<v>`, `tools/image/<tool>/<v>`, `toolchains/<t>`), where an npm global config
 * (`etc/npmrc`) may hold a registry token.
 */
export function versionDirs(root: string): string[] {
  const list = (p: string) => {
    try {
      return readdirSync(p, { withFileTypes: true })
        .slice(0, MAX_ENTRIES)
        .filter((e) => e.isDirectory())
        .map((e) => join(p, e.name));
    } catch {
      return [];
    }
  };
  return [
    ...list(join(root, 'versions')),
    ...list(join(root, 'versions', 'node')),
    ...list(join(root, 'installs')).flatMap(list),
    ...list(join(root, 'tools', 'image')).flatMap(list),
    ...list(join(root, 'toolchains')),
  ];
}
