import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Reads a file a student wrote (its report, its usage file) as data: never through a symlink (a
 * report that is a link to the runner's credentials must not be read into a bookbag), only a regular
 * file, and at most `maxBytes`. Absent is `undefined`; anything else that is not a plain file throws
 * with a message that says what was found.
 */
export function readUntrustedFile(path: string, maxBytes = 1024 * 1024): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new Error(`${path} is a symbolic link; only a plain file is read`);
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path} is not a plain file`);
    const buf = Buffer.alloc(Math.min(st.size, maxBytes));
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
