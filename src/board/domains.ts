import { fleetStatus } from '../dispatch/fleet/fleet.js';
import type { CrewRegistry } from '../dispatch/logs/registry.js';
import type { SchoolState } from '../dispatch/logs/school-log.js';
import type { SchoolConfig } from '../config/schema.js';
import { leaderboard, type LedgerState } from '../grading/ledger.js';
import { queueFold, type QueueEvent, type QueueState } from '../grading/queue.js';
import type { LogContents } from '../state/event-log.js';
import { byCodePoint } from '../state/fold.js';
import type { DaemonLoad, LeaderCell, LeaderRow, QueuePoint } from './model.js';

/**
 * The board's numbers come from the domains' own folds and helpers, never from a second
 * implementation of them, so the board cannot disagree with the state (docs/board.md): the queue
 * fold for grading, the ledger fold and `leaderboard()` for scores, `fleetStatus()` for the roster.
 * This module only reshapes them for rendering.
 */

/** Jobs a drain would still pick up (now or once a lease expires). */
export function queued(state: QueueState): number {
  let n = 0;
  for (const j of Object.values(state.jobs)) if (j.status === 'pending' || j.status === 'claimed') n++;
  return n;
}

const MAX_POINTS = 240;

/**
 * Queue depth over time, sampled so that it does not depend on how the replay was split: the
 * depth after every `step`-th event (and after the last one), where `step` is the smallest power
 * of two that keeps the samples within MAX_POINTS. When the log grows past that, `step` doubles and
 * every other sample goes; the samples kept are exactly those a replay from scratch would take.
 * So the board's persisted fold can continue the series with appended events and draw what a
 * full replay draws.
 */
export interface QueueSeries {
  /** Events replayed. */
  count: number;
  step: number;
  /** Jobs pending or claimed after the last event. */
  depth: number;
  /** The latest `at` seen: the time axis only moves forward. */
  clock: string;
  /** Depth after event `i * step`, at the clock then. */
  samples: QueuePoint[];
}

/** The grading log's fold with its depth series, continued one event at a time. */
export interface QueueReplay {
  state: QueueState;
  series: QueueSeries;
}

/** Starts a replay from a log's compaction snapshot (or empty). */
export function startQueueReplay(contents: Pick<LogContents<QueueEvent>, 'snapshot'>): QueueReplay {
  const state = structuredClone(contents.snapshot?.data.state as QueueState | undefined) ?? queueFold.empty();
  return {
    state,
    series: { count: 0, step: 1, depth: queued(state), clock: contents.snapshot?.at ?? '', samples: [] },
  };
}

/** Applies events through the queue fold and extends the depth series. */
export function replayQueue(replay: QueueReplay, events: readonly QueueEvent[]): void {
  const live = (s: string | undefined) => (s === 'pending' || s === 'claimed' ? 1 : 0);
  const series = replay.series;
  let state = replay.state;
  for (const e of events) {
    if (e.at > series.clock) series.clock = e.at;
    const key = String((e.data as { jobKey?: unknown }).jobKey);
    const before = state.jobs[key]?.status;
    state = queueFold.apply(state, e);
    series.depth += live(state.jobs[key]?.status) - live(before);
    if (series.count % series.step === 0) series.samples.push({ at: series.clock, depth: series.depth });
    series.count++;
    while (Math.ceil(series.count / series.step) > MAX_POINTS) {
      series.step *= 2;
      series.samples = series.samples.filter((_, i) => i % 2 === 0);
    }
  }
  replay.state = state;
}

/** The points to draw: the samples and the last event, one point per distinct time (the latest depth). */
export function queuePoints(series: QueueSeries): QueuePoint[] {
  const points: QueuePoint[] = [];
  const add = (p: QueuePoint) => {
    const last = points[points.length - 1];
    if (last?.at === p.at) last.depth = p.depth;
    else points.push({ ...p });
  };
  for (const p of series.samples) add(p);
  if (series.count > 0 && (series.count - 1) % series.step !== 0)
    add({ at: series.clock, depth: series.depth });
  return points;
}

/**
 * The queue fold and its depth series in one pass over the log: the state at the end of the
 * replay is the queue's current state, so the board folds the grading log once, not twice.
 */
export function foldQueueSeries(contents: LogContents<QueueEvent>): {
  state: QueueState;
  series: QueuePoint[];
} {
  const replay = startQueueReplay(contents);
  replayQueue(replay, contents.events);
  return { state: replay.state, series: queuePoints(replay.series) };
}

/** The ledger's leaderboard, plus rejections (graded minus accepted) for the board's columns. */
export function leaderRows(state: LedgerState): LeaderRow[] {
  return leaderboard(state).map((r) => ({
    rank: r.rank,
    agent: r.agent,
    score: r.ema,
    count: r.count,
    accepted: r.accepted,
    rejected: r.count - r.accepted,
  }));
}

/**
 * Per (domain, difficulty), best score first, then graded count, then agent. Names compare by code
 * point, as the leaderboard's do: the same order everywhere, and no ICU collator to load.
 */
export function leaderCells(state: LedgerState): LeaderCell[] {
  return Object.values(state.cells)
    .map((c) => ({
      domain: c.domain,
      difficulty: c.difficulty,
      agent: c.agent,
      score: c.ema,
      count: c.count,
    }))
    .sort(
      (a, b) =>
        byCodePoint(a.domain, b.domain) ||
        a.difficulty - b.difficulty ||
        b.score - a.score ||
        b.count - a.count ||
        byCodePoint(a.agent, b.agent),
    );
}

/**
 * The fleet registry joined with the roster (`fleetStatus`: online iff seen within the TTL,
 * effective class = min(declared, observed)) and the registry's load per daemon. Daemons that
 * appear in crews but not in the configuration are listed too, so no crew goes missing.
 */
export function daemonLoads(
  config: SchoolConfig,
  registry: CrewRegistry | undefined,
  school: SchoolState | undefined,
  now: Date,
): DaemonLoad[] {
  const rows = new Map<string, DaemonLoad>();
  for (const d of fleetStatus(config, school ?? { roster: {}, pauses: [] }, now)) {
    rows.set(d.id, {
      id: d.id,
      slots: d.slots,
      running: 0,
      planned: 0,
      load: 0,
      configured: true,
      declaredClass: d.declaredClass,
      effectiveClass: d.effectiveClass,
      online: d.online,
      offlineReason: d.offlineReason,
      lastSeen: d.lastSeen,
      observedClass: d.observedClass,
      freeDiskBytes: d.freeDiskBytes,
      finished: 0,
      busySeconds: 0,
    });
  }
  for (const c of Object.values(registry?.crews ?? {})) {
    let r = rows.get(c.daemon);
    if (!r) {
      r = {
        id: c.daemon,
        slots: 0,
        running: 0,
        planned: 0,
        load: 0,
        configured: false,
        online: false,
        offlineReason: 'not in fleet.daemons',
        finished: 0,
        busySeconds: 0,
      };
      rows.set(c.daemon, r);
    }
    if (c.status === 'running') r.running++;
    else if (c.status === 'planned') r.planned++;
    else if (c.startedAt && c.finishedAt) {
      r.finished++;
      r.busySeconds += Math.max(0, (Date.parse(c.finishedAt) - Date.parse(c.startedAt)) / 1000);
    }
  }
  for (const r of rows.values()) {
    r.load = r.slots > 0 ? r.running / r.slots : r.running > 0 ? 1 : 0;
  }
  return [...rows.values()];
}
