import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { LeaseOwner } from '../schemas/crew.js';

/**
 * Process identity and liveness, the dispatch office's view of who owns a lease. A pid alone is not an identity: pids are reused, so
 * an owner is recorded as (host, pid, start) where `start` is the kernel's start time of that pid
 * (`/proc/<pid>/stat` field 22). A recorded owner is alive only when the same pid still exists and
 * has the same start time.
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

export function selfOwner(): LeaseOwner {
  if (process.env.GITHUB_RUN_ID) {
    return {
      kind: 'actions',
      runId: process.env.GITHUB_RUN_ID,
      runAttempt: process.env.GITHUB_RUN_ATTEMPT ?? '1',
      job: process.env.GITHUB_JOB ?? '',
    };
  }
  return localIdentity(process.pid);
}

/**
 * Who is expected to start the crews this process plans (CrewPlanned.plannedBy). In Actions: this
 * run and attempt, whose `crewJob` matrix job for each crew's daemon starts it (the planner adds
 * the daemon). Locally: this process, which runs the driver itself or hands off to one.
 */
export function plannerOwner(crewJob = 'crew'): LeaseOwner {
  if (process.env.GITHUB_RUN_ID) {
    return {
      kind: 'actions',
      runId: process.env.GITHUB_RUN_ID,
      runAttempt: process.env.GITHUB_RUN_ATTEMPT ?? '1',
      job: crewJob,
    };
  }
  return localIdentity(process.pid);
}

export function localIdentity(pid: number): Extract<LeaseOwner, { kind: 'local' }> {
  const start = processStart(pid);
  return start === undefined
    ? { kind: 'local', host: hostname(), pid }
    : { kind: 'local', host: hostname(), pid, start };
}

export type Liveness = 'alive' | 'gone' | 'unknown';

/**
 * Is the recorded local process still the one that was recorded? `unknown` for another host: we
 * cannot look, so callers must treat it as alive (never reclaim what might still be working).
 */
export function localLiveness(owner: { host: string; pid: number; start?: string }): Liveness {
  if (owner.host !== hostname()) return 'unknown';
  if (!pidExists(owner.pid) || isZombie(owner.pid)) return 'gone';
  if (owner.start !== undefined) {
    const now = processStart(owner.pid);
    if (now !== undefined && now !== owner.start) return 'gone';
  }
  return 'alive';
}
