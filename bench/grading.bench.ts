import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateLayout } from '../src/state/layout.js';
import { bundleDrainer, enqueueMany, job, spawnDrainer } from '../test/grading/helpers.js';
import type { Bench, BenchFigure } from './types.js';

/**
 * Grading-ledger throughput (issue: drain-grading benchmark): 1, 4 and 20 concurrent drainer OS
 * processes over one state directory, with a no-op judge, so the figure measures the queue claims,
 * the ledger applies, the graded marks and the outbox/observation appends — all under their
 * cross-process locks — and not the judges. Processes start first and wait at a barrier; the clock
 * runs from the barrier to the last drain's end. p99 lock wait comes from `withLock`'s waitedMs.
 */
const JOBS = Number(process.env.GRADING_BENCH_JOBS ?? 300);
const WORKERS = 16;
let script: string | undefined;
const scratch = mkdtempSync(join(tmpdir(), 'school-bench-grading-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)]!;
}

async function round(procs: number): Promise<{ jobsPerSec: number; p99Wait: number }> {
  script ??= await bundleDrainer(scratch);
  const dir = mkdtempSync(join(scratch, `p${procs}-`));
  const layout = new StateLayout(join(dir, 'state'));
  await enqueueMany(
    layout,
    Array.from({ length: JOBS }, (_, i) =>
      job(1 + i, `crew-${i}`, { agent: ['alpha', 'beta', 'gamma'][i % 3]! }),
    ),
  );
  const barrier = join(dir, 'go');
  let ready = 0;
  let allReady!: () => void;
  const readyP = new Promise<void>((r) => (allReady = r));
  const children = Array.from({ length: procs }, (_, i) =>
    spawnDrainer(script!, { stateDir: layout.root, worker: `b${i}`, maxWorkers: WORKERS, barrier }, (s) => {
      if (s.includes('READY') && ++ready === procs) allReady();
    }),
  );
  await readyP;
  const t0 = Date.now();
  writeFileSync(barrier, '');
  const results = await Promise.all(children.map((c) => c.done));
  let end = t0;
  let graded = 0;
  const waits: number[] = [];
  for (const r of results) {
    if (r.code !== 0) throw new Error(`drainer failed: ${r.stderr}`);
    const rep = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
      endedAt: number;
      graded: string[];
      lockWaitsMs: number[];
    };
    end = Math.max(end, rep.endedAt);
    graded += rep.graded.length;
    waits.push(...rep.lockWaitsMs);
  }
  if (graded !== JOBS) throw new Error(`graded ${graded} of ${JOBS}`);
  rmSync(dir, { recursive: true, force: true });
  return { jobsPerSec: JOBS / ((end - t0) / 1000), p99Wait: p99(waits) };
}

export const benchmarks: Bench[] = [1, 4, 20].map((procs) => ({
  name: `grading ledger, ${procs} process(es)`,
  rounds: 5,
  async run(): Promise<BenchFigure[]> {
    const r = await round(procs);
    return [
      {
        figure: `grading throughput, ${procs} proc × ${WORKERS} workers, ${JOBS} jobs`,
        value: r.jobsPerSec,
        unit: 'jobs/s',
      },
      { figure: `p99 lock wait, ${procs} proc`, value: r.p99Wait, unit: 'ms' },
    ];
  },
}));
