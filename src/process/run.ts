import { spawn, spawnSync } from 'node:child_process';
import { CappedLog, DEFAULT_LOG_MAX_BYTES } from './capped-log.js';
import type { ChildEnv } from './env.js';
import { groupAlive, killGroup } from './group.js';

/**
 * The one way the toolkit starts a process (N1.2): argv only, never a shell; an environment made by
 * `childEnv` (never a copy of ours); its own process group, so a timeout ends the whole tree
 * (SIGTERM, then SIGKILL after a grace period); output captured with a bound, or appended to a
 * capped log (./capped-log.ts: the file keeps its tail, never more than `log.maxBytes`).
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
  /** Append stdout and stderr to a file instead of capturing them, line by line, capped. */
  log?: RunLog;
  /** The bound on captured output. */
  output?: RunOutput;
  /** Own process group (default true). The group is killed when the leader ends after a timeout. */
  group?: boolean;
  onSpawn?: (pid: number) => void;
}

/** Where a run's output goes when it is logged rather than captured (./capped-log.ts). */
export interface RunLog {
  file: string;
  /** The cap of `file` on disk. Default 4 MiB. */
  maxBytes?: number;
  /** Also keep the first bytes of this run's output in a file of their own. */
  head?: { file: string; bytes: number };
}

/** Per stream. Beyond `maxBytes` the oldest bytes are dropped (`truncated`), or with `overflow: 'kill'`
 *  the group is killed and `overflowed` is set. Default 8 MiB, keep the tail. */
export interface RunOutput {
  maxBytes?: number;
  overflow?: 'tail' | 'kill';
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
  /** Output beyond output.maxBytes was dropped from the front (or the log file was cut). */
  truncated: boolean;
  /** overflow: 'kill' ended the process because its output exceeded the bound. */
  overflowed: boolean;
}

const DEFAULT_MAX = 8 * 1024 * 1024;
/** How long a log's pipes are read after the leader exited, while something else holds them. */
const DRAIN_MS = 500;
/** A line is held whole up to this, so that stdout and stderr lines do not interleave mid-line. */
const MAX_HELD_LINE = 256 * 1024;

/**
 * One stream's output into a shared log, whole lines at a time: stdout and stderr arrive on two
 * pipes, and a line of one must not be split by a line of the other (a CLI's JSON lines are read
 * back from the log). A line longer than MAX_HELD_LINE is written as it comes.
 */
class LineJoin {
  private held: Buffer[] = [];
  private heldLength = 0;
  constructor(private readonly log: CappedLog) {}
  push(b: Buffer): void {
    const nl = b.lastIndexOf(0x0a);
    if (nl < 0) {
      this.hold(b);
      return;
    }
    this.held.push(b.subarray(0, nl + 1));
    this.log.write(Buffer.concat(this.held));
    this.held = [];
    this.heldLength = 0;
    this.hold(b.subarray(nl + 1));
  }
  end(): void {
    if (this.heldLength) this.log.write(Buffer.concat(this.held));
    this.held = [];
    this.heldLength = 0;
  }
  private hold(b: Buffer): void {
    if (!b.length) return;
    this.held.push(b);
    this.heldLength += b.length;
    if (this.heldLength > MAX_HELD_LINE) this.end();
  }
}

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
  const max = o.output?.maxBytes ?? DEFAULT_MAX;
  const started = performance.now();
  const log = o.log
    ? new CappedLog(o.log.file, o.log.maxBytes ?? DEFAULT_LOG_MAX_BYTES, o.log.head)
    : undefined;
  return new Promise<RunResult>((resolve) => {
    const out = new Tail(max);
    const err = new Tail(max);
    let timedOut = false;
    let overflowed = false;
    let spawnError: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let termTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    const child = spawn(file, args, {
      cwd: o.cwd,
      env: o.env,
      shell: false,
      detached: grouped,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = child.pid ?? -1;
    const stop = (signal: NodeJS.Signals) => {
      if (pid <= 0) return;
      if (grouped) killGroup(pid, signal);
      else child.kill(signal);
    };
    const onData = (tail: Tail) => (b: Buffer) => {
      if (tail.push(b) && o.output?.overflow === 'kill' && !overflowed) {
        overflowed = true;
        stop('SIGKILL');
      }
    };
    const lines = log ? [new LineJoin(log), new LineJoin(log)] : undefined;
    if (lines) {
      child.stdout?.on('data', (b: Buffer) => lines[0]!.push(b));
      child.stderr?.on('data', (b: Buffer) => lines[1]!.push(b));
    } else {
      child.stdout?.on('data', onData(out));
      child.stderr?.on('data', onData(err));
    }
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
      clearTimeout(drainTimer);
      if (log) {
        for (const l of lines ?? []) l.end();
        log.close();
      }
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
        truncated: out.truncated || err.truncated || log?.cut === true,
        overflowed,
      });
    };
    child.once('error', (e) => {
      spawnError = `${file}: ${(e as NodeJS.ErrnoException).code ?? e.message}`;
      if (pid <= 0) finish(null, null);
    });
    child.once('close', (code, signal) => finish(code, signal));
    // A process the student left running may hold the log's pipes open after the leader exited:
    // what is left in them is read for a moment, then the pipes are closed (the leftover is the
    // teardown's to find), so the turn ends with its leader as it did when the output went to a file.
    if (log)
      child.once('exit', (code, signal) => {
        drainTimer = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish(code, signal);
        }, DRAIN_MS);
      });
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
