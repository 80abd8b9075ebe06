import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import {
  clearPause,
  describePauses,
  pauseForOutcome,
  pauseStatus,
  resetTimeIn,
} from '../../src/dispatch/gates/pause.js';
import { planDispatch } from '../../src/dispatch/plan.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { memoryLogger } from '../../src/log.js';
import { BOOKBAG_FILES } from '../../src/bookbag/schema.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config, finishCrew, item } from './helpers.js';

/**
 * Seed 002 on GitHub: a usage-limit pause whose reset time the student reported lifts itself at that
 * time, and the workflow's clear-pause input lifts pauses with its reason recorded.
 */

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

const T0 = new Date('2026-03-01T12:00:00Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

async function school() {
  const d = tempDir('school-pause-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({
    fleet: { daemons: [{ id: 'd1', worktrees: 2 }], heartbeatTtlSeconds: 86_400 },
    dispatch: { maxCrews: 4 },
  });
  await recordHeartbeat(layout, cfg, { daemon: 'd1', observedClass: 'xl', freeDiskBytes: 50 * GiB, at: T0 });
  const plan = (n: number[], now: Date) =>
    planDispatch({
      config: cfg,
      layout,
      curriculum: n.map((i) => item(i)),
      clock: { now },
      logger: memoryLogger(),
    });
  /** A crew of issue `issue` that ended with a usage limit at `finished`, its report in its bookbag. */
  async function limited(issue: number, finished: Date, report: string) {
    const crewId = (await plan([issue], finished)).assignments[0]!.crewId;
    mkdirSync(layout.bookbag(crewId), { recursive: true });
    writeFileSync(join(layout.bookbag(crewId), BOOKBAG_FILES.report), report);
    await finishCrew(layout, crewId, issue, 'usage_limit', finished);
    return crewId;
  }
  return { layout, plan, limited };
}

describe('usage-limit pauses that expire at the reset time', () => {
  it('reads the reset time a report names, within the next week only', () => {
    expect(resetTimeIn('done\nschool-resets-at: 2026-03-01T15:00:00Z\n', T0)).toEqual(
      new Date('2026-03-01T15:00:00Z'),
    );
    expect(resetTimeIn(`school-resets-at: ${T0.getTime() / 1000 + 3600}`, T0)).toEqual(at(60));
    expect(resetTimeIn('school-resets-at: 2026-03-01T11:00:00Z', T0)).toBeUndefined(); // past
    expect(resetTimeIn('school-resets-at: 2026-03-09T12:00:00Z', T0)).toBeUndefined(); // > a week
    expect(resetTimeIn('school-resets-at: soon', T0)).toBeUndefined();
    expect(resetTimeIn(undefined, T0)).toBeUndefined();
  });

  it('the pause blocks launches until the reset time, then lifts by itself', async () => {
    const { layout, plan, limited } = await school();
    const crewId = await limited(
      1,
      T0,
      'school-result: usage-limit\nschool-resets-at: 2026-03-01T13:00:00Z\n',
    );
    expect(
      await pauseForOutcome(layout, { crewId, issueNumber: 1, outcome: 'usage_limit', reason: 'limit' }, T0),
    ).toBe(true);
    expect(readSchool(layout).pauses[0]).toMatchObject({
      source: 'usage_limit',
      until: '2026-03-01T13:00:00.000Z',
    });

    const during = await plan([2], at(30));
    expect(during.assignments).toEqual([]);
    expect(during.paused).toMatch(/it lifts by itself at 2026-03-01T13:00:00.000Z/);
    expect(pauseStatus(layout, at(30)).paused).toBe(true);

    const after = await plan([2], at(61));
    expect(after.paused).toBeUndefined();
    expect(after.assignments.map((a) => a.issueNumber)).toEqual([2]);
    expect(pauseStatus(layout, at(61))).toMatchObject({ paused: false, pauses: [] });
  });

  it('a pause without a reset time waits for a clear', async () => {
    const { layout, plan, limited } = await school();
    const crewId = await limited(1, T0, 'school-result: usage-limit\n');
    await pauseForOutcome(layout, { crewId, issueNumber: 1, outcome: 'usage_limit', reason: 'limit' }, T0);
    expect((await plan([2], at(60 * 24 * 6))).assignments).toEqual([]);
    expect(describePauses(pauseStatus(layout, at(5)).pauses)).toMatch(/clear-pause/);
  });

  it('the planner records a pause the runtime never wrote, with the reset time from the bookbag', async () => {
    const { layout, plan, limited } = await school();
    await limited(1, T0, 'school-resets-at: 2026-03-01T12:45:00Z');
    // The runtime died before recording the pause: the plan derives it, reset time included.
    expect((await plan([2], at(10))).assignments).toEqual([]);
    expect(readSchool(layout).pauses[0]?.until).toBe('2026-03-01T12:45:00.000Z');
    expect((await plan([2], at(50))).assignments.map((a) => a.issueNumber)).toEqual([2]);
  });
});

describe('clear-pause from the workflow', () => {
  it('lifts every pause and records the reason given', async () => {
    const { layout, plan, limited } = await school();
    const crewId = await limited(1, T0, 'school-result: usage-limit\n');
    await pauseForOutcome(layout, { crewId, issueNumber: 1, outcome: 'usage_limit', reason: 'limit' }, T0);
    const { cleared } = await clearPause(layout, 'credits topped up', readRegistry(layout), at(5));
    expect(cleared.map((p) => p.key)).toEqual([`paused:crew:${crewId}`]);
    expect(readSchool(layout).lastCleared).toEqual({ at: at(5).toISOString(), reason: 'credits topped up' });
    expect((await plan([2], at(6))).assignments.map((a) => a.issueNumber)).toEqual([2]);
  });
});
