import { appendFileSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { heartbeatTtlSeconds, recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { clearPause, pauseSchool, pauseStatus } from '../../src/dispatch/gates/pause.js';
import { planDispatch, type PlanInput } from '../../src/dispatch/plan.js';
import { DEFAULT_JOB_TIMEOUT_MINUTES } from '../../src/config/schema.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { recordSpend, totalSpend } from '../../src/dispatch/gates/spend.js';
import { memoryLogger } from '../../src/log.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { StateLayout } from '../../src/state/layout.js';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { event } from '../../src/state/event-log.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config, finishCrew, item, heartbeats } from './helpers.js';

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

const NOW = new Date('2026-03-01T12:00:00Z');

async function school(raw: Record<string, unknown> = {}) {
  const d = tempDir('school-plan-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({
    fleet: {
      daemons: [
        { id: 'd1', worktrees: 2, labels: ['gpu'] },
        { id: 'd2', worktrees: 2 },
      ],
    },
    dispatch: { maxCrews: 10 },
    ...raw,
  });
  await heartbeats(layout, cfg, NOW);
  const logger = memoryLogger();
  const plan = (curriculum: CurriculumItem[], over: Partial<PlanInput> = {}) =>
    planDispatch({ config: cfg, layout, curriculum, logger, ...over, clock: { now: NOW, ...over.clock } });
  return { layout, cfg, plan, logger };
}

describe('planDispatch: recording a batch', () => {
  it('records crew.planned events, a matrix and the crew_runs view; a planned issue is never planned again', async () => {
    const { layout, plan } = await school();
    const r = await plan([item(1), item(2), item(3, { fences: ['src/**'] })]);
    expect(r.assignments).toHaveLength(3);
    for (const a of r.assignments) expect(a.crewId).toMatch(new RegExp(`^c${a.issueNumber}-[0-9a-f]{8}$`));
    const lines = readFileSync(layout.file('crews'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.key)).toEqual(r.assignments.map((a) => `planned:${a.crewId}`));
    expect(lines[2].data).toMatchObject({ issueNumber: 3, fences: ['src/**'], attempt: 1, repair: false });

    expect(r.matrix).toEqual([
      { daemon: 'd1', labels: ['gpu'], assignments: [r.assignments[0]!.crewId, r.assignments[2]!.crewId] },
      { daemon: 'd2', labels: [], assignments: [r.assignments[1]!.crewId] },
    ]);
    const view = JSON.parse(readFileSync(layout.view('crew_runs.json'), 'utf8'));
    expect(view.crews.map((c: { crewId: string }) => c.crewId).sort()).toEqual(
      r.assignments.map((a) => a.crewId).sort(),
    );

    const again = await plan([item(1), item(2), item(3), item(4, { fences: ['src/x.ts'] })]);
    expect(again.assignments.map((a) => a.issueNumber)).toEqual([]);
    expect(again.refused.map((x) => [x.issue, x.code])).toEqual([
      [1, 'active-crew'],
      [2, 'active-crew'],
      [3, 'active-crew'],
      // One free slot is left on d2, but issue 4's fence overlaps the planned crew of issue 3.
      [4, 'fence-conflict'],
    ]);
  });

  it('an offline daemon is never planned onto; a fresh disk figure below the floor refuses', async () => {
    const { plan, layout, cfg } = await school();
    const later = new Date(NOW.getTime() + (heartbeatTtlSeconds(cfg) + 1) * 1000);
    await recordHeartbeat(layout, cfg, {
      daemon: 'd2',
      observedClass: 'standard',
      freeDiskBytes: 50 * GiB,
      at: later,
    });
    const r = await plan([item(1), item(2), item(3)], { clock: { now: later } });
    expect(r.assignments.map((a) => a.daemon)).toEqual(['d2', 'd2']);
    expect(r.refused.map((x) => x.code)).toEqual(['no-free-slot']);

    const low = await plan([item(9)], { clock: { now: later }, limits: { freeDiskBytes: 3 * GiB } });
    expect(low.refused).toMatchObject([{ issue: 9, code: 'disk-floor' }]);
  });

  it('a hand-edited curriculum entry with values out of range falls back to the defaults (N1.3)', async () => {
    const { plan, logger } = await school();
    const bad = {
      ...item(5),
      weight: 'giant',
      role: 'hacker',
      fences: 'src/**',
      priority: Number.NaN,
      difficulty: Infinity,
    } as unknown as CurriculumItem;
    const r = await plan([bad, { ...item(6), number: -1 }]);
    expect(r.assignments).toMatchObject([
      { issueNumber: 5, weight: 'standard', role: 'coding', fences: [], difficulty: 2 },
    ]);
    expect(logger.lines.some((l) => l.level === 'warning' && l.message.includes('issue number is -1'))).toBe(
      true,
    );
  });

  it('a job with too little time left plans nothing (N3.1)', async () => {
    const { plan } = await school();
    // 19 minutes of the default job limit left: less than a 15-minute crew timeout plus the reserve.
    const late = DEFAULT_JOB_TIMEOUT_MINUTES - 19;
    const startedAt = new Date(NOW.getTime() - late * 60_000);
    const r = await plan([item(1)], { clock: { jobStartedAt: startedAt } });
    expect(r.assignments).toEqual([]);
    expect(r.refused[0]!.code).toBe('time-budget');
    // The monotonic form measures the job in-process (N3.2).
    const clock = 1_000_000;
    const monotonicLate = await plan([item(1)], {
      clock: { monotonic: () => clock, jobStartedAt: { monotonicMs: clock - late * 60_000 } },
    });
    expect(monotonicLate.refused[0]!.code).toBe('time-budget');
    const ok = await plan([item(1)], {
      clock: { monotonic: () => clock, jobStartedAt: { monotonicMs: clock - 60_000 } },
    });
    expect(ok.assignments).toHaveLength(1);
  });
});

