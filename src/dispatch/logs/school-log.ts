import { randomBytes } from 'node:crypto';
import type { CapacityClass } from '../../config/schema.js';
import { EventLog, event, type StateEvent } from '../../state/event-log.js';
import { foldLog, registerFold, type LogFold } from '../../state/fold.js';
import type { StateLayout } from '../../state/layout.js';

/**
 * School-wide control facts in `school.jsonl` (docs/architecture.md): roster heartbeats and launch pauses.
 *
 * Keys:
 *  - `heartbeat:<daemon>:<ms>:<rand>` — one per beat, so two beats in the same millisecond both land;
 *  - `paused:crew:<crewId>` — a pause caused by a crew outcome (usage limit, overload, unexplained
 *    exit). Keyed by crew, so re-recording the same crew's outcome after a clear is a no-op, while the
 *    next crew that reports the limit pauses again (seed 002: "unresolved conditions pause again");
 *  - `paused:manual:<rand>` — an operator pause (`school pause --reason`);
 *  - `pause-cleared:<rand>` — lifts every pause recorded before it;
 *  - `requeued:<issue>:<rand>` — `school requeue`: the issue's earlier failures no longer stop it;
 *  - `limit-unconfirmed:crew:<crewId>` — a crew's usage limit only its student claimed and nothing
 *    confirmed: the issue goes behind the others, the agent is not paused (./limit-probe.ts);
 *  - `next-cycle:<run id>:<attempt>` — a run started the next cycle at once (./next-cycle.ts).
 */
export interface RosterHeartbeat {
  daemon: string;
  /** Capacity class the runner measured on itself; the declared class is only a ceiling (seed 003). */
  observedClass: CapacityClass;
  freeDiskBytes: number;
  /** The daemon is up but cannot take crews (its Orca runtime is down): why, in plain words. */
  unavailable?: string;
}

export interface PauseRecorded {
  reason: string;
  /** `manual`, or the crew outcome that caused it (`usage_limit`, `overloaded`, `lost`, …). */
  source: string;
  crewId?: string;
  issueNumber?: number;
  /** When the cause lifts by itself (a usage limit's reset time, ISO): the pause ends then. */
  until?: string;
  /**
   * The one agent this pause holds (a limit only the student reported): its crews wait, the rest of
   * the school is planned. Absent: the whole school is paused.
   */
  agent?: string;
  /**
   * The API's own limit answer as the host side of the key proxy saw it (src/sandbox/key-proxy.ts):
   * the one signal a student cannot write. Only a pause that carries it may hold the whole school.
   */
  upstream?: UpstreamLimit;
}

/** An upstream limit answer the key proxy recorded for a crew. */
export interface UpstreamLimit {
  /** 429 (a rate or usage limit), 400/402 (a usage or credit limit), 529 (overloaded) or 503. */
  status: number;
  /** When the proxy saw it (ISO). */
  at: string;
  /** The reset the API named (retry-after, anthropic-ratelimit-*-reset, x-ratelimit-reset-*), ISO. */
  resetAt?: string;
}

export interface IssueRequeued {
  issueNumber: number;
  reason: string;
}

/** A crew's unconfirmed limit claim: its issue, not its agent, is held back (./limit-probe.ts). */
export interface LimitUnconfirmed {
  issueNumber: number;
  crewId: string;
  agent?: string;
  reason: string;
}

export interface PauseCleared {
  reason: string;
}

/** A run that ended with work waiting started the next one (./next-cycle.ts). */
export interface NextCycleStarted {
  runId: string;
  /** Runs in a row the loop has started itself, this one included. */
  chain: number;
}

export type SchoolEvent =
  | StateEvent<'roster.heartbeat', RosterHeartbeat>
  | StateEvent<'school.paused', PauseRecorded>
  | StateEvent<'school.pause-cleared', PauseCleared>
  | StateEvent<'issue.requeued', IssueRequeued>
  /** A usage limit only the issue's student claimed, unconfirmed (./limit-probe.ts): the issue waits behind the others. */
  | StateEvent<'issue.limit-unconfirmed', LimitUnconfirmed>
  | StateEvent<'loop.next-cycle', NextCycleStarted>
  /** A handoff's audit lines were imported (they carry no keys: this event makes the import idempotent). */
  | StateEvent<'handoff.imported', { daemon: string; sha256: string }>;

