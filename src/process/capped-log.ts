import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { readRange } from './read-range.js';

/**
 * Logs of untrusted output (a student's turns, a verification run) are capped on disk: a student
 * that prints gigabytes must not fill the disk its crew shares with the next cycle. A capped log
 * keeps its tail. When a write takes it over its cap, the file is rewritten in place as a marker
 * line counting every byte dropped so far, then the last half of the cap (from a line start).
 *
 * Readers speak of *logical* offsets: bytes ever written. A turn that records where its part of the
 * log began (src/agents/run.ts, the Orca launch script's `log-offset`) still finds it after a cut:
 * `readLogFrom` maps it into the file, or to the first byte kept when its start was cut away.
 * The same format is written by the Orca launch script's writer (CAPPED_LOG_WRITER below).
 *
 * The marker is the school's word only: a student whose output starts a log could print a marker
 * line of its own (hiding its first line, claiming any count). So a marker in the file carries the
 * log's *mark*, a random token in a side file beside the log (`<log>.cut`, where no student writes),
 * made at the log's first cut and made afresh whenever a writer finds the log empty; a marker
 * without that mark is the student's text. Its count is at most 15 digits (a number, never
 * Infinity). Readers never hand the mark on: what they return carries the marker without it.
 */

/** The cap when none is configured (`dispatch.logMaxBytes`). */
export const DEFAULT_LOG_MAX_BYTES = 4 * 1024 * 1024;
/** The smallest cap: the kept half must still hold a useful tail. */
export const MIN_LOG_MAX_BYTES = 64 * 1024;

/** The marker as the file holds it: the count dropped and the log's mark (shared with the writer script). */
const MARKER_SOURCE = String.raw`^\[school\] log cut: (\d{1,15}) earlier bytes dropped \(the log keeps its last part; dispatch\.logMaxBytes; mark ([0-9a-f]{16})\)\n`;
const MARKER = new RegExp(MARKER_SOURCE);
const MARK = /^[0-9a-f]{16}$/;
/** The marker's longest form, and then some: what is read of a log's head to find it. */
const HEAD_BYTES = 200;

/** The marker as readers show it (without the mark). */
export function cutMarker(dropped: number): string {
  return `[school] log cut: ${dropped} earlier bytes dropped (the log keeps its last part; dispatch.logMaxBytes)\n`;
}

/** The marker as the file holds it. */
function fileMarker(dropped: number, mark: string): string {
  return `[school] log cut: ${dropped} earlier bytes dropped (the log keeps its last part; dispatch.logMaxBytes; mark ${mark})\n`;
}

/** The side file holding the mark of the log at `path`. */
export function markFile(path: string): string {
  return `${path}.cut`;
}

function readMark(path: string): string | undefined {
  const mark = withFd(markFile(path), '', (fd) => readRange(fd, 0, 64).toString('latin1').trim());
  return MARK.test(mark) ? mark : undefined;
}

/** The school's marker at the head of an open log: bytes dropped and the marker's own length. */
function headOf(fd: number, path: string): { dropped: number; head: number } {
  const m = MARKER.exec(readRange(fd, 0, HEAD_BYTES).toString('latin1'));
  if (!m || m[2] !== readMark(path)) return { dropped: 0, head: 0 };
  return { dropped: Number(m[1]), head: m[0].length };
}

/** An open capped log, appended to synchronously (one writer at a time). */
export class CappedLog {
  private readonly fd: number;
  private size: number;
  private dropped: number;
  private head: number;
  /** The log was cut while this writer had it open. */
  cut = false;
  private closed = false;

  private headFd: number | undefined;
  private headLeft = 0;
  /** The log's mark, once it has one (its first cut). */
  private mark: string | undefined;

