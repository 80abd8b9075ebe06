import type { StateEvent, SnapshotRecord } from './event-log.js';
import type { StateFile } from './layout.js';

/**
 * How a domain turns its event log into current state, and what of that state a compacted snapshot
 * must keep. Compaction (checkpoint-state) folds events older than the retention window into a
 * `$snapshot` record holding `prune(state)` and what dedup needs (see `dedup`), so the checkpoint
 * grows with the active set, not with history.
 */
export interface LogFold<S, E extends StateEvent = StateEvent> {
  file: StateFile;
  empty(): S;
  /** Pure and deterministic: the same events in the same order give the same state. */
  apply(state: S, event: E): S;
  /** Drops terminal entities that need not survive compaction. */
  prune(state: S, horizon: Date, scope?: PruneScope): S;
  /**
   * What a snapshot remembers so a replayed folded event stays a no-op:
   * - `keys` (default): every folded key, forever. Right for a log whose producers may re-create an
   *   old fact with a new timestamp from state that outlives the window (a pause derived from a
   *   crew record the registry keeps).
   * - `watermark`: a low watermark; every event before it is known applied, whatever its key. Right
   *   when a fact is only ever created once, at its own time, or from live state the fold keeps,
   *   so an old event can only come back as a stale copy of itself. Bounded dedup memory.
   */
  dedup?: 'keys' | 'watermark';
}

/** What compaction knows beyond one log. */
export interface PruneScope {
  /**
   * The issues of the curriculum the compaction saw (the issues the school still works on), when
   * it saw one. A closed issue's history need not outlive the window; an open issue's verdicts and
   * last crews must.
   */
  openIssues?: ReadonlySet<number>;
}

/** Folds a log's contents: starts from its snapshot state when there is one. */
export function foldLog<S, E extends StateEvent>(
  fold: LogFold<S, E>,
  contents: { snapshot?: SnapshotRecord<unknown>; events: readonly E[] },
): S {
  let state = contents.snapshot ? (structuredClone(contents.snapshot.data.state) as S) : fold.empty();
  for (const e of contents.events) state = fold.apply(state, e);
  return state;
}

/**
 * The fold of a log read with `incremental: true` (EventLog), kept between reads: when the contents
 * read are the ones folded last, grown by events appended since, only those events are applied.
 */
export class IncrementalFold<S, E extends StateEvent> {
  private last?: { contents: object; applied: number; state: S };

  constructor(private readonly fold: LogFold<S, E>) {}

  /** The state of `contents`; read it, never change it. */
  of(contents: { snapshot?: SnapshotRecord<unknown>; events: readonly E[] }): S {
    const f = this.last;
    if (f && f.contents === contents && f.applied <= contents.events.length) {
      for (let i = f.applied; i < contents.events.length; i++)
        f.state = this.fold.apply(f.state, contents.events[i]!);
      f.applied = contents.events.length;
      return f.state;
    }
    const state = foldLog(this.fold, contents);
    this.last = { contents, applied: contents.events.length, state };
    return state;
  }

  /** Folds afresh on the next read (an append may have failed half-way). */
  reset(): void {
    this.last = undefined;
  }
}

const registry = new Map<StateFile, LogFold<unknown, StateEvent>>();

/** Domains register their fold so compaction and the board can use it without importing them. */
export function registerFold<S, E extends StateEvent>(fold: LogFold<S, E>): LogFold<S, E> {
  registry.set(fold.file, fold as unknown as LogFold<unknown, StateEvent>);
  return fold;
}

export function registeredFolds(): ReadonlyMap<StateFile, LogFold<unknown, StateEvent>> {
  return registry;
}

/**
 * Orders strings by UTF-16 code unit: the same on every machine and locale, and without the ICU
 * collator `localeCompare` loads on its first call (tens of milliseconds in a fresh process).
 */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
