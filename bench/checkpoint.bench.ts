/**
 * checkpoint-state: restore + save time and checkpoint size with 1k, 10k and 100k historical
 * grading jobs, over a real git state branch (bare repository as the remote).
 *
 * Setup (once per size, not timed): a year of grading history written with the real EventLog —
 * per job `job.enqueued`, `job.claimed`, then `job.graded` (most), or three `job.failed` and a
 * `job.dead_lettered` (0.5 %); jobs of the last day are half still pending — then saved once, which
 * compacts it (that first compaction is reported too). Each round restores into an empty state
 * directory, saves it unchanged (nothing appended: the save only checks and writes nothing), then
 * appends one new job and saves (fetch, merge, compact, commit, push), with the time per phase.
 *
 * The grading queue fold is registered from src/grading/queue.ts when that module exists, else a
 * local fold with the same contract (graded jobs are history; pending and dead letters are live).
 */
import { gzipSync } from 'node:zlib';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BranchSource } from '../src/checkpoint/branch-source.js';
import { parseLog } from '../src/checkpoint/logs.js';
import { restoreCheckpoint } from '../src/checkpoint/restore.js';
import { saveCheckpoint } from '../src/checkpoint/save.js';
import { EventLog, event, type StateEvent } from '../src/state/event-log.js';
import { registerFold, registeredFolds } from '../src/state/fold.js';
import { initBareRemote, tempDir } from '../test/support/tmp.js';
import type { Bench, BenchFigure } from './types.js';

const DAY = 86_400_000;

/**
 * CPU time of this process and its reaped children (git), in ms: on a shared, loaded machine wall
 * time measures the neighbours as much as the code, CPU time much less so. Linux only (0 elsewhere).
 */
function cpuMs(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    // Not Linux: children not counted.
  }
  return (own.user + own.system) / 1000 + children;
}
const COMPACT_AFTER_DAYS = 14;
const SIZES = (process.env.SCHOOL_BENCH_CHECKPOINT_SIZES ?? '1000,10000,100000').split(',').map(Number);

async function ensureGradingFold(): Promise<string> {
  const real = fileURLToPath(new URL('../src/grading/queue.ts', import.meta.url));
  if (existsSync(real)) {
    await import(real);
    if (registeredFolds().has('grading')) return 'src/grading/queue.ts';
  }
  type Q = { jobs: Record<string, { status: string; crewId: string; attempts: number }> };
  registerFold<Q, StateEvent>({
    file: 'grading',
    empty: () => ({ jobs: {} }),
    apply(s, e) {
      const d = e.data as { jobKey: string; crewId?: string };
      const j = s.jobs[d.jobKey];
      if (e.type === 'job.enqueued' && !j)
        s.jobs[d.jobKey] = { status: 'pending', crewId: d.crewId ?? '', attempts: 0 };
      else if (j && e.type === 'job.failed') j.attempts++;
      else if (j && e.type === 'job.dead_lettered') j.status = 'dead_letter';
      else if (j && e.type === 'job.graded') j.status = 'graded';
      return s;
    },
    prune: (s) => ({
      jobs: Object.fromEntries(Object.entries(s.jobs).filter(([, j]) => j.status !== 'graded')),
    }),
  });
  return 'bench-local fold';
}

function history(jobs: number, now: number): StateEvent[] {
  const out: StateEvent[] = [];
  for (let i = 0; i < jobs; i++) {
    const t = now - Math.floor(((jobs - i) / jobs) * 365 * DAY);
    const crewId = `crew-${i}-${(i * 2654435761) % 1e6}`;
    const jobKey = `grade:${10_000 + i}:${crewId}`;
    const at = (ms: number) => new Date(t + ms);
    out.push(
      event(
        'job.enqueued',
        jobKey,
        {
          jobKey,
          issueNumber: 10_000 + i,
          crewId,
          agent: `agent-${i % 7}`,
          domain: ['general', 'docs', 'api'][i % 3]!,
          difficulty: 1 + (i % 5),
          fences: ['src/**'],
          bookbag: `bookbags/${crewId}`,
        },
        at(0),
      ),
    );
    if (now - t < DAY && i % 2 === 0) continue; // still pending
    out.push(
      event(
        'job.claimed',
        `claim:${jobKey}:1`,
        { jobKey, worker: 'w', attempt: 1, leaseUntil: at(600_000).toISOString() },
        at(60_000),
      ),
    );
    if (i % 200 === 0) {
      for (let n = 1; n <= 3; n++) {
        out.push(
          event(
            'job.failed',
            `failed:${jobKey}:${n}`,
            { jobKey, worker: 'w', attempt: n, error: 'reviewer exited 1' },
            at(60_000 + n),
          ),
        );
      }
      out.push(
        event(
          'job.dead_lettered',
          `dead:${jobKey}:0`,
          { jobKey, attempts: 3, lastError: 'reviewer exited 1' },
          at(70_000),
        ),
      );
    } else {
      out.push(
        event(
          'job.graded',
          `graded:${jobKey}`,
          { jobKey, worker: 'w', verdict: { accepted: i % 3 !== 0, score: 0.8, reasons: ['ok'] } },
          at(300_000),
        ),
      );
    }
  }
  return out;
}

interface Fixture {
  bare: string;
  root: string;
  firstSaveMs: number;
  rawBytes: number;
  round: number;
}
const fixtures = new Map<number, Fixture>();
const tmp = tempDir('school-bench-ckpt-');
process.on('exit', () => tmp.cleanup());