describe('planDispatch: failing closed on corrupt state (N5.1)', () => {
  it('a corrupt crews.jsonl admits nothing, says why, and keeps denying until repaired', async () => {
    const { layout, plan, logger } = await school();
    await plan([item(1)]);
    appendFileSync(layout.file('crews'), '{"key":"broken", this is not json}\n');
    const r = await plan([item(2), item(3)]);
    expect(r.assignments).toEqual([]);
    expect(r.refused.map((x) => x.code)).toEqual(['state-corrupt', 'state-corrupt']);
    expect(r.blocked).toContain('is corrupt at line 2');
    expect(logger.lines.some((l) => l.level === 'error' && l.message.includes('dispatch denied'))).toBe(true);
    const quarantined = readdirSync(layout.root).filter((n) => n.startsWith('crews.jsonl.corrupt-'));
    expect(quarantined).toHaveLength(1);
    expect(existsSync(layout.file('crews'))).toBe(false);

    // The log is now merely absent; the quarantined copy still blocks dispatch.
    const still = await plan([item(2)]);
    expect(still.assignments).toEqual([]);
    expect(still.blocked).toContain(quarantined[0]);

    // An operator repairs the file (drops the bad line) and moves it back: dispatch resumes, and
    // the crew from before the corruption still counts.
    const copy = `${layout.root}/${quarantined[0]}`;
    writeFileSync(layout.file('crews'), readFileSync(copy, 'utf8').split('\n')[0] + '\n');
    rmSync(copy);
    const resumed = await plan([item(1), item(2)]);
    expect(resumed.blocked).toBeUndefined();
    expect(resumed.assignments.map((a) => a.issueNumber)).toEqual([2]);
    expect(resumed.refused).toMatchObject([{ issue: 1, code: 'active-crew' }]);
  });

  it('a spend ledger row with an unusable amount halts dispatch by name', async () => {
    const { layout, plan } = await school({ dispatch: { maxCrews: 10, spendCap: 100 } });
    appendFileSync(
      layout.file('spend'),
      JSON.stringify({
        key: 'spend:x',
        type: 'spend.recorded',
        at: NOW.toISOString(),
        data: { costUsd: 'lots' },
      }) + '\n',
    );
    const r = await plan([item(1)]);
    expect(r.assignments).toEqual([]);
    expect(r.blocked).toContain('spend ledger row "spend:x" has costUsd "lots"');
  });
});

