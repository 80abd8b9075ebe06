import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drain } from '../../src/grading/drain.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { silentLogger } from '../../src/log.js';
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
      proc.child.kill('SIGKILL');
      const died = await proc.done;
      expect(died.signal).toBe('SIGKILL');

      const queue = new GradingQueue(layout);
      const held = queue.state().jobs[victim.jobKey]!;
      expect(held.status).toBe('claimed');
      expect(held.lease!.worker).toBe('doomed');
      const ledger = new ScoreLedger(layout);
      expect(ledger.state().agents.gamma?.count ?? 0).toBe(stage === 'scored' ? 1 : 0);

      const cfg = config({ grading: { leaseSeconds: 30 } });
      const beforeExpiry = await drain({
        config: cfg,
        layout,
        logger: silentLogger,
        grade: fastGrade,
        workerId: 'rescuer',
      });
      expect(beforeExpiry.verdicts.map((v) => v.crewId)).toEqual(['crew-other']);

      const leaseEnd = Date.parse(held.lease!.leaseUntil);
      const later = await drain({
        config: cfg,
        layout,
        logger: silentLogger,
        grade: fastGrade,
        workerId: 'rescuer',
        now: () => new Date(leaseEnd + 1),
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
