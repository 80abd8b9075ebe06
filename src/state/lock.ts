import {
  existsSync,
  mkdirSync,
  readdirSync,
  rmdirSync,
  statSync,
  unlinkSync,
  utimesSync,
  watch,
  writeFileSync,
  type FSWatcher,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { LockError } from '../errors.js';

/**
 * One cross-process lock, with identical options everywhere (docs/architecture.md). The lock is a
 * directory `<target>.lock`, made with mkdir (atomic): its holder refreshes its mtime every
 * `update` ms, and a lock left by a SIGKILLed holder is considered stale after `stale` ms and
 * taken over. (The protocol of proper-lockfile, which this module used before; a lock directory
 * of either excludes the other.) A holder that exits, or is stopped by SIGINT or SIGTERM, removes
 * the directories it holds.
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
  retries: { retries: 2_000, factor: 1.15, minTimeout: 2, maxTimeout: 60, randomize: true },
} as const;

/**
 * How long a waiter keeps trying: about what the retry policy above adds up to (2,000 retries,
 * most of them at the 60 ms ceiling). A time budget rather than a count, because a waiter woken by
 * every release of a busy lock would use up a count long before the policy's time.
 */
export const LOCK_WAIT_BUDGET_MS = 120_000;

/**
 * Monotonic milliseconds. Not `monotonicMs()`: its first call loads perf_hooks, about a
 * millisecond of CPU that a short-lived process (one of twenty drainers) pays for one reading.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

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
function arm(lockPath: string): { wait(ms: number): Promise<boolean>; cancel(): void } {
  const dir = dirname(lockPath);
  const name = basename(lockPath);
  let d = dirs.get(dir);
  if (!d) {
    const entry: DirWatch = { watcher: undefined, waiters: new Map() };
    try {
      entry.watcher = watch(dir, { persistent: false }, (_event, file) => {
        // Only a removal frees the lock: the next holder's mkdir and its mtime refreshes are
        // events too, and waking every waiter for them would only make them all fail again.
        const wake = (lockName: string, set: Set<() => void> | undefined) => {
          if (set && !existsSync(join(dir, lockName))) [...set].forEach((f) => f());
        };
        if (file === null) for (const [lockName, set] of entry.waiters) wake(lockName, set);
        else wake(String(file), entry.waiters.get(String(file)));
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
  let cancelled = false;
  const cancel = () => {
    if (cancelled) return;
    cancelled = true;
    set.delete(onWake);
    if (set.size === 0 && entry.waiters.get(name) === set) entry.waiters.delete(name);
    if (entry.waiters.size === 0 && dirs.get(dir) === entry) {
      entry.watcher?.close();
      dirs.delete(dir);
    }
  };
  return {
    cancel,
    /** Resolves true when woken by a release, false when `ms` passed first. */
    wait: (ms) =>
      new Promise<boolean>((resolve) => {
        const done = (woken: boolean) => {
          clearTimeout(timer);
          cancel();
          resolve(woken);
        };
        const timer = setTimeout(() => done(false), ms);
        fire = () => done(true);
        if (fired) done(true);
      }),
  };
}

function backoff(attempt: number): number {
  const r = LOCK_OPTIONS.retries;
  const base = Math.min(r.maxTimeout, r.minTimeout * r.factor ** attempt);
  return base * (1 + Math.random());
}

/**
 * A waiter's place in line: a file in `<target>.queue.lock/` named by the time it started waiting.
 * When the lock is released every waiter is woken, but only the first in line tries at once; the
 * others wait for the next release or their backoff. Without it, twenty waiters woken together
 * spend the CPU the new holder needs (on a two-core runner, that was the convoy). A ticket older
 * than the lock's stale time (its process died while waiting) is removed by whoever sees it.
 */
