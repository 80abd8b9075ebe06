import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  renameSync,
  writeSync,
  readFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { CorruptStateError } from '../errors.js';
import { redact } from '../security/redact.js';
import { fsyncDir } from './atomic.js';
import { readRange } from '../process/read-range.js';
import { lastLine } from './tail.js';

export interface JsonlRead<T> {
  records: T[];
  /** An unterminated last line that did not parse: a crash mid-append. Dropped. */
  tornTail: boolean;
  /** Byte length of the complete, parsed part of the file. */
  bytes: number;
}

export type Warn = (message: string) => void;

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/** Moves a corrupt file aside and returns the new path (N5.1). */
export function quarantine(path: string): string | undefined {
  const to = `${path}.corrupt-${timestamp()}`;
  try {
    renameSync(path, to);
    fsyncDir(dirname(path));
    return to;
  } catch {
    return undefined;
  }
}

/**
 * Reads a JSONL file. Absent → no records. An unterminated last line that does not parse is a torn
 * tail (a crash mid-append): dropped with a warning. A *complete* line that does not parse is
 * corruption: the file is quarantined to `<file>.corrupt-<ts>` and CorruptStateError is thrown, so
 * the caller fails closed instead of starting from a silently empty state.
 */
export function readJsonl<T = unknown>(path: string, warn?: Warn): JsonlRead<T> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], tornTail: false, bytes: 0 };
    throw e;
  }
  return parseJsonl<T>(text, path, warn);
}

export function parseJsonl<T>(text: string, path: string, warn?: Warn): JsonlRead<T> {
  const whole = parseWhole<T>(text);
  if (whole) return { records: whole, tornTail: false, bytes: Buffer.byteLength(text) };
  const records: T[] = [];
  let start = 0;
  let line = 0;
  let tornTail = false;
  let bytes = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    const raw = text.slice(start, end);
    line++;
    if (raw.trim() !== '') {
      try {
        records.push(JSON.parse(raw) as T);
      } catch (e) {
        if (nl === -1) {
          tornTail = true;
          warn?.(
            `${path}: dropped an unterminated last line (a write was interrupted); earlier records are intact`,
          );
          break;
        }
        const to = quarantine(path);
        throw new CorruptStateError(path, to, line, (e as Error).message);
      }
    }
    if (nl === -1) {
      bytes = text.length;
      break;
    }
    start = nl + 1;
    bytes = start;
  }
  return { records, tornTail, bytes: Buffer.byteLength(text.slice(0, bytes)) };
}

/**
 * The common case in one JSON.parse: every line holds exactly one value (the count of values must
 * equal the count of lines, so a line holding two is not accepted), no blank line, no torn tail.
 * Anything else returns undefined and is read line by line, with the torn-tail and corruption
 * rules above.
 */
function parseWhole<T>(text: string): T[] | undefined {
  if (text.length === 0) return [];
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  let lines = 1;
  for (let i = body.indexOf('\n'); i !== -1; i = body.indexOf('\n', i + 1)) lines++;
  try {
    const values = JSON.parse(`[${body.replaceAll('\n', ',')}]`) as T[];
    return values.length === lines ? values : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Appends records (redacted: `redacted: true` says the caller built them from redacted data only)
 * as JSON lines and fsyncs (unless `sync: false`: then the lines are in
 * the page cache, visible to every process and safe against a process crash, and reach the disk
 * with the next fsync of the file or the kernel's writeback). Call it under the file's lock. A missing
 * final newline is repaired first: a last line that parses gets its newline; a torn last line
 * (never acknowledged: acknowledgement happens after fsync) is cut off, so it cannot turn into a
 * corrupt complete line.
 */
export interface AppendOptions {
  /** false: no fsync (see appendJsonl). */
  sync?: boolean;
  /** The records were built from redacted data only: skip the second walk. */
  redacted?: boolean;
}

/** Where an append landed: the file's size before and after it. */
export interface Appended {
  start: number;
  end: number;
  /** A torn or unterminated last line was repaired first: `start` is not where the file ended. */
  repaired: boolean;
}

export function appendJsonl(
  path: string,
  records: readonly unknown[],
  warn?: Warn,
  options: AppendOptions = {},
): Appended | undefined {
  if (records.length === 0) return undefined;
  let fd: number;
  try {
    fd = openSync(path, 'a+');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, 'a+');
  }
  try {
    const size = fstatSync(fd).size;
    let repaired = false;
    let prefix = '';
    if (size > 0) {
      if (readRange(fd, size - 1, size)[0] !== 0x0a) {
        const tail = lastLine(fd, size);
        repaired = true;
        try {
          JSON.parse(tail.text);
          prefix = '\n';
        } catch {
          ftruncateSync(fd, tail.start);
          warn?.(`${path}: cut an unterminated last line left by an interrupted write`);
        }
      }
    }
    const encode = options.redacted
      ? (r: unknown) => JSON.stringify(r)
      : (r: unknown) => JSON.stringify(redact(r));
    const body = prefix + records.map(encode).join('\n') + '\n';
    const buf = Buffer.from(body, 'utf8');
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    if (options.sync !== false) fsyncSync(fd);
    return { start: size, end: size + buf.length, repaired };
  } finally {
    closeSync(fd);
  }
}

/** Flushes a file's appended lines to the disk (see appendJsonl's `sync`). Absent: nothing to do. */
export function syncFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
