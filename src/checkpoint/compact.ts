import { sessionStoresToDrop, type StoreStates } from '../feedback/session-stores.js';
import { BOOKBAG_FILES } from '../bookbag/schema.js';
import { foldLog, registeredFolds, type LogFold, type PruneScope } from '../state/fold.js';
import { SNAPSHOT_TYPE, watermarkOf, type SnapshotRecord, type StateEvent } from '../state/event-log.js';
import { parseJsonl } from '../state/jsonl.js';
import { STATE_DIRS, STATE_FILES } from '../state/layout.js';
import { isLog, parseLog, serializeLog, type LogRecord, type ParsedLog } from './logs.js';
import type { Manifest } from './manifest.js';
import './folds.js';

/**
 * Compaction (docs/architecture.md): the checkpoint grows with the active set, not with history.
 * - A log with a registered fold: the leading events older than the horizon are folded into the
 *   `$snapshot` first line — `prune`d state plus what dedup needs: every folded key, or for a
 *   `watermark` fold a low watermark (every event before it is folded) and only the folded keys at
 *   or after it. Events before the watermark found in the log (a stale copy merged in) are dropped
 *   and counted.
 * - The audit and observation logs (no state is derived from them) keep only the window.
 * - Any other event log is kept whole: dropping events nobody can fold would lose state.
 * - A bookbag is dropped once it is older than the horizon and nothing kept refers to its crew.
 * - A bookbag's kept agent session (`session-store.json`) is dropped as soon as no revision can
 *   resume it: its crew was not accepted, was superseded or its pull request settled
 *   (src/feedback/session-stores.ts).
 */
/** The manifest's `compacted` line for session stores dropped from bookbags (not a file of its own). */
export const SESSION_STORES_COMPACTED = `${STATE_DIRS.bookbags}/*/${BOOKBAG_FILES.sessionStore}`;

const WINDOWED_ONLY = new Set<string>([STATE_FILES.audit, STATE_FILES.observations]);

export interface CompactOptions {
  horizon: Date;
  folds?: ReadonlyMap<string, LogFold<unknown, StateEvent>>;
  warn?: (message: string) => void;
}

export interface CompactResult {
  files: Map<string, Buffer>;
  compacted: Manifest['compacted'];
  /** Event logs kept whole because no fold is registered for them. */
  unfolded: string[];
  /** Per log: events dropped because they are before its watermark (already folded). */
  belowWatermark: Record<string, number>;
}

export function foldsByPath(): Map<string, LogFold<unknown, StateEvent>> {
  const out = new Map<string, LogFold<unknown, StateEvent>>();
  for (const [name, fold] of registeredFolds()) out.set(STATE_FILES[name], fold);
  return out;
}

export function compact(files: ReadonlyMap<string, Buffer>, options: CompactOptions): CompactResult {
  const folds = options.folds ?? foldsByPath();
  const horizon = options.horizon.toISOString();
  const out = new Map(files);
  const compacted: Manifest['compacted'] = {};
  const unfolded: string[] = [];
  const belowWatermark: Record<string, number> = {};
  const kept: ParsedLog[] = [];
  const keptByPath = new Map<string, ParsedLog>();
  const scope: PruneScope = { ...openIssuesOf(files.get(STATE_FILES.curriculum)) };
  for (const [path, data] of files) {
    if (!isLog(path)) continue;
    const { log, below } = dedupe(parseLog(data, `checkpoint:${path}`, options.warn));
    if (below > 0) belowWatermark[path] = below;
    const fold = folds.get(path);
    let next: ParsedLog = log;
    if (fold) {
      let n = 0;
      while (n < log.records.length && isEvent(log.records[n]!) && (log.records[n]!.at as string) < horizon)
        n++;
      if (n > 0) {
        next = { snapshot: foldPrefix(fold, log, n, options.horizon, scope), records: log.records.slice(n) };
        compacted[path] = { folded: n, dropped: 0 };
      }
    } else if (WINDOWED_ONLY.has(path)) {
      const records = log.records.filter((r) => typeof r.at !== 'string' || r.at >= horizon);
      if (records.length < log.records.length) {
        next = { ...log, records };
        compacted[path] = { folded: 0, dropped: log.records.length - records.length };
      }
    } else if (log.records.some(isEvent)) {
      unfolded.push(path);
    }
    kept.push(next);
    keptByPath.set(path, next);
    if (next !== log) out.set(path, serializeLog(next));
  }
  const dropped = dropOldBookbags(out, kept, options.horizon);
  if (dropped > 0) compacted[`${STATE_DIRS.bookbags}/`] = { folded: 0, dropped };
  const stores = dropSessionStores(out, keptByPath);
  if (stores > 0) compacted[SESSION_STORES_COMPACTED] = { folded: 0, dropped: stores };
  return { files: out, compacted, unfolded, belowWatermark };
}

