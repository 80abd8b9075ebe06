import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { ChildEnv } from './env.js';
import { groupAlive, killGroup } from './group.js';

/**
 * The one way the toolkit starts a process (N1.2): argv only, never a shell; an environment made by
 * `childEnv` (never a copy of ours); its own process group, so a timeout ends the whole tree
 * (SIGTERM, then SIGKILL after a grace period); output captured with a bound, or appended to a file.
 */
export interface RunOptions {
  cwd: string;
  env: ChildEnv;
  /** No timeout when undefined. */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL on timeout. Default 2 s. */
  graceMs?: number;
  /** Written to stdin, then stdin is closed. Default: closed at once. */
  input?: string | Buffer;
  /** Append stdout and stderr to this file instead of capturing them. */
  logFile?: string;
  /** Per stream. Beyond it the oldest bytes are dropped (`truncated`), or with `overflow: 'kill'` the
   *  group is killed and `overflowed` is set. Default 8 MiB, keep the tail. */
  maxOutputBytes?: number;
  overflow?: 'tail' | 'kill';
  /** Own process group (default true). The group is killed when the leader ends after a timeout. */
  group?: boolean;
  onSpawn?: (pid: number) => void;
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Monotonic (N3.2). */
  durationMs: number;
  pid: number;
  /** Set when the program could not start (ENOENT, EACCES). */
  spawnError?: string;
  stdout: Buffer;
  stderr: Buffer;
  /** Output beyond maxOutputBytes was dropped from the front. */
  truncated: boolean;
  /** overflow: 'kill' ended the process because its output exceeded the bound. */
  overflowed: boolean;
}

const DEFAULT_MAX = 8 * 1024 * 1024;

class Tail {
  private chunks: Buffer[] = [];
  private len = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(b: Buffer): boolean {
    this.chunks.push(b);
    this.len += b.length;
    if (this.len <= this.max) return false;
    this.truncated = true;
    while (this.len - this.chunks[0]!.length >= this.max) this.len -= this.chunks.shift()!.length;
    return true;
  }
  value(): Buffer {
    const all = Buffer.concat(this.chunks);
    return all.length > this.max ? all.subarray(all.length - this.max) : all;
  }
}

export function runProcess(argv: readonly string[], o: RunOptions): Promise<RunResult> {
  const [file, ...args] = argv;
  if (!file) throw new TypeError('runProcess: empty argv');
  const grouped = o.group ?? true;
  const max = o.maxOutputBytes ?? DEFAULT_MAX;
  const started = performance.now();
  const fd = o.logFile ? openSync(o.logFile, 'a') : undefined;
  return new Promise<RunResult>((resolve) => {
    const out = new Tail(max);
    const err = new Tail(max);
    let timedOut = false;
    let overflowed = false;
    let spawnError: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let termTimer: NodeJS.Timeout | undefined;
    const child = spawn(file, args, {
      cwd: o.cwd,
      env: o.env,
      shell: false,
      detached: grouped,
      stdio: ['pipe', fd ?? 'pipe', fd ?? 'pipe'],
    });
    if (fd !== undefined) closeSync(fd);
    const pid = child.pid ?? -1;
    const stop = (signal: NodeJS.Signals) => {
      if (pid <= 0) return;
      if (grouped) killGroup(pid, signal);
      else child.kill(signal);
    };
    const onData = (tail: Tail) => (b: Buffer) => {
      if (tail.push(b) && o.overflow === 'kill' && !overflowed) {
        overflowed = true;
        stop('SIGKILL');
      }
    };
    child.stdout?.on('data', onData(out));
    child.stderr?.on('data', onData(err));
    child.stdin?.on('error', () => undefined); // a program that ignores stdin may close it early
    child.stdin?.end(o.input ?? '');
    if (pid > 0) o.onSpawn?.(pid);
    if (o.timeoutMs !== undefined) {
      termTimer = setTimeout(() => {
        timedOut = true;
        stop('SIGTERM');
        killTimer = setTimeout(() => stop('SIGKILL'), o.graceMs ?? 2_000);
      }, o.timeoutMs);
    }
    let settled = false;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(termTimer);
      clearTimeout(killTimer);
      // The leader is gone but its group may not be: finish what the timeout started.
      if ((timedOut || overflowed) && grouped && pid > 0 && groupAlive(pid)) killGroup(pid, 'SIGKILL');
      resolve({
        exitCode,
        signal,
        timedOut,
        durationMs: performance.now() - started,
        pid,
        spawnError,
        stdout: out.value(),
        stderr: err.value(),
        truncated: out.truncated || err.truncated,
        overflowed,
      });
    };
    child.once('error', (e) => {
      spawnError = `${file}: ${(e as NodeJS.ErrnoException).code ?? e.message}`;
      if (pid <= 0) finish(null, null);
    });
    child.once('close', (code, signal) => finish(code, signal));
  });
}

export interface SyncResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  spawnError?: string;
}

/** For short set-up commands outside any crew (preparing the example repository). */
export function runProcessSync(
  argv: readonly string[],
  o: { cwd: string; env: ChildEnv; timeoutMs?: number },
): SyncResult {
  const [file, ...args] = argv;
  if (!file) throw new TypeError('runProcessSync: empty argv');
  const r = spawnSync(file, args, {
    cwd: o.cwd,
    env: o.env,
    shell: false,
    encoding: 'utf8',
    timeout: o.timeoutMs,
    maxBuffer: DEFAULT_MAX,
  });
  return {
    exitCode: r.status,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    spawnError: r.error
      ? `${file}: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message}`
      : undefined,
  };
}
