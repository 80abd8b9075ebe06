import { hostname } from 'node:os';
import { isSameProcess, processStart } from '../../process/liveness.js';
import type { RunContext } from '../../process/run-context.js';
import type { LeaseOwner } from '../../schemas/crew.js';

/**
 * Process identity and liveness, the dispatch office's view of who owns a lease: (host, pid,
 * start), checked as src/process/liveness.ts says.
 */

/** This process as a lease owner: its Actions job (run, attempt, job), or (host, pid, start) locally. */
export function selfOwner(ctx: RunContext): LeaseOwner {
  if (ctx.run) return { kind: 'actions', runId: ctx.run.id, runAttempt: ctx.run.attempt, job: ctx.run.job };
  return localIdentity(process.pid);
}

/**
 * Who is expected to start the crews this process plans (CrewPlanned.plannedBy). In Actions: this
 * run and attempt, whose `crewJob` matrix job for each crew's daemon starts it (the planner adds
 * the daemon). Locally: this process, which runs the driver itself or hands off to one.
 */
export function plannerOwner(ctx: RunContext, crewJob = 'crew'): LeaseOwner {
  if (ctx.run) return { kind: 'actions', runId: ctx.run.id, runAttempt: ctx.run.attempt, job: crewJob };
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
  return isSameProcess(owner.pid, owner.start) ? 'alive' : 'gone';
}
