import { existsSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { HostEnv } from '../process/run-context.js';
import { which } from '../process/which.js';
import { SYSTEM_PATHS } from './mounts.js';
import { defaultProtected } from './sandbox.js';
import { linkChain, shimKind, toolCacheDirs, toolchainMounts } from './toolchains.js';
import type { Policy } from './policy.js';

/**
 * What a configuration expects to see inside the sandbox that the sandbox will not show, found
 * before a crew runs: a `passEnv` variable whose value is a host path (`CODEX_HOME`,
 * `CLAUDE_CONFIG_DIR`) that does not exist inside, a PATH entry left out, a `homeFiles` entry
 * missing from HOME. `school config check` refuses on an error; `school doctor` reports them all.
 */
export interface VisibilityProblem {
  severity: 'error' | 'warning';
  /** The setting at fault, e.g. `agents[codex].passEnv`. */
  field: string;
  detail: string;
  fix: string;
}

export interface VisibilityOptions {
  /** The host HOME (default: the HOME of `env`, else this user's). */
  home?: string;
}

/**
 * What the check looks at, said without the configuration (src/config/sandbox-policy.ts builds it
 * from school.yml): the policy's kind and read-only paths, the agent CLIs the crews start, and each
 * holder of passEnv variables — an agent, with its homeFiles, or the reviewer, which has none.
 */
export interface VisibilityInput {
  policy: Pick<Policy, 'kind' | 'readOnly'>;
  /** The agents' CLIs as named (`claude`, `codex`, a configured bin), found on the host's PATH. */
  programs: readonly string[];
  holders: ReadonlyArray<{
    /** The setting that holds them, e.g. `agents[codex]` or `grading.reviewer`. */
    field: string;
    passEnv: readonly string[];
    /** Its homeFiles and whose crew needs them; undefined: no such option (the reviewer). */
    homeFiles?: { files: readonly string[]; crewOf: string };
  }>;
}

/** Every problem of `input` under the host environment `env`; empty with `kind: none`. */
export function sandboxVisibilityProblems(
  input: VisibilityInput,
  env: HostEnv,
  o: VisibilityOptions = {},
): VisibilityProblem[] {
  if (input.policy.kind === 'none') return [];
  const home = resolve(o.home ?? env.HOME ?? homedir());
  const visible = visibleTree(input, env, home);
  const out: VisibilityProblem[] = [];
  for (const h of input.holders)
    for (const name of h.passEnv) {
      const value = env[name];
      if (!value || !isAbsolute(value)) continue;
      const hidden = value
        .split(delimiter)
        .filter((p) => isAbsolute(p) && !visible(resolve(p)))
        .map((p) => resolve(p));
      for (const p of hidden)
        out.push(hiddenPathProblem(`${h.field}.passEnv`, name, p, home, h.homeFiles !== undefined));
    }
  for (const { field, homeFiles } of input.holders)
    for (const rel of homeFiles?.files ?? []) {
      const source = join(home, rel);
      if (!isFile(source))
        out.push({
          severity: 'warning',
          field: `${field}.homeFiles`,
          detail: `${source} is not a file here: the crew of ${homeFiles!.crewOf} would not start`,
          fix: "log the CLI in as the runner's user on this machine, or remove the entry",
        });
    }
  for (const dir of (env.PATH ?? '').split(delimiter).filter((d) => isAbsolute(d) && existsSync(d))) {
    if (visible(resolve(dir))) continue;
    const kind = shimKind(dir);
    out.push({
      severity: 'warning',
      field: 'PATH',
      detail: `${dir}${kind ? ` (${kind})` : ''} is on PATH but not visible in the sandbox: a program found there outside is not found inside`,
      fix: "put the toolchain's version directory on PATH instead (e.g. ~/.nvm/versions/node/<v>/bin, $(pyenv prefix)/bin, ~/.rustup/toolchains/<t>/bin), or add the directory to sandbox.readOnly",
    });
  }
  return out;
}

function hiddenPathProblem(
  field: string,
  name: string,
  path: string,
  home: string,
  homeFiles: boolean,
): VisibilityProblem {
  const inHome = path === home || path.startsWith(home + sep);
  const detail = `${name}=${path} names a host path the sandbox does not show${inHome ? " (the runner user's HOME is private inside)" : ''}: the CLI would look there and find nothing`;
  return { severity: 'error', field, detail, fix: hiddenPathFix({ field, name, path, home, homeFiles }) };
}

/**
 * What to change for a passEnv variable whose value is a host path the sandbox does not show: under
 * HOME, an agent lists the files it needs in homeFiles (copied into the crew's private HOME);
 * anywhere, the path may be shown read-only with sandbox.readOnly.
 */
export function hiddenPathFix(o: {
  /** The passEnv field, e.g. `agents[codex].passEnv`. */
  field: string;
  name: string;
  path: string;
  home: string;
  /** The holder is an agent (homeFiles is one of its options). */
  homeFiles: boolean;
}): string {
  const inHome = o.path === o.home || o.path.startsWith(o.home + sep);
  const rel = relative(o.home, o.path) || '.';
  // The login file each CLI keeps in the directory the variable names.
  const file =
    o.name === 'CLAUDE_CONFIG_DIR' ? '.credentials.json' : o.name === 'CODEX_HOME' ? 'auth.json' : '<file>';
  const example = rel === '.' ? '.codex/auth.json' : isFile(o.path) ? rel : `${rel}/${file}`;
  const readOnly = `add ${o.path} to sandbox.readOnly to show it read-only`;
  return inHome && o.homeFiles
    ? `remove ${o.name} from passEnv and list the files the CLI needs in ${o.field.replace(/\.passEnv$/, '.homeFiles')} (e.g. [${example}]), copied into the crew's private HOME; or ${readOnly}`
    : readOnly;
}

/** Whether a host path is seen inside: the system, sandbox.readOnly, and the toolchains on PATH. */
function visibleTree(input: VisibilityInput, env: HostEnv, home: string): (p: string) => boolean {
  const path = env.PATH ?? '';
  const bins = input.programs.map((p) => which(p, path)).filter((b): b is string => !!b);
  const tools = toolchainMounts({
    path,
    programs: [...bins, process.execPath],
    protect: [home, ...defaultProtected(env)],
    toolCaches: toolCacheDirs(env),
    env: { ...env, HOME: home },
  });
  const shown = [...SYSTEM_PATHS, ...input.policy.readOnly, ...tools.readOnly].map((p) => resolve(p));
  const under = (p: string, dirs: readonly string[]) => dirs.some((d) => p === d || p.startsWith(d + sep));
  const seen = (p: string) => under(p, shown) && !under(p, tools.masked);
  const made = new Set(tools.links.map((l) => l.path));
  // Reached through links the sandbox makes again inside (nvm's `current`): visible when each link
  // on the way is made or seen, and where they lead is seen.
  return (p) => {
    if (seen(p)) return true;
    const chain = linkChain(p);
    const real = realPath(p);
    return !!chain?.length && !!real && seen(real) && chain.every((l) => made.has(l.path) || seen(l.path));
  };
}

function realPath(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
