import { existsSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, resolve, sep } from 'node:path';
import { which } from '../process/which.js';
import { SYSTEM_PATHS } from './mounts.js';

/**
 * A command that was not found (exit 127, `command not found`, `ENOENT`) in a sandboxed process:
 * whose failure it is. The sandbox shows the system and only some of the host's PATH entries
 * (src/sandbox/mounts.ts `toolPaths`): a program the host has in a directory left out — under the
 * host's HOME, a runner's tool cache — is not there inside, and the student's work is not to blame.
 *
 * The rule (docs/crews.md, "A program that is not there"):
 *  - the program is on the host's PATH: the school's failure (infra), whichever script asked for it;
 *  - it is nowhere, but it is the first word of the configured command (`dispatch.verify`,
 *    `dispatch.install`, `grading.sealedTests`, the agent's command): the school's failure too — the
 *    runner lacks what the configuration names;
 *  - it is nowhere and a script deeper down asked for it: the student's failure (its script calls a
 *    tool that does not exist, or one it deleted), judged as any failed verification.
 */
export interface MissingProgram {
  /** As the output named it. */
  program: string;
  /** Where the host's PATH has it, when it does. */
  hostFile?: string;
  /** The host PATH entry that holds it. */
  pathEntry?: string;
  /** It is the configured command's first word. */
  configured: boolean;
}

/** The lines shells, `env`, bwrap and Node print when a program is not there; the name is group 1. */
const NOT_FOUND: readonly RegExp[] = [
  // dash `sh: 1: mynode: not found`, bash `bash: line 1: mynode: command not found`, busybox `sh: mynode: not found`
  /^(?:[^\s:]+: )?(?:\d+: |line \d+: )?([^\s:'"`]+): (?:command )?not found\s*$/gm,
  /^zsh: command not found: (\S+)\s*$/gm,
  // `#!/usr/bin/env mynode`: `/usr/bin/env: 'mynode': No such file or directory`
  /^\S*env: [‘'"]?([^\s'’"]+)[’'"]?: No such file or directory\s*$/gm,
  /^bwrap: execvp (\S+): No such file or directory\s*$/gm,
  /\bspawn (\S+) ENOENT\b/g,
];

/** The program the last not-found line of `output` names, if any. */
export function notFoundIn(output: string): string | undefined {
  let last: { at: number; name: string } | undefined;
  for (const re of NOT_FOUND)
    for (const m of output.matchAll(re)) if (!last || m.index >= last.at) last = { at: m.index, name: m[1]! };
  return last?.name;
}

/** The host PATH entry `file` was found in (the first that holds a file of that name). */
function entryOf(file: string, hostPath: string): string | undefined {
  const dir = dirname(file);
  return hostPath.split(delimiter).find((d) => d && resolve(d) === resolve(dir)) ?? dir;
}

export interface MissingQuery {
  /** What the process printed (its part of the log). */
  output: string;
  exitCode: number | null;
  /** The configured command (its first word decides the second case of the rule). */
  command: readonly string[];
  /** The PATH the process was given on the host (the sandbox shows only part of it). */
  hostPath: string;
  /** The sandbox found no such program before anything started (`ProgramNotFoundError`). */
  notFound?: string;
}

/** The program that was not found, when the failure is the school's by the rule above. */
export function missingProgram(q: MissingQuery): MissingProgram | undefined {
  const program = q.notFound ?? (q.exitCode === 127 ? notFoundIn(q.output) : undefined);
  if (!program) return undefined;
  const first = q.command[0] ?? '';
  const configured = program === first || (!first.includes(sep) && basename(program) === first);
  // A relative path (`./bin/x`) names a file of the checkout, not of the host's PATH.
  const hostFile = isAbsolute(program) || !program.includes(sep) ? which(program, q.hostPath) : undefined;
  if (hostFile)
    return {
      program,
      hostFile,
      ...(isAbsolute(program) ? {} : { pathEntry: entryOf(hostFile, q.hostPath) }),
      configured,
    };
  return configured ? { program, configured } : undefined;
}

/**
 * The host PATH entries the sandbox does not show: neither a system directory nor inside one of
 * `bound` (the paths it binds, `toolPaths`' result and `sandbox.readOnly`). Missing entries are
 * left out of the answer (there is nothing to bind).
 */
export function pathEntriesLeftOut(hostPath: string, bound: readonly string[]): string[] {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const under = (p: string, roots: readonly string[]) =>
    roots.some((r) => p === r || p.startsWith(r.endsWith(sep) ? r : r + sep));
  const shown = bound.map((b) => resolve(b));
  const out: string[] = [];
  for (const d of hostPath.split(delimiter)) {
    if (!d || !isAbsolute(d) || !existsSync(d) || out.includes(d)) continue;
    if (under(resolve(d), SYSTEM_PATHS) || under(real(d), SYSTEM_PATHS)) continue;
    if (under(resolve(d), shown) || under(real(d), shown)) continue;
    out.push(d);
  }
  return out;
}

/** The alert's words: the program, where the host has it, and what to change. */
export function describeMissing(m: MissingProgram, what: string): string {
  if (m.hostFile && m.pathEntry)
    return `${what}: \`${m.program}\` was not found inside the sandbox; the host has it at ${m.hostFile} (PATH entry ${m.pathEntry}, which the sandbox leaves out): install it under /usr, or add ${m.pathEntry} to sandbox.readOnly (infra: not counted against the agent)`;
  if (m.hostFile)
    return `${what}: \`${m.program}\` exists on the host but was not found inside the sandbox: add its directory ${dirname(m.hostFile)} to sandbox.readOnly (infra: not counted against the agent)`;
  return `${what}: \`${m.program}\`, the configured command, is not on this runner's PATH: install it or name it by its full path (infra: not counted against the agent)`;
}

/** A missing program and the step that met it: the install or the verification. */
export type MissingAt = MissingProgram & { stage: 'install' | 'verify' };
