import { dirname } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { deliveriesOf } from '../outbox/outbox.js';
import { splitLog, type StateEvent } from '../state/event-log.js';
import { STATE_FILES, VIEW_FILES, type StateFile, type StateLayout } from '../state/layout.js';
import { message } from '../errors.js';
import { readFeedback, type FeedbackState } from '../feedback/log.js';
import { queuePoints } from './domains.js';
import { readFoldCache, writeFoldCache, type CachedLog, type FoldBody } from './fold-cache.js';
import { crews, foldCode, grading, outbox, school, scores, spend, type Folder } from './folders.js';
import { readTail, type TailRead } from '../state/tail.js';
import { encodeKeyHashes, hashKey, KeyHashes } from './key-hashes.js';
import type { BoardSources } from './model.js';
import { readBoardCurriculum, SourceReader } from './sources.js';

/**
 * The board's inputs, folded once and reused (src/board/fold-cache.ts): each log is read from
 * where the persisted fold stopped (the state's one tail reader, src/state/tail.ts), and only what
 * was appended since is parsed and folded with the owning domain's fold. A log that was replaced, compacted, merged, truncated or rewritten (its
 * identity or the bytes before the mark differ), a persisted fold that is missing or unusable, and
 * anything unexpected in the appended part (a corrupt line, a key that may be a replay, a fold that
 * rejects a row) all fall back to folding that log from the start, exactly as a fresh read would.
 * So the board built from the persisted fold is the board a full fold builds.
 */

/** Appended bytes folded without rewriting the persisted fold; past this, it is rewritten. */
export const TAIL_LIMIT = 1 << 20;

interface Folded<X> {
  x: X;
  /** The entry to persist, or undefined (a problem, or not to be persisted). */
  entry?: CachedLog;
  /** Hashes of keys folded since `entry.keys` was encoded. */
  added?: number[];
  /** True when the log was folded from the start (the persisted fold has something new to say). */
  whole: boolean;
  appended: number;
}

function foldWhole<X, E extends StateEvent>(folder: Folder<X, E>, read: TailRead<E>): Folded<X> {
  const contents = splitLog<E, unknown>(read.records, read.tornTail);
  const x = folder.start(contents);
  const keys = encodeKeyHashes([...contents.keys].map((k) => hashKey(String(k))));
  return {
    x,
    entry: { mark: read.mark, watermark: contents.watermark, keys, fold: x },
    whole: true,
    appended: 0,
  };
}

/** Continues a persisted fold with what was appended; undefined when it must be folded whole. */
function foldAppended<X, E extends StateEvent>(
  folder: Folder<X, E>,
  read: TailRead<E>,
  cached: CachedLog,
): Folded<X> | undefined {
  try {
    const known = new KeyHashes(cached.keys);
    const seen = new Set<string>();
    const fresh: E[] = [];
    const added: number[] = [];
    for (const e of read.records) {
      if (typeof e.key !== 'string' || typeof e.at !== 'string') return undefined;
      if (cached.watermark !== '' && e.at < cached.watermark) continue;
      if (seen.has(e.key)) continue;
      const h = hashKey(e.key);
      if (known.has(h)) return undefined; // maybe a replay of a folded event: decide on the whole log
      seen.add(e.key);
      added.push(h);
      fresh.push(e);
    }
    const x = folder.add(cached.fold as X, fresh);
    const appended = read.mark!.bytes - cached.mark!.bytes;
    return { x, entry: { ...cached, mark: read.mark, fold: x }, added, whole: false, appended };
  } catch {
    return undefined;
  }
}

/** Folds one log; a read or fold failure is a problem on the board (or, for `quiet`, nothing). */
function foldSource<X, E extends StateEvent>(
  reader: SourceReader,
  folder: Folder<X, E>,
  cached: CachedLog | undefined,
  quiet = false,
): Folded<X> | undefined {
  const path = reader.layout.file(folder.file);
  try {
    const mark = cached?.mark && folder.shaped(cached.fold) ? cached.mark : undefined;
    const read = readTail<E>(path, mark);
    if (!read.mark) {
      const x = folder.start(splitLog<E, unknown>([]));
      const entry = { mark: null, watermark: '', keys: '', fold: x };
      return { x, entry, whole: cached?.mark !== null, appended: 0 };
    }
    if (!read.continued) return foldWhole(folder, read);
    return foldAppended(folder, read, cached!) ?? foldWhole(folder, readTail<E>(path, undefined));
  } catch (e) {
    if (!quiet) reader.fail(folder.file, e);
    return undefined;
  }
}

