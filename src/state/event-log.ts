import { readJsonl, appendJsonl, syncFile, type AppendOptions, type Warn } from './jsonl.js';
import { withLock, type LockStats } from './lock.js';
import { readTail, type TailMark } from './tail.js';

/**
 * Every durable fact is an event with an idempotency key (docs/architecture.md). Current state is a
 * deterministic fold of the events; an event whose key was already applied is skipped, so replays
 * and the union of two writers' logs are safe by construction.
 */
export interface StateEvent<T extends string = string, D = unknown> {
  /** Idempotency key: unique per fact. Appending an event whose key exists is a no-op. */
  key: string;
  type: T;
  /** Wall-clock ISO time: for people and for ordering merged logs, never for durations (N3.2). */
  at: string;
  data: D;
}

/**
 * First line of a compacted log: older events folded into `state`. What the snapshot remembers for
 * dedup depends on the fold (see LogFold.dedup):
 * - `keys` (the default): every folded key, so a replayed event is recognised by its key forever.
 * - `watermark`: every event whose `at` is before `watermark` is folded, so such an event is known
 *   applied without its key; `keys` then holds only the few folded keys at or after the watermark
 *   (a writer whose clock ran behind). Dedup memory stays bounded however long the history.
 * Snapshots written before watermarks existed have no `watermark`: nothing is below it, and their
 * `keys` (every folded key) keep working as before.
 */
export interface SnapshotRecord<S = unknown> {
  key: string;
  type: '$snapshot';
  /** The latest `at` among the folded events. */
  at: string;
  data: { keys: string[]; state: S; events: number; watermark?: string };
}

export const SNAPSHOT_TYPE = '$snapshot';

export interface LogContents<E extends StateEvent, S = unknown> {
  snapshot?: SnapshotRecord<S>;
  events: E[];
  /**
   * Keys of the events read plus the keys the snapshot remembers. Events before `watermark` are
   * known without their key: ask `isKnown`, not this set, whether an event was applied.
   */
  keys: Set<string>;
  /** Low watermark of a compacted log ('' when there is none): events before it are folded. */
  watermark: string;
  /** Events dropped because they are before the watermark (stale copies of folded history). */
  belowWatermark: number;
  tornTail: boolean;
}

/** Whether an event is already applied in `contents`: before its watermark, or its key is known. */
export function isKnown(contents: { keys: ReadonlySet<string>; watermark: string }, e: StateEvent): boolean {
  return (contents.watermark !== '' && e.at < contents.watermark) || contents.keys.has(e.key);
}

export function watermarkOf(snapshot: SnapshotRecord<unknown> | undefined): string {
  return snapshot?.data.watermark ?? '';
}

export function splitLog<E extends StateEvent, S>(records: Array<E | SnapshotRecord<S>>, tornTail = false) {
  const first = records[0];
  const snapshot = first && first.type === SNAPSHOT_TYPE ? (first as SnapshotRecord<S>) : undefined;
  const events = (snapshot ? records.slice(1) : records) as E[];
  const contents: LogContents<E, S> = {
    snapshot,
    events: [],
    keys: new Set<string>(snapshot?.data.keys ?? []),
    watermark: watermarkOf(snapshot),
    belowWatermark: 0,
    tornTail,
  };
  addEvents(contents, events);
  return contents;
}

/** Adds events read after `contents` (dedup by watermark and key). Returns the ones kept. */
export function addEvents<E extends StateEvent>(
  contents: LogContents<E, unknown>,
  events: readonly E[],
): E[] {
  const kept: E[] = [];
  for (const e of events) {
    if (contents.watermark !== '' && e.at < contents.watermark) {
      contents.belowWatermark++;
      continue;
    }
    if (contents.keys.has(e.key)) continue;
    contents.keys.add(e.key);
    contents.events.push(e);
    kept.push(e);
  }
  return kept;
}

export interface EventLogOptions {
  /**
   * Under the lock, read only what was appended since this instance's last read (src/state/tail.ts:
   * the file is re-read whole when it was replaced, truncated or rewritten). The contents are then
   * shared between transactions: only for logs whose fold never mutates event data.
   */
  incremental?: boolean;
}

export class EventLog<E extends StateEvent, S = unknown> {
  private tail?: { mark: TailMark; contents: LogContents<E, S> };

  constructor(
    readonly path: string,
    private readonly warn?: Warn,
    private readonly options: EventLogOptions = {},
  ) {}

  /** Reads the log. Throws CorruptStateError (after quarantining) on a corrupt complete line. */
  read(): LogContents<E, S> {
    const { records, tornTail } = readJsonl<E | SnapshotRecord<S>>(this.path, this.warn);
    return splitLog<E, S>(records, tornTail);
  }

  /**
   * The current contents, incrementally when the log is `incremental` (see EventLogOptions). Call
   * it under the lock; the result must not be mutated.
   */
  readLatest(): LogContents<E, S> {
    if (!this.options.incremental) return this.read();
    const t = this.tail;
    const read = readTail<E | SnapshotRecord<S>>(this.path, t?.mark, this.warn);
    if (!read.mark) {
      this.tail = undefined;
      return splitLog<E, S>([]);
    }
    if (t && read.continued) {
      // Only the first line of a log is a snapshot: what was appended is events.
      addEvents(t.contents, read.records as E[]);
      t.contents.tornTail = read.tornTail;
      t.mark = read.mark;
      return t.contents;
    }
    const contents = splitLog<E, S>(read.records, read.tornTail);
    this.tail = { mark: read.mark, contents };
    return contents;
  }

  /** Flushes appends made with `sync: false` to the disk. */
  sync(): void {
    syncFile(this.path);
  }

  /** Appends events whose keys are new, under the lock. Returns what was appended. */
  async append(events: readonly E[]): Promise<E[]> {
    if (events.length === 0) return [];
    return this.transact(() => ({ append: events, result: undefined })).then((r) => r.appended);
  }

  /**
   * Read-decide-append under the log's lock: `decide` sees the current contents (read-only) and
   * returns the events to append (dedup by watermark and key still applies) and a result. This is
   * how a claim, a lease or an admission decision is made atomically across processes.
   */
  async transact<R>(
    decide: (current: LogContents<E, S>) => { append: readonly E[]; result: R },
    options: AppendOptions = {},
  ): Promise<{ result: R; appended: E[]; lock: LockStats }> {
    return withLock(this.path, (lock) => ({ ...this.transactHeld(decide, options), lock }));
  }

  /** `transact` for a caller that already holds this log's lock (a grading wave holds the grading lock). */
  transactHeld<R>(
    decide: (current: LogContents<E, S>) => { append: readonly E[]; result: R },
    options: AppendOptions = {},
  ): { result: R; appended: E[] } {
    const current = this.readLatest();
    const { append, result } = decide(current);
    const fresh = freshEvents(current, append);
    appendJsonl(this.path, fresh, this.warn, options);
    return { result, appended: fresh };
  }
}

/** The events of `append` not yet applied in `current` nor earlier in `append` itself. */
export function freshEvents<E extends StateEvent>(
  current: { keys: ReadonlySet<string>; watermark: string },
  append: readonly E[],
): E[] {
  const fresh: E[] = [];
  const batch = new Set<string>();
  for (const e of append) {
    if (isKnown(current, e) || batch.has(e.key)) continue;
    batch.add(e.key);
    fresh.push(e);
  }
  return fresh;
}

export function event<T extends string, D>(
  type: T,
  key: string,
  data: D,
  at: Date = new Date(),
): StateEvent<T, D> {
  return { key, type, at: at.toISOString(), data };
}
