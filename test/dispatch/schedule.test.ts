import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { heartbeatTtlSeconds, recordHeartbeat, rosterProblem } from '../../src/dispatch/fleet/fleet.js';
import {
  configuredJobTimeout,
  jobTimeoutNote,
  ttlFromSchedule,
} from '../../src/dispatch/fleet/job-settings.js';
import { planDispatch } from '../../src/dispatch/plan.js';
import { actionsSchedule, parseCron, scheduleIntervalSeconds } from '../../src/dispatch/fleet/schedule.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config, item } from './helpers.js';
import { runContextFrom } from '../../src/process/run-context.js';

/**
 * The heartbeat TTL against the schedule, and the crew job's limit against admission: the two
 * settings that, when they disagree with the workflow, make a school on GitHub plan nothing or plan
 * work that GitHub then kills.
 */

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));
const HOUR = 3600;

describe('cron intervals', () => {
  it('measures the longest gap between runs, over a year', () => {
    expect(scheduleIntervalSeconds(['41 */2 * * *'])).toBe(2 * HOUR);
    expect(scheduleIntervalSeconds(['7 */3 * * *'])).toBe(3 * HOUR);
    expect(scheduleIntervalSeconds(['*/15 * * * *'])).toBe(15 * 60);
    expect(scheduleIntervalSeconds(['0 9 * * 1-5'])).toBe(72 * HOUR); // Friday 09:00 → Monday 09:00
    expect(scheduleIntervalSeconds(['0 9 * * MON-FRI'])).toBe(72 * HOUR);
    expect(scheduleIntervalSeconds(['0 9 * * 1-5', '0 9 * * 0,6'])).toBe(24 * HOUR); // the union
    expect(scheduleIntervalSeconds(['30 4,16 * * *'])).toBe(12 * HOUR);
    expect(scheduleIntervalSeconds(['0 0 1 * *'])).toBe(31 * 24 * HOUR);
    expect(scheduleIntervalSeconds(['0 0 1 JAN *'])).toBe(365 * 24 * HOUR);
    expect(scheduleIntervalSeconds([])).toBeUndefined();
  });

  it('a restricted day of month and day of week match either (cron), a */n day field does not restrict', () => {
    expect(scheduleIntervalSeconds(['0 0 1 * 1'])).toBeLessThanOrEqual(7 * 24 * HOUR);
    expect(parseCron('0 0 */2 * 1').dayOr).toBe(false);
    expect(parseCron('0 0 1 * 7').weekdays).toEqual(new Set([0])); // 7 is Sunday
  });

  it('names the field and the fix for a bad cron', () => {
    expect(() => parseCron('61 * * * *')).toThrow(/minute "61" is not in 0–59/);
    expect(() => parseCron('0 * * *')).toThrow(/expected 5 fields/);
    expect(() => parseCron('0 */0 * * *')).toThrow(/hour step "0"/);
    expect(() => parseCron('0 5-2 * * *')).toThrow(/runs backwards/);
    expect(() => parseCron('0 0 * FOO *')).toThrow(/month "FOO"/);
  });
});

describe('the schedule of an Actions run', () => {
  function workspace(workflow: string) {
    const d = tempDir('school-schedule-');
    dirs.push(d);
    mkdirSync(join(d.path, '.github/workflows'), { recursive: true });
    writeFileSync(join(d.path, '.github/workflows/school.yml'), workflow);
    return d.path;
  }
  const caller = `on:\n  schedule:\n    - cron: '41 */2 * * *'\n  workflow_dispatch:\njobs: {}\n`;

  it("reads the caller's workflow file (GITHUB_WORKFLOW_REF), on a manual run too", () => {
    const env = {
      GITHUB_ACTIONS: 'true',
      GITHUB_REPOSITORY: 'someone/app',
      GITHUB_WORKFLOW_REF: 'someone/app/.github/workflows/school.yml@refs/heads/main',
      GITHUB_WORKSPACE: workspace(caller),
      GITHUB_EVENT_NAME: 'workflow_dispatch',
      GITHUB_RUN_ID: '12',
    };
    const schedule = (e: Record<string, string | undefined>) => actionsSchedule(runContextFrom(e));
    expect(schedule(env)).toEqual({ crons: ['41 */2 * * *'], source: '.github/workflows/school.yml' });
    expect(schedule({ ...env, GITHUB_ACTIONS: undefined })).toBeUndefined();
    // A workflow ref outside .github/workflows or of another repository is never read.
    expect(schedule({ ...env, GITHUB_WORKFLOW_REF: 'someone/app/../../etc/x.yml@main' })).toBeUndefined();
    expect(
      schedule({ ...env, GITHUB_WORKFLOW_REF: 'other/repo/.github/workflows/school.yml@main' }),
    ).toBeUndefined();
  });

  it('falls back to the cron of the schedule event', () => {
    const d = tempDir('school-event-');
    dirs.push(d);
    writeFileSync(join(d.path, 'event.json'), JSON.stringify({ schedule: '7 */3 * * *' }));
    const env = {
      GITHUB_ACTIONS: 'true',
      GITHUB_EVENT_NAME: 'schedule',
      GITHUB_EVENT_PATH: join(d.path, 'event.json'),
      GITHUB_RUN_ID: '12',
    };
    expect(actionsSchedule(runContextFrom(env))).toEqual({
      crons: ['7 */3 * * *'],
      source: 'the schedule event',
    });
  });

  it('sets the TTL from the schedule only when school.yml leaves it unset', () => {
    const schedule = { crons: ['41 */2 * * *'], source: 'school.yml' };
    const unset = ttlFromSchedule(config(), schedule);
    expect(heartbeatTtlSeconds(unset.config)).toBe(2 * 2 * HOUR + 1800);
    expect(unset.note).toMatch(/Heartbeat TTL 16200 s/);
    const set = ttlFromSchedule(config({ fleet: { heartbeatTtlSeconds: 9000 } }), schedule);
    expect(heartbeatTtlSeconds(set.config)).toBe(9000);
    expect(set.note).toBeUndefined();
    const bad = ttlFromSchedule(config(), { crons: ['every hour'], source: 'school.yml' });
    expect(heartbeatTtlSeconds(bad.config)).toBe(900);
    expect(bad.problem).toMatch(/not readable: cron "every hour"/);
  });
});

