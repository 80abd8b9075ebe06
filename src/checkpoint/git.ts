import { SchoolError } from '../errors.js';
import { authEnv, GitError, runGit as runHardenedGit } from '../process/git.js';

/**
 * The checkpoint's view of git: the hardened wrapper of src/process plus a token for the one
 * remote operation that needs it. A token reaches git only through the environment of
 * the one command that needs it, as an `http.extraheader` in GIT_CONFIG_COUNT/KEY/VALUE: never in
 * argv (visible to other processes), never in the remote URL, never in a config file, and every
 * message that leaves here passes the redactor.
 */
export interface GitRun {
  cwd: string;
  token?: string;
  input?: Buffer;
}

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export async function runGit(args: readonly string[], options: GitRun): Promise<GitResult> {
  const r = await runHardenedGit(args, {
    cwd: options.cwd,
    input: options.input,
    auth: authEnv(options.token),
  });
  if (r.spawnError)
    throw new SchoolError(`git could not be started (${r.spawnError}); install git`, { code: 'git' });
  return { code: r.exitCode ?? 1, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

/** Runs git and throws GitError (src/process/git.ts) on a non-zero exit. */
export async function git(args: readonly string[], options: GitRun): Promise<Buffer> {
  const result = await runGit(args, options);
  if (result.code !== 0) throw new GitError(args, options.cwd, result.code, result.stderr);
  return result.stdout;
}
