import { crewFold, leaseId, type CrewRecord, type CrewRegistry, type Lease } from '../logs/registry.js';
import type { CrewEvent, LeaseOwner } from '../../schemas/crew.js';
import { EventLog, event, type StateEvent } from '../../state/event-log.js';
import { foldLog } from '../../state/fold.js';
import type { StateLayout } from '../../state/layout.js';
import { SchoolError } from '../../errors.js';
import { localLiveness } from './liveness.js';

/** A crew could not be claimed: already started elsewhere, its issue is running, or no slot. */
export class ClaimRefusedError extends SchoolError {
  override readonly code = 'claim-refused';
  constructor(
    readonly crewId: string,
    readonly reason: string,
  ) {
    super(`crew ${crewId} not claimed: ${reason}`);
    this.name = 'ClaimRefusedError';
  }
}

/**
 * Worktree slot leases (N6.2), taken under the crews log lock with `EventLog.transact`, so the
 * read-decide-append is one step across processes: two crews never hold one slot, and a crew is
 * claimed (planned → running) exactly once.
 *
 * A lease expires unless heartbeated (`lease.heartbeat`). An expired lease is reclaimed only when
 * its owner is gone: a local owner's pid is dead or has another start identity; an Actions owner's
 * job is no longer in progress, asked through the injected `jobStatus` port. An owner we cannot
 * check counts as alive: reclaiming a live crew's slot is the failure this exists to prevent.
 *
 * Besides the shared crew events this module appends `crew.process` (the identity of the process
 * that runs the crew: what a restarted driver checks before adopting). The registry fold ignores
 * event types it does not know, so the contract in src/schemas/crew.ts is unchanged.
 */

/** `{ done }` carries how the job ended (e.g. `its job "crew d1" ended: cancelled`). */
export type JobAnswer = 'in_progress' | 'done' | 'unknown' | { done: string };
export type JobLiveness = (owner: Extract<LeaseOwner, { kind: 'actions' }>) => Promise<JobAnswer>;

/** How a gone job ended, or undefined while it may still run (or cannot be checked). */
export function jobEnded(a: JobAnswer): string | undefined {
  if (a === 'done') return 'completed';
  return typeof a === 'object' ? a.done : undefined;
}

export interface CrewProcess {
  crewId: string;
  host: string;
  pid: number;
  start?: string;
}
export type CrewProcessEvent = StateEvent<'crew.process', CrewProcess>;
export type CrewLogEvent = CrewEvent | CrewProcessEvent;

export function crewEventLog(layout: StateLayout): EventLog<CrewLogEvent> {
  return new EventLog<CrewLogEvent>(layout.file('crews'));
}

/** The registry fold plus the runner identity of each crew (what adoption checks). */
export function readCrewState(layout: StateLayout): {
  registry: CrewRegistry;
  processes: Map<string, CrewProcess>;
} {
  const contents = crewEventLog(layout).read();
  return {
    registry: foldLog(crewFold, contents as { events: CrewEvent[] }),
    processes: processesOf(contents.events),
  };
}

function processesOf(events: readonly CrewLogEvent[]): Map<string, CrewProcess> {
  const m = new Map<string, CrewProcess>();
  for (const e of events) if (e.type === 'crew.process') m.set(e.data.crewId, e.data);
  return m;
}

/** Owner gone? Local owners are checked here; Actions owners need the answer of `jobStatus`. */
export function ownerGone(owner: LeaseOwner, goneJobs: ReadonlySet<string>): boolean {
  if (owner.kind === 'local') return localLiveness(owner) === 'gone';
  return goneJobs.has(jobKeyOf(owner));
}

function jobKeyOf(o: Extract<LeaseOwner, { kind: 'actions' }>): string {
  return `${o.runId}/${o.runAttempt}/${o.job}`;
}

/** Asks the API about the owners of expired Actions leases before the lock is taken (it is async). */
export async function goneActionsOwners(
  leases: readonly Lease[],
  now: Date,
  jobStatus?: JobLiveness,
): Promise<Set<string>> {
  const gone = new Set<string>();
  if (!jobStatus) return gone;
  for (const l of leases) {
    if (l.owner.kind !== 'actions' || new Date(l.expiresAt) > now) continue;
    const status = await jobStatus(l.owner).catch(() => 'unknown' as const);
    if (jobEnded(status) !== undefined) gone.add(jobKeyOf(l.owner));
  }
  return gone;
}

export interface ClaimRequest {
  crewId: string;
  daemon: string;
  slots: number;
  owner: LeaseOwner;
  /** Identity of this process, recorded for adoption. */
  process: CrewProcess;
  leaseMs: number;
  worktreeFor: (slot: number) => string;
  /** Why a slot is out of service (its reset failed), or undefined: such a slot is never claimed. */
  outOfService?: (slot: number) => string | undefined;
  jobStatus?: JobLiveness;
  now?: () => Date;
}

