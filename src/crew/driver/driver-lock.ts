import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../state/atomic.js';
import { withLock } from '../../state/lock.js';
import { DriverBusyError } from '../errors.js';
import { localIdentity, localLiveness } from '../../dispatch/leases/liveness.js';

/**
 * Seed 002: one driver per state directory and daemon. The lock is a pid file
 * `<runtime>/drivers/<daemon>.json` holding (host, pid, start identity), checked and replaced
 * under the state lock. It needs no heartbeat, so a driver that blocks for a while keeps it, and a
 * driver that died (SIGKILL, runner shutdown) leaves a file whose owner is provably gone: the next
 * driver takes over at once instead of waiting for a staleness timeout.
 */
interface Holder {
  host: string;
  pid: number;
  start?: string;
  since: string;
  stateDir: string;
}

export interface DriverLock {
  path: string;
  release(): Promise<void>;
}

export async function acquireDriverLock(
  runtimeDir: string,
  stateDir: string,
  daemon: string,
): Promise<DriverLock> {
  const path = join(runtimeDir, 'drivers', `${daemon}.json`);
  const me = localIdentity(process.pid);
  await withLock(path, () => {
    let held: Holder | undefined;
    try {
      held = JSON.parse(readFileSync(path, 'utf8')) as Holder;
    } catch {
      held = undefined; // absent or torn: nobody provably holds it
    }
    if (held && !(held.pid === me.pid && held.host === me.host) && localLiveness(held) !== 'gone') {
      throw new DriverBusyError(
        `another driver (pid ${held.pid} on ${held.host}, since ${held.since}) is running daemon ${daemon} ` +
          `on state ${stateDir}; this one exits without launching anything. If that process is gone, remove ${path}.`,
      );
    }
    const holder: Holder = { host: me.host, pid: me.pid, since: new Date().toISOString(), stateDir };
    if (me.start !== undefined) holder.start = me.start;
    writeJsonAtomic(path, holder);
  });
  return {
    path,
    release: () =>
      withLock(path, () => {
        try {
          const held = JSON.parse(readFileSync(path, 'utf8')) as Holder;
          if (held.pid === me.pid && held.host === me.host) rmSync(path, { force: true });
        } catch {
          /* already gone */
        }
      }),
  };
}

/**
 * Whether a live driver holds daemon's lock: it may still start a planned crew, so the planner
 * leaves that daemon's planned crews alone. Read without the lock: the file is replaced atomically.
 */
export function driverAlive(runtimeDir: string, daemon: string): boolean {
  try {
    const held = JSON.parse(readFileSync(join(runtimeDir, 'drivers', `${daemon}.json`), 'utf8')) as Holder;
    return localLiveness(held) !== 'gone';
  } catch {
    return false;
  }
}
