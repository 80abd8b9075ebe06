import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ClaimOutcome, ClaimPort } from '../../src/dispatch/leases/claims.js';

/**
 * The run's artifact service as a directory: an artifact is a file named after it, created with an
 * exclusive create (`wx`), so two crew jobs — in one process or in several — race on the file system
 * exactly as they race on the service's 409. Each file holds the digest of the claim file it was
 * made from and a copy of it. `attempts` lets a test add a name once more (a later run attempt);
 * `fail` makes create or list throw or fail as the service might.
 */
export interface DirClaimPort extends ClaimPort {
  dir: string;
  /** Calls of `list`, by prefix. */
  listed: string[];
  /** Adds `name` as another attempt's artifact with this digest (the name may exist already). */
  addAttempt(name: string, sha256: string): void;
  fail: { create?: string; list?: string };
}

export function dirClaimPort(dir: string): DirClaimPort {
  mkdirSync(dir, { recursive: true });
  let extra = 0;
  const port: DirClaimPort = {
    dir,
    listed: [],
    fail: {},
    create(name: string, path: string): Promise<ClaimOutcome> {
      if (port.fail.create) return Promise.resolve({ kind: 'failed', reason: port.fail.create });
      const bytes = readFileSync(path);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      let fd: number;
      try {
        fd = openSync(join(dir, `${name}#0`), 'wx');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return Promise.resolve({ kind: 'taken' });
        return Promise.resolve({ kind: 'failed', reason: String(e) });
      }
      try {
        writeSync(fd, `${sha256}\n`);
        writeSync(fd, bytes);
      } finally {
        closeSync(fd);
      }
      return Promise.resolve({ kind: 'won', sha256 });
    },
    list(prefix: string): Promise<Map<string, string[]>> {
      port.listed.push(prefix);
      if (port.fail.list) return Promise.reject(new Error(port.fail.list));
      const out = new Map<string, string[]>();
      for (const f of readdirSync(dir).sort()) {
        const name = f.replace(/#\d+$/, '');
        if (!name.startsWith(prefix)) continue;
        const sha = readFileSync(join(dir, f), 'utf8').split('\n', 1)[0]!;
        out.set(name, [...(out.get(name) ?? []), sha]);
      }
      return Promise.resolve(out);
    },
    addAttempt(name: string, sha256: string): void {
      const fd = openSync(join(dir, `${name}#${++extra}`), 'wx');
      writeSync(fd, `${sha256}\n`);
      closeSync(fd);
    },
  };
  return port;
}