  constructor(
    readonly path: string,
    readonly max: number = DEFAULT_LOG_MAX_BYTES,
    /**
     * Also keep the first bytes this writer writes, in a file of their own (made afresh): a CLI's
     * first line names its session (Codex's `thread.started`), and a cut keeps only the tail.
     */
    head?: { file: string; bytes: number },
  ) {
    if (head) {
      this.headFd = openSync(head.file, 'w', 0o600);
      this.headLeft = head.bytes;
    }
    this.fd = openSync(path, 'a+', 0o600);
    this.size = fstatSync(this.fd).size;
    // An empty log gets a mark of its own at its first cut: one its student never saw in a log.
    if (this.size === 0) rmSync(markFile(path), { force: true });
    else this.mark = readMark(path);
    ({ dropped: this.dropped, head: this.head } = headOf(this.fd, path));
  }

  write(data: Buffer | string): void {
    if (this.closed) return;
    let b = typeof data === 'string' ? Buffer.from(data) : data;
    if (!b.length) return;
    if (this.headFd !== undefined && this.headLeft > 0) {
      const h = b.subarray(0, this.headLeft);
      writeAll(this.headFd, h);
      this.headLeft -= h.length;
    }
    const keep = this.keep();
    // A single write larger than what is kept: only its end can survive the cut anyway.
    if (b.length > keep) {
      this.dropped += this.size - this.head + (b.length - keep);
      b = b.subarray(b.length - keep);
      this.rewrite(Buffer.alloc(0), b);
      return;
    }
    writeAll(this.fd, b);
    this.size += b.length;
    if (this.size > this.max) this.cutNow();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    if (this.headFd !== undefined) closeSync(this.headFd);
  }

  private keep(): number {
    return Math.max(1, Math.floor(this.max / 2));
  }

  private cutNow(): void {
    const body = this.size - this.head;
    const from = this.size - Math.min(body, this.keep());
    let kept = readRange(this.fd, from, this.size);
    // From a line start, unless the kept part is one long line.
    const nl = kept.indexOf(0x0a);
    if (nl >= 0 && nl < kept.length - 1) kept = kept.subarray(nl + 1);
    this.dropped += body - kept.length;
    this.rewrite(kept, Buffer.alloc(0));
  }

  private rewrite(kept: Buffer, more: Buffer): void {
    if (!this.mark) {
      // Written before the marker that names it: a reader in between finds no marker, as before.
      this.mark = randomBytes(8).toString('hex');
      const tmp = `${markFile(this.path)}.${process.pid}`;
      writeFileSync(tmp, this.mark, { mode: 0o600 });
      renameSync(tmp, markFile(this.path));
    }
    const marker = Buffer.from(fileMarker(this.dropped, this.mark));
    ftruncateSync(this.fd, 0);
    writeAll(this.fd, Buffer.concat([marker, kept, more]));
    this.head = marker.length;
    this.size = marker.length + kept.length + more.length;
    this.cut = true;
  }
}

function writeAll(fd: number, b: Buffer): void {
  for (let off = 0; off < b.length;) off += writeSync(fd, b, off, b.length - off);
}

/** Appends `text` to a capped log (the school's own lines between a student's turns). */
export function appendCapped(path: string, text: string, max = DEFAULT_LOG_MAX_BYTES): void {
  const log = new CappedLog(path, max);
  try {
    log.write(text);
  } finally {
    log.close();
  }
}

/** Bytes ever written to the log at `path` (0 when it does not exist). */
export function logicalSize(path: string): number {
  return withFd(path, 0, (fd) => {
    const { dropped, head } = headOf(fd, path);
    return dropped + fstatSync(fd).size - head;
  });
}

/** Bytes cut from the front of the log at `path` so far (logical offsets below it are gone). */
export function droppedBytes(path: string): number {
  return withFd(path, 0, (fd) => headOf(fd, path).dropped);
}

/**
 * The log's text, at most its last `maxBytes` bytes (a cut is said at the start): what is read of a
 * log into memory, never more. '' when it does not exist.
 */
