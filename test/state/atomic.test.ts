import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic, writeJsonAtomic, writeTextAtomic } from '../../src/state/atomic.js';
import { useChildren, exited, runNode } from './child-bundle.js';

const { dir, children } = useChildren();

describe('atomic writes', () => {
  it('replaces the file by rename (new inode), leaves no temp file, creates the directory', () => {
    const file = join(dir.path, 'deep/dir/doc.json');
    writeJsonAtomic(file, { v: 1 });
    const first = statSync(file).ino;
    writeJsonAtomic(file, { v: 2 });
    expect(statSync(file).ino).not.toBe(first);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ v: 2 });
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
    expect(readdirSync(join(dir.path, 'deep/dir'))).toEqual(['doc.json']);
  });

  it('redacts JSON and text, and writes bytes exactly when asked to', () => {
    const file = join(dir.path, 'secret.json');
    writeJsonAtomic(file, { crew_id: 'c-1', api_key: 'abcdef123456', note: 'AKIAABCDEFGHIJKLMNOP' });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      crew_id: 'c-1',
      api_key: '[REDACTED]',
      note: '[REDACTED]',
    });
    const text = join(dir.path, 'text.md');
    writeTextAtomic(text, 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz');
    expect(readFileSync(text, 'utf8')).toBe('Authorization: Bearer [REDACTED]');
    const raw = join(dir.path, 'raw.bin');
    writeFileAtomic(raw, new Uint8Array([0, 1, 2, 255]));
    expect([...readFileSync(raw)]).toEqual([0, 1, 2, 255]);
  });

  it('a reader racing a writer in another process only ever sees whole documents', async () => {
    const file = join(dir.path, 'race.json');
    writeFileSync(file, JSON.stringify({ version: -1, pad: '' }));
    const child = runNode(children.atomicWriter, [file, '120']);
    let reads = 0;
    const versions = new Set<number>();
    let done = false;
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('done')) done = true;
    });
    const end = exited(child);
    while (!done && child.exitCode === null) {
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { version: number; pad: string };
      expect(doc.pad.length).toBe(doc.version === -1 ? 0 : doc.version % 2 ? 100_000 : 10);
      versions.add(doc.version);
      reads++;
      await new Promise((r) => setImmediate(r));
    }
    expect((await end).code).toBe(0);
    expect(reads).toBeGreaterThan(10);
    expect(JSON.parse(readFileSync(file, 'utf8')).version).toBe(119);
    expect(readdirSync(dir.path).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
