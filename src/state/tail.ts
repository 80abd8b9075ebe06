import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, type Stats } from 'node:fs';
import { readRange } from '../process/read-range.js';
import { parseJsonl, type Warn } from './jsonl.js';

/**
 * The one reader of a log's tail: what was appended to a JSONL log since an earlier read, or the
 * whole log when that read cannot be continued. The event logs read incrementally under their lock
 * (`EventLog.readLatest`), and the board continues its persisted fold from the mark it saved
 * (src/board/board-fold.ts); both follow the rules here.
 *
 * - A mark names the file (device, inode, birth time) and how far it was read; it is continued
 *   only while the file is that same file, no shorter, and its first bytes and the bytes before the
 *   mark are unchanged (checked by digest). A log replaced (a restore, a compaction, a quarantine),
 *   truncated, merged or rewritten in place is read whole.
 * - Lines follow the shared reader (src/state/jsonl.ts): one JSON value per non-blank line; an
 *   unterminated last line that does not parse is a torn tail, not counted, and read again next
 *   time; one that parses counts. A complete line that does not parse sends the read to the whole
 *   file, where the shared reader quarantines it and names the line (N5.1).
 * - The file is opened once: its identity, the bytes and the new mark all come from that open
 *   file, so a log replaced between two reads cannot lend its identity to another's bytes.
 */

/** How far a log was read, and which file that was. */
export interface TailMark {
  dev: number;
  ino: number;
  /** Birth time (ms) where the file system reports it, else 0: a reused inode number is a new file. */
  birth: number;
  /** Bytes read: the complete lines (a torn last line is not counted). */
  bytes: number;
  /** SHA-256 (base64) of the first PROBE bytes: a compacted or merged log starts differently. */
  head: string;
  /** SHA-256 (base64) of the PROBE bytes before `bytes`: the part read was not rewritten in place. */
  tail: string;
}

export interface TailRead<T> {
  /** The records after the mark when the read continued it, else every record of the file. */
  records: T[];
  /** Whether the read continued the mark (`records` are only the appended ones). */
  continued: boolean;
  /** An unterminated last line that did not parse (a crash mid-append): left for the next read. */
  tornTail: boolean;
  /** Where the next read continues; null when the file does not exist. */
  mark: TailMark | null;
}

const PROBE = 4096;

/** Reads what was appended to `path` since `mark`, or all of it (see the rules above). */
export function readTail<T>(path: string, mark: TailMark | null | undefined, warn?: Warn): TailRead<T> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      return { records: [], continued: false, tornTail: false, mark: null };
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (mark && continues(fd, st, mark)) {
      if (st.size === mark.bytes) return { records: [], continued: true, tornTail: false, mark };
      const appended = parseAppended<T>(readRange(fd, mark.bytes, st.size));
      if (appended) {
        if (appended.tornTail)
          warn?.(
            `${path}: an unterminated last line (a write in progress or interrupted) is left for the next read`,
          );
        const bytes = mark.bytes + appended.bytes;
        return {
          records: appended.records,
          continued: true,
          tornTail: appended.tornTail,
          mark: bytes === mark.bytes ? mark : markAt(fd, st, bytes),
        };
      }
    }
    const parsed = parseJsonl<T>(readRange(fd, 0, st.size).toString('utf8'), path, warn);
    return {
      records: parsed.records,
      continued: false,
      tornTail: parsed.tornTail,
      mark: markAt(fd, st, parsed.bytes),
    };
  } finally {
    closeSync(fd);
  }
}

/** Calls `chunk` with the bytes of `path` from `from` to its end, `size` bytes at a time. */
export function readFrom(path: string, from: number, chunk: (bytes: Buffer) => void, size = 64 * 1024): void {
  const fd = openSync(path, 'r');
  try {
    for (let pos = from; ;) {
      const bytes = readRange(fd, pos, pos + size);
      if (bytes.length === 0) break;
      pos += bytes.length;
      chunk(bytes);
    }
  } finally {
    closeSync(fd);
  }
}

/** The last line of an open file of `size` bytes (after its last newline) and where it starts. */
export function lastLine(fd: number, size: number): { start: number; text: string } {
  const chunk = 64 * 1024;
  let pos = size;
  const parts: Buffer[] = [];
  while (pos > 0) {
    const len = Math.min(chunk, pos);
    pos -= len;
    const buf = readRange(fd, pos, pos + len);
    const nl = buf.lastIndexOf(0x0a);
    if (nl !== -1) {
      parts.unshift(buf.subarray(nl + 1));
      return { start: pos + nl + 1, text: Buffer.concat(parts).toString('utf8') };
    }
    parts.unshift(buf);
  }
  return { start: 0, text: Buffer.concat(parts).toString('utf8') };
}

function continues(fd: number, st: Stats, mark: TailMark): boolean {
  return (
    mark.dev === st.dev &&
    mark.ino === st.ino &&
    mark.birth === st.birthtimeMs &&
    mark.bytes <= st.size &&
    digest(fd, 0, Math.min(PROBE, mark.bytes)) === mark.head &&
    digest(fd, Math.max(0, mark.bytes - PROBE), mark.bytes) === mark.tail
  );
}

function markAt(fd: number, st: Stats, bytes: number): TailMark {
  return {
    dev: st.dev,
    ino: st.ino,
    birth: st.birthtimeMs,
    bytes,
    head: digest(fd, 0, Math.min(PROBE, bytes)),
    tail: digest(fd, Math.max(0, bytes - PROBE), bytes),
  };
}

function digest(fd: number, from: number, to: number): string {
  return createHash('sha256')
    .update(readRange(fd, from, to))
    .digest('base64');
}

/**
 * Lines appended after a mark: the complete lines, and an unterminated last line when it parses.
 * Undefined when a complete line does not parse (the caller reads the whole file instead).
 */
function parseAppended<T>(buf: Buffer): { records: T[]; bytes: number; tornTail: boolean } | undefined {
  const nl = buf.lastIndexOf(0x0a);
  const records = parseLines<T>(buf.toString('utf8', 0, nl + 1));
  if (!records) return undefined;
  const rest = buf.toString('utf8', nl + 1);
  if (rest.trim() === '') return { records, bytes: buf.length, tornTail: false };
  try {
    records.push(JSON.parse(rest) as T);
    return { records, bytes: buf.length, tornTail: false };
  } catch {
    return { records, bytes: nl + 1, tornTail: true };
  }
}

function parseLines<T>(body: string): T[] | undefined {
  if (body === '') return [];
  const text = body.slice(0, -1);
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  try {
    // The common case in one JSON.parse, as the shared reader does: exactly one value per line.
    const values = JSON.parse(`[${text.replaceAll('\n', ',')}]`) as T[];
    if (values.length === lines) return values;
  } catch {
    // Blank lines or a bad line: line by line below.
  }
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      return undefined;
    }
  }
  return out;
}