/**
 * Drops events that are already folded (before the watermark, or a key the snapshot remembers) or
 * already seen: a fold must apply each event once.
 */
function dedupe(log: ParsedLog): { log: ParsedLog; below: number } {
  const seen = new Set<string>(log.snapshot?.data.keys ?? []);
  const watermark = watermarkOf(log.snapshot);
  let below = 0;
  let changed = false;
  const records = log.records.filter((r) => {
    if (typeof r.key !== 'string') return true;
    if (watermark !== '' && typeof r.at === 'string' && r.at < watermark) {
      below++;
      changed = true;
      return false;
    }
    if (seen.has(r.key)) {
      changed = true;
      return false;
    }
    seen.add(r.key);
    return true;
  });
  return { log: changed ? { ...log, records } : log, below };
}

/**
 * The issue numbers of a curriculum file, or nothing when there is none or a line does not parse
 * (then every fold keeps what it keeps without one).
 */
function openIssuesOf(curriculum: Buffer | undefined): PruneScope {
  if (!curriculum) return {};
  let records: Array<{ number?: unknown }>;
  try {
    records = parseJsonl<{ number?: unknown }>(curriculum.toString('utf8'), STATE_FILES.curriculum).records;
  } catch {
    return {};
  }
  const open = new Set<number>();
  for (const r of records) {
    if (typeof r?.number !== 'number' || !Number.isInteger(r.number)) return {};
    open.add(r.number);
  }
  return { openIssues: open };
}

function isEvent(r: LogRecord): boolean {
  return typeof r.key === 'string' && typeof r.at === 'string' && typeof r.type === 'string';
}

function foldPrefix(
  fold: LogFold<unknown, StateEvent>,
  log: ParsedLog,
  n: number,
  horizon: Date,
  scope: PruneScope,
): SnapshotRecord {
  const prefix = log.records.slice(0, n) as unknown as StateEvent[];
  const state = fold.prune(foldLog(fold, { snapshot: log.snapshot, events: prefix }), horizon, scope);
  const lastAt = prefix.reduce((m, e) => (e.at > m ? e.at : m), log.snapshot?.at ?? '');
  const events = (log.snapshot?.data.events ?? 0) + n;
  if (fold.dedup === 'watermark') {
    const watermark = nextWatermark(log, n, horizon);
    // Keys are remembered only where the watermark does not cover them: folded events at or after it
    // (a writer whose clock ran behind), and the previous snapshot's keys unless all of its events
    // are before it (a snapshot written before watermarks existed holds every key it folded).
    const keys = log.snapshot && log.snapshot.at >= watermark ? [...log.snapshot.data.keys] : [];
    const known = new Set(keys);
    for (const e of prefix) {
      if (e.at >= watermark && !known.has(e.key)) {
        known.add(e.key);
        keys.push(e.key);
      }
    }
    return { key: SNAPSHOT_TYPE, type: SNAPSHOT_TYPE, at: lastAt, data: { keys, state, events, watermark } };
  }
  const keys = log.snapshot ? [...log.snapshot.data.keys] : [];
  const known = new Set(keys);
  for (const e of prefix) {
    if (!known.has(e.key)) {
      known.add(e.key);
      keys.push(e.key);
    }
  }
  return { key: SNAPSHOT_TYPE, type: SNAPSHOT_TYPE, at: lastAt, data: { keys, state, events } };
}