class Ticket {
  private readonly dir: string;
  private readonly name: string;
  constructor(target: string) {
    this.dir = `${target}.queue.lock`;
    this.name = `${String(Date.now()).padStart(15, '0')}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(join(this.dir, this.name), '');
    } catch {
      // Without a place in line this waiter simply tries on every wake.
    }
    // Sweep on joining the line too, not only on a wake: a waiter that gets the lock on its
    // backoff never looks at the line, and a dead waiter's ticket would otherwise stay.
    this.live();
  }

  first(): boolean {
    const names = this.live();
    return names === undefined || names.length === 0 || names[0] === this.name || !names.includes(this.name);
  }

  /** The tickets in line, oldest first, after removing those older than the stale time. */
  private live(): string[] | undefined {
    let names: string[];
    try {
      names = readdirSync(this.dir).sort();
    } catch {
      return undefined;
    }
    return names.filter((n) => {
      if (n === this.name || Date.now() - Number(n.slice(0, 15)) <= LOCK_OPTIONS.stale) return true;
      try {
        unlinkSync(join(this.dir, n));
      } catch {
        // Someone else removed it.
      }
      return false;
    });
  }

  remove(): void {
    try {
      unlinkSync(join(this.dir, this.name));
    } catch {
      // Already gone.
    }
  }
}

/** A lock taken by `tryLock`: release it once, in a `finally`. */
export interface HeldLock {
  release(): void;
  /** Set when the lock was lost while held (its refresh failed, or it was taken over as stale). */
  compromised(): Error | undefined;
}

/**
 * Takes the lock on `target` if it is free (or stale) right now, without waiting: for a process
 * that has something better to do than wait, such as handing its work to the holder
 * (src/grading/handover.ts), and the one try `withLock` repeats. Undefined when another holder
 * (this process included) has it. A few system calls: one stat when it is held, one mkdir to take
 * it, one rmdir to release it.
 */
export function tryLock(target: string): HeldLock | undefined {
  const path = `${target}.lock`;
  // Held and fresh is the common answer under contention: one stat, no failing mkdir.
  const held = statSync(path, { throwIfNoEntry: false });
  if (held && Date.now() - held.mtimeMs <= LOCK_OPTIONS.stale) return undefined;
  if (!makeLockDir(path)) {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st && Date.now() - st.mtimeMs <= LOCK_OPTIONS.stale) return undefined;
    // Stale: its holder died without releasing it (or it was released just now).
    try {
      if (st) rmdirSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    }
    if (!makeLockDir(path)) return undefined;
  }
  let mtime = statSync(path).mtimeMs;
  let lost: Error | undefined;
  let released = false;
  const refresh = setInterval(() => {
    try {
      if (statSync(path).mtimeMs !== mtime) throw new Error('it was taken over as stale');
      const now = new Date();
      utimesSync(path, now, now);
      mtime = statSync(path).mtimeMs;
    } catch (e) {
      lost = new LockError(`lock on ${target} was lost while held: ${(e as Error).message}`);
      clearInterval(refresh);
    }
  }, LOCK_OPTIONS.update);
  refresh.unref();
  hold(path);
  return {
    release() {
      if (released) return;
      released = true;
      clearInterval(refresh);
      unhold(path);
      if (lost) return; // someone else's now
      try {
        rmdirSync(path);
      } catch {
        // Already gone.
      }
    },
    compromised: () => lost,
  };
}

/** Lock directories this process holds, removed if it exits or is stopped while holding them. */
const heldDirs = new Set<string>();
function removeHeldDirs(): void {
  for (const p of heldDirs) {
    try {
      rmdirSync(p);
    } catch {
      // Gone.
    }
  }
  heldDirs.clear();
}
process.once('exit', removeHeldDirs);
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
/** While a lock is held: remove it on a stop signal, then stop as the signal would have. */
function onStop(signal: NodeJS.Signals): void {
  removeHeldDirs();
  for (const s of STOP_SIGNALS) process.removeListener(s, onStop);
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}
function hold(path: string): void {
  if (heldDirs.size === 0) for (const s of STOP_SIGNALS) process.on(s, onStop);
  heldDirs.add(path);
}
function unhold(path: string): void {
  heldDirs.delete(path);
  if (heldDirs.size === 0) for (const s of STOP_SIGNALS) process.removeListener(s, onStop);
}

/** mkdir of a lock directory: true when made, false when it exists; its parent is made on demand. */
function makeLockDir(path: string): boolean {
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(path);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (code !== 'ENOENT' || attempt > 0)
        throw new LockError(`could not lock ${path}: ${(e as Error).message}`, { cause: e });
      mkdirSync(dirname(path), { recursive: true });
    }
  }
}

/** Runs `fn` while holding the lock on `target` (the file need not exist). */
export async function withLock<T>(target: string, fn: (stats: LockStats) => Promise<T> | T): Promise<T> {
  const started = monotonicMs();
  let held: HeldLock | undefined;
  let lastError: unknown;
  let ticket: Ticket | undefined;
  let wake: ReturnType<typeof arm> | undefined;
  let tryNow = true;
  try {
    for (let attempt = 0; monotonicMs() - started < LOCK_WAIT_BUDGET_MS; attempt++) {
      if (tryNow) {
        try {
          held = tryLock(target);
        } catch (e) {
          lastError = e;
          break;
        }
        if (held) break;
        if (!wake) {
          // Watch only once the lock is busy, and try again at once: a release between the
          // failed try and the watch would otherwise go unseen until the backoff.
          wake = arm(`${target}.lock`);
          continue;
        }
        ticket ??= new Ticket(target);
      }
      const woken = await wake!.wait(backoff(attempt));
      wake = arm(`${target}.lock`);
      // Woken by a release: try if first in line. Woken by the backoff: try anyway.
      tryNow = !woken || !ticket || ticket.first();
    }
  } finally {
    wake?.cancel();
    ticket?.remove();
  }
  if (!held) {
    throw new LockError(
      `could not lock ${target}: ${(lastError as Error | undefined)?.message ?? 'timed out'}. Another school process holds it; retry when it ends.`,
      { cause: lastError },
    );
  }
  const stats: LockStats = { waitedMs: monotonicMs() - started };
  try {
    const result = await fn(stats);
    const lost = held.compromised();
    if (lost) throw lost;
    return result;
  } finally {
    held.release();
  }
}
