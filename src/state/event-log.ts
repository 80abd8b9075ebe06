import { readJsonl, appendJsonl, type Warn } from './jsonl.js';
import { withLock, type LockStats } from './lock.js';

/**
 * Every durable fact is an event with an idempotency key (DESIGN §2). Current state is a
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

/** First line of a compacted log: older events folded into `state`, their keys kept for dedup. */
export interface SnapshotRecord<S = unknown> {
  key: string;
  type: '$snapshot';
  at: string;
  data: { keys: string[]; state: S; events: number };
}

export const SNAPSHOT_TYPE = '$snapshot';

export interface LogContents<E extends StateEvent, S = unknown> {
  snapshot?: SnapshotRecord<S>;
  events: E[];
  /** Every key applied so far, including those folded into the snapshot. */
  keys: Set<string>;
  tornTail: boolean;
}

export function splitLog<E extends StateEvent, S>(records: Array<E | SnapshotRecord<S>>, tornTail = false) {
  const first = records[0];
  const snapshot = first && first.type === SNAPSHOT_TYPE ? (first as SnapshotRecord<S>) : undefined;
  const events = (snapshot ? records.slice(1) : records) as E[];
  const keys = new Set<string>(snapshot?.data.keys ?? []);
  const unique: E[] = [];
  for (const e of events) {
    if (keys.has(e.key)) continue;
    keys.add(e.key);
    unique.push(e);
  }
  return { snapshot, events: unique, keys, tornTail } satisfies LogContents<E, S>;
}

export class EventLog<E extends StateEvent, S = unknown> {
  constructor(
    readonly path: string,
    private readonly warn?: Warn,
  ) {}

  /** Reads the log. Throws CorruptStateError (after quarantining) on a corrupt complete line. */
  read(): LogContents<E, S> {
    const { records, tornTail } = readJsonl<E | SnapshotRecord<S>>(this.path, this.warn);
    return splitLog<E, S>(records, tornTail);
  }

  /** Appends events whose keys are new, under the lock. Returns what was appended. */
  async append(events: readonly E[]): Promise<E[]> {
    return this.transact(() => ({ append: events, result: undefined })).then((r) => r.appended);
  }

  /**
   * Read-decide-append under the log's lock: `decide` sees the current contents and returns the
   * events to append (dedup by key still applies) and a result. This is how a claim, a lease or an
   * admission decision is made atomically across processes.
   */
  async transact<R>(
    decide: (current: LogContents<E, S>) => { append: readonly E[]; result: R },
  ): Promise<{ result: R; appended: E[]; lock: LockStats }> {
    return withLock(this.path, (lock) => {
      const current = this.read();
      const { append, result } = decide(current);
      const fresh: E[] = [];
      for (const e of append) {
        if (current.keys.has(e.key)) continue;
        current.keys.add(e.key);
        fresh.push(e);
      }
      appendJsonl(this.path, fresh, this.warn);
      return { result, appended: fresh, lock };
    });
  }
}

export function event<T extends string, D>(
  type: T,
  key: string,
  data: D,
  at: Date = new Date(),
): StateEvent<T, D> {
  return { key, type, at: at.toISOString(), data };
}
