import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { claimSlot, readCrewState } from '../../src/dispatch/leases/lease.js';
import { ClaimRefusedError } from '../../src/dispatch/leases/lease.js';
import { localIdentity } from '../../src/dispatch/leases/liveness.js';
import { processStart } from '../../src/process/liveness.js';
import { actionsJobStatus } from '../../src/github/job-status.js';
import { createGitHubClient } from '../../src/github/client.js';
import type { LeaseOwner } from '../../src/schemas/crew.js';
import { makeSchool, plan, type School } from './helpers.js';

let school: School | undefined;
afterEach(() => school?.cleanup());

const me = () => ({ crewId: 'x', ...localIdentity(process.pid) });
function req(s: School, crewId: string, owner: LeaseOwner = localIdentity(process.pid), over = {}) {
  return {
    crewId,
    daemon: 'd1',
    slots: 2,
    owner,
    process: { ...me(), crewId },
    leaseMs: 60_000,
    worktreeFor: (slot: number) => `${s.root}/wt/${slot}`,
    ...over,
  };
}

/** Identity of a process that has exited: its pid is dead (or reused with another start). */
function deadOwner(): LeaseOwner {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return { ...localIdentity(process.pid), pid: Number(r.stdout) };
}

describe('worktree slot leases (N6.2)', () => {
  it('gives each crew its own slot, refuses a full daemon, a second claim and a twin of a running issue', async () => {
    const s = (school = makeSchool());
    await plan(s, [
      { crewId: 'c1-a', issue: 1 },
      { crewId: 'c2-a', issue: 2 },
      { crewId: 'c3-a', issue: 3 },
      { crewId: 'c1-b', issue: 1 },
    ]);
    const a = await claimSlot(s.layout, req(s, 'c1-a'));
    const b = await claimSlot(s.layout, req(s, 'c2-a'));
    expect([a.slot, b.slot]).toEqual([0, 1]);
    await expect(claimSlot(s.layout, req(s, 'c3-a'))).rejects.toThrow(
      /all 2 slot\(s\) of daemon d1 are leased/,
    );
    await expect(claimSlot(s.layout, req(s, 'c1-a'))).rejects.toThrow(/already running/);
    await expect(claimSlot(s.layout, req(s, 'c1-b', undefined, { slots: 3 }))).rejects.toThrow(
      /issue #1 already running as c1-a/,
    );
    await expect(claimSlot(s.layout, req(s, 'c9-z'))).rejects.toBeInstanceOf(ClaimRefusedError);
  });

  it('never reclaims an expired lease whose local owner is alive; reclaims it once the owner is gone', async () => {
    const s = (school = makeSchool());
    await plan(s, [
      { crewId: 'c1-a', issue: 1 },
      { crewId: 'c2-a', issue: 2 },
      { crewId: 'c3-a', issue: 3 },
    ]);
    const past = () => new Date(Date.now() - 3_600_000);
    // Expired at once (taken an hour ago with a 1 s lease), owned by this live process.
    await claimSlot(s.layout, req(s, 'c1-a', undefined, { slots: 1, leaseMs: 1_000, now: past }));
    await expect(claimSlot(s.layout, req(s, 'c2-a', undefined, { slots: 1 }))).rejects.toThrow(/leased/);
    // Same pid, other start identity: a reused pid is not the owner.
    const start = processStart(process.pid);
    expect(start).toBeDefined();
    s.cleanup();
    const t = (school = makeSchool());
    await plan(t, [
      { crewId: 'c1-a', issue: 1 },
      { crewId: 'c2-a', issue: 2 },
    ]);
    const reused = { ...localIdentity(process.pid), start: `${start}9` };
    await claimSlot(t.layout, req(t, 'c1-a', reused, { slots: 1, leaseMs: 1_000, now: past }));
    const got = await claimSlot(t.layout, req(t, 'c2-a', undefined, { slots: 1 }));
    expect(got.slot).toBe(0);
    expect(got.reclaimed.map((l) => l.crewId)).toEqual(['c1-a']);
    const reg = readCrewState(t.layout).registry;
    expect(reg.crews['c1-a']!.outcome).toBe('lost');
    expect(reg.leases['d1/0']!.crewId).toBe('c2-a');
  });

  it('reclaims from a dead pid but not from an unexpired lease', async () => {
    const s = (school = makeSchool());
    await plan(s, [
      { crewId: 'c1-a', issue: 1 },
      { crewId: 'c2-a', issue: 2 },
    ]);
    await claimSlot(s.layout, req(s, 'c1-a', deadOwner(), { slots: 1 }));
    // Owner dead, but the lease has not expired: still held.
    await expect(claimSlot(s.layout, req(s, 'c2-a', undefined, { slots: 1 }))).rejects.toThrow(/leased/);
    // Two hours on, the lease has expired and its owner is provably gone: reclaimed.
    const later = () => new Date(Date.now() + 7_200_000);
    const got = await claimSlot(s.layout, req(s, 'c2-a', undefined, { slots: 1, now: later }));
    expect(got.reclaimed.map((l) => l.crewId)).toEqual(['c1-a']);
  });
});

