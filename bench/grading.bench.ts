import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateLayout } from '../src/state/layout.js';
import { bundleDrainer, enqueueMany, job, spawnDrainer } from '../test/grading/helpers.js';
import type { Bench, BenchFigure } from './types.js';

/**
 * What grading costs beyond its judges, as a regression guard. A real judge (verification
 * record, sealed tests, a reviewer) takes seconds; here each verdict takes JUDGE_MS (a sleep), and
 * drainer OS processes grade a queue with WORKERS judges at once each: one drain (what `school loop`
 * and a `grade` job run), and four drains of one state directory (which stays correct, so it is
 * measured too). The clock runs from a barrier, after the processes started, to the last drain's
 * end. The baseline, in the same round: the judges alone — the same waves of sleeps in this
 * process, no state at all. Value ÷ baseline is what the queue, the ledger, the outbox and the
 * grading lock add to what a user waits for: goal ≤ 1.05.
 */
const JUDGE_MS = Number(process.env.GRADING_BENCH_JUDGE_MS ?? 1000);
const WORKERS = 4;
const WAVES = 5;
const scratch = mkdtempSync(join(tmpdir(), 'school-bench-grading-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
let script: string | undefined;

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)]!;
}

/** The judges alone: `waves` waves of `width` concurrent sleeps of JUDGE_MS. */
async function judgesAlone(waves: number, width: number): Promise<number> {
  const t0 = performance.now();
  for (let w = 0; w < waves; w++)
    await Promise.all(Array.from({ length: width }, () => new Promise((r) => setTimeout(r, JUDGE_MS))));
  return performance.now() - t0;
}

async function round(procs: number): Promise<{ ms: number; p99Wait: number; transactions: number }> {
  script ??= await bundleDrainer(scratch);
  const jobs = procs * WORKERS * WAVES;
  const dir = mkdtempSync(join(scratch, `p${procs}-`));
  const layout = new StateLayout(join(dir, 'state'));
  await enqueueMany(
    layout,
    Array.from({ length: jobs }, (_, i) =>
      job(1 + i, `crew-${i}`, { agent: ['alpha', 'beta', 'gamma'][i % 3]! }),
    ),
  );
  const barrier = join(dir, 'go');
  let ready = 0;
  let allReady!: () => void;
  const readyP = new Promise<void>((r) => (allReady = r));
  const children = Array.from({ length: procs }, (_, i) =>
    spawnDrainer(
      script!,
      { stateDir: layout.root, worker: `b${i}`, maxWorkers: WORKERS, judgeMs: JUDGE_MS, barrier },
      (s) => {
        if (s.includes('READY') && ++ready === procs) allReady();
      },
    ),
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
  if (graded !== jobs) throw new Error(`graded ${graded} of ${jobs}`);
  rmSync(dir, { recursive: true, force: true });
  return { ms: end - t0, p99Wait: p99(waits), transactions: waits.length };
}

export const benchmarks: Bench[] = [1, 4].map((procs) => ({
  name: `grading, ${procs} drain(s)`,
  rounds: 5,
  async run(): Promise<BenchFigure[]> {
    const alone = await judgesAlone(WAVES, WORKERS);
    const r = await round(procs);
    const jobs = procs * WORKERS * WAVES;
    return [
      {
        figure: `grading ${jobs} jobs, ${procs} drain(s) × ${WORKERS} workers, judge ${JUDGE_MS} ms`,
        value: r.ms / 1000,
        unit: 's',
        baseline: { label: 'the judges alone', value: alone / 1000 },
        goal: '≤ 1.05 × the judges alone',
        target: { op: '<=', value: 1.05, of: 'ratio' },
      },
      {
        figure: `  time beyond the judges per wave, ${procs} drain(s)`,
        value: Math.max(0, r.ms - alone) / WAVES,
        unit: 'ms',
      },
      {
        figure: `  p99 grading-lock wait per transaction, ${procs} drain(s)`,
        value: r.p99Wait,
        unit: 'ms',
      },
    ];
  },
}));
