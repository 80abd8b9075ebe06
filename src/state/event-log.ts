import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import {
  readJsonl,
  appendJsonl,
  parseJsonl,
  syncFile,
  type Appended,
  type AppendOptions,
  type Warn,
} from './jsonl.js';
import { withLock, type LockStats } from './lock.js';

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
   * Under the lock, read only what was appended since this instance's last read (the file is
   * re-read whole when it was replaced, truncated or rewritten). The contents are then shared
   * between transactions: only for logs whose fold never mutates event data.
   */
  incremental?: boolean;
}

/** Bytes before the read offset that must be unchanged for an incremental read to continue. */
const PROBE = 64;

export class EventLog<E extends StateEvent, S = unknown> {
  private tail?: { dev: number; ino: number; bytes: number; probe: Buffer; contents: LogContents<E, S> };

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
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      this.tail = undefined;
      return splitLog<E, S>([]);
    }
    try {
      const st = fstatSync(fd);
      const t = this.tail;
      if (t && t.dev === st.dev && t.ino === st.ino && st.size >= t.bytes && samePrefix(fd, t)) {
        if (st.size > t.bytes) {
          const buf = Buffer.alloc(st.size - t.bytes);
          readFully(fd, buf, t.bytes);
          const parsed = parseJsonl<E>(buf.toString('utf8'), this.path, this.warn);
          addEvents(t.contents, parsed.records);
          t.contents.tornTail = parsed.tornTail;
          t.bytes += parsed.bytes;
          t.probe = probeAt(fd, t.bytes);
        }
        return t.contents;
      }
      const buf = Buffer.alloc(st.size);
      readFully(fd, buf, 0);
      const parsed = parseJsonl<E | SnapshotRecord<S>>(buf.toString('utf8'), this.path, this.warn);
      const contents = splitLog<E, S>(parsed.records, parsed.tornTail);
      this.tail = {
        dev: st.dev,
        ino: st.ino,
        bytes: parsed.bytes,
        probe: probeAt(fd, parsed.bytes),
        contents,
      };
      return contents;
    } finally {
      closeSync(fd);
    }
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
    const written = appendJsonl(this.path, fresh, this.warn, options);
    if (written) this.wroteThrough(current, fresh, written, options);
    return { result, appended: fresh };
  }

  /**
   * After an append under the lock, an incremental log takes its own events into what it read, so
   * the next transaction does not read and parse them back — when nothing else changed the file
   * since the read and the events were written as they are (`redacted`: no copy was made on the
   * way, so the file holds exactly their JSON). Otherwise the next read reads them back.
   */
  private wroteThrough(
    current: LogContents<E, S>,
    fresh: E[],
    written: Appended,
    options: AppendOptions,
  ): void {
    const t = this.tail;
    if (!t || t.contents !== current) return;
    if (!options.redacted || written.repaired || written.start !== t.bytes) return; // read back
    addEvents(t.contents, fresh);
    t.bytes = written.end;
    t.probe =
      written.tail.length >= PROBE
        ? Buffer.from(written.tail)
        : Buffer.concat([t.probe, written.tail]).subarray(-Math.min(PROBE, written.end));
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

function readFully(fd: number, buf: Buffer, position: number): void {
  let off = 0;
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, position + off);
    if (n === 0) break;
    off += n;
  }
}

function probeAt(fd: number, bytes: number): Buffer {
  const len = Math.min(PROBE, bytes);
  const buf = Buffer.alloc(len);
  readFully(fd, buf, bytes - len);
  return buf;
}

function samePrefix(fd: number, t: { bytes: number; probe: Buffer }): boolean {
  return probeAt(fd, t.bytes).equals(t.probe);
}

export function event<T extends string, D>(
  type: T,
  key: string,
  data: D,
  at: Date = new Date(),
): StateEvent<T, D> {
  return { key, type, at: at.toISOString(), data };
}