describe('a lease whose crew already finished', () => {
  it('is free at once, even unexpired and with a live owner', async () => {
    const s = (school = makeSchool());
    await plan(s, [
      { crewId: 'c1-a', issue: 1 },
      { crewId: 'c2-a', issue: 2 },
    ]);
    await claimSlot(s.layout, req(s, 'c1-a', undefined, { slots: 1 }));
    // The crew finished but its release was never written (a crash between the two appends).
    const { EventLog, event } = await import('../../src/state/event-log.js');
    await new EventLog(s.layout.file('crews')).append([
      event('crew.finished', 'finished:c1-a', {
        crewId: 'c1-a',
        issueNumber: 1,
        outcome: 'succeeded',
        reason: 'ok',
      }),
    ]);
    const got = await claimSlot(s.layout, req(s, 'c2-a', undefined, { slots: 1 }));
    expect(got.slot).toBe(0);
    expect(readCrewState(s.layout).registry.crews['c1-a']!.outcome).toBe('succeeded');
  });
});

describe('Actions owners: the job must no longer be in progress (REST API through msw)', () => {
  const jobs: Record<string, string> = {};
  const server = setupServer(
    http.get('https://api.github.com/repos/o/r/actions/runs/:run/jobs', ({ params, request }) => {
      if (new URL(request.url).searchParams.get('filter') !== 'all')
        return HttpResponse.json({}, { status: 400 });
      return HttpResponse.json({
        total_count: 2,
        jobs: [
          { id: 1, name: 'plan', status: 'completed', run_attempt: 1 },
          { id: 2, name: 'run (d1)', status: jobs[String(params.run)] ?? 'queued', run_attempt: 1 },
        ],
      });
    }),
    // No job imports this workflow's results: the run's own status says when it ended.
    http.get('https://api.github.com/repos/o/r/actions/runs/:run', ({ params }) =>
      HttpResponse.json({
        id: Number(params.run),
        status: (jobs[String(params.run)] ?? 'queued') === 'completed' ? 'completed' : 'in_progress',
      }),
    ),
  );
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterAll(() => server.close());

  it('keeps the lease while the owning job is in progress and reclaims it when the job completed', async () => {
    const s = (school = makeSchool());
    await plan(s, [
      { crewId: 'c1-a', issue: 1 },
      { crewId: 'c2-a', issue: 2 },
    ]);
    const client = createGitHubClient({
      token: 'ghs_testtokentesttokentesttoken0000',
      baseUrl: 'https://api.github.com',
    });
    const jobStatus = actionsJobStatus(client, 'o/r');
    const owner: LeaseOwner = { kind: 'actions', runId: '42', runAttempt: '1', job: 'run' };
    const past = () => new Date(Date.now() - 3_600_000);
    await claimSlot(s.layout, req(s, 'c1-a', owner, { slots: 1, leaseMs: 1_000, now: past }));
    jobs['42'] = 'in_progress';
    await expect(claimSlot(s.layout, req(s, 'c2-a', undefined, { slots: 1, jobStatus }))).rejects.toThrow(
      /leased/,
    );
    jobs['42'] = 'completed';
    const got = await claimSlot(s.layout, req(s, 'c2-a', undefined, { slots: 1, jobStatus }));
    expect(got.reclaimed.map((l) => l.crewId)).toEqual(['c1-a']);
  });
});