async function fixture(jobs: number): Promise<Fixture> {
  const have = fixtures.get(jobs);
  if (have) return have;
  const root = join(tmp.path, String(jobs));
  const { bare } = initBareRemote(root);
  const state = join(root, 'history');
  const log = new EventLog(join(state, 'grading.jsonl'));
  await log.append(history(jobs, Date.now()));
  const started = performance.now();
  const first = await saveCheckpoint({
    stateDir: state,
    sources: [new BranchSource({ remote: bare })],
    compactAfterDays: COMPACT_AFTER_DAYS,
  });
  const f: Fixture = { bare, root, firstSaveMs: performance.now() - started, rawBytes: 0, round: 0 };
  f.rawBytes = statSync(join(state, 'grading.jsonl')).size;
  void first;
  fixtures.set(jobs, f);
  return f;
}

function benchFor(jobs: number): Bench {
  const label = jobs >= 1000 ? `${jobs / 1000}k` : String(jobs);
  return {
    name: `checkpoint ${label} jobs`,
    async run(): Promise<BenchFigure[]> {
      const foldSource = await ensureGradingFold();
      const f = await fixture(jobs);
      const stateDir = join(f.root, `round-${f.round++}`);
      const sources = [new BranchSource({ remote: f.bare })];
      let t = performance.now();
      let c = cpuMs();
      const restored = await restoreCheckpoint({ stateDir, sources });
      const restoreMs = performance.now() - t;
      const restoreCpu = cpuMs() - c;
      t = performance.now();
      const same = await saveCheckpoint({ stateDir, sources, compactAfterDays: COMPACT_AFTER_DAYS });
      const unchangedMs = performance.now() - t;
      // Code without the unchanged check (a baseline checkout) does a full save here.
      const sameNote = same.unchanged ? undefined : 'the save after the restore was a full save';
      const key = `grade:1:new-${f.round}`;
      await new EventLog(join(stateDir, 'grading.jsonl')).append([
        event('job.enqueued', key, { jobKey: key, crewId: `new-${f.round}` }),
      ]);
      t = performance.now();
      c = cpuMs();
      const saved = await saveCheckpoint({ stateDir, sources, compactAfterDays: COMPACT_AFTER_DAYS });
      const saveMs = performance.now() - t;
      const saveCpu = cpuMs() - c;

      const grading = saved.snapshot.files.get('grading.jsonl')!;
      const parsed = parseLog(grading, 'bench');
      const keysBytes = Buffer.byteLength(JSON.stringify(parsed.snapshot?.data.keys ?? []));
      const activeBytes = Buffer.byteLength(JSON.stringify(parsed.snapshot?.data.state ?? {}));
      const windowBytes = parsed.records.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)) + 1, 0);
      const total = [...saved.snapshot.files.values()].reduce((n, b) => n + b.length, 0);
      const gz = gzipSync(grading).length;
      const ratio = total / (activeBytes + windowBytes);
      const kib = (n: number) => n / 1024;
      const big = jobs === 100_000;
      return [
        {
          figure: `restore ${label} jobs (gen ${restored.generation})`,
          value: restoreMs,
          unit: 'ms',
          goal: big ? '≤ 2000 ms' : undefined,
          met: big ? restoreMs <= 2000 : undefined,
        },
        {
          figure: `save ${label} jobs`,
          value: saveMs,
          unit: 'ms',
          goal: big ? '≤ 2000 ms' : undefined,
          met: big ? saveMs <= 2000 : undefined,
        },
        {
          figure: `save of an unchanged state ${label} jobs`,
          value: unchangedMs,
          unit: 'ms',
          goal: big ? '≤ 500 ms' : undefined,
          met: big ? unchangedMs <= 500 : undefined,
          ...(sameNote ? { note: sameNote } : {}),
        },
        ...['read', 'scrub', 'fetch', 'merge', 'compact', 'seal', 'write', 'push'].map((phase) => ({
          figure: `  save ${label}: ${phase === 'write' ? 'write tree (fast-import)' : phase}`,
          value: (saved.timings as Record<string, number> | undefined)?.[phase] ?? 0,
          unit: 'ms',
        })),
        { figure: `  restore CPU ${label} (node + git)`, value: restoreCpu, unit: 'ms' },
        { figure: `  save CPU ${label} (node + git)`, value: saveCpu, unit: 'ms' },
        {
          figure: `first save of raw ${label} history (${(f.rawBytes / 1048576).toFixed(1)} MiB, compacts it)`,
          value: f.firstSaveMs,
          unit: 'ms',
        },
        {
          figure: `checkpoint size ${label} jobs`,
          value: kib(total),
          unit: 'KiB',
          baseline: { label: 'active set + window', value: kib(activeBytes + windowBytes) },
        },
        { figure: `  of which dedup keys ${label}`, value: kib(keysBytes), unit: 'KiB' },
        { figure: `  grading.jsonl gzip ${label}`, value: kib(gz), unit: 'KiB' },
        {
          figure: `checkpoint ÷ (active set + window) ${label} [${foldSource}]`,
          value: ratio,
          unit: '×',
          goal: '≤ 2×',
          met: ratio <= 2,
        },
      ];
    },
  };
}

export const benchmarks: Bench[] = SIZES.map(benchFor);
