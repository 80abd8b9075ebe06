/**
 * The SQLite peer of the grading bench: one drainer process over a shared SQLite database in WAL
 * mode — `synchronous=NORMAL` (the usual WAL setting: a commit survives a process crash, the WAL
 * is fsynced at checkpoints) or `FULL` (every commit fsynced) — doing
 * the same work per job as a drain, one transaction per step: claim one job with a lease; then
 * apply its score once per crew (a primary key), step the agent and cell EMAs and mark the job
 * done. argv[2] is JSON { db, worker, barrier, synchronous }. Prints READY, waits for the barrier file, drains
 * until no job is claimable and prints { endedAt, graded, lockWaitsMs } as its last line.
 * Bench-only: better-sqlite3 is a dev dependency and never part of an action bundle.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';

const SCORES: Record<string, number> = { alpha: 1, beta: 0, gamma: 0.5 };
const LEASE_MS = 300_000;
const ALPHA = 0.3;

export function openDb(path: string, synchronous: 'NORMAL' | 'FULL' = 'NORMAL'): Database.Database {
  const db = new Database(path, { timeout: 60_000 });
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  return db;
}

export function createSchema(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS jobs (job_key TEXT PRIMARY KEY, crew_id TEXT NOT NULL, agent TEXT NOT NULL,
      domain TEXT NOT NULL, difficulty INTEGER NOT NULL, status TEXT NOT NULL, worker TEXT,
      lease_until INTEGER, attempts INTEGER NOT NULL DEFAULT 0, enqueued INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS jobs_pending ON jobs (status, enqueued);
    CREATE TABLE IF NOT EXISTS scores (crew_id TEXT PRIMARY KEY, job_key TEXT NOT NULL, agent TEXT NOT NULL,
      domain TEXT NOT NULL, difficulty INTEGER NOT NULL, accepted INTEGER NOT NULL, score REAL NOT NULL,
      alpha REAL NOT NULL, at TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS emas (scope TEXT PRIMARY KEY, ema REAL NOT NULL, count INTEGER NOT NULL,
      accepted INTEGER NOT NULL);`);
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as {
    db: string;
    worker: string;
    barrier: string;
    synchronous?: 'NORMAL' | 'FULL';
  };
  const db = openDb(args.db, args.synchronous);
  const claim = db.prepare(
    `UPDATE jobs SET status = 'claimed', worker = @worker, lease_until = @until, attempts = attempts + 1
     WHERE job_key = (SELECT job_key FROM jobs WHERE status = 'pending' OR (status = 'claimed' AND lease_until <= @now)
                      ORDER BY enqueued LIMIT 1)
     RETURNING job_key, crew_id, agent, domain, difficulty`,
  );
  const insertScore = db.prepare(
    `INSERT INTO scores VALUES (@crew, @job, @agent, @domain, @difficulty, @accepted, @score, @alpha, @at)
     ON CONFLICT (crew_id) DO NOTHING`,
  );
  const ema = db.prepare(
    `INSERT INTO emas VALUES (@scope, @score, 1, @accepted) ON CONFLICT (scope) DO UPDATE SET
       ema = @alpha * @score + (1 - @alpha) * ema, count = count + 1, accepted = accepted + @accepted`,
  );
  const done = db.prepare(
    `UPDATE jobs SET status = 'graded', lease_until = NULL WHERE job_key = ? AND worker = ?`,
  );
  type Row = { job_key: string; crew_id: string; agent: string; domain: string; difficulty: number };
  const waits: number[] = [];
  const tx = <T>(fn: () => T): T => {
    const t = performance.now();
    db.exec('BEGIN IMMEDIATE');
    waits.push(performance.now() - t);
    try {
      const out = fn();
      db.exec('COMMIT');
      return out;
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
  };
  process.stdout.write('READY\n');
  while (!existsSync(args.barrier)) await new Promise((r) => setTimeout(r, 2));
  const graded: string[] = [];
  for (;;) {
    const now = Date.now();
    const job = tx(() => claim.get({ worker: args.worker, until: now + LEASE_MS, now }) as Row | undefined);
    if (!job) break;
    const score = SCORES[job.agent] ?? 0;
    const accepted = score > 0 ? 1 : 0;
    tx(() => {
      const r = insertScore.run({
        crew: job.crew_id,
        job: job.job_key,
        agent: job.agent,
        domain: job.domain,
        difficulty: job.difficulty,
        accepted,
        score,
        alpha: ALPHA,
        at: new Date().toISOString(),
      });
      if (r.changes === 1) {
        ema.run({ scope: `agent:${job.agent}`, score, accepted, alpha: ALPHA });
        ema.run({
          scope: `cell:${job.agent}|${job.domain}|${job.difficulty}`,
          score,
          accepted,
          alpha: ALPHA,
        });
      }
      done.run(job.job_key, args.worker);
    });
    graded.push(job.job_key);
  }
  db.close();
  process.stdout.write(JSON.stringify({ endedAt: Date.now(), graded, lockWaitsMs: waits }) + '\n');
}

// Imported by the bench for its schema helpers; run as a child only with SCHOOL_BENCH_PEER=1.
if (process.env.SCHOOL_BENCH_PEER === '1') void main();
