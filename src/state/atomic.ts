import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { redact, redactText } from '../security/redact.js';

/**
 * Crash-safe replace (N2.2): write a temp file in the same directory, fsync it, rename it over the
 * target, fsync the directory. A reader sees the old content or the new, never a mix. With
 * `durable: false` the fsyncs are left out (the swap is still atomic for readers): for derived
 * files such as views, which are rebuilt from the event logs anyway.
 * Bytes are written as given: use writeJsonAtomic/writeTextAtomic, which redact first.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { durable?: boolean } = {},
): void {
  const durable = options.durable !== false;
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'w', 0o644);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    if (durable) fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
  if (durable) fsyncDir(dir);
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Redacts, serializes and atomically writes a JSON document (with a trailing newline). */
export function writeJsonAtomic(path: string, value: unknown, options: { durable?: boolean } = {}): void {
  writeFileAtomic(path, JSON.stringify(redact(value), null, 2) + '\n', options);
}

/** Redacts and atomically writes text. */
export function writeTextAtomic(path: string, text: string): void {
  writeFileAtomic(path, redactText(text));
}
