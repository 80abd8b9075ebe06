import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { drain } from '../../src/grading/drain.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { MAX_ERROR_LENGTH } from '../../src/security/bound.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { config, enqueueMany, fastGrade, job } from './helpers.js';

const cfg = config({ grading: { leaseSeconds: 60 } });
let tmp: ReturnType<typeof tempDir>;
let layout: StateLayout;
beforeEach(() => {
  tmp = tempDir('school-grading-q-');
  layout = new StateLayout(tmp.path);
});
afterEach(() => tmp.cleanup());

const base = Date.parse('2026-03-01T10:00:00.000Z');
const at = (ms: number) => () => new Date(base + ms);

type DrainOptions = Parameters<typeof drain>[0];
type Grade = NonNullable<NonNullable<DrainOptions['judging']>['grade']>;
/** One drain of this file's queue at `ms` after the base time, judging with `grade`. */
const drainAt = (ms: number, grade: Grade = fastGrade) =>
  drain({ config: cfg, layout, logger: silentLogger, now: at(ms), judging: { grade } });

describe('grading queue', () => {
  it('grades a job delivered twice once, and the score does not move the second time', async () => {
    const j = job(7, 'crew-a');
    expect(await enqueueGradingJob(layout, j)).toBe(true);
    expect(await enqueueGradingJob(layout, j)).toBe(false); // N2.1: dedup before the queue
    // First delivery dies after the score was applied, before the job was marked graded.
    const first = await drain({
      config: cfg,
      layout,
      logger: silentLogger,
      now: at(0),
      judging: { grade: fastGrade },
      observe: {
        onStage: (stage) => {
          if (stage === 'scored') throw new Error('drainer lost');
        },
      },
    });
    expect(first.fatal).toContain('drainer lost');
    const ledger = new ScoreLedger(layout);
    expect(ledger.state().agents.alpha).toEqual({ ema: 1, count: 1, accepted: 1 });
    // Within the lease nobody else takes it…
    const early = await drainAt(30_000);
    expect(early.snapshot).toBe(0);
    // …after it, the job is delivered again and graded; the ledger key keeps the score single.
    const second = await drainAt(61_000);
    expect(second.accepted).toBe(1);
    expect(ledger.state().agents.alpha).toEqual({ ema: 1, count: 1, accepted: 1 });
    const again = await ledger.apply(
      [
        {
          crewId: 'crew-a',
          jobKey: j.jobKey,
          agent: 'alpha',
          domain: 'general',
          difficulty: 2,
          accepted: false,
          score: 0,
          alpha: 0.3,
        },
      ],
      new Date(),
    );
    expect(again.applied).toEqual([]);
    expect(ledger.state().agents.alpha!.ema).toBe(1);
    const q = new GradingQueue(layout).state().jobs[j.jobKey]!;
    expect(q.status).toBe('graded');
    expect(q.attempts).toBe(1); // the lost drain counts as a failed attempt
    const third = await drainAt(200_000);
    expect(third.snapshot).toBe(0);
  });

  it('dead-letters a job after 3 failed drains, never retries it alone, and a requeue keeps the failure summary', async () => {
    await enqueueMany(layout, [job(3, 'crew-x')]);
    const secret = 'ghp_' + 'A'.repeat(36);
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error(`reviewer crashed with ${secret} ${'x'.repeat(2000)}`);
    };
    const runs = [];
    for (let i = 0; i < 3; i++) {
      runs.push(await drainAt(i * 1000, failing));
    }
    expect(calls).toBe(3); // at most once per drain
    expect(runs.map((r) => [r.failed, r.deadLettered])).toEqual([
      [1, 0],
      [1, 0],
      [0, 1],
    ]);
    const queue = new GradingQueue(layout);
    const [dead] = queue.deadLetters();
    expect(dead!.job.jobKey).toBe('grade:3:crew-x');
    expect(dead!.attempts).toBe(3);
    expect(dead!.lastError).toContain('reviewer crashed');
    expect(dead!.lastError).not.toContain(secret);
    expect(dead!.lastError!.length).toBeLessThanOrEqual(MAX_ERROR_LENGTH);
    expect(readFileSync(layout.file('grading'), 'utf8')).not.toContain(secret);

    const idle = await drainAt(10_000_000, failing);
    expect(idle.snapshot).toBe(0);
    expect(calls).toBe(3);

    const requeued = await queue.requeue('grade:3:crew-x');
    expect(requeued.attempts).toBe(0);
    expect(requeued.previousFailure).toContain('dead-lettered after 3 failed drain(s)');
    expect(requeued.previousFailure).toContain('reviewer crashed');
    await expect(queue.requeue('grade:3:crew-x')).rejects.toThrow(/is pending, not a dead letter/);
    await expect(queue.requeue('grade:9:nope')).rejects.toThrow(/no grading job "grade:9:nope"/);

    const after = await drainAt(20_000);
    expect(after.accepted).toBe(1);
    const state = queue.state().jobs['grade:3:crew-x']!;
    expect(state.status).toBe('graded');
    expect(state.previousFailure).toContain('reviewer crashed');
  });

  it('takes one snapshot: jobs enqueued during a drain wait for the next one', async () => {
    await enqueueMany(layout, [job(1, 'c1'), job(2, 'c2')]);
    let added = false;
    const r = await drain({
      config: cfg,
      layout,
      logger: silentLogger,
      limits: { maxWorkers: 1 },
      judging: {
        grade: async (j) => {
          if (!added) {
            added = true;
            await enqueueGradingJob(layout, job(3, 'c3'));
          }
          return fastGrade(j);
        },
      },
    });
    expect(r.snapshot).toBe(2);
    expect(r.verdicts.map((v) => v.crewId)).toEqual(['c1', 'c2']);
    const next = await drain({ config: cfg, layout, logger: silentLogger, judging: { grade: fastGrade } });
    expect(next.verdicts.map((v) => v.crewId)).toEqual(['c3']);
  });

  it('never runs more judges at once than max-workers, capped by the fleet capacity', async () => {
    await enqueueMany(
      layout,
      Array.from({ length: 12 }, (_, i) => job(i + 1, `c${i}`)),
    );
    let running = 0;
    let peak = 0;
    const slow = async (j: Parameters<typeof fastGrade>[0]) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return fastGrade(j);
    };
    const small = config({
      fleet: {
        daemons: [
          { id: 'a', worktrees: 2 },
          { id: 'b', worktrees: 1 },
        ],
      },
    });
    const logger = memoryLogger();
    const r = await drain({
      config: small,
      layout,
      logger,
      limits: { maxWorkers: 10 },
      judging: { grade: slow },
    });
    expect(r.workers).toBe(3);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThan(1);
    expect(r.accepted).toBe(12);
    expect(logger.lines.some((l) => l.message.includes('capped at the fleet capacity of 3'))).toBe(true);
  });
});

