import { SchoolError } from '../errors.js';
import { redactText, registerSecret } from '../security/redact.js';
import { childEnv, type ChildEnv } from './env.js';
import { runProcess, type RunResult } from './run.js';

/**
 * The one git wrapper. A student can write everything in its worktree and in the repository's
 * shared git directory (hooks, config, config.worktree, info/attributes), so no git command of the
 * toolkit may take code to run from there:
 * - hooks: `core.hooksPath` is `/dev/null`, under which no hook can exist (nothing to create,
 *   nothing left behind in the temp directory);
 * - git never enters a nested repository (a student's `vendor/.git`, a gitlink): a child git there
 *   would read that repository's own config (filters, fsmonitor) and run what it names. Submodules
 *   are ignored by every diff and status (`diff.ignoreSubmodules=all`, `--ignore-submodules=all`
 *   added to those commands), never recursed into or summarized, never fetched or pushed;
 * - `core.fsmonitor=false`, no pager, no editor, no external diff, no textconv (`diff.external`
 *   blanked, and `--no-ext-diff --no-textconv` on every diff, log and show, `noExternalDiff`);
 * - filter, diff and merge drivers named in the repository's config are blanked for the command
 *   (`-c filter.<name>.clean=` …): a `.gitattributes` line can then select nothing that runs;
 * - no system or global config (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`), no credential
 *   helper, no askpass, no terminal prompt, `protocol.ext.allow=never`;
 * - the environment comes from `childEnv`: no token reaches git unless a caller passes one in `auth`,
 *   and then only as an `http.extraheader` in GIT_CONFIG_* variables, never in argv or a file.
 */
export class GitError extends SchoolError {
  override readonly code = 'git';
  constructor(
    readonly args: readonly string[],
    readonly cwd: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(
      `git ${args.join(' ').slice(0, 200)} failed in ${cwd}: ${redactText(stderr.trim()).slice(0, 1000)}`,
    );
    this.name = 'GitError';
  }
}

/** Settings that win over every config file the repository holds (command-line config is last). */
function hardening(): string[] {
  return [
    // A hook is looked up as `<hooksPath>/<name>`: under /dev/null none exists, and no directory
    // of ours has to be made (or could be written by anyone).
    'core.hooksPath=/dev/null',
    'core.fsmonitor=false',
    'diff.ignoreSubmodules=all',
    'status.submoduleSummary=false',
    'submodule.recurse=false',
    'fetch.recurseSubmodules=false',
    'push.recurseSubmodules=no',
    'core.untrackedCache=false',
    'core.pager=cat',
    'core.editor=true',
    'sequence.editor=true',
    'core.askPass=',
    'core.sshCommand=ssh',
    'core.gitProxy=',
    'credential.helper=',
    'diff.external=',
    'protocol.ext.allow=never',
    'commit.gpgSign=false',
    'tag.gpgSign=false',
    'gpg.program=gpg',
  ].flatMap((c) => ['-c', c]);
}

const DRIVER_KEY = /^(filter|diff|merge)\.(.+)\.(clean|smudge|process|textconv|command|driver|required)$/i;
/**
 * Commands that never convert working-tree content, so no attribute can select a driver for them.
 * Every other command (status, diff, add, checkout, commit, hash-object, apply, …) runs with the
 * repository's drivers blanked first.
 */
const NO_CONTENT = new Set([
  'cat-file',
  'commit-tree',
  'config',
  'count-objects',
  'fetch',
  'for-each-ref',
  'init',
  'ls-remote',
  'ls-tree',
  'merge-base',
  'mktree',
  'push',
  'rev-list',
  'rev-parse',
  'show-ref',
  'symbolic-ref',
  'update-ref',
  'var',
  'version',
  'write-tree',
]);

/** The subcommand, past git's global options (`-c k=v` and `-C dir` take a value). */
export function subcommand(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-c' || a === '-C') i++;
    else if (!a.startsWith('-')) return a;
  }
  return '';
}

function baseEnv(extra?: Readonly<Record<string, string>>): ChildEnv {
  return childEnv({
    set: {
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '',
      SSH_ASKPASS: undefined,
      GIT_PAGER: 'cat',
      GIT_EDITOR: 'true',
      GIT_OPTIONAL_LOCKS: '0',
      GIT_ATTR_NOSYSTEM: '1',
      LC_ALL: 'C',
      ...extra,
    },
  });
}

/** Every filter/diff/merge driver the repository's config defines, blanked for one command. */
async function blankDrivers(cwd: string, env: ChildEnv): Promise<string[]> {
  const r = await runProcess(['git', ...hardening(), 'config', '-z', '--list'], {
    cwd,
    env,
    group: false,
    timeoutMs: 30_000,
  });
  if (r.exitCode !== 0) return []; // not a repository yet (init, clone): nothing to blank
  const names = new Map<string, string>();
  for (const entry of r.stdout.toString('utf8').split('\0')) {
    const key = entry.split('\n', 1)[0] ?? '';
    const m = DRIVER_KEY.exec(key);
    if (m) names.set(`${m[1]!.toLowerCase()}.${m[2]}`, m[1]!.toLowerCase());
  }
  const out: string[] = [];
  for (const [prefix, kind] of names) {
    const keys =
      kind === 'filter'
        ? ['clean', 'smudge', 'process']
        : kind === 'diff'
          ? ['textconv', 'command']
          : ['driver'];
    for (const k of keys) out.push('-c', `${prefix}.${k}=`);
    if (kind === 'filter') out.push('-c', `${prefix}.required=false`);
  }
  return out;
}

