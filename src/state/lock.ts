import { mkdirSync, readFileSync, readlinkSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { LockError } from '../errors.js';
import { isSameProcess, processStart } from '../process/liveness.js';

/**
 * One cross-process lock, with identical options everywhere (docs/architecture.md): `withLock`.
 *
 * The lock on `<target>` is a directory `<target>.lock` made with mkdir, holding an `owner` record
 * (host, pid namespace, pid and the pid's kernel start time, see src/process/liveness.ts). mkdir
 * rather than an O_EXCL file: it is atomic on every file system we meet (O_EXCL was not on old
 * NFS), it is the form locks of earlier versions and proper-lockfile took, and checkpoints already
 * leave `*.lock` directories out. Either way the owner record is a second step, so a lock without
 * one is normal for an instant.
 *
 * No heartbeat: a lock is taken over only once its owner is provably gone —
 * - the owner ran on this host and in this pid namespace, and that pid is no longer running or now
 *   belongs to a process with another start time (a holder SIGKILLed, or one that exited while
 *   holding): taken over at once;
 * - no readable owner record (its maker died between mkdir and the record, or an earlier version's
 *   lock): taken over once the directory is `stale` ms old;
 * - the owner ran on another host or in another pid namespace: we cannot look, so never; the
 *   waiter gives up with an error that names the lock to remove.
 * A takeover happens under a second lock, `<target>.break.lock` (mkdir, taken over by age), and
 * checks the owner again there, so two waiters that both saw the same dead owner cannot remove
 * the lock one of them took meanwhile.
 *
 * Waiting is a bounded retry with jittered exponential backoff (`retry`): no queue of waiters and
 * no change notification — grading takes the lock once per wave of judged jobs, so a few
 * milliseconds more per hand-over cost nothing, and jitter keeps waiters that failed together from
 * retrying together.
 */
export const LOCK_OPTIONS = {
  /** Age after which a lock without a readable owner record (or a takeover lock) is stale, ms. */
  stale: 10_000,
  retry: { minMs: 2, maxMs: 100, factor: 2 },
  /** How long a waiter keeps trying before it gives up, ms. */
  waitMs: 120_000,
} as const;

export interface LockStats {
  /** Milliseconds spent waiting for the lock. */
  waitedMs: number;
}

interface Owner {
  host: string;
  pidns?: string;
  pid: number;
  start?: string;
  /** Tells this holding from another of the same process. */
  token: string;
  since: string;
}

const OWNER = 'owner';

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}
const self = { host: hostname(), pidns: pidNamespace(), pid: process.pid, start: processStart(process.pid) };

const clock = () => Number(process.hrtime.bigint()) / 1e6;

/** Runs `fn` while holding the lock on `target` (the file need not exist). */
export async function withLock<T>(target: string, fn: (stats: LockStats) => Promise<T> | T): Promise<T> {
  const path = `${target}.lock`;
  const started = clock();
  const owner: Owner = { ...self, token: randomBytes(8).toString('hex'), since: new Date().toISOString() };
  for (let attempt = 0; !take(path, owner); attempt++) {
    const holder = readOwner(path);
    if (gone(path, holder)) {
      breakStale(path);
      continue;
    }
    if (clock() - started > LOCK_OPTIONS.waitMs) {
      const who = holder ? ` (pid ${holder.pid} on ${holder.host}, since ${holder.since})` : '';
      throw new LockError(
        `could not lock ${target}: another school process holds it${who}. Retry when it ends; if that process is gone, remove ${path}.`,
      );
    }
    await new Promise((r) => setTimeout(r, backoff(attempt)));
  }
  try {
    const result = await fn({ waitedMs: clock() - started });
    if (readOwner(path)?.token !== owner.token)
      throw new LockError(`lock on ${target} was taken over while held`);
    return result;
  } finally {
    if (readOwner(path)?.token === owner.token) remove(path);
  }
}

/** The delay before retry `attempt`: exponential, capped, with its upper half jittered. */
function backoff(attempt: number): number {
  const { minMs, maxMs, factor } = LOCK_OPTIONS.retry;
  const base = Math.min(maxMs, minMs * factor ** attempt);
  return base / 2 + (Math.random() * base) / 2;
}

/** mkdir of the lock and its owner record: true when taken, false when it exists. */
function take(path: string, owner: Owner): boolean {
  try {
    mkdirSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'ENOENT')
      throw new LockError(`could not lock ${path}: ${(e as Error).message}`, { cause: e });
    mkdirSync(dirname(path), { recursive: true });
    return take(path, owner);
  }
  try {
    writeFileSync(join(path, OWNER), JSON.stringify(owner));
  } catch (e) {
    remove(path);
    throw new LockError(`could not lock ${path}: ${(e as Error).message}`, { cause: e });
  }
  return true;
}

function readOwner(path: string): Owner | undefined {
  try {
    const o = JSON.parse(readFileSync(join(path, OWNER), 'utf8')) as Owner;
    return typeof o.pid === 'number' && typeof o.host === 'string' ? o : undefined;
  } catch {
    return undefined; // no lock, no record yet, or a torn one
  }
}

/** Whether the lock at `path` (whose owner record reads `holder`) may be taken over. */
function gone(path: string, holder: Owner | undefined): boolean {
  if (holder) {
    if (holder.host !== self.host || holder.pidns !== self.pidns) return false;
    return !isSameProcess(holder.pid, holder.start);
  }
  return olderThanStale(path);
}

function olderThanStale(path: string): boolean {
  const st = statSync(path, { throwIfNoEntry: false });
  return st !== undefined && Date.now() - st.mtimeMs > LOCK_OPTIONS.stale;
}

/** Removes the lock at `path` if, looked at again under the takeover lock, its owner is gone. */
function breakStale(path: string): void {
  const breaker = `${path.slice(0, -'.lock'.length)}.break.lock`;
  try {
    mkdirSync(breaker);
  } catch {
    // Another waiter is taking it over (or died doing so: its takeover lock goes stale).
    if (olderThanStale(breaker)) rmdirQuietly(breaker);
    return;
  }
  try {
    if (gone(path, readOwner(path))) remove(path);
  } finally {
    rmdirQuietly(breaker);
  }
}

function remove(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

function rmdirQuietly(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // Already gone.
  }
}
