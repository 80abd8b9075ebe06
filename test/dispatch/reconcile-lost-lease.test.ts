import { afterEach, describe, expect, it } from 'vitest';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { planDispatch } from '../../src/dispatch/plan.js';
import { crewLog, readRegistry } from '../../src/dispatch/logs/registry.js';
import { memoryLogger } from '../../src/log.js';
import type { LeaseOwner } from '../../src/schemas/crew.js';
import { event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config, item } from './helpers.js';

/**
 * A running crew whose lease is gone without a `crew.finished` (its finished line was lost on the
 * way, its lease's release was not) holds no slot and would never end: it counted against maxCrews
 * forever ("all 0 free slot(s) are taken"). The plan reconciles it to aborted, so its place frees.
 */
const NOW = new Date('2026-11-02T12:00:00Z');
const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

async function school() {
  const d = tempDir('school-lost-lease-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({ fleet: { daemons: [{ id: 'd1', worktrees: 1 }] }, dispatch: { maxCrews: 1 } });
  await recordHeartbeat(layout, cfg, { daemon: 'd1', observedClass: 'xl', freeDiskBytes: 50 * GiB, at: NOW });
  const plannedBy: LeaseOwner = { kind: 'actions', runId: '100', runAttempt: '1', job: 'plan' };
  const plan = (n: number, now = NOW) =>
    planDispatch({
      config: cfg,
      layout,
      curriculum: [item(n)],
      clock: { now },
      logger: memoryLogger(),
      owners: { plannedBy },
    });
  return { layout, plan };
}

/** The crew starts under a lease held by a crew job, as a crew runner records it. */
async function start(layout: StateLayout, crewId: string, at: Date) {
  const owner: LeaseOwner = { kind: 'actions', runId: '100', runAttempt: '1', job: 'crew', daemon: 'd1' };
  const expiresAt = new Date(at.getTime() + 3_600_000).toISOString();
  await crewLog(layout).append([
    event('lease.acquired', `lease:d1/0:${crewId}`, { crewId, daemon: 'd1', slot: 0, owner, expiresAt }, at),
    event(
      'crew.started',
      `started:${crewId}`,
      { crewId, daemon: 'd1', slot: 0, worktree: '/w/0', owner },
      at,
    ),
  ]);
}

describe('a running crew whose lease is gone without an end', () => {
  it('is reconciled to aborted and its place under maxCrews frees for the next plan', async () => {
    const { layout, plan } = await school();
    const c1 = (await plan(1)).assignments[0]!.crewId;
    await start(layout, c1, NOW);
    // The lease is released; the crew's own crew.finished never arrives.
    await crewLog(layout).append([
      event('lease.released', `released:${c1}`, { crewId: c1, reason: 'crew succeeded' }, NOW),
    ]);
    const later = new Date(NOW.getTime() + 60_000);
    const next = await plan(2, later);
    expect(next.reconciled).toEqual([
      {
        crewId: c1,
        issueNumber: 1,
        outcome: 'aborted',
        reason: expect.stringContaining('its lease is gone'),
      },
    ]);
    expect(readRegistry(layout).crews[c1]).toMatchObject({ status: 'finished', outcome: 'aborted' });
    // maxCrews is 1: issue 2 is planned only because the lost crew no longer holds the place.
    expect(next.assignments.map((a) => a.issueNumber)).toEqual([2]);
  });

  it('a running crew that still holds its lease is left alone', async () => {
    const { layout, plan } = await school();
    const c1 = (await plan(1)).assignments[0]!.crewId;
    await start(layout, c1, NOW);
    const next = await plan(2, new Date(NOW.getTime() + 60_000));
    expect(next.reconciled).toEqual([]);
    expect(next.assignments).toEqual([]);
    expect(readRegistry(layout).crews[c1]!.status).toBe('running');
  });
});
