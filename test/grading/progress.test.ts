import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { drain } from '../../src/grading/drain.js';
import type { GradeFn } from '../../src/grading/judges.js';
import { drainProgress, type ProgressClock } from '../../src/grading/progress.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { config, enqueueMany, fastGrade, job } from './helpers.js';

/**
 * Progress while draining: which job of how many, and every 10 s how long its judges have run —
 * driven by an injected clock and timer, so the test decides when ten seconds have passed.
 */
let tmp: ReturnType<typeof tempDir>;
afterEach(() => tmp?.cleanup());

/** A clock a test moves by hand; `every` hands its callback to the test instead of a real timer. */
function manualClock() {
  let t = 0;
  const timers = new Set<{ ms: number; fn: () => void }>();
  const clock: ProgressClock = {
    now: () => t,
    every(ms, fn) {
      const timer = { ms, fn };
      timers.add(timer);
      return { stop: () => timers.delete(timer) };
    },
  };
  return {
    clock,
    timers,
    advance(ms: number) {
      for (let end = t + ms; t < end;) {
        const step = Math.min(...[...timers].map((x) => x.ms), end - t);
        t += step;
        for (const x of [...timers]) if (step === x.ms) x.fn();
      }
    },
  };
}

function deferred() {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

describe('drain progress', () => {
  it('prints job n of m when its judges start, then one line every 10 s while they run, then stops', async () => {
    tmp = tempDir('school-progress-');
    const layout = new StateLayout(join(tmp.path, 'state'));
    mkdirSync(layout.root, { recursive: true });
    await enqueueMany(layout, [job(1, 'a'), job(2, 'b'), job(3, 'c')]);
    const m = manualClock();
    const logger = memoryLogger();
    const progress = drainProgress({ logger, clock: m.clock });
    const gates = new Map([['grade:2:b', deferred()]]);
    const started = deferred();
    const grade: GradeFn = async (j) => {
      const gate = gates.get(j.jobKey);
      if (gate) {
        started.release();
        await gate.promise;
      }
      return fastGrade(j);
    };
    const run = drain({
      config: config({ fleet: { daemons: [{ id: 'd1', worktrees: 1 }] } }),
      layout,
      logger: silentLogger,
      judging: { grade },
      observe: { progress },
    });
    await started.promise;
    m.advance(25_000);
    gates.get('grade:2:b')!.release();
    const r = await run;
    expect(r.verdicts).toHaveLength(3);
    expect(logger.lines.map((l) => l.message)).toEqual([
      'grading job 1 of 3: grade:1:a',
      'grading job 2 of 3: grade:2:b',
      'grading job 2 of 3 (grade:2:b): judges running for 10 s',
      'grading job 2 of 3 (grade:2:b): judges running for 20 s',
      'grading job 3 of 3: grade:3:c',
    ]);
    // No timer outlives the judges.
    expect(m.timers.size).toBe(0);
  });

  it('a long run reads in minutes; the timer stops with the last running job', async () => {
    const m = manualClock();
    const logger = memoryLogger();
    const p = drainProgress({ logger, clock: m.clock, everyMs: 60_000 });
    p.total(1);
    p.started('grade:7:x');
    m.advance(180_000);
    p.finished('grade:7:x');
    m.advance(120_000);
    expect(logger.lines.map((l) => l.message)).toEqual([
      'grading job 1 of 1: grade:7:x',
      'grading job 1 of 1 (grade:7:x): judges running for 60 s',
      'grading job 1 of 1 (grade:7:x): judges running for 2 min 0 s',
      'grading job 1 of 1 (grade:7:x): judges running for 3 min 0 s',
    ]);
    expect(m.timers.size).toBe(0);
  });
});
