import { spawn } from 'node:child_process';
import { redactText, registerSecret } from '../security/redact.js';

/**
 * The git CLI, as argv (never a shell, N1.2). A token reaches git only through the environment of
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

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
  ) {
    super(
      `git ${args[0] ?? ''} failed (exit ${result.code}): ${redactText(result.stderr.trim()).slice(0, 2000)}`,
    );
    this.name = 'GitError';
  }
}

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

export function runGit(args: readonly string[], options: GitRun): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        GIT_TERMINAL_PROMPT: '0',
        GIT_ASKPASS: '',
        LC_ALL: 'C',
        ...authEnv(options.token),
      },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? Buffer.alloc(0));
  });
}

/** Runs git and throws GitError on a non-zero exit. */
export async function git(args: readonly string[], options: GitRun): Promise<Buffer> {
  const result = await runGit(args, options);
  if (result.code !== 0) throw new GitError(args, result);
  return result.stdout;
}
