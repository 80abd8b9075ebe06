import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import { LockError } from '../errors.js';

/**
 * One cross-process lock, with identical options everywhere (DESIGN §2). The lock is a directory
 * `<target>.lock` maintained by proper-lockfile: a holder refreshes its mtime, and a lock left by a
 * SIGKILLed holder is considered stale after `stale` ms and taken over.
 *
 * Waiting: instead of sleeping a backoff interval and polling, a waiter also watches the lock's
 * directory and tries again as soon as the lock directory is removed, so the lock passes from one
 * process to the next in well under a millisecond rather than after the sleep (the convoy that
 * made twenty drainers slower than one). The backoff stays as the upper bound of each wait, for
 * filesystems without change notification and for a holder that dies without releasing.
 */
export const LOCK_OPTIONS = {
  stale: 10_000,
  update: 2_000,
  realpath: false,
  retries: { retries: 2_000, factor: 1.15, minTimeout: 2, maxTimeout: 60, randomize: true },
} as const;

/**
 * How long a waiter keeps trying: about what the retry policy above adds up to (2,000 retries,
 * most of them at the 60 ms ceiling). A time budget rather than a count, because a waiter woken by
 * every release of a busy lock would use up a count long before the policy's time.
 */
export const LOCK_WAIT_BUDGET_MS = 120_000;

export interface LockStats {
  /** Milliseconds spent waiting for the lock. */
  waitedMs: number;
}

/** One change watcher per directory, shared by every waiter of this process, closed when idle. */
interface DirWatch {
  watcher: FSWatcher | undefined;
  waiters: Map<string, Set<() => void>>;
}
const dirs = new Map<string, DirWatch>();

/** Arms a wake-up for the removal of `lockPath`; call it before trying, so no release is missed. */
function arm(lockPath: string): { wait(ms: number): Promise<void>; cancel(): void } {
  const dir = dirname(lockPath);
  const name = basename(lockPath);
  let d = dirs.get(dir);
  if (!d) {
    const entry: DirWatch = { watcher: undefined, waiters: new Map() };
    try {
      entry.watcher = watch(dir, { persistent: false }, (_event, file) => {
        const wake = (set: Set<() => void> | undefined) => set && [...set].forEach((f) => f());
        if (file === null) for (const set of entry.waiters.values()) wake(set);
        else wake(entry.waiters.get(String(file)));
      });
      entry.watcher.on('error', () => undefined);
    } catch {
      entry.watcher = undefined; // no notification here: the backoff alone paces the retries
    }
    dirs.set(dir, (d = entry));
  }
  const entry = d;
  let fire: (() => void) | undefined;
  let fired = false;
  const onWake = () => {
    fired = true;
    fire?.();
  };
  const set = entry.waiters.get(name) ?? new Set();
  entry.waiters.set(name, set);
  set.add(onWake);
  const cancel = () => {
    set.delete(onWake);
    if (set.size === 0) entry.waiters.delete(name);
    if (entry.waiters.size === 0) {
      entry.watcher?.close();
      dirs.delete(dir);
    }
  };
  return {
    cancel,
    wait: (ms) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          cancel();
          resolve();
        };
        const timer = setTimeout(done, ms);
        fire = done;
        if (fired) done();
      }),
  };
}

function backoff(attempt: number): number {
  const r = LOCK_OPTIONS.retries;
  const base = Math.min(r.maxTimeout, r.minTimeout * r.factor ** attempt);
  return base * (1 + Math.random());
}

/** Runs `fn` while holding the lock on `target` (the file need not exist). */
export async function withLock<T>(target: string, fn: (stats: LockStats) => Promise<T> | T): Promise<T> {
  mkdirSync(dirname(target), { recursive: true });
  const started = performance.now();
  let compromised: Error | undefined;
  let release: (() => Promise<void>) | undefined;
  let lastError: unknown;
  for (let attempt = 0; !release && performance.now() - started < LOCK_WAIT_BUDGET_MS; attempt++) {
    const wake = arm(`${target}.lock`);
    try {
      release = await lockfile.lock(target, {
        ...LOCK_OPTIONS,
        retries: 0,
        onCompromised: (err) => {
          compromised = err;
        },
      });
      wake.cancel();
    } catch (e) {
      lastError = e;
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') {
        wake.cancel();
        break;
      }
      await wake.wait(backoff(attempt));
    }
  }
  if (!release) {
    throw new LockError(
      `could not lock ${target}: ${(lastError as Error | undefined)?.message ?? 'timed out'}. Another school process holds it; retry when it ends.`,
      { cause: lastError },
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
