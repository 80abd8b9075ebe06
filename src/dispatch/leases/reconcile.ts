import { localLiveness } from './liveness.js';
import type { JobAnswer, JobLiveness } from './lease.js';
import type { CrewEvent, LeaseOwner } from '../../schemas/crew.js';
import { event } from '../../state/event-log.js';
import type { CrewRecord, CrewRegistry, Lease } from '../logs/registry.js';

/**
 * Reconciliation at the start of every plan (docs/architecture.md: "a cancelled or never-started crew job must
 * not leave a lease behind"). Two kinds of crew would otherwise stay active forever, blocking their
 * issue (N2.1) and counting against `maxCrews`:
 *
 * - a crew **planned but never started** whose planning owner is gone: locally the planning process
 *   died (and no live driver runs its daemon); in Actions the crew job of that run for its daemon
 *   ended without starting it (cancelled by its concurrency group, queued 24 h without a runner,
 *   skipped) or the run ended with no such job. → `crew.finished` outcome `cancelled`, which is an
 *   interruption (history.ts): it does not count toward the two-failure stop and the issue is
 *   planned again.
 * - a crew **running** whose lease expired and whose lease owner is gone (a runner on another
 *   machine, an Actions job that ended): the driver handles its own host's crews on adoption; the
 *   planner covers the rest. → lease released, `crew.finished` outcome `lost` (which pauses
 *   launches until looked at, as an unexplained exit does).
 * - a crew **running with no lease**: its lease was released or reclaimed but its `crew.finished`
 *   never reached the state (a refused handoff line). Nothing holds its slot and nothing else would
 *   end it; it counted against `maxCrews` forever. → `crew.finished` outcome `aborted`.
 *
 * An owner that cannot be checked (another host's process, an API error) counts as alive: cancelling
 * a crew that might still start is the double dispatch this exists to prevent. The Actions answers
 * are asynchronous, so they are gathered before the registry lock (`askOwners`) and the decision
 * (`reconcile`) runs inside the plan's transaction on the registry read there.
 */
export interface Reconciled {
  crewId: string;
  issueNumber: number;
  outcome: 'cancelled' | 'lost' | 'aborted';
  reason: string;
}

export interface OwnerChecks {
  /** How each gone Actions owner ended, by `ownerKey` (from `askOwners`). */
  endedJobs: ReadonlyMap<string, string>;
  /** A live driver runs this daemon here: it may still start a planned crew. */
  driving?: (daemon: string) => boolean;
}

type ActionsOwner = Extract<LeaseOwner, { kind: 'actions' }>;

export function ownerKey(o: ActionsOwner): string {
  return `${o.runId}/${o.runAttempt}/${o.job}${o.daemon !== undefined ? `/${o.daemon}` : ''}`;
}

function ended(a: JobAnswer): string | undefined {
  if (a === 'done') return 'completed';
  return typeof a === 'object' ? a.done : undefined;
}

function expiredLease(registry: CrewRegistry, crewId: string, now: Date): Lease | undefined {
  const l = Object.values(registry.leases).find((x) => x.crewId === crewId);
  return l && new Date(l.expiresAt) <= now ? l : undefined;
}

/**
 * The crew jobs that may still start a planned crew planned on GitHub. A crew of one run's shared
 * queue (`eligible`) may be started by whichever listed daemon's job claims it: unclaimed, by any of
 * them; claimed, by the claimant's job only (its planned daemon's job may have ended long before).
 */
function plannedOwners(c: CrewRecord): ActionsOwner[] {
  const by = c.plannedBy;
  if (by?.kind !== 'actions') return [];
  if (c.eligible === undefined) return [by];
  const daemons = c.claimed ? [c.claimed.daemon] : c.eligible;
  return daemons.map((daemon) => ({ ...by, daemon }));
}

/** Actions owners worth asking about: planners of planned crews, holders of expired leases. */
function ownersToAsk(registry: CrewRegistry, now: Date): ActionsOwner[] {
  const out = new Map<string, ActionsOwner>();
  for (const c of Object.values(registry.crews)) {
    if (c.status === 'planned') for (const o of plannedOwners(c)) out.set(ownerKey(o), o);
    if (c.status === 'running') {
      const l = expiredLease(registry, c.crewId, now);
      if (l?.owner.kind === 'actions') out.set(ownerKey(l.owner), l.owner);
    }
  }
  return [...out.values()];
}

/** Asks the `jobStatus` port once per distinct owner; returns the owners whose job has ended. */
export async function askOwners(
  registry: CrewRegistry,
  now: Date,
  jobStatus?: JobLiveness,
): Promise<Map<string, string>> {
  const gone = new Map<string, string>();
  if (!jobStatus) return gone;
  for (const o of ownersToAsk(registry, now)) {
    const how = ended(await jobStatus(o).catch(() => 'unknown' as const));
    if (how !== undefined && !(await rerunInProgress(o, jobStatus))) gone.set(ownerKey(o), how);
  }
  return gone;
}

/** How many later attempts of a run are asked about: "Re-run" is a person clicking, not a loop. */
const MAX_RERUNS = 5;

