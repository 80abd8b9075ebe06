import type {
  CrewClaimed,
  CrewEvent,
  CrewFinished,
  CrewOutcome,
  CrewPlanned,
  PlannedCell,
  LeaseOwner,
} from '../../schemas/crew.js';
import { EventLog } from '../../state/event-log.js';
import { foldLog, registerFold, type LogFold } from '../../state/fold.js';
import type { StateLayout } from '../../state/layout.js';
// Importing the registry registers every dispatch fold, so compaction covers `school.jsonl` (roster,
// pauses) and `spend.jsonl` too.
import './school-log.js';
import '../gates/spend.js';

/**
 * The crew registry: a fold of `crews.jsonl` (docs/architecture.md). Materialized as
 * `views/crew_runs.json` for people; code always folds the events.
 */
export type CrewStatus = 'planned' | 'running' | 'finished';

export interface CrewRecord extends Omit<CrewPlanned, 'plannedBy'> {
  status: CrewStatus;
  plannedAt: string;
  startedAt?: string;
  finishedAt?: string;
  slot?: number;
  worktree?: string;
  outcome?: CrewOutcome;
  reason?: string;
  /** Who is expected to start it (CrewPlanned.plannedBy): checked by the planner's reconciliation. */
  plannedBy?: LeaseOwner;
  /** N4.1: aborted by the pre-verify of a dirty slot (see CrewFinished.preVerify). */
  preVerify?: boolean;
  /** The agent could not start (missing CLI, refused credentials): not the agent's failure. */
  infra?: boolean;
  /** No agent turn ran: a clean refresh's merge passed as it stood (see CrewFinished.noTurn). */
  noTurn?: boolean;
  /** N7.1: its classroom lost it before its student finished (see CrewFinished.orphaned). */
  orphaned?: boolean;
  /** The API's own limit answer the key proxy saw (see CrewFinished.upstream). */
  upstream?: CrewFinished['upstream'];
  /** A limit the school confirmed itself (see CrewFinished.confirmed). */
  confirmed?: CrewFinished['confirmed'];
  /** A person stopped it (see CrewFinished.stoppedBy). */
  stoppedBy?: string;
  /** A shared standby crew some crew job claimed (`crew.claimed`); `daemon` is then the claimant. */
  claimed?: Omit<CrewClaimed, 'crewId'>;
}

export interface Lease {
  crewId: string;
  daemon: string;
  slot: number;
  owner: LeaseOwner;
  expiresAt: string;
}

export interface CrewRegistry {
  crews: Record<string, CrewRecord>;
  /** Held leases by `<daemon>/<slot>`. */
  leases: Record<string, Lease>;
}

export function leaseId(daemon: string, slot: number): string {
  return `${daemon}/${slot}`;
}