export interface RosterEntry extends RosterHeartbeat {
  /** Wall-clock time of the latest beat (ISO): a cross-machine fact, compared against the TTL. */
  lastSeen: string;
}

export interface ActivePause extends PauseRecorded {
  at: string;
  key: string;
}

export interface SchoolState {
  roster: Record<string, RosterEntry>;
  /**
   * Pauses recorded since the last clear. Launches are blocked while one of them is active: see
   * `activePauses`, which drops those whose `until` has passed.
   */
  pauses: ActivePause[];
  lastCleared?: { at: string; reason: string };
  /** `school requeue`: the latest requeue per issue (ISO time), read by the issue history. */
  requeues?: Record<number, string>;
  /** The latest run the loop started itself (./next-cycle.ts). */
  nextCycle?: NextCycleStarted & { at: string };
}

export const schoolFold: LogFold<SchoolState, SchoolEvent> = registerFold<SchoolState, SchoolEvent>({
  file: 'school',
  empty: () => ({ roster: {}, pauses: [], requeues: {} }),
  apply(state, e) {
    switch (e.type) {
      case 'roster.heartbeat': {
        const prev = state.roster[e.data.daemon];
        // Merged logs may interleave beats out of order: the latest wall-clock beat wins.
        if (!prev || prev.lastSeen <= e.at) state.roster[e.data.daemon] = { ...e.data, lastSeen: e.at };
        break;
      }
      case 'school.paused':
        state.pauses.push({ ...e.data, at: e.at, key: e.key });
        break;
      case 'school.pause-cleared':
        state.pauses = [];
        state.lastCleared = { at: e.at, reason: e.data.reason };
        break;
      case 'loop.next-cycle':
        if (!state.nextCycle || state.nextCycle.at <= e.at) state.nextCycle = { ...e.data, at: e.at };
        break;
      case 'issue.requeued': {
        state.requeues ??= {};
        const prev = state.requeues[e.data.issueNumber];
        if (!prev || prev < e.at) state.requeues[e.data.issueNumber] = e.at;
        break;
      }
    }
    return state;
  },
  // The fold is already minimal: the latest beat per daemon and the open pauses.
  prune: (state) => state,
  // Beats, clears, requeues and manual pauses are created at their own time with a fresh key. A
  // crew's pause is derived from the registry, which keeps a crew's record past the window, but
  // never for a crew that finished before this log's watermark (`pendingPauses`). A handoff's
  // import marker is written when it is imported: a handoff imported again after its marker was
  // compacted adds its audit lines again, older than the window, which the next compaction drops.
  // So a watermark suffices, and a year of roster beats is not remembered one by one.
  dedup: 'watermark',
});

/** The pauses still in force at `now`: a pause with an `until` in the past has lifted itself. */
export function activePauses(pauses: readonly ActivePause[], now: Date): ActivePause[] {
  return pauses.filter((p) => p.until === undefined || !(Date.parse(p.until) <= now.getTime()));
}

export function schoolLog(layout: StateLayout): EventLog<SchoolEvent> {
  return new EventLog<SchoolEvent>(layout.file('school'));
}

/** Reads and folds `school.jsonl`. Throws CorruptStateError (file quarantined) on corruption. */
export function readSchool(layout: StateLayout): SchoolState {
  return foldLog(schoolFold, schoolLog(layout).read());
}

export function nonce(): string {
  return randomBytes(6).toString('hex');
}

export function pauseKey(source: { crewId?: string }): string {
  return source.crewId ? `paused:crew:${source.crewId}` : `paused:manual:${nonce()}`;
}

export { event };

export function requeueKey(issue: number): string {
  return `requeued:${issue}:${nonce()}`;
}
