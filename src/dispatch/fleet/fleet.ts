import {
  CAPACITY_CLASSES,
  DEFAULT_HEARTBEAT_TTL_SECONDS,
  type CapacityClass,
  type SchoolConfig,
} from '../../config/schema.js';
import { ConfigError } from '../../errors.js';
import type { StateLayout } from '../../state/layout.js';
import { runsOn, runsOnText } from './runs-on.js';
import { event, nonce, schoolLog, type RosterEntry, type SchoolState } from '../logs/school-log.js';

/**
 * The fleet registry (configuration) joined with the roster (heartbeats in `school.jsonl`).
 *
 * Seed 003: online iff `now − last_seen ≤ TTL`; a daemon that never beat is offline (fail closed);
 * the declared class is a ceiling, so the effective class is `min(declared, observed)`; the
 * auto-router never picks an offline daemon.
 */
export interface DaemonStatus {
  id: string;
  labels: string[];
  /** A GitHub-hosted runner label its jobs run on (fleet.daemons[].hosted); unset: self-hosted. */
  hosted?: string;
  /** K: concurrent worktree slots. */
  slots: number;
  classroom: 'worktree' | 'orca' | 'bot';
  declaredClass: CapacityClass;
  observedClass?: CapacityClass;
  /** min(declared, observed); the declared class when it never beat (it is offline then anyway). */
  effectiveClass: CapacityClass;
  online: boolean;
  /** Why it is offline, for the refusal reasons and the job summary. */
  offlineReason?: string;
  lastSeen?: string;
  freeDiskBytes?: number;
}

export function classRank(c: CapacityClass): number {
  return CAPACITY_CLASSES.indexOf(c);
}

export function minClass(a: CapacityClass, b: CapacityClass): CapacityClass {
  return classRank(a) <= classRank(b) ? a : b;
}

/** fleet.heartbeatTtlSeconds, or the default when school.yml (and the action) set none. */
export function heartbeatTtlSeconds(config: SchoolConfig): number {
  return config.fleet.heartbeatTtlSeconds ?? DEFAULT_HEARTBEAT_TTL_SECONDS;
}

/** Joins the configured daemons with their latest heartbeats as of `now`. */
export function fleetStatus(config: SchoolConfig, school: SchoolState, now: Date): DaemonStatus[] {
  const ttlMs = heartbeatTtlSeconds(config) * 1000;
  return config.fleet.daemons.map((d) => status(d, school.roster[d.id], now.getTime(), ttlMs));
}

function status(
  d: SchoolConfig['fleet']['daemons'][number],
  beat: RosterEntry | undefined,
  nowMs: number,
  ttlMs: number,
): DaemonStatus {
  const base = {
    id: d.id,
    labels: d.labels,
    ...(d.hosted ? { hosted: d.hosted } : {}),
    slots: d.worktrees,
    classroom: d.classroom,
    declaredClass: d.class,
  };
  if (!beat) {
    return { ...base, effectiveClass: d.class, online: false, offlineReason: 'no heartbeat recorded' };
  }
  const seen = Date.parse(beat.lastSeen);
  const age = nowMs - seen;
  let offlineReason: string | undefined;
  if (!Number.isFinite(seen)) offlineReason = `unreadable last_seen ${JSON.stringify(beat.lastSeen)}`;
  else if (age > ttlMs) offlineReason = `last seen ${fmtAge(age)} ago > TTL ${fmtAge(ttlMs)}`;
  // A beat from further in the future than one TTL is a broken clock, not a live daemon: fail closed
  // rather than letting a skewed clock keep a dead daemon "online" indefinitely.
  else if (-age > ttlMs) offlineReason = `last_seen ${beat.lastSeen} is in the future (clock skew > TTL)`;
  // A fresh beat that says the daemon's classroom cannot host crews (Orca down): offline, and why.
  else if (beat.unavailable) offlineReason = beat.unavailable;
  return {
    ...base,
    observedClass: beat.observedClass,
    effectiveClass: minClass(d.class, beat.observedClass),
    online: offlineReason === undefined,
    ...(offlineReason ? { offlineReason } : {}),
    lastSeen: beat.lastSeen,
    freeDiskBytes: beat.freeDiskBytes,
  };
}