describe('planDispatch: spend cap', () => {
  it('re-reads the ledger every batch; at the cap it places nothing and prints exactly one loud line', async () => {
    const { layout, plan, logger } = await school({ dispatch: { maxCrews: 10, spendCap: 5 } });
    await recordSpend(layout, 'c1-aaaa', { costUsd: 3.25, crewId: 'c1-aaaa' });
    const first = await plan([item(1)]);
    expect(first.assignments).toHaveLength(1);
    expect(first.loud).toBeUndefined();

    await recordSpend(layout, 'c1-bbbb', { costUsd: 1.75 });
    await recordSpend(layout, 'c1-bbbb', { costUsd: 1.75 }); // a replay counts once
    expect(totalSpend(layout)).toBe(5);
    const before = readFileSync(layout.file('crews'), 'utf8');
    const r = await plan([item(2), item(3), item(4)]);
    expect(r.loud).toBe('SPEND CAP REACHED (5.00 >= 5.00) — dispatch halted, 0/3 placed');
    expect(r.assignments).toEqual([]);
    expect(r.refused.every((x) => x.code === 'spend-cap')).toBe(true);
    expect(readFileSync(layout.file('crews'), 'utf8')).toBe(before);
    expect(logger.lines.filter((l) => l.message.startsWith('SPEND CAP REACHED'))).toEqual([
      { level: 'error', message: 'SPEND CAP REACHED (5.00 >= 5.00) — dispatch halted, 0/3 placed' },
    ]);
  });
});

describe('planDispatch: repairs and the two-failure stop (seed 002)', () => {
  it('a failed issue is repaired first; after two consecutive failures it is never launched a third time', async () => {
    const { layout, plan } = await school({ dispatch: { maxCrews: 1 } });
    const curriculum = [item(1, { priority: 4 }), item(2, { priority: 3 }), item(3, { priority: 0 })];
    const a = await plan([item(2, { priority: 3 })]);
    expect(a.assignments.map((x) => x.issueNumber)).toEqual([2]);
    await finishCrew(layout, a.assignments[0]!.crewId, 2, 'failed');

    // The queued repair of #2 launches before #3, although #3 is more urgent.
    const b = await plan(curriculum);
    expect(b.assignments).toMatchObject([{ issueNumber: 2, attempt: 2, repair: true }]);
    await finishCrew(layout, b.assignments[0]!.crewId, 2, 'timed_out');

    const c = await plan(curriculum);
    expect(c.assignments).toMatchObject([{ issueNumber: 3, attempt: 1, repair: false }]);
    expect(c.refused.find((x) => x.issue === 2)).toMatchObject({ code: 'repair-stopped-after-two-failures' });
    await finishCrew(layout, c.assignments[0]!.crewId, 3, 'succeeded');

    const d = await plan(curriculum);
    expect(d.assignments.map((x) => x.issueNumber)).toEqual([1]);
    expect(d.refused.map((x) => [x.issue, x.code])).toEqual([
      [2, 'repair-stopped-after-two-failures'],
      [3, 'done'],
    ]);
    const planned = Object.values(readRegistry(layout).crews).filter((x) => x.issueNumber === 2);
    expect(planned).toHaveLength(2);
  });
});

