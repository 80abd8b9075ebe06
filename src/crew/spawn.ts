import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { groupAlive, killGroup } from './proc.js';

/**
 * N1.2: every command runs as argv through `spawn` with `shell: false`. Commands that belong to a
 * crew run `detached` (their own session and process group), so a timeout can signal the whole
 * group: SIGTERM first, SIGKILL after a grace period.
 */
export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  /** Where stdout and stderr go (appended). The file outlives this process, so logs are retained. */
  logPath: string;
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL on timeout. */
  graceMs: number;
  onSpawn?: (pid: number) => void;
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Monotonic (N3.2). */
  durationMs: number;
  pid: number;
  /** Set when the command could not start at all (ENOENT, EACCES). */
  spawnError?: string;
}

export function runGrouped(argv: readonly string[], options: RunOptions): Promise<RunResult> {
  const [file, ...args] = argv;
  if (!file) throw new Error('runGrouped: empty argv');
  const fd = openSync(options.logPath, 'a');
  const started = performance.now();
  return new Promise<RunResult>((resolve) => {
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', fd, fd],
      detached: true,
      shell: false,
    });
    closeSync(fd);
    const pid = child.pid ?? -1;
    let done = false;
    const finish = (r: Omit<RunResult, 'durationMs' | 'pid' | 'timedOut'>) => {
      if (done) return;
      done = true;
      clearTimeout(termTimer);
      if (timedOut && pid > 0 && groupAlive(pid)) {
        // The leader is gone but its group may not be: finish the job the timeout started.
        killGroup(pid, 'SIGKILL');
      }
      if (killTimer) clearTimeout(killTimer);
      resolve({ ...r, timedOut, durationMs: performance.now() - started, pid });
    };
    child.once('error', (e) =>
      finish({
        exitCode: null,
        signal: null,
        spawnError: `${file}: ${(e as NodeJS.ErrnoException).code ?? e.message}`,
      }),
    );
    if (pid > 0) options.onSpawn?.(pid);
    const termTimer = setTimeout(() => {
      timedOut = true;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), options.graceMs);
    }, options.timeoutMs);
    child.once('exit', (code, signal) => finish({ exitCode: code, signal }));
  });
}

export interface CaptureResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a short helper (git) with argv and captures its output. Not detached: it is ours. */
export function capture(
  argv: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CaptureResult> {
  const [file, ...args] = argv;
  if (!file) throw new Error('capture: empty argv');
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, shell: false, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.once('error', reject);
    child.once('close', (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}
