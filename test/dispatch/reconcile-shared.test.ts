import { afterEach, describe, expect, it } from 'vitest';
import type { JobAnswer, JobLiveness } from '../../src/dispatch/leases/lease.js';
import { askOwners, reconcile } from '../../src/dispatch/leases/reconcile.js';
import { crewLog, readRegistry } from '../../src/dispatch/logs/registry.js';
import type { CrewEvent, LeaseOwner } from '../../src/schemas/crew.js';
import { event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * The next plan settles crews of a run's shared queue (one queue per run): a crew no job claimed is
 * cancelled once no crew job that may claim it can still run — a re-run of any listed daemon's job
 * may — and a claimed one is its claimant's job's to start, whatever became of its planned daemon's.
 */
const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

const NOW = new Date('2026-03-01T12:00:00Z');
const RUN: Extract<LeaseOwner, { kind: 'actions' }> = {
  kind: 'actions',
  runId: '100',
  runAttempt: '1',
  job: 'crew',
};
const C = 'c3-00000003';

async function state(events: CrewEvent[]): Promise<StateLayout> {
  const d = tempDir('school-reconcile-shared-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  await crewLog(layout).append([
    event(
      'crew.planned',
      `planned:${C}`,
      {
        crewId: C,
        issueNumber: 3,
        daemon: 'd1',
        agent: 'student',
        weight: 'standard',
        fences: [],
        repair: false,
        attempt: 1,
        queued: true as const,
        eligible: ['d1', 'd2'],
        plannedBy: { ...RUN, daemon: 'd1' },
      },
      NOW,
    ),
    ...events,
  ]);
  return layout;
}

const claimedBy = (daemon: string, jobAttempt = '1'): CrewEvent =>
  event(
    'crew.claimed',
    `claimed:${C}`,
    { crewId: C, daemon, jobAttempt, nonce: '0'.repeat(32), sha256: 'a'.repeat(64) },
    NOW,
  );

/** Each crew job by `<run attempt>/<daemon>`; an attempt not listed does not exist. */
function jobs(answers: Record<string, JobAnswer>): JobLiveness {
  return (o) => Promise.resolve(answers[`${o.runAttempt}/${o.daemon}`] ?? 'unknown');
}

async function settle(layout: StateLayout, answers: Record<string, JobAnswer>) {
  const registry = readRegistry(layout);
  const endedJobs = await askOwners(registry, NOW, jobs(answers));
  return reconcile(registry, NOW, { endedJobs }).reconciled;
}

const ended = { done: 'its job "crew" ended: success' };

describe('reconciliation of a run’s shared crews', () => {
  it('an unclaimed shared crew stays while a re-run of any listed daemon’s job may claim it, and is cancelled once none can', async () => {
    const layout = await state([]);
    // d1's job is over; d2's job was re-run and its second attempt is running.
    expect(await settle(layout, { '1/d1': ended, '1/d2': ended, '2/d2': 'in_progress' })).toEqual([]);
    const r = await settle(layout, { '1/d1': ended, '1/d2': ended, '2/d2': ended });
    expect(r).toEqual([
      {
        crewId: C,
        issueNumber: 3,
        outcome: 'cancelled',
        reason: expect.stringContaining(
          'planned by run 100 (attempt 1) for its shared queue, but no crew job of daemons d1, d2 claimed it',
        ),
      },
    ]);
  });

  it('a crew claimed by another daemon’s job is not cancelled because its planned daemon’s job ended', async () => {
    const layout = await state([claimedBy('d2', '2')]);
    expect(await settle(layout, { '1/d1': ended, '1/d2': ended, '2/d2': 'in_progress' })).toEqual([]);
    const r = await settle(layout, { '1/d1': 'in_progress', '1/d2': ended, '2/d2': ended });
    // The claimant's job is all that counts: d1's job still running does not keep it.
    expect(r.map((x) => x.reason)).toEqual([
      expect.stringContaining(
        'claimed in run 100 (attempt 1) by the crew job for daemon d2, which never started it',
      ),
    ]);
  });

  it('a claimed crew that started or finished in the claimant’s job is left alone', async () => {
    const started = event(
      'crew.started',
      `started:${C}`,
      { crewId: C, daemon: 'd2', slot: 0, worktree: '/w', owner: { ...RUN, daemon: 'd2' } },
      NOW,
    ) as CrewEvent;
    // A crew starts under its lease (claimSlot appends both): one running without a lease is reconciled.
    const expiresAt = new Date(NOW.getTime() + 3_600_000).toISOString();
    const leased = event(
      'lease.acquired',
      `lease:d2/0:${C}`,
      { crewId: C, daemon: 'd2', slot: 0, owner: { ...RUN, daemon: 'd2' }, expiresAt },
      NOW,
    ) as CrewEvent;
    const running = await state([claimedBy('d2'), leased, started]);
    expect(await settle(running, { '1/d1': ended, '1/d2': ended })).toEqual([]);
    const finished = await state([
      claimedBy('d2'),
      started,
      event(
        'crew.finished',
        `finished:${C}`,
        { crewId: C, issueNumber: 3, outcome: 'succeeded' as const, reason: 'ok' },
        NOW,
      ),
    ]);
    expect(await settle(finished, { '1/d1': ended, '1/d2': ended })).toEqual([]);
    expect(readRegistry(finished).crews[C]).toMatchObject({ daemon: 'd2', status: 'finished' });
  });
});
