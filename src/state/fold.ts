import type { StateEvent, SnapshotRecord } from './event-log.js';
import type { StateFile } from './layout.js';

/**
 * How a domain turns its event log into current state, and what of that state a compacted snapshot
 * must keep. Compaction (checkpoint-state) folds events older than the retention window into a
 * `$snapshot` record holding `prune(state)` plus every folded key, so dedup survives while the
 * checkpoint grows with the active set, not with history.
 */
export interface LogFold<S, E extends StateEvent = StateEvent> {
  file: StateFile;
  empty(): S;
  /** Pure and deterministic: the same events in the same order give the same state. */
  apply(state: S, event: E): S;
  /** Drops terminal entities that need not survive compaction (their keys still do). */
  prune(state: S, horizon: Date): S;
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

const registry = new Map<StateFile, LogFold<unknown, StateEvent>>();

/** Domains register their fold so compaction and the board can use it without importing them. */
export function registerFold<S, E extends StateEvent>(fold: LogFold<S, E>): LogFold<S, E> {
  registry.set(fold.file, fold as unknown as LogFold<unknown, StateEvent>);
  return fold;
}

export function registeredFolds(): ReadonlyMap<StateFile, LogFold<unknown, StateEvent>> {
  return registry;
}