describe('planDispatch: an environment failure waits behind the waiting issues', () => {
  /** A crew the machine failed (a failed install, a program the sandbox lacks): `infra`, as the crew records it. */
  async function environmentFailure(layout: StateLayout, crewId: string, issueNumber: number) {
    await crewLog(layout).append([
      event('crew.finished', `finished:${crewId}`, {
        crewId,
        issueNumber,
        outcome: 'aborted' as const,
        reason: 'the dependency install (npm ci) exited with 1',
        infra: true,
      }),
    ]);
  }

  it('is not a failed run, plans no repair, and goes after every waiting issue, whatever their priority', async () => {
    const { layout, plan } = await school({ dispatch: { maxCrews: 1 } });
    const a = await plan([item(2, { priority: 0 })]);
    await environmentFailure(layout, a.assignments[0]!.crewId, 2);
    // #2 is the most urgent and the smallest, yet #1 and #3 (waiting) go first; #2 is a first attempt again.
    const curriculum = [
      item(1, { priority: 4 }),
      item(2, { priority: 0, size: 1 }),
      item(3, { priority: 3 }),
    ];
    const b = await plan(curriculum);
    expect(b.assignments).toMatchObject([{ issueNumber: 3, attempt: 1, repair: false }]);
    await finishCrew(layout, b.assignments[0]!.crewId, 3, 'succeeded');
    const c = await plan(curriculum);
    expect(c.assignments).toMatchObject([{ issueNumber: 1, attempt: 1, repair: false }]);
    await finishCrew(layout, c.assignments[0]!.crewId, 1, 'succeeded');
    // Nothing else waits: it runs, still as a first attempt (the environment's failure cost it none).
    const d = await plan(curriculum);
    expect(d.assignments).toMatchObject([{ issueNumber: 2, attempt: 1, repair: false }]);
  });

  it("a repair whose own run failed on the environment loses the repair's place in front", async () => {
    const { layout, plan } = await school({ dispatch: { maxCrews: 1 } });
    const a = await plan([item(2, { priority: 0 })]);
    await finishCrew(layout, a.assignments[0]!.crewId, 2, 'failed');
    const curriculum = [item(2, { priority: 0 }), item(3, { priority: 3 })];
    const b = await plan(curriculum);
    expect(b.assignments).toMatchObject([{ issueNumber: 2, attempt: 2, repair: true }]);
    await environmentFailure(layout, b.assignments[0]!.crewId, 2);
    // Still one failure (the repair's turn is not spent), but the waiting #3 goes first now.
    const c = await plan(curriculum);
    expect(c.assignments).toMatchObject([{ issueNumber: 3, attempt: 1 }]);
    await finishCrew(layout, c.assignments[0]!.crewId, 3, 'succeeded');
    const d = await plan(curriculum);
    expect(d.assignments).toMatchObject([{ issueNumber: 2, attempt: 2, repair: true }]);
  });
});

describe('planDispatch: pauses (seed 002)', () => {
  it('a usage limit pauses launches without counting as a failure; clear lifts it; a new report pauses again', async () => {
    const { layout, plan } = await school({ dispatch: { maxCrews: 1 } });
    const curriculum = [item(1), item(2)];
    const a = await plan(curriculum);
    const first = a.assignments[0]!.crewId;
    await finishCrew(layout, first, 1, 'usage_limit');

    // The runtime never recorded the pause: the planner derives it from the registry and records it.
    // Whether the school saw the limit itself is not in the registry: the crew's agent alone waits.
    const b = await plan(curriculum);
    expect(b.assignments).toEqual([]);
    expect(b.paused).toBeUndefined();
    expect(b.refused.every((x) => x.code === 'agent-paused')).toBe(true);
    expect(b.refused[0]!.reason).toContain(`crew ${first} (issue #1) ended with usage_limit`);
    expect(readSchool(layout).pauses.map((p) => p.key)).toEqual([`paused:crew:${first}`]);

    const { cleared } = await clearPause(layout, 'credits topped up', readRegistry(layout));
    expect(cleared).toHaveLength(1);
    expect(pauseStatus(layout).paused).toBe(false);

    // Not a failure: issue #1 runs again as a first attempt.
    const c = await plan(curriculum);
    expect(c.assignments).toMatchObject([{ issueNumber: 1, attempt: 1, repair: false }]);
    // An overload is an interruption: no school-wide pause, not a failure; the issue runs again.
    await finishCrew(layout, c.assignments[0]!.crewId, 1, 'overloaded');
    const d = await plan(curriculum);
    expect(d.paused).toBeUndefined();
    expect(d.assignments).toMatchObject([{ issueNumber: 1, attempt: 1, repair: false }]);
  });

  it('an unexplained exit (lost) pauses launches until looked at, and counts as a failed run', async () => {
    const { layout, plan } = await school({ dispatch: { maxCrews: 1 } });
    const a = await plan([item(1)]);
    await finishCrew(layout, a.assignments[0]!.crewId, 1, 'lost');
    const b = await plan([item(1)]);
    expect(b.assignments).toEqual([]);
    expect(b.paused).toContain('ended with lost');
    await clearPause(layout, 'runner rebooted', readRegistry(layout));
    const c = await plan([item(1)]);
    expect(c.assignments).toMatchObject([{ issueNumber: 1, attempt: 2, repair: true }]);
  });

  it('an operator pause blocks launches until cleared', async () => {
    const { layout, plan } = await school();
    await pauseSchool(layout, 'disk maintenance');
    expect((await plan([item(1)])).refused[0]).toMatchObject({ code: 'paused' });
    await clearPause(layout, 'done');
    expect((await plan([item(1)])).assignments).toHaveLength(1);
  });
});
