import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { spawn } from 'node:child_process';
import { BOOKBAG_FILES, sha256, type Bookbag } from '../../src/bookbag/schema.js';
import { jobKey, type GradingJob } from '../../src/schemas/grading.js';
import { EventLog, event } from '../../src/state/event-log.js';
import type { StateLayout } from '../../src/state/layout.js';
import type { QueueEvent } from '../../src/grading/queue.js';
export { config, fastGrade, FAST_SCORES } from './fixtures/fast-judge.js';

export function job(issueNumber: number, crewId: string, over: Partial<GradingJob> = {}): GradingJob {
  return {
    jobKey: jobKey(issueNumber, crewId),
    issueNumber,
    crewId,
    agent: 'alpha',
    domain: 'general',
    difficulty: 2,
    fences: [],
    bookbag: `bookbags/${crewId}`,
    ...over,
  };
}

/** Enqueues many jobs in one append (enqueueGradingJob takes the lock once per job). */
export async function enqueueMany(layout: StateLayout, jobs: GradingJob[]): Promise<void> {
  const log = new EventLog<QueueEvent>(layout.file('grading'));
  await log.append(jobs.map((j) => event('job.enqueued', j.jobKey, j)));
}

export interface BookbagSpec {
  crewId: string;
  issueNumber: number;
  diff: string;
  baseSha?: string;
  verification?: 'passed' | 'failed' | null;
  fences?: string[];
  agent?: string;
  /** Skip the done flag: a crew that died while writing its bookbag. */
  noDoneFlag?: boolean;
  /** The crew's role (default coding). */
  role?: string;
  /** report.md, when given. */
  report?: string;
}

/** Writes a bookbag the way dispatch-crew does: data first, the done flag with its hashes last. */
export function writeBookbag(layout: StateLayout, spec: BookbagSpec): GradingJob {
  const dir = layout.bookbag(spec.crewId);
  mkdirSync(dir, { recursive: true });
  const diffSha = sha256(spec.diff);
  const baseSha = spec.baseSha ?? 'b'.repeat(40);
  const record: Bookbag = {
    schema: 1,
    crewId: spec.crewId,
    issueNumber: spec.issueNumber,
    agent: spec.agent ?? 'alpha',
    daemon: 'local',
    role: spec.role ?? 'coding',
    domain: 'general',
    difficulty: 2,
    fences: spec.fences ?? [],
    baseSha,
    diffSha,
    briefSha: sha256('brief'),
    changedFiles: [],
    outcome: 'succeeded',
    verification:
      spec.verification === null
        ? null
        : {
            command: ['npm', 'test'],
            exitCode: spec.verification === 'failed' ? 1 : 0,
            passed: spec.verification !== 'failed',
            durationMs: 12,
            logDigest: sha256('log'),
            baseSha,
            diffSha,
            timedOut: false,
          },
    timings: {
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:01:00.000Z',
      durationMs: 60000,
    },
  };
  const recordText = JSON.stringify(record, null, 2) + '\n';
  writeFileSync(join(dir, BOOKBAG_FILES.record), recordText);
  writeFileSync(join(dir, BOOKBAG_FILES.diff), spec.diff);
  writeFileSync(join(dir, BOOKBAG_FILES.verificationLog), 'ok\n');
  if (spec.report !== undefined) writeFileSync(join(dir, BOOKBAG_FILES.report), spec.report);
  if (!spec.noDoneFlag) {
    writeFileSync(
      join(dir, BOOKBAG_FILES.done),
      JSON.stringify({ crewId: spec.crewId, recordSha: sha256(recordText), diffSha }),
    );
  }
  return job(spec.issueNumber, spec.crewId, { agent: record.agent, fences: record.fences });
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export const DRAINER = join(import.meta.dirname, 'fixtures', 'drainer.ts');

/**
 * Bundles the drainer fixture into one CommonJS file (esbuild, which tsx ships): a process then
 * starts in ~0.1 s instead of compiling TypeScript on the fly, so twenty of them stay cheap.
 */
export async function bundleDrainer(outDir: string): Promise<string> {
  return bundleFixture(outDir, DRAINER);
}

/** Bundles a fixture script (see bundleDrainer) into `<outDir>/<name>.cjs`. */
export async function bundleFixture(outDir: string, entry: string): Promise<string> {
  const { build } = await import('esbuild');
  const outfile = join(outDir, `${basename(entry, '.ts')}.cjs`);
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    minify: true,
    logLevel: 'silent',
  });
  return outfile;
}

/** Spawns the bundled drainer as its own OS process. */
export function spawnDrainer(
  script: string,
  args: Record<string, unknown>,
  onStdout?: (chunk: string) => void,
) {
  const child = spawn(process.execPath, [script, JSON.stringify(args)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
    onStdout?.(s);
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const done = new Promise<ChildResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}
