import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { SchoolError } from '../errors.js';

/**
 * The one reader of a file a student or another runner wrote: a report, a usage file, a session
 * file, a bookbag, a handoff, a claim, a verdicts file, a test report. Such a file is data:
 *
 * - never read through a symbolic link (`O_NOFOLLOW`: a report that links to the runner's
 *   credentials must not be read into a bookbag, nor a handoff file that links to the host's state);
 * - only a regular file (a FIFO would block, a device would never end: `O_NONBLOCK` and `fstat` on the
 *   opened descriptor, so what is checked is what is read);
 * - at most `maxBytes`: over it the file is refused naming the file and the bound, or, where the
 *   caller asks for it (`over: 'truncate'`), its first `maxBytes` are read.
 *
 * Refusals name the file by `name` (default: the path's last part) so a message says which file
 * and what to change.
 */
export interface UntrustedReadOptions {
  maxBytes: number;
  /** How messages name the file (default: its base name). */
  name?: string;
  /** Over the bound: refuse (default) or read the first `maxBytes`. */
  over?: 'refuse' | 'truncate';
}

export type UntrustedRead =
  { ok: true; bytes: Buffer; truncated: boolean } | { ok: false; missing: boolean; why: string };

export function readUntrusted(path: string, o: UntrustedReadOptions): UntrustedRead {
  const name = o.name ?? basename(path);
  const no = (why: string, missing = false): UntrustedRead => ({ ok: false, missing, why });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return no(`${name} is missing`, true);
    if (code === 'ELOOP') return no(`${name} is a symbolic link; only a plain file is read`);
    return no(`${name} cannot be read (${code ?? (e as Error).message})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return no(`${name} is not a plain file`);
    if (st.size > o.maxBytes && o.over !== 'truncate')
      return no(`${name} is ${st.size} bytes, over the ${o.maxBytes}-byte bound`);
    const buf = Buffer.alloc(Math.min(st.size, o.maxBytes));
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    return { ok: true, bytes: buf.subarray(0, n), truncated: st.size > n };
  } finally {
    closeSync(fd);
  }
}

/** The file's bytes, or why it is not read (missing, a link, not a plain file, over `maxBytes`). */
export function readUntrustedBytes(path: string, maxBytes: number, name?: string): Buffer | string {
  const r = readUntrusted(path, { maxBytes, name });
  return r.ok ? r.bytes : r.why;
}

/**
 * The file as text: absent is `undefined`; a link, a file that is not plain or one over `maxBytes`
 * throws with the reason (`over: 'truncate'` reads its first `maxBytes` instead).
 */
export function readUntrustedFile(
  path: string,
  maxBytes = 1024 * 1024,
  over: UntrustedReadOptions['over'] = 'refuse',
): string | undefined {
  const r = readUntrusted(path, { maxBytes, name: path, over });
  if (r.ok) return r.bytes.toString('utf8');
  if (r.missing) return undefined;
  throw new SchoolError(r.why, { code: 'untrusted-file' });
}
