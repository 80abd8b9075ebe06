import { spawn } from 'node:child_process';

/**
 * Runs a judge command as argv (never a shell, N1.2) with a timeout that kills the whole process
 * group, and keeps a bounded tail of its output: a chatty test suite must not exhaust memory.
 */
export interface CommandResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** Set when the command could not be started at all (e.g. ENOENT). */
  spawnError?: string;
}

export interface CommandOptions {
  cwd: string;
  timeoutMs: number;
  input?: string;
  env?: Record<string, string>;
  maxOutput?: number;
}

export function runCommand(argv: readonly string[], o: CommandOptions): Promise<CommandResult> {
  const [cmd, ...args] = argv;
  const max = o.maxOutput ?? 1_000_000;
  const started = performance.now();
  return new Promise((resolve) => {
    const out: string[] = [];
    const err: string[] = [];
    let outLen = 0;
    let errLen = 0;
    let timedOut = false;
    let spawnError: string | undefined;
    const child = spawn(cmd!, args, {
      cwd: o.cwd,
      env: { ...process.env, ...o.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    const keep = (chunks: string[], len: number, s: string): number => {
      chunks.push(s);
      len += s.length;
      while (len > max && chunks.length > 1) len -= chunks.shift()!.length;
      return len;
    };
    child.stdout.setEncoding('utf8').on('data', (s: string) => (outLen = keep(out, outLen, s)));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (errLen = keep(err, errLen, s)));
    child.stdin.on('error', () => undefined); // a command that ignores stdin closes it early
    child.stdin.end(o.input ?? '');
    const kill = () => {
      try {
        if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, o.timeoutMs);
    child.on('error', (e) => {
      spawnError = e.message;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Leave nothing behind: grandchildren of a finished command die with its group.
      if (code === null || timedOut) kill();
      resolve({
        exitCode: code,
        signal,
        timedOut,
        stdout: out.join(''),
        stderr: err.join(''),
        durationMs: performance.now() - started,
        spawnError,
      });
    });
  });
}
