import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import { LockError } from '../errors.js';

/**
 * One cross-process lock, with identical options everywhere (DESIGN §2). The lock is a directory
 * `<target>.lock` maintained by proper-lockfile: a holder refreshes its mtime, and a lock left by a
 * SIGKILLed holder is considered stale after `stale` ms and taken over.
 */
export const LOCK_OPTIONS = {
  stale: 10_000,
  update: 2_000,
  realpath: false,
  retries: { retries: 2_000, factor: 1.15, minTimeout: 2, maxTimeout: 60, randomize: true },
} as const;

export interface LockStats {
  /** Milliseconds spent waiting for the lock. */
  waitedMs: number;
}

/** Runs `fn` while holding the lock on `target` (the file need not exist). */
export async function withLock<T>(target: string, fn: (stats: LockStats) => Promise<T> | T): Promise<T> {
  mkdirSync(dirname(target), { recursive: true });
  const started = performance.now();
  let compromised: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(target, {
      ...LOCK_OPTIONS,
      retries: { ...LOCK_OPTIONS.retries },
      onCompromised: (err) => {
        compromised = err;
      },
    });
  } catch (e) {
    throw new LockError(
      `could not lock ${target}: ${(e as Error).message}. Another school process holds it; retry when it ends.`,
      { cause: e },
    );
  }
  const stats: LockStats = { waitedMs: performance.now() - started };
  try {
    const result = await fn(stats);
    if (compromised) throw new LockError(`lock on ${target} was lost while held: ${compromised.message}`);
    return result;
  } finally {
    await release().catch(() => undefined);
  }
}
