import { SchoolError } from '../errors.js';

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
    if (this.buf.length % 4 !== 0)
      throw new SchoolError('key hashes: length is not a multiple of 4', { code: 'board-data' });
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