export interface Claim {
  slot: number;
  worktree: string;
  /** Leases taken over from owners that were gone (their crews are marked lost). */
  reclaimed: Lease[];
}

/**
 * Claims a planned crew and a free slot of its daemon in one transaction. Refuses (ClaimRefusedError)
 * when the crew is unknown, already started or finished, another crew of the same issue is running
 * (N2.1), the crew is stale (another crew of its issue finished after it was planned: cancelled),
 * or every slot is held.
 */
export async function claimSlot(layout: StateLayout, req: ClaimRequest): Promise<Claim> {
  const now = req.now ?? (() => new Date());
  const before = readCrewState(layout).registry;
  const gone = await goneActionsOwners(Object.values(before.leases), now(), req.jobStatus);
  const { result } = await crewEventLog(layout).transact<Claim | { refused: string }>((current) =>
    decideClaim(current.events, req, gone, now()),
  );
  if ('refused' in result) throw new ClaimRefusedError(req.crewId, result.refused);
  return result;
}

type ClaimDecision = { append: CrewLogEvent[]; result: Claim | { refused: string } };

/** The claim, pure over the crew log's events: a refusal, a cancellation of a stale crew, or a slot. */
function decideClaim(
  events: readonly CrewLogEvent[],
  req: ClaimRequest,
  gone: ReadonlySet<string>,
  t: Date,
): ClaimDecision {
  const registry = foldLog(crewFold, { events: events as CrewEvent[] });
  const crew = registry.crews[req.crewId];
  const refused = (reason: string): ClaimDecision => ({ append: [], result: { refused: reason } });
  if (!crew) return refused('not planned');
  if (crew.status !== 'planned') return refused(`already ${crew.status}`);
  if (crew.daemon !== req.daemon) return refused(`planned for daemon ${crew.daemon}`);
  // The crews of one contest take their issue side by side (./contest.ts): no twin of each other.
  const sibling = (c: CrewRecord) => crew.contest !== undefined && c.contest?.id === crew.contest.id;
  const twin = Object.values(registry.crews).find(
    (c) =>
      c.issueNumber === crew.issueNumber && c.crewId !== crew.crewId && c.status === 'running' && !sibling(c),
  );
  if (twin) return refused(`issue #${crew.issueNumber} already running as ${twin.crewId}`);
  const stale = supersededBy(registry, events, crew.crewId, crew.issueNumber, sibling);
  if (stale) {
    const reason = `superseded: issue #${crew.issueNumber} ran as ${stale} after this crew was planned`;
    const data = {
      crewId: crew.crewId,
      issueNumber: crew.issueNumber,
      outcome: 'cancelled' as const,
      reason,
    };
    return {
      append: [event('crew.finished', `finished:${crew.crewId}`, data, t)],
      result: { refused: reason },
    };
  }
  const free = freeSlot(registry, req, gone, t);
  if (!free) {
    const out = Array.from({ length: req.slots }, (_, i) => i).filter((i) => req.outOfService?.(i));
    const why = out.length
      ? ` or out of service (slot ${out.join(', ')}: a reset failed; see the teardown-incomplete alert)`
      : '';
    return refused(`all ${req.slots} slot(s) of daemon ${req.daemon} are leased${why}`);
  }
  const { slot, reclaimed, append } = free;
  const worktree = req.worktreeFor(slot);
  const expiresAt = new Date(t.getTime() + req.leaseMs).toISOString();
  const { crewId, daemon, owner } = req;
  append.push(
    event(
      'lease.acquired',
      `lease:${leaseId(daemon, slot)}:${crewId}`,
      { crewId, daemon, slot, owner, expiresAt },
      t,
    ),
    event('crew.started', `started:${crewId}`, { crewId, daemon, slot, worktree, owner }, t),
    event('crew.process', `process:${crewId}`, req.process, t),
  );
  return { append, result: { slot, worktree, reclaimed } };
}

/**
 * N2.1: a crew planned before another crew of its issue finished is stale (two planners raced, or
 * a retry re-planned in-flight work): it is cancelled, never run. Log order decides, not clocks. A
 * repair is planned after the failed run finished, so it is not stale. Returns the crew that ran.
 */
function supersededBy(
  registry: CrewRegistry,
  events: readonly CrewLogEvent[],
  crewId: string,
  issueNumber: number,
  sibling: (c: CrewRecord) => boolean,
): string | undefined {
  const index = new Map(events.map((e, i) => [e.key, i]));
  const plannedAt = index.get(`planned:${crewId}`) ?? -1;
  return Object.values(registry.crews).find(
    (c) =>
      c.issueNumber === issueNumber &&
      c.crewId !== crewId &&
      !sibling(c) &&
      c.status === 'finished' &&
      (index.get(`finished:${c.crewId}`) ?? -1) > plannedAt,
  )?.crewId;
}