export const crewFold: LogFold<CrewRegistry, CrewEvent> = registerFold<CrewRegistry, CrewEvent>({
  file: 'crews',
  empty: () => ({ crews: {}, leases: {} }),
  apply(state, e) {
    switch (e.type) {
      case 'crew.planned': {
        const d = e.data;
        if (!state.crews[d.crewId]) {
          state.crews[d.crewId] = {
            crewId: d.crewId,
            issueNumber: d.issueNumber,
            daemon: d.daemon,
            agent: d.agent,
            weight: d.weight,
            fences: d.fences,
            attempt: d.attempt,
            repair: d.repair,
            status: 'planned',
            plannedAt: e.at,
            ...(d.plannedBy ? { plannedBy: d.plannedBy } : {}),
            ...(d.queued === true ? { queued: true as const } : {}),
            ...(d.revision ? { revision: d.revision } : {}),
            ...(d.eligible ? { eligible: [...d.eligible] } : {}),
            ...(d.choice ? { choice: d.choice } : {}),
            ...(plannedCell(d) ?? {}),
            ...(d.contest ? { contest: { id: d.contest.id, of: [...d.contest.of] } } : {}),
          };
        }
        break;
      }
      case 'crew.claimed': {
        // The first claim of a shared crew by a daemon it is listed for, before it starts, holds.
        const c = state.crews[e.data.crewId];
        const { crewId: _, ...claim } = e.data;
        if (c && c.status === 'planned' && !c.claimed && c.eligible?.includes(claim.daemon)) {
          c.claimed = claim;
          c.daemon = claim.daemon;
        }
        break;
      }
      case 'crew.started': {
        const c = state.crews[e.data.crewId];
        if (c && c.status !== 'finished') {
          c.status = 'running';
          c.startedAt = e.at;
          c.slot = e.data.slot;
          c.worktree = e.data.worktree;
          c.daemon = e.data.daemon;
        }
        break;
      }
      case 'lease.acquired': {
        const d = e.data;
        state.leases[leaseId(d.daemon, d.slot)] = {
          crewId: d.crewId,
          daemon: d.daemon,
          slot: d.slot,
          owner: d.owner,
          expiresAt: d.expiresAt,
        };
        break;
      }
      case 'lease.heartbeat': {
        for (const l of Object.values(state.leases))
          if (l.crewId === e.data.crewId) l.expiresAt = e.data.expiresAt;
        break;
      }
      case 'lease.released': {
        for (const [id, l] of Object.entries(state.leases))
          if (l.crewId === e.data.crewId) delete state.leases[id];
        break;
      }
      case 'crew.finished': {
        const c = state.crews[e.data.crewId];
        if (c) {
          c.status = 'finished';
          c.finishedAt = e.at;
          c.outcome = e.data.outcome;
          c.reason = e.data.reason;
          if (e.data.preVerify) c.preVerify = true;
          if (e.data.infra) c.infra = true;
          if (e.data.noTurn) c.noTurn = true;
          if (e.data.orphaned) c.orphaned = true;
          if (e.data.upstream) c.upstream = e.data.upstream;
          if (e.data.confirmed) c.confirmed = e.data.confirmed;
          if (e.data.stoppedBy) c.stoppedBy = e.data.stoppedBy;
        }
        break;
      }
    }
    return state;
  },
  prune(state, horizon, scope) {
    const crews: Record<string, CrewRecord> = {};
    for (const c of Object.values(state.crews)) {
      // Finished crews are history; the latest two of an issue are kept for the two-failure rule
      // while the issue is open (or when the compaction saw no curriculum to tell).
      if (c.status !== 'finished' || (c.finishedAt && new Date(c.finishedAt) >= horizon)) crews[c.crewId] = c;
    }
    const byIssue = new Map<number, CrewRecord[]>();
    for (const c of Object.values(state.crews)) {
      if (c.status !== 'finished') continue;
      if (scope?.openIssues && !scope.openIssues.has(c.issueNumber)) continue;
      const list = byIssue.get(c.issueNumber) ?? [];
      list.push(c);
      byIssue.set(c.issueNumber, list);
    }
    for (const list of byIssue.values()) {
      list.sort((a, b) => (a.finishedAt ?? '').localeCompare(b.finishedAt ?? ''));
      for (const c of list.slice(-2)) crews[c.crewId] = c;
    }
    return { crews, leases: state.leases };
  },
  // Every event is created at its own time about a crew the fold keeps while it is live: plans
  // with a new crew id, leases, beats and starts by the crew's own process, releases and finishes
  // by it or by reconciliation of a live crew; a handoff's events keep their time. An old event can
  // only come back as a stale copy (a cache merged in, a handoff imported again): a watermark
  // suffices, and the beats of a year of crews are not remembered one by one.
  dedup: 'watermark',
});

/** Crews that hold or may soon hold a worktree: planned or running (N2.1). */
export function activeCrews(registry: CrewRegistry): CrewRecord[] {
  return Object.values(registry.crews).filter((c) => c.status !== 'finished');
}

/** The crews log (`crews.jsonl`); its lock is the registry lock for plans, leases and claims (N6.2). */
export function crewLog(layout: StateLayout): EventLog<CrewEvent> {
  return new EventLog<CrewEvent>(layout.file('crews'));
}

/** Reads and folds the registry. Throws CorruptStateError (file quarantined) on a corrupt line. */
export function readRegistry(layout: StateLayout): CrewRegistry {
  return foldLog(crewFold, crewLog(layout).read());
}

/**
 * The planned cell as the plan recorded it. A repair a crew job planned itself (`repairOf`) carries
 * none: the job's handoff is not trusted with what later plans predict from.
 */
function plannedCell(d: CrewPlanned): { cell: PlannedCell } | undefined {
  const c = d.cell;
  if (!c || d.repairOf !== undefined) return undefined;
  const ok =
    typeof c.domain === 'string' &&
    Number.isInteger(c.difficulty) &&
    typeof c.size === 'number' &&
    Number.isFinite(c.size) &&
    c.size > 0;
  return ok ? { cell: { domain: c.domain, difficulty: c.difficulty, size: c.size } } : undefined;
}
