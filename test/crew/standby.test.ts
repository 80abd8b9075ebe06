import { afterEach, describe, expect, it } from 'vitest';
import { runAssignments, type Progress } from '../../src/crew/driver/driver.js';
import { recordSpend } from '../../src/dispatch/gates/spend.js';
import { planStep } from '../../src/loop/steps.js';
import { memoryLogger } from '../../src/log.js';
import { item, launcher, makeSchool, plan, registry, writeCurriculum, type School } from './helpers.js';
import { crewStep } from '../support/crew-step.js';

let school: School | undefined;
afterEach(() => school?.cleanup());

/** Launch and finish phases in the order they happened. */
function recorder() {
  const phases: string[] = [];
  let running = 0;
  let most = 0;
  const onProgress = (p: Progress) => {
    if (p.phase === 'launched') {
      phases.push('launched');
      most = Math.max(most, ++running);
    } else if (p.phase === 'finished') {
      phases.push('finished');
      running--;
    }
  };
  return { phases, onProgress, most: () => most };
}

describe('standby crews (Actions crew jobs, which cannot refill from the office)', () => {
  it(
    'one slot, three ready issues: the plan puts two on standby behind the first and one crew job runs all three in turn',
    { timeout: 180_000 },
    async () => {
      const s = (school = makeSchool({ worktrees: 1 }));
      writeCurriculum(s, [item(1), item(2), item(3)]);
      const logger = memoryLogger();
      const p = await planStep({
        config: s.config,
        layout: s.layout,
        logger,
        beat: ['d1'],
        mode: { standby: true },
      });
      expect(p.assignments.map((a) => [a.issueNumber, a.queued ?? false])).toEqual([
        [1, false],
        [2, true],
        [3, true],
      ]);
      const rec = recorder();
      // What the crew job does: no refill from the office, only what its plan gave it.
      const r = await crewStep(s, {
        logger,
        office: { refill: false },
        onProgress: rec.onProgress,
      });
      expect(r.refilled).toEqual([]);
      expect(r.finished.map((f) => f.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      expect(rec.phases).toEqual(['launched', 'finished', 'launched', 'finished', 'launched', 'finished']);
      expect(
        Object.values(registry(s).crews)
          .map((c) => c.issueNumber)
          .sort(),
      ).toEqual([1, 2, 3]);
    },
  );

  it(
    'runs no more crews at once than its first wave holds, though the daemon has more slots (maxCrews holds across jobs)',
    { timeout: 180_000 },
    async () => {
      const s = (school = makeSchool({ worktrees: 3 }));
      await plan(s, [
        { crewId: 'c1-00000001', issue: 1, agent: 'slow' },
        { crewId: 'c2-00000002', issue: 2, agent: 'slow', queued: true },
        { crewId: 'c3-00000003', issue: 3, agent: 'slow', queued: true },
      ]);
      const rec = recorder();
      const r = await runAssignments({
        config: s.config,
        layout: s.layout,
        daemon: 'd1',
        assignments: [{ crewId: 'c1-00000001' }, { crewId: 'c2-00000002' }, { crewId: 'c3-00000003' }],
        logger: memoryLogger(),
        launch: { launcher: await launcher() },
        onProgress: rec.onProgress,
        clock: { progressEveryMs: 200 },
      });
      expect(r.launched).toHaveLength(3);
      expect(rec.most()).toBe(1);
    },
  );

  it(
    'starts no standby crew once the spend cap is reached, and says why; the first wave still runs',
    { timeout: 180_000 },
    async () => {
      const s = (school = makeSchool({ worktrees: 1 }));
      const config = { ...s.config, dispatch: { ...s.config.dispatch, spendCap: 5 } };
      await plan(s, [
        { crewId: 'c1-00000001', issue: 1 },
        { crewId: 'c2-00000002', issue: 2, queued: true },
        { crewId: 'c3-00000003', issue: 3, queued: true },
      ]);
      // What this job's crews have spent so far, as the agents record it.
      await recordSpend(s.layout, 'c0-earlier', { costUsd: 5.5, crewId: 'c0-earlier', agent: 'editor' });
      const r = await runAssignments({
        config,
        layout: s.layout,
        daemon: 'd1',
        assignments: [{ crewId: 'c1-00000001' }, { crewId: 'c2-00000002' }, { crewId: 'c3-00000003' }],
        logger: memoryLogger(),
        launch: { launcher: await launcher() },
      });
      expect(r.launched).toEqual(['c1-00000001']);
      expect(r.skipped.map((x) => x.crewId)).toEqual(['c2-00000002', 'c3-00000003']);
      expect(r.skipped[0]!.reason).toBe('spend cap reached: $5.50 of $5.00 spent');
      const reg = registry(s);
      expect(reg.crews['c2-00000002']!.status).toBe('planned');
    },
  );
});

describe('a crew job repairs its own failed crew (dispatch.repairInJob)', () => {
  it(
    'one slot: the failed crew, its repair at once (before the standby crew), never a third attempt',
    { timeout: 180_000 },
    async () => {
      const s = (school = makeSchool({ worktrees: 1 }));
      writeCurriculum(s, [item(1), item(2)]);
      await plan(s, [
        { crewId: 'c1-00000001', issue: 1, agent: 'failer' },
        { crewId: 'c2-00000002', issue: 2, queued: true },
      ]);
      const order: number[] = [];
      const r = await crewStep(s, {
        office: { refill: false, repairInJob: true },
        onProgress: (p) => {
          if (p.phase === 'launched') order.push(p.issueNumber!);
        },
      });
      expect(order).toEqual([1, 1, 2]);
      expect(r.repairs).toHaveLength(1);
      const repair = registry(s).crews[r.repairs![0]!]!;
      expect(repair).toMatchObject({ issueNumber: 1, attempt: 2, repair: true, queued: true, daemon: 'd1' });
      expect(r.finished.map((f) => f.outcome)).toEqual(['failed', 'failed', 'succeeded']);
    },
  );

  it('plans no repair the job has no time left to start', { timeout: 180_000 }, async () => {
    const s = (school = makeSchool({ worktrees: 1 }));
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-00000001', issue: 1, agent: 'failer' }]);
    let launched = false;
    const r = await crewStep(s, {
      office: { refill: false, repairInJob: true },
      // The job's time runs out once its one crew has started.
      remainingMs: () => (launched ? 0 : 3_600_000),
      onProgress: (p) => {
        if (p.phase === 'launched') launched = true;
      },
    });
    expect(r.finished.map((f) => f.outcome)).toEqual(['failed']);
    expect(r.repairs).toBeUndefined();
    expect(Object.keys(registry(s).crews)).toEqual(['c1-00000001']);
  });

  it('with dispatch.repairInJob off, the repair waits for the next plan', { timeout: 180_000 }, async () => {
    const s = (school = makeSchool({ worktrees: 1 }));
    const config = { ...s.config, dispatch: { ...s.config.dispatch, repairInJob: false } };
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-00000001', issue: 1, agent: 'failer' }]);
    const r = await crewStep(
      { config, layout: s.layout },
      {
        office: { refill: false, repairInJob: true },
      },
    );
    expect(r.repairs).toBeUndefined();
    expect(Object.keys(registry(s).crews)).toEqual(['c1-00000001']);
  });
});