export function readLogText(path: string, maxBytes = DEFAULT_LOG_MAX_BYTES): string {
  return withFd(path, '', (fd) => {
    const size = fstatSync(fd).size;
    const { dropped, head } = headOf(fd, path);
    if (size <= maxBytes)
      return (head ? cutMarker(dropped) : '') + readRange(fd, head, size).toString('utf8');
    const from = Math.max(head, size - maxBytes);
    return cutMarker(dropped + from - head) + readRange(fd, from, size).toString('utf8');
  });
}

function withFd<T>(path: string, missing: T, f: (fd: number) => T): T {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return missing;
    throw e;
  }
  try {
    return f(fd);
  } finally {
    closeSync(fd);
  }
}

/** Reads what a capped log keeps past logical offset `offset`, `size` bytes at a time. */
export function readLogFrom(
  path: string,
  offset: number,
  chunk: (bytes: Buffer) => void,
  size: number,
): void {
  withFd(path, undefined, (fd) => {
    const { dropped, head } = headOf(fd, path);
    for (let pos = head + Math.max(0, offset - dropped); ;) {
      const bytes = readRange(fd, pos, pos + size);
      if (!bytes.length) break;
      pos += bytes.length;
      chunk(bytes);
    }
  });
}

/**
 * The same capped append as a standalone script for `node -e` (CommonJS, no imports of ours): the
 * Orca launch script pipes its student's output through it, so the cap holds where no school
 * process is (N7.1: the turn outlives its runner). argv: <log path> <cap bytes>; stdin: the output.
 */
export const CAPPED_LOG_WRITER = `
const fs = require('node:fs');
const crypto = require('node:crypto');
const path = process.argv[1];
const side = path + '.cut';
const max = Math.max(1, Number(process.argv[2]) || ${DEFAULT_LOG_MAX_BYTES});
const keep = Math.max(1, Math.floor(max / 2));
const fd = fs.openSync(path, 'a+', 0o600);
let size = fs.fstatSync(fd).size;
let mark;
if (size === 0) fs.rmSync(side, { force: true });
else try { mark = fs.readFileSync(side, 'latin1').slice(0, 64).trim(); } catch {}
if (!/^[0-9a-f]{16}$/.test(mark || '')) mark = undefined;
const marker = (n) => '[school] log cut: ' + n + ' earlier bytes dropped (the log keeps its last part; dispatch.logMaxBytes; mark ' + mark + ')\\n';
const first = Buffer.alloc(${HEAD_BYTES});
const m = new RegExp(${JSON.stringify(MARKER_SOURCE)}).exec(first.subarray(0, fs.readSync(fd, first, 0, ${HEAD_BYTES}, 0)).toString('latin1'));
const ours = !!m && m[2] === mark;
let dropped = ours ? Number(m[1]) : 0;
let head = ours ? m[0].length : 0;
const writeAll = (b) => { for (let o = 0; o < b.length; ) o += fs.writeSync(fd, b, o, b.length - o); };
const rewrite = (kept) => {
  if (!mark) {
    mark = crypto.randomBytes(8).toString('hex');
    fs.writeFileSync(side + '.' + process.pid, mark, { mode: 0o600 });
    fs.renameSync(side + '.' + process.pid, side);
  }
  const mk = Buffer.from(marker(dropped));
  fs.ftruncateSync(fd, 0);
  writeAll(Buffer.concat([mk, kept]));
  head = mk.length;
  size = mk.length + kept.length;
};
const write = (b) => {
  if (b.length > keep) {
    dropped += size - head + (b.length - keep);
    return rewrite(b.subarray(b.length - keep));
  }
  writeAll(b);
  size += b.length;
  if (size <= max) return;
  const body = size - head;
  const n = Math.min(body, keep);
  let kept = Buffer.alloc(n);
  kept = kept.subarray(0, fs.readSync(fd, kept, 0, n, size - n));
  const nl = kept.indexOf(10);
  if (nl >= 0 && nl < kept.length - 1) kept = kept.subarray(nl + 1);
  dropped += body - kept.length;
  rewrite(kept);
};
process.on('SIGHUP', () => undefined);
process.stdin.on('data', write);
process.stdin.on('end', () => fs.closeSync(fd));
`;
