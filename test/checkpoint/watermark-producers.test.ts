import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { compact } from '../../src/checkpoint/compact.js';
import { parseLog } from '../../src/checkpoint/logs.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { clearPause, pauseForOutcome } from '../../src/dispatch/gates/pause.js';
import { planDispatch } from '../../src/dispatch/plan.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { drain } from '../../src/grading/drain.js';
import { Outbox } from '../../src/outbox/outbox.js';
import { missingOutboxEntries, outboxPolicy } from '../../src/grading/records.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { memoryLogger } from '../../src/log.js';
import { writeFileAtomic } from '../../src/state/atomic.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { STATE_FILES, StateLayout, type StateFile } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, config as dispatchConfig, finishCrew, item } from '../dispatch/helpers.js';
import { config as gradingConfig, enqueueMany, fastGrade, job } from '../grading/helpers.js';

/**
 * The crews, spend, outbox and school logs remember a low watermark instead of every folded key.
 * That is sound only because no producer re-creates, with a new time, a fact that compaction has
 * folded away. Two producers derive facts from state that outlives the window; these tests compact
 * one log behind the other's back (as a checkpoint does) and check that they stay quiet.
 */

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));
const DAY = 86_400_000;
const T0 = new Date('2026-03-01T12:00:00Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

function layoutIn(prefix: string): StateLayout {
  const d = tempDir(prefix);
  dirs.push(d);
  return new StateLayout(d.path);
}

/** Compacts one state log in place at `horizon`, as restoring a compacted checkpoint leaves it. */
function compactInPlace(layout: StateLayout, file: StateFile, horizon: Date): void {
  const name = STATE_FILES[file];
  const files = new Map([[name, readFileSync(layout.file(file))]]);
  const out = compact(files, { horizon }).files.get(name)!;
  const snapshot = parseLog(out, 'test').snapshot;
  expect(snapshot?.data.watermark).toBe(horizon.toISOString());
  expect(snapshot?.data.keys).toEqual([]);
  writeFileAtomic(layout.file(file), out);
}

describe('after compaction forgot their keys, producers do not re-create folded facts', () => {
  it('a drain does not record again the outbox entries of a job graded before the outbox watermark', async () => {
    const layout = layoutIn('school-wm-outbox-');
    const cfg = gradingConfig();
    await enqueueMany(layout, [job(7, 'crew-7', { agent: 'alpha' })]);
    const first = await drain({
      config: cfg,
      layout,
      logger: memoryLogger(),
      now: () => T0,
      judging: { grade: fastGrade },
    });
    expect(first.accepted).toBe(1);
    // Delivered: the outbox's compaction prunes them (only pending entries and deliveries stay).
    const outbox = new Outbox(layout);
    const ids = Object.keys(outbox.state().items);
    expect(ids.length).toBeGreaterThan(0);
    await new EventLog(layout.file('outbox')).append(
      ids.map((id) => event('outbox.delivered', `delivered:${id}`, { id }, later(60_000))),
    );
    // The outbox is compacted; the grading log is not (yet): its graded job is still in the fold.
    compactInPlace(layout, 'outbox', later(DAY));
    expect(new GradingQueue(layout).state().jobs['grade:7:crew-7']?.status).toBe('graded');
    expect(new Outbox(layout).state().items).toEqual({});

    // What the drain's first round would record, without and with the watermark.
    const queue = new GradingQueue(layout).state();
    expect(
      missingOutboxEntries(outboxPolicy(cfg, false), queue, { items: {} })
        .map((e) => e.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(
      missingOutboxEntries(outboxPolicy(cfg, false), queue, { items: {} }, later(DAY).toISOString()),
    ).toEqual([]);

    const before = readFileSync(layout.file('outbox'), 'utf8');
    await drain({
      config: cfg,
      layout,
      logger: memoryLogger(),
      now: () => later(2 * DAY),
      judging: { grade: fastGrade },
    });
    expect(readFileSync(layout.file('outbox'), 'utf8')).toBe(before);
    expect(new Outbox(layout).state().items).toEqual({});
  });

  it('a plan does not pause the school again for a usage limit cleared before the school log watermark', async () => {
    const layout = layoutIn('school-wm-pause-');
    const cfg = dispatchConfig({
      fleet: { daemons: [{ id: 'd1', worktrees: 2 }], heartbeatTtlSeconds: 90 * 86_400 },
      dispatch: { maxCrews: 4 },
    });
    await recordHeartbeat(layout, cfg, {
      daemon: 'd1',
      observedClass: 'xl',
      freeDiskBytes: 50 * GiB,
      at: T0,
    });
    const plan = (issues: number[], now: Date) =>
      planDispatch({
        config: cfg,
        layout,
        curriculum: issues.map((i) => item(i)),
        clock: { now },
        logger: memoryLogger(),
      });
    const crewId = (await plan([1], T0)).assignments[0]!.crewId;
    await finishCrew(layout, crewId, 1, 'usage_limit', later(60_000));
    await pauseForOutcome(
      layout,
      { crewId, issueNumber: 1, outcome: 'usage_limit', reason: 'limit' },
      later(60_000),
    );
    await clearPause(layout, 'credits topped up', readRegistry(layout), later(120_000));
    expect((await plan([2], later(180_000))).assignments.map((a) => a.issueNumber)).toEqual([2]);

    // Weeks later the school log is compacted: the pause and its clear are folded, their keys
    // forgotten. The registry still keeps the limited crew (the last crews of an issue stay).
    compactInPlace(layout, 'school', later(20 * DAY));
    expect(readRegistry(layout).crews[crewId]?.outcome).toBe('usage_limit');
    const next = await plan([3], later(21 * DAY));
    expect(next.paused).toBeUndefined();
    expect(next.assignments.map((a) => a.issueNumber)).toEqual([3]);
    expect(readSchool(layout).pauses).toEqual([]);
  });
});
