import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { readUntrusted, readUntrustedBytes, readUntrustedFile } from '../../src/security/untrusted-file.js';

/**
 * The one reader of a file a student or another runner wrote: a plain file within its bound, never
 * through a link, each refusal naming the file and what is wrong.
 */
const dir = mkdtempSync(join(tmpdir(), 'school-untrusted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readUntrusted', () => {
  it('reads a plain file within its bound', () => {
    writeFileSync(join(dir, 'report.md'), 'done\n');
    expect(readUntrustedBytes(join(dir, 'report.md'), 16)).toEqual(Buffer.from('done\n'));
    expect(readUntrustedFile(join(dir, 'report.md'), 16)).toBe('done\n');
  });

  it('refuses a link to a host file, naming the file', () => {
    writeFileSync(join(dir, 'host-secret'), 'token\n');
    symlinkSync(join(dir, 'host-secret'), join(dir, 'usage.json'));
    expect(readUntrustedBytes(join(dir, 'usage.json'), 1024)).toBe(
      'usage.json is a symbolic link; only a plain file is read',
    );
    expect(() => readUntrustedFile(join(dir, 'usage.json'))).toThrow(
      `${join(dir, 'usage.json')} is a symbolic link; only a plain file is read`,
    );
  });

  it('refuses a file over its bound, naming the size and the bound; truncates only when asked', () => {
    writeFileSync(join(dir, 'big.log'), 'x'.repeat(100));
    expect(readUntrustedBytes(join(dir, 'big.log'), 64, 'verification.log')).toBe(
      'verification.log is 100 bytes, over the 64-byte bound',
    );
    expect(readUntrusted(join(dir, 'big.log'), { maxBytes: 64, over: 'truncate' })).toEqual({
      ok: true,
      bytes: Buffer.from('x'.repeat(64)),
      truncated: true,
    });
  });

  it('refuses what is not a plain file: a directory, a FIFO (without blocking)', () => {
    mkdirSync(join(dir, 'a-dir'));
    expect(readUntrustedBytes(join(dir, 'a-dir'), 64)).toBe('a-dir is not a plain file');
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    expect(readUntrustedBytes(join(dir, 'fifo'), 64)).toBe('fifo is not a plain file');
  });

  it('tells a missing file apart', () => {
    expect(readUntrusted(join(dir, 'absent'), { maxBytes: 1 })).toEqual({
      ok: false,
      missing: true,
      why: 'absent is missing',
    });
    expect(readUntrustedFile(join(dir, 'absent'))).toBeUndefined();
  });
});
