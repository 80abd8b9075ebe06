import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StateLayout } from '../src/state/layout.js';
import { bundleDrainer, enqueueMany, job, spawnDrainer } from '../test/grading/helpers.js';
import type { Bench, BenchFigure } from './types.js';

/**
 * Grading-ledger throughput: 1, 4 and 20 concurrent drainer OS processes over one state directory,
 * with a no-op judge, so the figure measures the queue claims, the ledger applies, the graded marks
 * and the outbox/observation appends — all under the grading lock, written by its holder for every
 * drain (src/grading/handover.ts) — and not the judges. Processes start (and load their
 * configuration) first and wait at a barrier; the clock runs from the barrier to the last drain's
 * end. p99 lock wait: per request, how long a drain waited for the lock holder to write it (0 when
 * it wrote it itself), from the drains' `lockWaitsMs`.
 *
 * The peer, in the same round and on the same jobs: as many processes draining one SQLite database
 * in WAL mode (bench/peer/sqlite-drainer.ts), one transaction per step and job, with
 * `synchronous=NORMAL` (the baseline and the goal: ours ≥ peer) and, for reference, `FULL`.
 */
const JOBS = Number(process.env.GRADING_BENCH_JOBS ?? 300);
const WORKERS = 16;
let script: string | undefined;
let turn = 0;
const scratch = mkdtempSync(join(tmpdir(), 'school-bench-grading-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)]!;
}

const require = createRequire(import.meta.url);
let peerScript: string | undefined;

async function bundlePeer(): Promise<string> {
  const { build } = await import('esbuild');
  const outfile = join(scratch, 'sqlite-drainer.cjs');
  await build({
    entryPoints: [fileURLToPath(new URL('./peer/sqlite-drainer.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    external: ['better-sqlite3'],
    logLevel: 'silent',
  });
  return outfile;
}

async function peerRound(
  procs: number,
  synchronous: 'NORMAL' | 'FULL',
): Promise<{ jobsPerSec: number; p99Wait: number }> {
  peerScript ??= await bundlePeer();
  const dir = mkdtempSync(join(scratch, `peer${procs}-`));
  const dbPath = join(dir, 'grading.db');
  const { openDb, createSchema } = await import('./peer/sqlite-drainer.js');
  const db = openDb(dbPath, synchronous);
  createSchema(db);
  const insert = db.prepare(
    `INSERT INTO jobs (job_key, crew_id, agent, domain, difficulty, status, enqueued)
     VALUES (?, ?, ?, 'general', 2, 'pending', ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < JOBS; i++) {
      insert.run(`grade:${1 + i}:crew-${i}`, `crew-${i}`, ['alpha', 'beta', 'gamma'][i % 3]!, i);
    }
  })();
  db.close();
  const barrier = join(dir, 'go');
  let ready = 0;
  let allReady!: () => void;
  const readyP = new Promise<void>((r) => (allReady = r));
  // better-sqlite3 is resolved from this checkout's node_modules by the bundled child.
  const nodePath = join(dirname(require.resolve('better-sqlite3/package.json')), '..');
  const children = Array.from({ length: procs }, (_, i) => {
    const child = spawn(
      process.execPath,
      [peerScript!, JSON.stringify({ db: dbPath, worker: `p${i}`, barrier, synchronous })],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NODE_PATH: nodePath, SCHOOL_BENCH_PEER: '1' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      if (c.includes('READY') && ++ready === procs) allReady();
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('close', (code) => resolve({ code, stdout, stderr })),
    );
  });
  await Promise.race([readyP, Promise.all(children)]);
  const t0 = Date.now();
  writeFileSync(barrier, '');
  const results = await Promise.all(children);
  let end = t0;
  let graded = 0;
  const waits: number[] = [];
  for (const r of results) {
    if (r.code !== 0) throw new Error(`sqlite peer failed: ${r.stderr}`);
    const rep = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
      endedAt: number;
      graded: string[];
      lockWaitsMs: number[];
    };
    end = Math.max(end, rep.endedAt);
    graded += rep.graded.length;
    waits.push(...rep.lockWaitsMs);
  }
  if (graded !== JOBS) throw new Error(`sqlite peer graded ${graded} of ${JOBS}`);
  rmSync(dir, { recursive: true, force: true });
  return { jobsPerSec: JOBS / ((end - t0) / 1000), p99Wait: p99(waits) };
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
    // Alternate which goes first, so neither always runs on the warmer (or the more loaded) machine.
    const flip = (turn++ & 1) === 1;
    const peer = flip ? await peerRound(procs, 'NORMAL') : undefined;
    const r = await round(procs);
    const p = peer ?? (await peerRound(procs, 'NORMAL'));
    const full = await peerRound(procs, 'FULL');
    return [
      {
        figure: `grading throughput, ${procs} proc × ${WORKERS} workers, ${JOBS} jobs`,
        value: r.jobsPerSec,
        unit: 'jobs/s',
        baseline: { label: 'SQLite WAL peer', value: p.jobsPerSec },
        goal: '≥ SQLite WAL peer',
        target: { op: '>=', value: 1, of: 'ratio' },
      },
      {
        figure: `  SQLite WAL peer with synchronous=FULL, ${procs} proc`,
        value: full.jobsPerSec,
        unit: 'jobs/s',
      },
      {
        figure: `p99 lock wait, ${procs} proc`,
        value: r.p99Wait,
        unit: 'ms',
        baseline: { label: 'SQLite BEGIN IMMEDIATE wait', value: p.p99Wait },
      },
    ];
  },
}));