describe('score ledger', () => {
  it('a corrupt ledger is quarantined, grading stops with a clear error, nothing is written, nothing re-seeded', async () => {
    await enqueueMany(layout, [job(1, 'c1'), job(2, 'c2')]);
    const first = await drain({
      config: cfg,
      layout,
      logger: silentLogger,
      limits: { maxWorkers: 1 },
      judging: { grade: fastGrade },
    });
    expect(first.accepted).toBe(2);
    await enqueueMany(layout, [job(4, 'c4')]);
    const good = readFileSync(layout.file('scores'), 'utf8');
    writeFileSync(layout.file('scores'), good.replace('"score.applied"', '"score.applied'));
    const gradingBefore = readFileSync(layout.file('grading'), 'utf8');

    const r = await drain({ config: cfg, layout, logger: silentLogger, judging: { grade: fastGrade } });
    expect(r.fatal).toMatch(/score ledger .* (is corrupt|was quarantined)/);
    expect(r.fatal).toContain('.corrupt-');
    expect(r.accepted + r.rejected + r.failed).toBe(0);
    expect(existsSync(layout.file('scores'))).toBe(false);
    const quarantined = readdirSync(tmp.path).filter((n) => n.startsWith('scores.jsonl.corrupt-'));
    expect(quarantined).toHaveLength(1);
    expect(readFileSync(`${tmp.path}/${quarantined[0]}`, 'utf8')).toContain('score:c1');
    expect(readFileSync(layout.file('grading'), 'utf8')).toBe(gradingBefore); // nothing claimed

    // The next drain must not start an empty ledger in its place (seed 001: the leaderboard wipe).
    const again = await drain({ config: cfg, layout, logger: silentLogger, judging: { grade: fastGrade } });
    expect(again.fatal).toMatch(/quarantined .*will not be re-seeded/);
    expect(existsSync(layout.file('scores'))).toBe(false);
    expect(readFileSync(layout.file('grading'), 'utf8')).toBe(gradingBefore);
  });
});