function fmtAge(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s}s` : `${Math.round(s / 60)}m`;
}

export interface HeartbeatInput {
  daemon: string;
  observedClass: CapacityClass;
  freeDiskBytes: number;
  /** Set when the daemon cannot take crews now (an orca daemon whose Orca is not running). */
  unavailable?: string;
  at?: Date;
}

/**
 * Records a runner's heartbeat. The daemon must be in the fleet registry: a beat from an unknown id
 * would never be routed to, so it is a configuration mistake worth stopping on.
 */
export async function recordHeartbeat(
  layout: StateLayout,
  config: SchoolConfig,
  beat: HeartbeatInput,
): Promise<void> {
  if (!config.fleet.daemons.some((d) => d.id === beat.daemon)) {
    const known = config.fleet.daemons.map((d) => d.id).join(', ');
    throw new ConfigError(
      `heartbeat: daemon "${beat.daemon}" is not in fleet.daemons (known: ${known}); add it to school.yml or fix the runner's daemon id.`,
    );
  }
  if (!CAPACITY_CLASSES.includes(beat.observedClass)) {
    throw new ConfigError(
      `heartbeat: observedClass "${String(beat.observedClass)}" is not one of ${CAPACITY_CLASSES.join(', ')}.`,
    );
  }
  if (!Number.isFinite(beat.freeDiskBytes) || beat.freeDiskBytes < 0) {
    throw new ConfigError(
      `heartbeat: freeDiskBytes must be a finite number ≥ 0, found ${String(beat.freeDiskBytes)}.`,
    );
  }
  const at = beat.at ?? new Date();
  await schoolLog(layout).append([
    event(
      'roster.heartbeat',
      `heartbeat:${beat.daemon}:${at.getTime()}:${nonce()}`,
      {
        daemon: beat.daemon,
        observedClass: beat.observedClass,
        freeDiskBytes: beat.freeDiskBytes,
        ...(beat.unavailable ? { unavailable: beat.unavailable } : {}),
      },
      at,
    ),
  ]);
}

/**
 * What the plan summary must say about the roster, or undefined while some daemon is online. A
 * fleet that never beat is the first cycle (the roster job records the beats; the next run plans);
 * a fleet whose every beat is older than the TTL plans nothing on any run until the TTL covers the
 * schedule interval, so that is loud.
 */
export function rosterProblem(
  fleet: readonly DaemonStatus[],
  ttlSeconds: number,
  /** The loop's runner-label-prefix, for a daemon without labels of its own (default school). */
  prefix?: string,
): { loud: boolean; text: string } | undefined {
  if (fleet.length === 0 || fleet.some((d) => d.online)) return undefined;
  // Which runner each roster job waits for: a job no runner has the labels of never beats.
  const needs = fleet.map((d) => `${d.id} on ${runsOnText(runsOn(d, prefix))}`).join('; ');
  if (fleet.every((d) => d.lastSeen === undefined)) {
    return {
      loud: false,
      text: `No daemon has a roster heartbeat yet: this run plans nothing and its roster jobs record the heartbeats; the next run plans. Each roster job runs where its daemon's crews will: ${needs}. One that waits in the queue has no runner with those labels: register one with them (school doctor on it says what else it needs), or change fleet.daemons[].labels in school.yml.`,
    };
  }
  const stale = fleet
    .filter((d) => d.lastSeen !== undefined)
    .map((d) => `${d.id} (${d.offlineReason ?? 'offline'})`);
  return {
    loud: true,
    text: `Every daemon's roster heartbeat is older than the TTL of ${ttlSeconds} s, so nothing can be planned: ${stale.join(', ')}. The TTL must cover the time between two runs on each daemon's runner: set fleet.heartbeatTtlSeconds in school.yml above the schedule interval plus queue time, or leave it unset so it follows the workflow's schedule; or check that the daemons' runners are up (${needs}).`,
  };
}
