import { afterEach, describe, expect, it } from 'vitest';
import { fleetStatus, recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { ConfigError } from '../../src/errors.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config } from './helpers.js';

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));
function layout() {
  const d = tempDir('school-fleet-');
  dirs.push(d);
  return new StateLayout(d.path);
}

const cfg = config({
  fleet: {
    heartbeatTtlSeconds: 600,
    daemons: [
      { id: 'mac', worktrees: 4, class: 'xl', labels: ['orca-mac'] },
      { id: 'pi', worktrees: 1, class: 'light' },
      { id: 'never', worktrees: 2, class: 'heavy' },
    ],
  },
});

describe('fleet: roster with TTL, effective class', () => {
  it('online iff a heartbeat is within the TTL; missing means offline; class is min(declared, observed)', async () => {
    const l = layout();
    const t0 = new Date('2026-03-01T10:00:00Z');
    await recordHeartbeat(l, cfg, {
      daemon: 'mac',
      observedClass: 'standard',
      freeDiskBytes: 50 * GiB,
      at: t0,
    });
    await recordHeartbeat(l, cfg, { daemon: 'pi', observedClass: 'xl', freeDiskBytes: 9 * GiB, at: t0 });

    const at = (s: number) => fleetStatus(cfg, readSchool(l), new Date(t0.getTime() + s * 1000));
    const fresh = Object.fromEntries(at(600).map((d) => [d.id, d]));
    expect(fresh.mac).toMatchObject({
      online: true,
      declaredClass: 'xl',
      observedClass: 'standard',
      effectiveClass: 'standard',
    });
    // Declaring light is a ceiling: a box that measures xl still routes as light.
    expect(fresh.pi).toMatchObject({ online: true, effectiveClass: 'light', freeDiskBytes: 9 * GiB });
    expect(fresh.never).toMatchObject({ online: false, offlineReason: 'no heartbeat recorded' });

    const stale = Object.fromEntries(at(601).map((d) => [d.id, d]));
    expect(stale.mac!.online).toBe(false);
    expect(stale.mac!.offlineReason).toContain('> TTL');

    // A newer beat brings it back; the latest beat wins.
    await recordHeartbeat(l, cfg, {
      daemon: 'mac',
      observedClass: 'xl',
      freeDiskBytes: 40 * GiB,
      at: new Date(t0.getTime() + 601_000),
    });
    const back = Object.fromEntries(at(700).map((d) => [d.id, d]));
    expect(back.mac).toMatchObject({ online: true, effectiveClass: 'xl', freeDiskBytes: 40 * GiB });
  });

  it('a heartbeat dated beyond one TTL in the future is a broken clock: offline', async () => {
    const l = layout();
    const now = new Date('2026-03-01T10:00:00Z');
    await recordHeartbeat(l, cfg, {
      daemon: 'pi',
      observedClass: 'light',
      freeDiskBytes: GiB,
      at: new Date(now.getTime() + 3600_000),
    });
    const pi = fleetStatus(cfg, readSchool(l), now).find((d) => d.id === 'pi')!;
    expect(pi.online).toBe(false);
    expect(pi.offlineReason).toContain('clock skew');
  });

  it('rejects heartbeats for unknown daemons or with unusable figures', async () => {
    const l = layout();
    await expect(
      recordHeartbeat(l, cfg, { daemon: 'ghost', observedClass: 'xl', freeDiskBytes: 1 }),
    ).rejects.toThrow(/daemon "ghost" is not in fleet.daemons \(known: mac, pi, never\)/);
    await expect(
      recordHeartbeat(l, cfg, { daemon: 'pi', observedClass: 'light', freeDiskBytes: NaN }),
    ).rejects.toThrow(ConfigError);
    expect(readSchool(l).roster).toEqual({});
  });
});
