import { readSync } from 'node:fs';

/**
 * The bytes of an open file from `from` to `to` (fewer when the file ends first): the one positioned
 * read, for a process's capped output log (./capped-log.ts) and every state file
 * (src/state/tail.ts, src/state/jsonl.ts). It lives here, below src/state, because the process
 * layer is the lower of the two (state's locks ask ./liveness.ts whether an owner still runs).
 */
export function readRange(fd: number, from: number, to: number): Buffer {
  const buf = Buffer.alloc(Math.max(0, to - from));
  let off = 0;
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, from + off);
    if (n === 0) return buf.subarray(0, off);
    off += n;
  }
  return buf;
}
