import { afterEach, describe, expect, it } from 'vitest';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { pauseForOutcome } from '../../src/dispatch/gates/pause.js';
import { planDispatch } from '../../src/dispatch/plan.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { requeueCommand } from '../../src/cli/commands/requeue.js';
import { memoryLogger } from '../../src/log.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config, finishCrew, item } from '../dispatch/helpers.js';

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));
const NOW = new Date('2026-03-01T12:00:00Z');

async function school() {
  const d = tempDir('school-requeue-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({ fleet: { daemons: [{ id: 'd1', worktrees: 2 }] }, dispatch: { maxCrews: 4 } });
  await recordHeartbeat(layout, cfg, { daemon: 'd1', observedClass: 'xl', freeDiskBytes: 50 * GiB, at: NOW });
  const plan = (curriculum: CurriculumItem[], now = NOW) =>
    planDispatch({ config: cfg, layout, curriculum, clock: { now }, logger: memoryLogger() });
  const beat = (at: Date) =>
    recordHeartbeat(layout, cfg, { daemon: 'd1', observedClass: 'xl', freeDiskBytes: 50 * GiB, at });
  return { layout, plan, dir: d.path, beat };
}

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const write = process.stdout.write.bind(process.stdout);
  let out = '';
  process.stdout.write = ((s: string) => ((out += s), true)) as typeof process.stdout.write;
  try {
    return { code: await requeueCommand.run(args), out };
  } finally {
    process.stdout.write = write;
  }
}

describe('school requeue', () => {
  it('re-admits an issue stopped after two failures, with the reason recorded; refuses anything else', async () => {
    const { layout, plan, dir } = await school();
    const items = [item(5)];
    const a = await plan(items);
    await finishCrew(layout, a.assignments[0]!.crewId, 5, 'failed', new Date('2026-03-01T12:01:00Z'));
    const b = await plan(items);
    expect(b.assignments).toMatchObject([{ issueNumber: 5, attempt: 2, repair: true }]);
    await expect(cli(['5', '--reason', 'too early', '--state-dir', dir])).rejects.toThrow(
      /is not stopped \(it is active\)/,
    );
    await finishCrew(layout, b.assignments[0]!.crewId, 5, 'failed', new Date('2026-03-01T12:02:00Z'));
    const c = await plan(items);
    expect(c.refused).toMatchObject([{ issue: 5, code: 'repair-stopped-after-two-failures' }]);

    await expect(cli(['5', '--state-dir', dir])).rejects.toThrow(/--reason TEXT is required/);
    await expect(cli(['five', '--reason', 'x', '--state-dir', dir])).rejects.toThrow(
      /exactly one issue number/,
    );
    const r = await cli(['5', '--reason', 'flaky test fixed upstream', '--state-dir', dir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Requeued issue #5');
    expect(readSchool(layout).requeues?.[5]).toBeDefined();
    const d = await plan(items);
    expect(d.assignments).toMatchObject([{ issueNumber: 5, attempt: 1, repair: false }]);
  });
});

describe('a usage limit with a reset time', () => {
  it('pauses launches until the reset, then lifts by itself', async () => {
    const { layout, plan, beat } = await school();
    const until = new Date('2026-03-01T15:00:00Z');
    await pauseForOutcome(
      layout,
      {
        crewId: 'c1-aaaa0001',
        issueNumber: 1,
        outcome: 'usage_limit',
        reason: 'claude reported a usage limit',
        until,
      },
      NOW,
    );
    const paused = await plan([item(2)]);
    expect(paused.assignments).toEqual([]);
    expect(paused.paused).toContain('lifts by itself at 2026-03-01T15:00:00.000Z');
    await beat(new Date('2026-03-01T15:00:00Z'));
    const later = await plan([item(2)], new Date('2026-03-01T15:00:01Z'));
    expect(later.paused).toBeUndefined();
    expect(later.assignments).toMatchObject([{ issueNumber: 2 }]);
  });
});
