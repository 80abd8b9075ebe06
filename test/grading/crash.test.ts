import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { drain } from '../../src/grading/drain.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { bundleDrainer, config, enqueueMany, fastGrade, job, spawnDrainer } from './helpers.js';

const tmp = tempDir('school-grading-kill-');
afterAll(() => tmp.cleanup());

describe('a drainer SIGKILLed mid-grade', () => {
  it.each(['claimed', 'scored'] as const)(
    'killed after "%s": the job is redelivered after its lease expires and scored once',
    { timeout: 120_000 },
    async (stage) => {
      const layout = new StateLayout(join(tmp.path, stage));
      const victim = job(5, 'crew-victim', { agent: 'gamma' });
      await enqueueMany(layout, [victim, job(6, 'crew-other', { agent: 'gamma' })]);
      const script = await bundleDrainer(join(tmp.path, stage));
      let hung!: () => void;
      const ready = new Promise<void>((r) => (hung = r));
      const proc = spawnDrainer(
        script,
        { stateDir: layout.root, worker: 'doomed', maxWorkers: 1, hangAt: { stage, jobKey: victim.jobKey } },
        (s) => s.includes('HANG') && hung(),
      );
      await Promise.race([ready, proc.done]);
      // After "scored" the victim is inside its wave's transaction, holding the grading lock: a
      // drain started now waits for it, and goes on once the victim is dead (its lock is taken over
      // because its owner is gone).
      let waiting: ReturnType<typeof drain> | undefined;
      let waited = false;
      if (stage === 'scored') {
        waiting = drain({
          config: config(),
          layout,
          logger: silentLogger,
          judging: { grade: fastGrade },
          worker: { id: 'waiter' },
        });
        void waiting.then(() => (waited = true));
        await new Promise((r) => setTimeout(r, 500));
        expect(waited).toBe(false);
        expect(existsSync(`${layout.file('grading')}.lock`)).toBe(true);
      }
      proc.child.kill('SIGKILL');
      const died = await proc.done;
      expect(died.signal).toBe('SIGKILL');
      if (waiting) {
        const w = await waiting;
        expect(w.fatal).toBeUndefined();
        // The victim's job is still under its lease; the other one is graded by the waiter.
        expect(w.verdicts.map((v) => v.crewId)).toEqual(['crew-other']);
      }

      const queue = new GradingQueue(layout);
      const held = queue.state().jobs[victim.jobKey]!;
      expect(held.status).toBe('claimed');
      expect(held.lease!.worker).toBe('doomed');
      const ledger = new ScoreLedger(layout);
      // After "scored": the victim's score, and the waiter's for crew-other.
      expect(ledger.state().agents.gamma?.count ?? 0).toBe(stage === 'scored' ? 2 : 0);

      const cfg = config({ grading: { leaseSeconds: 30 } });
      const beforeExpiry = await drain({
        config: cfg,
        layout,
        logger: silentLogger,
        judging: { grade: fastGrade },
        worker: { id: 'rescuer' },
      });
      expect(beforeExpiry.verdicts.map((v) => v.crewId)).toEqual(waiting ? [] : ['crew-other']);

      const leaseEnd = Date.parse(held.lease!.leaseUntil);
      const later = await drain({
        config: cfg,
        layout,
        logger: silentLogger,
        now: () => new Date(leaseEnd + 1),
        judging: { grade: fastGrade },
        worker: { id: 'rescuer' },
      });
      expect(later.verdicts.map((v) => v.crewId)).toEqual(['crew-victim']);
      const done = queue.state().jobs[victim.jobKey]!;
      expect(done.status).toBe('graded');
      expect(done.attempts).toBe(1);
      expect(done.lastError).toContain('lease of doomed expired');
      const scores = readFileSync(layout.file('scores'), 'utf8');
      expect(scores.match(/"score:crew-victim"/g)).toHaveLength(1);
      expect(ledger.state().agents.gamma).toEqual({ ema: 0.5, count: 2, accepted: 2 });
    },
  );
});

describe('a machine crash that kept a graded mark and lost its score', () => {
  it('gets the score back from the mark in the next drain, once', async () => {
    const layout = new StateLayout(join(tmp.path, 'lost-score'));
    await enqueueMany(layout, [job(1, 'c1', { agent: 'gamma' }), job(2, 'c2', { agent: 'gamma' })]);
    const cfg = config();
    const first = await drain({ config: cfg, layout, logger: silentLogger, judging: { grade: fastGrade } });
    expect(first.accepted).toBe(2);
    // Scores are fsynced before their marks now, but a state directory written by an earlier
    // version (which did not fsync each append) may have lost the last score line and kept the mark.
    const path = layout.file('scores');
    const kept = readFileSync(path, 'utf8').trim().split('\n');
    writeFileSync(path, kept.slice(0, 1).join('\n') + '\n');
    expect(new ScoreLedger(layout).state().agents.gamma!.count).toBe(1);

    await enqueueMany(layout, [job(3, 'c3', { agent: 'gamma' })]);
    const next = await drain({ config: cfg, layout, logger: silentLogger, judging: { grade: fastGrade } });
    expect(next.accepted).toBe(1);
    const keys = () =>
      readJsonl<{ key: string; type: string }>(path)
        .records.filter((e) => e.type === 'score.applied')
        .map((e) => e.key)
        .sort();
    expect(keys()).toEqual(['score:c1', 'score:c2', 'score:c3']);
    expect(new ScoreLedger(layout).state().agents.gamma).toEqual({ ema: 0.5, count: 3, accepted: 3 });
    // Once: the next drain finds nothing to restore.
    await drain({ config: cfg, layout, logger: silentLogger, judging: { grade: fastGrade } });
    expect(keys()).toHaveLength(3);
  });
});
