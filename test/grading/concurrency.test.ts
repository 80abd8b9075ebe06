import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { drain } from '../../src/grading/drain.js';
import { ScoreLedger, leaderboard } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { bundleDrainer, config, enqueueMany, fastGrade, job, spawnDrainer } from './helpers.js';

const JOBS = Number(process.env.GRADING_CONCURRENCY_JOBS ?? 1000);
const PROCS = 20;
const AGENTS = ['alpha', 'beta', 'gamma'];
const DOMAINS = ['web', 'cli'];

function jobs(n: number) {
  return Array.from({ length: n }, (_, i) =>
    job(1 + (i % 97), `crew-${String(i).padStart(5, '0')}`, {
      agent: AGENTS[i % AGENTS.length]!,
      domain: DOMAINS[i % DOMAINS.length]!,
      difficulty: 1 + (i % 3),
    }),
  );
}

describe('20 concurrent drainer processes', () => {
  const tmp = tempDir('school-grading-conc-');
  afterAll(() => tmp.cleanup());

  it(
    `grade ${JOBS} jobs exactly once, and the ledger equals a serial run's`,
    { timeout: 240_000 },
    async () => {
      const serial = new StateLayout(join(tmp.path, 'serial'));
      const parallel = new StateLayout(join(tmp.path, 'parallel'));
      await enqueueMany(serial, jobs(JOBS));
      await enqueueMany(parallel, jobs(JOBS));

      const script = await bundleDrainer(tmp.path);
      // All start draining together (a barrier file), so they contend from the first claim on: a
      // drainer that started alone could grade the whole queue before the others were running.
      const barrier = join(tmp.path, 'go');
      let ready = 0;
      let allReady!: () => void;
      const readyP = new Promise<void>((r) => (allReady = r));
      const children = Array.from({ length: PROCS }, (_, i) =>
        spawnDrainer(script, { stateDir: parallel.root, worker: `w${i}`, maxWorkers: 25, barrier }, (out) => {
          if (out.includes('READY') && ++ready === PROCS) allReady();
        }),
      );
      await Promise.race([readyP, Promise.all(children.map((c) => c.done))]);
      writeFileSync(barrier, '');
      const serialRun = await drain({
        config: config({ fleet: { daemons: [{ id: 'big', worktrees: 64 }] } }),
        layout: serial,
        logger: silentLogger,
        limits: { maxWorkers: 16 },
        judging: { grade: fastGrade },
        worker: { id: 'serial' },
      });
      expect(serialRun.fatal).toBeUndefined();
      expect(serialRun.accepted + serialRun.rejected).toBe(JOBS);

      const results = await Promise.all(children.map((c) => c.done));
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      const reports = results.map(
        (r) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { graded: string[]; fatal?: string },
      );
      for (const rep of reports) expect(rep.fatal).toBeUndefined();
      // Every job graded by exactly one process: no duplicates, none missed.
      const graded = reports.flatMap((rep) => rep.graded);
      expect(graded.length).toBe(JOBS);
      expect(new Set(graded).size).toBe(JOBS);
      // Work was actually shared between processes.
      expect(reports.filter((rep) => rep.graded.length > 0).length).toBeGreaterThan(1);

      const q = new GradingQueue(parallel).state();
      expect(Object.values(q.jobs).every((j) => j.status === 'graded')).toBe(true);
      const lines = readFileSync(parallel.file('scores'), 'utf8').trim().split('\n');
      expect(lines.length).toBe(JOBS);
      expect(new Set(lines.map((l) => (JSON.parse(l) as { key: string }).key)).size).toBe(JOBS);

      const a = new ScoreLedger(parallel).state();
      const b = new ScoreLedger(serial).state();
      expect(leaderboard(a)).toEqual(leaderboard(b));
      expect(a.cells).toEqual(b.cells);
      expect(a.agents.alpha!.count + a.agents.beta!.count + a.agents.gamma!.count).toBe(JOBS);
    },
  );
});
