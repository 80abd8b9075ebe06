import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { message } from '../errors.js';
import { writeFileAtomic } from '../state/atomic.js';
import { withLock } from '../state/lock.js';
import { STATE_DIRS, STATE_FILES, type StateFile, type StateLayout } from '../state/layout.js';
import { BOOKBAG_FILES } from '../bookbag/schema.js';
import { compact } from './compact.js';

/**
 * Compaction of a live state directory, for a school that runs on one machine and never restores
 * a checkpoint (`school compact`). A checkpoint compacts its copy of the logs and the next restore
 * brings the compacted form back; a local school has no restore, so without this its logs, and the
 * time every new process takes to read them, grow with history.
 *
 * The same compaction as a checkpoint's (src/checkpoint/compact.ts, the same horizon setting): each
 * log is read, compacted and replaced under the lock its writers append under — the grading lock
 * for the grading queue, the score ledger and the observations — atomically (a temporary file,
 * fsynced, renamed over the log): a crash leaves the old file or the new one, a writer waiting for
 * the lock appends to the new one, and a reader holding the old one re-reads the new one whole.
 * Then bookbags that finished before the horizon and that nothing kept mentions are removed, and
 * the session stores no revision can resume (src/feedback/session-stores.ts).
 */
const LOGS: ReadonlyArray<[StateFile, StateFile]> = [
  // [log, the log whose lock its writers hold]
  ['crews', 'crews'],
  ['grading', 'grading'],
  ['scores', 'grading'],
  ['observations', 'grading'],
  ['outbox', 'outbox'],
  ['spend', 'spend'],
  ['school', 'school'],
  ['audit', 'audit'],
  ['feedback', 'feedback'],
];

export interface LiveLogCompaction {
  file: string;
  bytesBefore: number;
  bytesAfter: number;
  /** Events folded into the snapshot line, and records dropped (a windowed log's old records). */
  folded: number;
  dropped: number;
  /** Copies of events already folded (before the watermark) found in the log and dropped. */
  belowWatermark: number;
}

export interface LiveCompaction {
  logs: LiveLogCompaction[];
  /** Bookbags removed: finished before the horizon, and no kept event or state mentions the crew. */
  bookbagsRemoved: number;
  /** `session-store.json` files removed from bookbags whose crew no revision can resume. */
  sessionStoresRemoved: number;
  /** Their bytes. */
  sessionStoreBytes: number;
  /** Logs that could not be compacted, and why (they are left as they were). */
  failed: Array<{ file: string; error: string }>;
}

export async function compactLive(layout: StateLayout, horizon: Date): Promise<LiveCompaction> {
  const out: LiveCompaction = {
    logs: [],
    bookbagsRemoved: 0,
    sessionStoresRemoved: 0,
    sessionStoreBytes: 0,
    failed: [],
  };
  // The prunes keep an open issue's history and let a closed one's go: they read the curriculum.
  const curriculum = readIfExists(layout.file('curriculum'));
  for (const [log, lockedBy] of LOGS) {
    const path = layout.file(log);
    if (!existsSync(path)) continue;
    try {
      const done = await withLock(layout.file(lockedBy), () =>
        compactLog(path, STATE_FILES[log], horizon, curriculum),
      );
      if (done) out.logs.push(done);
    } catch (e) {
      out.failed.push({ file: STATE_FILES[log], error: message(e) });
    }
  }
  if (out.failed.length === 0) Object.assign(out, removeFromBookbags(layout, horizon, curriculum));
  return out;
}

function readIfExists(path: string): Buffer | undefined {
  return existsSync(path) ? readFileSync(path) : undefined;
}

/** Compacts one log held under its writers' lock; undefined when there was nothing to do. */
function compactLog(
  path: string,
  name: string,
  horizon: Date,
  curriculum: Buffer | undefined,
): LiveLogCompaction | undefined {
  const bytes = readFileSync(path);
  const files = new Map<string, Buffer>([[name, bytes]]);
  if (curriculum) files.set(STATE_FILES.curriculum, curriculum);
  const result = compact(files, { horizon });
  const after = result.files.get(name)!;
  if (after === bytes) return undefined;
  writeFileAtomic(path, after);
  const c = result.compacted[name];
  return {
    file: name,
    bytesBefore: bytes.length,
    bytesAfter: after.length,
    folded: c?.folded ?? 0,
    dropped: c?.dropped ?? 0,
    belowWatermark: result.belowWatermark[name] ?? 0,
  };
}

/**
 * The checkpoint's rules for bookbags, over the logs as they are now: the compaction is asked which
 * bookbag paths it would drop (only their paths and records matter to it) — a whole bookbag, or its
 * session store — and those are removed.
 */
function removeFromBookbags(
  layout: StateLayout,
  horizon: Date,
  curriculum: Buffer | undefined,
): Pick<LiveCompaction, 'bookbagsRemoved' | 'sessionStoresRemoved' | 'sessionStoreBytes'> {
  const out = { bookbagsRemoved: 0, sessionStoresRemoved: 0, sessionStoreBytes: 0 };
  const dir = join(layout.root, STATE_DIRS.bookbags);
  if (!existsSync(dir)) return out;
  const files = new Map<string, Buffer>();
  if (curriculum) files.set(STATE_FILES.curriculum, curriculum);
  for (const [log] of LOGS) {
    const path = layout.file(log);
    if (existsSync(path)) files.set(STATE_FILES[log], readFileSync(path));
  }
  const crews = new Map<string, { record: string; store?: string }>();
  for (const crew of readdirSync(dir)) {
    if (!statSync(join(dir, crew)).isDirectory()) continue;
    const record = `${STATE_DIRS.bookbags}/${crew}/${BOOKBAG_FILES.record}`;
    files.set(record, readIfExists(join(dir, crew, BOOKBAG_FILES.record)) ?? Buffer.alloc(0));
    const store = `${STATE_DIRS.bookbags}/${crew}/${BOOKBAG_FILES.sessionStore}`;
    const hasStore = existsSync(join(dir, crew, BOOKBAG_FILES.sessionStore));
    if (hasStore) files.set(store, Buffer.alloc(0));
    crews.set(crew, { record, ...(hasStore ? { store } : {}) });
  }
  const kept = compact(files, { horizon }).files;
  for (const [crew, { record, store }] of crews) {
    if (!kept.has(record)) {
      rmSync(join(dir, crew), { recursive: true, force: true });
      out.bookbagsRemoved++;
    } else if (store && !kept.has(store)) {
      const path = join(dir, crew, BOOKBAG_FILES.sessionStore);
      out.sessionStoreBytes += statSync(path, { throwIfNoEntry: false })?.size ?? 0;
      rmSync(path, { force: true });
      out.sessionStoresRemoved++;
    }
  }
  return out;
}
