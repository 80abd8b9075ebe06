import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/**
 * One read of an event log for the board's persisted fold (src/board/fold-cache.ts): the file is
 * opened once, and everything taken from it (its identity, the bytes, the probes) comes from that
 * open file, so a log replaced between two calls cannot lend its identity to another's bytes.
 */

/** How far a log was folded, and which file that was. */
export interface FileMark {
  dev: number;
  ino: number;
  /** Birth time (ms) where the file system reports it, else 0: a reused inode number is a new file. */
  birth: number;
  /** Bytes folded: the complete lines read (a torn last line is not counted). */
  bytes: number;
  /** SHA-256 of the first PROBE bytes: a compacted or merged log starts differently. */
  head: string;
  /** SHA-256 of the PROBE bytes before `bytes`: the folded part was not rewritten in place. */
  tail: string;
}

const PROBE = 4096;

export class LogFile {
  private constructor(
    private readonly fd: number,
    readonly stat: Stats,
  ) {}

  /** Opens a log; undefined when it does not exist. */
  static open(path: string): LogFile | undefined {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      return new LogFile(fd, fstatSync(fd));
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  get size(): number {
    return this.stat.size;
  }

  /** Whether `mark` was taken of this same file and its first `mark.bytes` bytes are unchanged. */
  continues(mark: FileMark): boolean {
    return (
      mark.dev === this.stat.dev &&
      mark.ino === this.stat.ino &&
      mark.birth === this.stat.birthtimeMs &&
      mark.bytes <= this.size &&
      this.digest(0, Math.min(PROBE, mark.bytes)) === mark.head &&
      this.digest(Math.max(0, mark.bytes - PROBE), mark.bytes) === mark.tail
    );
  }

  /** The bytes from `from` to the size the file had when it was opened. */
  read(from: number): Buffer {
    return this.bytes(from, this.size);
  }

  /** A mark at `bytes` (the end of the complete lines folded). */
  mark(bytes: number): FileMark {
    return {
      dev: this.stat.dev,
      ino: this.stat.ino,
      birth: this.stat.birthtimeMs,
      bytes,
      head: this.digest(0, Math.min(PROBE, bytes)),
      tail: this.digest(Math.max(0, bytes - PROBE), bytes),
    };
  }

  close(): void {
    closeSync(this.fd);
  }

  private digest(from: number, to: number): string {
    return createHash('sha256').update(this.bytes(from, to)).digest('base64');
  }

  private bytes(from: number, to: number): Buffer {
    const buf = Buffer.alloc(Math.max(0, to - from));
    let off = 0;
    while (off < buf.length) {
      const n = readSync(this.fd, buf, off, buf.length - off, from + off);
      if (n === 0) return buf.subarray(0, off);
      off += n;
    }
    return buf;
  }
}

/**
 * Lines appended after a mark, parsed with the shared reader's rules (src/state/jsonl.ts): one JSON
 * value per non-blank line; an unterminated last line that does not parse is a torn tail and is
 * left for the next read; an unterminated last line that parses counts. A complete line that does
 * not parse returns undefined: the caller then reads the whole log through the shared reader,
 * which quarantines it and reports the line as it would on any read (N5.1).
 */
export function parseAppended<T>(
  buf: Buffer,
): { records: T[]; bytes: number; tornTail: boolean } | undefined {
  const nl = buf.lastIndexOf(0x0a);
  const body = buf.toString('utf8', 0, nl + 1);
  const records = parseLines<T>(body);
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

/**
 * Idempotency keys as sorted 32-bit FNV-1a hashes (base64, little-endian): a key appended after
 * the mark whose hash is absent is certainly new; one whose hash is present may be a replay, and
 * the log is then folded again from the start. That keeps the persisted fold small (four bytes a
 * key) without ever deciding a replay wrongly.
 */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function encodeKeyHashes(hashes: Iterable<number>): string {
  const sorted = Uint32Array.from(hashes).sort();
  const buf = Buffer.alloc(sorted.length * 4);
  for (let i = 0; i < sorted.length; i++) buf.writeUInt32LE(sorted[i]!, i * 4);
  return buf.toString('base64');
}

export class KeyHashes {
  private readonly buf: Buffer;
  constructor(encoded: string) {
    this.buf = Buffer.from(encoded, 'base64');
    if (this.buf.length % 4 !== 0) throw new Error('key hashes: length is not a multiple of 4');
  }

  get size(): number {
    return this.buf.length / 4;
  }

  has(hash: number): boolean {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.buf.readUInt32LE(mid * 4);
      if (v === hash) return true;
      if (v < hash) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  *values(): Generator<number> {
    for (let i = 0; i < this.size; i++) yield this.buf.readUInt32LE(i * 4);
  }
}