/**
 * "Re-run failed jobs" starts the same job again as a later attempt of the same run, with the first
 * attempt's plan: a planned crew whose job ended in attempt n may be running in attempt n + k. An
 * attempt the API does not know (`unknown`) ends the search: there is no later re-run.
 */
async function rerunInProgress(o: ActionsOwner, jobStatus: JobLiveness): Promise<boolean> {
  const first = Number(o.runAttempt);
  if (!Number.isSafeInteger(first)) return false;
  for (let attempt = first + 1; attempt <= first + MAX_RERUNS; attempt++) {
    const a = await jobStatus({ ...o, runAttempt: String(attempt) }).catch(() => 'unknown' as const);
    if (a === 'in_progress') return true;
    if (a === 'unknown') return false;
  }
  return false;
}

/** Why this owner is provably gone, or undefined while it may still act. */
function goneBecause(owner: LeaseOwner, checks: OwnerChecks): string | undefined {
  if (owner.kind === 'local') {
    return localLiveness(owner) === 'gone' ? `process ${owner.pid} on ${owner.host} is gone` : undefined;
  }
  return checks.endedJobs.get(ownerKey(owner));
}

function plannedGone(c: CrewRecord, checks: OwnerChecks): string | undefined {
  const by = c.plannedBy;
  if (!by) return undefined; // planned before owners were recorded: nothing to check against
  if (by.kind === 'actions' && c.eligible !== undefined) return sharedGone(c, by, checks);
  const why = goneBecause(by, checks);
  if (why === undefined) return undefined;
  if (by.kind === 'local') {
    if (checks.driving?.(c.daemon)) return undefined;
    return `planned by process ${by.pid} on ${by.host}, which is gone, and no driver of daemon ${c.daemon} started it`;
  }
  return `planned by run ${by.runId} (attempt ${by.runAttempt}) but its crew job for daemon ${c.daemon} never started it (${why})`;
}

/** A shared crew is gone only when every crew job that may still start it has ended. */
function sharedGone(c: CrewRecord, by: ActionsOwner, checks: OwnerChecks): string | undefined {
  const owners = plannedOwners(c);
  const whys: string[] = [];
  for (const o of owners) {
    const why = goneBecause(o, checks);
    if (why === undefined) return undefined;
    whys.push(`${o.daemon}: ${why}`);
  }
  const run = `run ${by.runId} (attempt ${by.runAttempt})`;
  return c.claimed
    ? `claimed in ${run} by the crew job for daemon ${c.claimed.daemon}, which never started it (${whys.join('; ')})`
    : `planned by ${run} for its shared queue, but no crew job of daemons ${owners.map((o) => o.daemon).join(', ')} claimed it (${whys.join('; ')})`;
}

/** The events that settle every crew whose owner is gone; pure apart from the local /proc check. */
export function reconcile(
  registry: CrewRegistry,
  now: Date,
  checks: OwnerChecks,
): { events: CrewEvent[]; reconciled: Reconciled[] } {
  const events: CrewEvent[] = [];
  const reconciled: Reconciled[] = [];
  for (const c of Object.values(registry.crews)) {
    if (c.status === 'planned') {
      const reason = plannedGone(c, checks);
      if (reason === undefined) continue;
      events.push(finished(c, 'cancelled', reason, now));
      reconciled.push({ crewId: c.crewId, issueNumber: c.issueNumber, outcome: 'cancelled', reason });
    } else if (c.status === 'running') {
      const lost = leaseGone(registry, c);
      if (lost) {
        events.push(finished(c, 'aborted', lost, now));
        reconciled.push({ crewId: c.crewId, issueNumber: c.issueNumber, outcome: 'aborted', reason: lost });
        continue;
      }
      const lease = expiredLease(registry, c.crewId, now);
      const why = lease && goneBecause(lease.owner, checks);
      if (!lease || why === undefined) continue;
      const reason = `lease expired at ${lease.expiresAt} and its owner is gone (${why}); reconciled by the planner`;
      events.push(
        event('lease.released', `released:${c.crewId}`, { crewId: c.crewId, reason: `lost: ${reason}` }, now),
        finished(c, 'lost', reason, now),
      );
      reconciled.push({ crewId: c.crewId, issueNumber: c.issueNumber, outcome: 'lost', reason });
    }
  }
  return { events, reconciled };
}

/**
 * A running crew that holds no lease: its lease was released (or reclaimed) but its `crew.finished`
 * never arrived (a handoff whose finished line was refused, a log that lost it). A crew's own end
 * appends `crew.finished` with its lease's release, so no crew is ever legitimately in this state:
 * nothing holds its slot, and nothing else would ever end it.
 */
function leaseGone(registry: CrewRegistry, c: CrewRecord): string | undefined {
  if (Object.values(registry.leases).some((l) => l.crewId === c.crewId)) return undefined;
  return `running since ${c.startedAt ?? 'an unknown time'} but its lease is gone with no crew.finished recorded (released or reclaimed without an end); reconciled by the planner`;
}

function finished(
  c: CrewRecord,
  outcome: 'cancelled' | 'lost' | 'aborted',
  reason: string,
  now: Date,
): CrewEvent {
  return event(
    'crew.finished',
    `finished:${c.crewId}`,
    { crewId: c.crewId, issueNumber: c.issueNumber, outcome, reason },
    now,
  );
}