/**
 * The watermark after folding the first `n` records: the horizon, lowered to the earliest event
 * kept (so nothing kept is ever below it), never below the previous watermark (every event before
 * that one is folded already, and the kept ones are all at or after it).
 */
function nextWatermark(log: ParsedLog, n: number, horizon: Date): string {
  let watermark = horizon.toISOString();
  for (let i = n; i < log.records.length; i++) {
    const at = log.records[i]!.at;
    if (typeof at === 'string' && typeof log.records[i]!.key === 'string' && at < watermark) watermark = at;
  }
  const previous = watermarkOf(log.snapshot);
  return previous > watermark ? previous : watermark;
}

/** Crew ids referred to anywhere in what the logs keep (snapshot states and events). */
function referencedCrews(logs: readonly ParsedLog[]): Set<string> {
  const ids = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > 32 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if ((k === 'crewId' || k === 'crew_id') && typeof x === 'string') ids.add(x);
      else if (k !== 'keys') walk(x, depth + 1);
    }
  };
  for (const log of logs) {
    if (log.snapshot) walk(log.snapshot.data.state, 0);
    for (const r of log.records) walk(r, 0);
  }
  return ids;
}

function dropOldBookbags(files: Map<string, Buffer>, logs: readonly ParsedLog[], horizon: Date): number {
  const prefix = `${STATE_DIRS.bookbags}/`;
  const byCrew = new Map<string, string[]>();
  for (const path of files.keys()) {
    if (!path.startsWith(prefix)) continue;
    const crew = path.slice(prefix.length).split('/')[0]!;
    const list = byCrew.get(crew) ?? [];
    list.push(path);
    byCrew.set(crew, list);
  }
  if (byCrew.size === 0) return 0;
  const referenced = referencedCrews(logs);
  let dropped = 0;
  for (const [crew, paths] of byCrew) {
    if (referenced.has(crew)) continue;
    const finished = finishedAt(files.get(`${prefix}${crew}/bookbag.json`));
    // Unknown age (no record, unreadable record) keeps the bookbag: dropping is the irreversible side.
    if (!finished || !(finished < horizon)) continue;
    for (const p of paths) files.delete(p);
    dropped++;
  }
  return dropped;
}

function finishedAt(record: Buffer | undefined): Date | undefined {
  if (!record) return undefined;
  try {
    const v = JSON.parse(record.toString('utf8')) as { timings?: { finishedAt?: unknown } };
    const at = v.timings?.finishedAt;
    if (typeof at !== 'string') return undefined;
    const d = new Date(at);
    return Number.isNaN(d.getTime()) ? undefined : d;
  } catch {
    return undefined;
  }
}

/**
 * Removes the `session-store.json` of every bookbag whose crew no revision can resume any more
 * (src/feedback/session-stores.ts), judged on the grading queue, the outbox and the feedback log as
 * this compaction keeps them. Folds those logs only when some bookbag holds a store.
 */
function dropSessionStores(files: Map<string, Buffer>, logs: ReadonlyMap<string, ParsedLog>): number {
  const prefix = `${STATE_DIRS.bookbags}/`;
  const suffix = `/${BOOKBAG_FILES.sessionStore}`;
  const crews = new Map<string, string>();
  for (const path of files.keys()) {
    if (!path.startsWith(prefix) || !path.endsWith(suffix)) continue;
    const crew = path.slice(prefix.length, path.length - suffix.length);
    if (!crew.includes('/')) crews.set(crew, path);
  }
  if (crews.size === 0) return 0;
  const registered = foldsByPath();
  const stateOf = (file: string): unknown => {
    const log = logs.get(file);
    const fold = registered.get(file);
    if (!log || !fold) return undefined;
    return foldLog(fold, {
      snapshot: log.snapshot,
      events: log.records.filter(isEvent) as unknown as StateEvent[],
    });
  };
  const states = {
    grading: stateOf(STATE_FILES.grading),
    outbox: stateOf(STATE_FILES.outbox),
    feedback: stateOf(STATE_FILES.feedback),
  } as StoreStates;
  let dropped = 0;
  for (const crew of sessionStoresToDrop(crews.keys(), states).keys()) {
    files.delete(crews.get(crew)!);
    dropped++;
  }
  return dropped;
}
