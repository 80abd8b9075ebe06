import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  appendFileSync,
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { CorruptStateError } from '../../src/errors.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { lastLine, readFrom, readTail, type TailMark } from '../../src/state/tail.js';
import { tempDir } from '../support/tmp.js';

const tmp = tempDir('school-tail-');
afterAll(() => tmp.cleanup());

let n = 0;
const fresh = () => join(tmp.path, `log-${++n}.jsonl`);
const line = (k: number) => `${JSON.stringify({ key: `k${k}`, n: k })}\n`;
const keys = (records: Array<{ key: string }>) => records.map((r) => r.key);

describe('readTail', () => {
  it('reads a log whole, then only what was appended since its mark', () => {
    const path = fresh();
    expect(readTail(path, undefined)).toEqual({ records: [], continued: false, tornTail: false, mark: null });
    writeFileSync(path, line(1) + line(2));
    const first = readTail<{ key: string }>(path, undefined);
    expect(first.continued).toBe(false);
    expect(keys(first.records)).toEqual(['k1', 'k2']);
    expect(first.mark!.bytes).toBe(Buffer.byteLength(line(1) + line(2)));

    const same = readTail(path, first.mark);
    expect(same).toEqual({ records: [], continued: true, tornTail: false, mark: first.mark });

    appendFileSync(path, line(3) + line(4));
    const next = readTail<{ key: string }>(path, first.mark);
    expect(next.continued).toBe(true);
    expect(keys(next.records)).toEqual(['k3', 'k4']);
    expect(next.mark!.bytes).toBe(readFileSync(path).length);
  });

  it('leaves a torn last line for the next read, and counts an unterminated line that parses', () => {
    const path = fresh();
    writeFileSync(path, line(1));
    const a = readTail<{ key: string }>(path, undefined);
    const warnings: string[] = [];
    appendFileSync(path, line(2) + '{"key":"k3","n"');
    const b = readTail<{ key: string }>(path, a.mark, (m) => warnings.push(m));
    expect(keys(b.records)).toEqual(['k2']);
    expect(b.tornTail).toBe(true);
    expect(b.mark!.bytes).toBe(Buffer.byteLength(line(1) + line(2)));
    expect(warnings.join('\n')).toMatch(/unterminated last line/);

    appendFileSync(path, ':3}');
    const c = readTail<{ key: string }>(path, b.mark);
    expect(keys(c.records)).toEqual(['k3']);
    expect(c.tornTail).toBe(false);
    expect(c.mark!.bytes).toBe(readFileSync(path).length);
  });

  it('reads whole a log replaced by rename, truncated, or rewritten in place before its mark', () => {
    const path = fresh();
    writeFileSync(path, line(1) + line(2));
    const mark = readTail(path, undefined).mark!;

    // Replaced (a restore, a compaction, a quarantine): another file, whatever its bytes.
    writeFileSync(`${path}.next`, line(1) + line(2) + line(3));
    renameSync(`${path}.next`, path);
    const replaced = readTail<{ key: string }>(path, mark);
    expect(replaced.continued).toBe(false);
    expect(keys(replaced.records)).toEqual(['k1', 'k2', 'k3']);

    // Truncated below the mark.
    const m2 = replaced.mark!;
    truncateSync(path, Buffer.byteLength(line(1)));
    expect(keys(readTail<{ key: string }>(path, m2).records)).toEqual(['k1']);

    // Rewritten in place, same inode, same length, other bytes before the mark.
    writeFileSync(path, line(5) + line(6));
    const m3 = readTail(path, undefined).mark!;
    const fd = openSync(path, 'r+');
    try {
      writeFileSync(fd, line(7) + line(8));
    } finally {
      closeSync(fd);
    }
    const rewritten = readTail<{ key: string }>(path, m3);
    expect(rewritten.continued).toBe(false);
    expect(keys(rewritten.records)).toEqual(['k7', 'k8']);
  });

  it('a mark whose digests do not match is not continued, even on the same file and size', () => {
    const path = fresh();
    writeFileSync(path, line(1));
    const mark = readTail(path, undefined).mark!;
    const forged: TailMark = { ...mark, head: 'x', tail: 'x' };
    appendFileSync(path, line(2));
    const r = readTail<{ key: string }>(path, forged);
    expect(r.continued).toBe(false);
    expect(keys(r.records)).toEqual(['k1', 'k2']);
  });

  it('a corrupt complete line after the mark quarantines the log and names its line in the whole file', () => {
    const path = fresh();
    writeFileSync(path, line(1) + line(2));
    const mark = readTail(path, undefined).mark!;
    appendFileSync(path, line(3) + 'not json\n' + line(4));
    let error: unknown;
    try {
      readTail(path, mark);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CorruptStateError);
    expect((error as CorruptStateError).line).toBe(4);
    expect(readdirSync(tmp.path).some((f) => f.startsWith(`log-${n}.jsonl.corrupt-`))).toBe(true);
  });

  it('reading in any number of steps, with writes cut anywhere, gives what one whole read gives', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 12 }),
        (values, cuts) => {
          const path = fresh();
          const text = values.map((v, i) => line(i * 1000 + v)).join('');
          const bytes = Buffer.from(text);
          writeFileSync(path, '');
          let mark: TailMark | null | undefined;
          const seen: string[] = [];
          let at = 0;
          for (const cut of [...cuts, bytes.length]) {
            const to = Math.min(bytes.length, at + cut);
            appendFileSync(path, bytes.subarray(at, to));
            at = to;
            const r = readTail<{ key: string }>(path, mark);
            if (!r.continued) seen.length = 0;
            seen.push(...keys(r.records));
            mark = r.mark;
            if (at === bytes.length) break;
          }
          expect(seen).toEqual(keys(readJsonl<{ key: string }>(path).records));
          expect(mark!.bytes).toBe(bytes.length);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('positioned reads', () => {
  it('readFrom hands on every byte from an offset, chunk by chunk', () => {
    const path = fresh();
    const text = Array.from({ length: 50 }, (_, i) => line(i)).join('');
    writeFileSync(path, text);
    const chunks: Buffer[] = [];
    readFrom(path, 7, (b) => chunks.push(Buffer.from(b)), 64);
    expect(Buffer.concat(chunks).toString()).toBe(text.slice(7));
    expect(chunks.every((c) => c.length <= 64)).toBe(true);
  });

  it('lastLine finds the last line and where it starts, across chunks', () => {
    const path = fresh();
    const long = 'y'.repeat(200_000);
    writeFileSync(path, `${line(1)}${long}`);
    const fd = openSync(path, 'r');
    try {
      const size = readFileSync(path).length;
      expect(lastLine(fd, size)).toEqual({ start: Buffer.byteLength(line(1)), text: long });
    } finally {
      closeSync(fd);
    }
  });
});