export interface GitOptions {
  cwd: string;
  /** stdin. */
  input?: string | Buffer;
  /** Non-secret variables for this command (GIT_AUTHOR_NAME, GIT_INDEX_FILE, …). */
  env?: Readonly<Record<string, string>>;
  /** A token for one remote operation: sent as an Authorization header, registered with the redactor. */
  auth?: Readonly<Record<string, string>>;
  timeoutMs?: number;
  /** Beyond this much stdout git is killed and the result is `overflowed`. Default 1 GiB. */
  maxOutputBytes?: number;
}

/** The commands that look at submodules' work trees unless told not to. */
const SUBMODULE_AWARE = new Set(['status', 'diff', 'diff-files', 'diff-index']);

/**
 * `args` with `--ignore-submodules=all` right after a diff or status subcommand, so no child git
 * runs in a nested repository even where a `.gitmodules` entry (`ignore = none`) would override the
 * config default. A caller may ask for another value only on a comparison of the index with a tree
 * (`--cached`), which reads no work tree; anything else is a mistake in the toolkit, refused.
 */
export function ignoringSubmodules(args: readonly string[]): string[] {
  const sub = subcommand(args);
  if (!SUBMODULE_AWARE.has(sub)) return [...args];
  const asked = args.filter((a) => a.startsWith('--ignore-submodules'));
  const cached = args.includes('--cached') || args.includes('--staged');
  if (asked.some((a) => a !== '--ignore-submodules=all') && !cached)
    throw new SchoolError(
      `git ${sub}: --ignore-submodules other than "all" reads nested repositories; refused`,
      {
        code: 'git',
      },
    );
  if (asked.length) return [...args];
  const at = args.indexOf(sub) + 1;
  return [...args.slice(0, at), '--ignore-submodules=all', ...args.slice(at)];
}

/** The commands that produce patches and would run an external diff or a textconv filter. */
const PATCH_PRODUCING = new Set(['diff', 'log', 'show']);

/**
 * `args` with `--no-ext-diff --no-textconv` right after a diff, log or show subcommand. The wrapper
 * blanks `diff.external` (a student's config could name a program there), and git then fails a
 * patch-producing `diff` with "cannot run"; these flags tell it to use its own diff. A caller asking
 * for `--ext-diff` or `--textconv` is a mistake in the toolkit, refused.
 */
export function noExternalDiff(args: readonly string[]): string[] {
  const sub = subcommand(args);
  if (!PATCH_PRODUCING.has(sub)) return [...args];
  const at = args.indexOf(sub) + 1;
  // Only options before a `--` are options; after it come paths.
  const end = args.indexOf('--', at);
  const opts = args.slice(at, end === -1 ? args.length : end);
  const asked = opts.find((a) => a === '--ext-diff' || a === '--textconv');
  if (asked)
    throw new SchoolError(`git ${sub}: ${asked} runs a program the repository's config names; refused`, {
      code: 'git',
    });
  const add = ['--no-ext-diff', '--no-textconv'].filter((f) => !opts.includes(f));
  return [...args.slice(0, at), ...add, ...args.slice(at)];
}

/** Runs git; returns the raw result (exit code, stdout as bytes). Never throws for a non-zero exit. */
export async function runGit(args: readonly string[], o: GitOptions): Promise<RunResult> {
  const env = baseEnv({ ...o.env, ...o.auth });
  const drivers = NO_CONTENT.has(subcommand(args)) ? [] : await blankDrivers(o.cwd, env);
  return runProcess(['git', ...hardening(), ...drivers, ...noExternalDiff(ignoringSubmodules(args))], {
    cwd: o.cwd,
    env,
    input: o.input,
    group: false,
    timeoutMs: o.timeoutMs ?? 600_000,
    output: { maxBytes: o.maxOutputBytes ?? 1024 * 1024 * 1024, overflow: 'kill' },
  });
}

/** Runs git and returns stdout as bytes; throws GitError on a non-zero exit. */
export async function gitBytes(args: readonly string[], o: GitOptions): Promise<Buffer> {
  const r = await runGit(args, o);
  if (r.exitCode !== 0 || r.overflowed)
    throw new GitError(args, o.cwd, r.exitCode, r.spawnError ?? r.stderr.toString('utf8'));
  return r.stdout;
}

/** Runs git and returns stdout as text; throws GitError on a non-zero exit. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await gitBytes(args, { cwd })).toString('utf8');
}

/**
 * A token for one remote operation, as GIT_CONFIG_* variables carrying an `http.extraheader`: never
 * in argv (visible to other processes), the remote URL or a config file. Registered with the
 * redactor, in both its plain and its base64 form.
 */
export function authEnv(token: string | undefined): Record<string, string> {
  if (!token) return {};
  registerSecret(token);
  const basic = Buffer.from(`x-access-token:${token}`, 'utf8').toString('base64');
  registerSecret(basic);
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraheader',
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
  };
}