/** A folded log and, computed once when asked (merging key hashes, trimming), what is persisted of it. */
function persisted<X, E extends StateEvent>(
  file: StateFile,
  folder: Folder<X, E>,
  folded: Folded<X> | undefined,
) {
  let entry: CachedLog | undefined | null = null;
  return {
    file,
    folded: folded as Folded<unknown> | undefined,
    entry(): CachedLog | undefined {
      if (entry === null) entry = toPersist(folder, folded);
      return entry;
    },
  };
}

function toPersist<X, E extends StateEvent>(
  folder: Folder<X, E>,
  folded: Folded<X> | undefined,
): CachedLog | undefined {
  if (!folded?.entry) return undefined;
  const fold = folder.persist ? folder.persist(folded.x) : folded.x;
  if (fold === undefined) return undefined;
  const keys = folded.added?.length
    ? encodeKeyHashes([...new KeyHashes(folded.entry.keys).values(), ...folded.added])
    : folded.entry.keys;
  return { ...folded.entry, keys, fold };
}

/** The state directory exists (the board never creates one) and nothing but a file is in the way. */
function writable(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return existsSync(dirname(dirname(path)));
  }
}

/**
 * The board's inputs from the state directory, through the persisted fold. Never throws on bad
 * state (each unreadable source is a problem on the board). Rewrites the persisted fold when a log
 * was folded from the start or more than TAIL_LIMIT bytes were appended since it was written;
 * a failure to write it is ignored (it is only an accelerator).
 */
export function loadBoardSources(layout: StateLayout): BoardSources {
  const path = layout.view(VIEW_FILES.boardFold);
  const cache = readFoldCache(path, foldCode());
  const reader = new SourceReader(layout);
  const cached = cache?.logs ?? {};
  const c = foldSource(reader, crews, cached.crews);
  const curriculum = readBoardCurriculum(reader, cache?.curriculum);
  const g = foldSource(reader, grading, cached.grading);
  const l = foldSource(reader, scores, cached.scores);
  const s = foldSource(reader, school, cached.school);
  const sp = foldSource(reader, spend, cached.spend);
  reader.quarantined();
  // An unreadable outbox only drops the delivery links.
  const o = foldSource(reader, outbox, cached.outbox, true);

  const logs = [
    persisted('crews', crews, c),
    persisted('grading', grading, g),
    persisted('scores', scores, l),
    persisted('school', school, s),
    persisted('spend', spend, sp),
    persisted('outbox', outbox, o),
  ];
  const appended = logs.reduce((n, log) => n + (log.folded?.appended ?? 0), 0);
  // A log folded from the start is news for the persisted fold, unless it is not persisted at all
  // (an outbox whose ids do not name their kind: rewriting would only say the same again).
  const refolded = () => logs.some((log) => log.folded?.whole && log.entry());
  if (writable(path) && (!cache || curriculum.changed || appended >= TAIL_LIMIT || refolded())) {
    const body: FoldBody = { logs: {}, curriculum: curriculum.entry };
    for (const log of logs) {
      const entry = log.entry();
      if (entry) body.logs[log.file] = entry;
    }
    try {
      writeFoldCache(path, foldCode(), body);
    } catch {
      // Read-only state directory, full disk: the next run folds again.
    }
  }

  // Settled pull requests: a small log, read whole (an unreadable one only drops the figures).
  let feedback: FeedbackState | undefined;
  try {
    feedback = readFeedback(layout);
  } catch (e) {
    reader.problems.push({ file: STATE_FILES.feedback, message: `could not read: ${message(e)}` });
  }
  return {
    feedback,
    registry: c?.x,
    curriculum: curriculum.items,
    ...(g ? { grading: { state: g.x.state, series: queuePoints(g.x.series) } } : {}),
    ledger: l?.x,
    school: s?.x,
    spend: sp?.x,
    deliveries: o ? deliveriesOf(o.x) : new Map(),
    problems: reader.problems,
  };
}