/**
 * The first slot of the daemon that is free, or whose lease can be taken over: its crew finished
 * (the release write was lost), or the lease expired and its owner is gone (that crew is lost).
 * Undefined when every slot is held; otherwise the events that free a reclaimed slot.
 */
function freeSlot(
  registry: CrewRegistry,
  req: ClaimRequest,
  gone: ReadonlySet<string>,
  t: Date,
): { slot: number; reclaimed: Lease[]; append: CrewLogEvent[] } | undefined {
  for (let slot = 0; slot < req.slots; slot++) {
    if (req.outOfService?.(slot)) continue;
    const held = registry.leases[leaseId(req.daemon, slot)];
    if (!held) return { slot, reclaimed: [], append: [] };
    const finished = registry.crews[held.crewId]?.status === 'finished';
    if (!finished && (new Date(held.expiresAt) > t || !ownerGone(held.owner, gone))) continue;
    const reason = finished
      ? 'reclaimed: its crew had finished'
      : 'reclaimed: lease expired and its owner is gone';
    const append: CrewLogEvent[] = [
      event('lease.released', `released:${held.crewId}`, { crewId: held.crewId, reason }, t),
    ];
    const old = registry.crews[held.crewId];
    if (old && old.status !== 'finished') {
      const data = {
        crewId: held.crewId,
        issueNumber: old.issueNumber,
        outcome: 'lost' as const,
        reason: 'owner gone without finishing; slot reclaimed',
      };
      append.push(event('crew.finished', `finished:${held.crewId}`, data, t));
    }
    return { slot, reclaimed: [held], append };
  }
  return undefined;
}

/**
 * N7.1: a running crew whose runner is gone passes to this process, which collects it (its student
 * finished in an Orca terminal that outlived the runner): its lease and its process identity are
 * re-recorded for the same slot, so adoption and reclaim see a live owner. Refuses (ClaimRefusedError)
 * a crew that is not running on this daemon, or whose recorded runner is still alive.
 */
export async function takeOverCrew(
  layout: StateLayout,
  req: Pick<ClaimRequest, 'crewId' | 'daemon' | 'owner' | 'process' | 'leaseMs'>,
): Promise<{ slot: number }> {
  const { result } = await crewEventLog(layout).transact<{ slot: number } | { refused: string }>(
    (current) => {
      const registry = foldLog(crewFold, { events: current.events as CrewEvent[] });
      const crew = registry.crews[req.crewId];
      const refused = (reason: string) => ({ append: [], result: { refused: reason } });
      if (!crew || crew.status !== 'running' || crew.slot === undefined)
        return refused(`not running (${crew?.status ?? 'not planned'})`);
      if (crew.daemon !== req.daemon) return refused(`running on daemon ${crew.daemon}`);
      const runner = processesOf(current.events).get(req.crewId);
      if (runner && localLiveness(runner) !== 'gone') return refused(`its runner pid ${runner.pid} is alive`);
      const t = new Date();
      const { crewId, daemon, owner } = req;
      const slot = crew.slot;
      const expiresAt = new Date(t.getTime() + req.leaseMs).toISOString();
      const by = `${req.process.pid}:${req.process.start ?? ''}`;
      return {
        append: [
          event(
            'lease.acquired',
            `lease:${leaseId(daemon, slot)}:${crewId}:taken-over:${by}`,
            { crewId, daemon, slot, owner, expiresAt },
            t,
          ),
          event('crew.process', `process:${crewId}:taken-over:${by}`, req.process, t),
        ],
        result: { slot },
      };
    },
  );
  if ('refused' in result) throw new ClaimRefusedError(req.crewId, result.refused);
  return result;
}

/** Extends the crew's lease (N6.2). `n` makes the key unique per beat (`series` per holder). */
export async function heartbeat(
  layout: StateLayout,
  crewId: string,
  n: number,
  leaseMs: number,
  series = '',
): Promise<void> {
  const expiresAt = new Date(Date.now() + leaseMs).toISOString();
  await crewEventLog(layout).append([
    event('lease.heartbeat', `heartbeat:${crewId}:${series}${n}`, { crewId, expiresAt }),
  ]);
}

export async function releaseLease(layout: StateLayout, crewId: string, reason: string): Promise<void> {
  await crewEventLog(layout).append([event('lease.released', `released:${crewId}`, { crewId, reason })]);
}

/**
 * Heartbeats on a monotonic schedule (N3.2: setInterval, never wall-clock differences) until
 * stopped. A failed beat is reported, not thrown: the lease simply expires later than hoped.
 */
export function startHeartbeat(
  layout: StateLayout,
  crewId: string,
  leaseMs: number,
  onError: (e: unknown) => void,
  series = '',
): () => void {
  let n = 0;
  const every = Math.max(1_000, Math.floor(leaseMs / 3));
  const timer = setInterval(() => {
    heartbeat(layout, crewId, ++n, leaseMs, series).catch(onError);
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}