describe('TTL cross-check: the plan against heartbeats one schedule interval old', () => {
  const NOW = new Date('2026-03-01T12:00:00Z');
  async function school(raw: Record<string, unknown>) {
    const d = tempDir('school-ttl-');
    dirs.push(d);
    const layout = new StateLayout(d.path);
    const cfg = config({ fleet: { daemons: [{ id: 'd1', worktrees: 1 }] }, ...raw });
    // The roster job of the previous scheduled run beat two hours ago.
    const beat = new Date(NOW.getTime() - 2 * HOUR * 1000 - 60_000);
    await recordHeartbeat(layout, cfg, {
      daemon: 'd1',
      observedClass: 'xl',
      freeDiskBytes: 50 * GiB,
      at: beat,
    });
    return { layout, cfg };
  }
  const plan = (layout: StateLayout, cfg: ReturnType<typeof config>) =>
    planDispatch({ config: cfg, layout, curriculum: [item(1)], clock: { now: NOW }, logger: memoryLogger() });

  it('with the default TTL the plan places nothing, and says so loudly', async () => {
    const { layout, cfg } = await school({});
    const r = await plan(layout, cfg);
    expect(r.assignments).toEqual([]);
    const problem = rosterProblem(r.fleet, heartbeatTtlSeconds(cfg));
    expect(problem?.loud).toBe(true);
    expect(problem?.text).toMatch(/Every daemon's roster heartbeat is older than the TTL of 900 s/);
    expect(problem?.text).toMatch(/d1 \(last seen 121m ago > TTL 15m\)/);
  });

  it('with the TTL from the two-hourly schedule the same heartbeat plans', async () => {
    const { layout, cfg } = await school({});
    const { config: scheduled } = ttlFromSchedule(cfg, { crons: ['41 */2 * * *'], source: 'school.yml' });
    const r = await plan(layout, scheduled);
    expect(r.assignments.map((a) => a.issueNumber)).toEqual([1]);
    expect(rosterProblem(r.fleet, heartbeatTtlSeconds(scheduled))).toBeUndefined();
  });

  it('a fleet that never beat is the first cycle, not an alarm', () => {
    const never: Parameters<typeof rosterProblem>[0] = [
      {
        id: 'd1',
        labels: [],
        slots: 1,
        classroom: 'worktree',
        declaredClass: 'standard',
        effectiveClass: 'standard',
        online: false,
        offlineReason: 'no heartbeat recorded',
      },
    ];
    expect(rosterProblem(never, 900)).toMatchObject({
      loud: false,
      text: expect.stringMatching(/next run plans/),
    });
    expect(rosterProblem([], 900)).toBeUndefined();
  });
});

describe('job time cross-check: the crew job limit is the one admission plans for', () => {
  const NOW = new Date('2026-03-01T12:00:00Z');
  async function planWith(jobTimeoutMinutes: number) {
    const d = tempDir('school-jobtime-');
    dirs.push(d);
    const layout = new StateLayout(d.path);
    // Crews may take 100 minutes, and grading needs 10 more.
    const cfg = config({
      fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
      dispatch: { crewTimeoutSeconds: 6000, gradingReserveSeconds: 600, jobTimeoutMinutes },
    });
    await recordHeartbeat(layout, cfg, {
      daemon: 'd1',
      observedClass: 'xl',
      freeDiskBytes: 50 * GiB,
      at: NOW,
    });
    return planDispatch({
      config: cfg,
      layout,
      curriculum: [item(1)],
      clock: { now: NOW },
      logger: memoryLogger(),
    });
  }

  it('a 120-minute crew job admits a 100-minute crew; a 60-minute job refuses it for time', async () => {
    expect((await planWith(120)).assignments).toHaveLength(1);
    const r = await planWith(60);
    expect(r.assignments).toEqual([]);
    expect(r.refused[0]).toMatchObject({ issue: 1, reason: expect.stringMatching(/time budget/) });
  });

  it("says so when school.yml's dispatch.jobTimeoutMinutes disagrees with the workflow", () => {
    const d = tempDir('school-jobnote-');
    dirs.push(d);
    const path = join(d.path, 'school.yml');
    writeFileSync(path, 'dispatch:\n  jobTimeoutMinutes: 360\n');
    expect(configuredJobTimeout(path)).toBe(360);
    expect(jobTimeoutNote(360, 120)).toMatch(/360 in school.yml, but the crew job's timeout-minutes is 120/);
    expect(jobTimeoutNote(120, 120)).toBeUndefined();
    writeFileSync(path, 'fleet: {}\n');
    expect(configuredJobTimeout(path)).toBeUndefined();
  });
});
