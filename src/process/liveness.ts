import { readFileSync } from 'node:fs';

/**
 * Whether a process on this machine is still the one that was recorded. A pid alone is not an
 * identity: pids are reused, so an owner is recorded with `start`, the kernel's start time of that
 * pid (`/proc/<pid>/stat` field 22), and a recorded process is alive only while the same pid exists
 * with the same start time. Used for lease owners (src/dispatch/leases/liveness.ts) and lock owners
 * (src/state/lock.ts).
 */

/** Kernel start time of `pid` (clock ticks since boot) or undefined where /proc is unavailable. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19]; // field 22 overall: starttime
  } catch {
    return undefined;
  }
}

export function pidExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Exists and has not exited (a zombie has exited; only its parent has not reaped it yet). */
export function isRunning(pid: number): boolean {
  return pidExists(pid) && !isZombie(pid);
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** `pid` is running and, when `start` was recorded and can be read, still has that start time. */
export function isSameProcess(pid: number, start: string | undefined): boolean {
  if (!isRunning(pid)) return false;
  if (start === undefined) return true;
  const now = processStart(pid);
  return now === undefined || now === start;
}
