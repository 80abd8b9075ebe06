import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { ArtifactPort } from '../../src/checkpoint/artifact-source.js';
import type { CachePort } from '../../src/checkpoint/cache-source.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { jobKey, type GradingEvent } from '../../src/schemas/grading.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { BranchSource } from '../../src/checkpoint/branch-source.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { git, initBareRemote } from '../support/tmp.js';

/**
 * A stand-in for the Actions cache service behaving like it: entries are immutable (a second save
 * under a key is declined, as a reserve collision is), restore matches the primary key exactly or
 * else the newest entry whose key starts with a restore key.
 */
export function fakeCache(store: string, behaviour: { available?: boolean; failRestore?: boolean } = {}) {
  mkdirSync(store, { recursive: true });
  let clock = 0;
  const port: CachePort & { saves: string[] } = {
    saves: [],
    available: async () => behaviour.available ?? true,
    async save(paths, key) {
      const dir = join(store, key);
      if (existsSync(dir)) return false;
      for (const p of paths) cpSync(p, join(dir, String(paths.indexOf(p))), { recursive: true });
      writeFileSync(join(store, `${key}.order`), String(++clock).padStart(8, '0'));
      port.saves.push(key);
      return true;
    },
    async restore(paths, primaryKey, restoreKeys) {
      if (behaviour.failRestore) throw new Error('Cache service responded with 503');
      let hit: string | undefined = existsSync(join(store, primaryKey)) ? primaryKey : undefined;
      if (!hit) {
        const entries = readdirSync(store)
          .filter((e) => !e.endsWith('.order') && restoreKeys.some((k) => e.startsWith(k)))
          .sort((a, b) => order(a).localeCompare(order(b)));
        hit = entries.at(-1);
      }
      if (!hit) return undefined;
      for (const [i, p] of paths.entries()) {
        rmSync(p, { recursive: true, force: true });
        cpSync(join(store, hit, String(i)), p, { recursive: true });
      }
      return hit;
    },
  };
  const order = (key: string) => {
    try {
      return readFileSync(join(store, `${key}.order`), 'utf8');
    } catch {
      return '';
    }
  };
  return port;
}

/** Records uploads as the artifact service would keep them: name → files relative to the root. */
export function fakeArtifacts(
  store: string,
): ArtifactPort & { uploads: Array<{ name: string; retentionDays: number }> } {
  const uploads: Array<{ name: string; retentionDays: number }> = [];
  return {
    uploads,
    async upload(name, files, root, retentionDays) {
      if (existsSync(join(store, name)))
        throw new Error(`an artifact named ${name} already exists in this run`);
      for (const f of files) {
        const rel = f.slice(root.length + 1);
        mkdirSync(join(store, name, rel, '..'), { recursive: true });
        cpSync(f, join(store, name, rel));
      }
      uploads.push({ name, retentionDays });
    },
  };
}

/** Every file under `dir`, as [relative path, bytes]. */
export function allFiles(dir: string): Array<[string, Buffer]> {
  const out: Array<[string, Buffer]> = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const path = rel ? `${rel}/${name}` : name;
      if (statSync(join(dir, path)).isDirectory()) walk(path);
      else out.push([path, readFileSync(join(dir, path))]);
    }
  };
  if (existsSync(dir)) walk('');
  return out;
}

/** Every object in a repository (blobs, trees, commits), decompressed: what a clone could read. */
export function allObjectBytes(repo: string): string {
  return git(repo, 'cat-file', '--batch-all-objects', '--batch');
}

export interface PlantedJobs {
  pending: string;
  deadLetter: string;
  graded: string;
}

/**
 * Writes a grading queue with the real EventLog and the grading event shapes: a pending job, a
 * dead-lettered job (three failed drains, then dead) and a graded one, plus a bookbag per crew.
 */
export async function writeGradingState(stateDir: string, at: Date = new Date()): Promise<PlantedJobs> {
  const layout = new StateLayout(stateDir);
  const log = new EventLog<GradingEvent>(layout.file('grading'));
  const jobs = [
    { issueNumber: 101, crewId: 'crew-101-a1' },
    { issueNumber: 102, crewId: 'crew-102-a1' },
    { issueNumber: 103, crewId: 'crew-103-a2' },
  ];
  const fresh = Date.now() - at.getTime() < 60_000;
  for (const j of jobs) {
    const job = {
      ...j,
      agent: 'student',
      domain: 'general',
      difficulty: 2,
      fences: ['src/**'],
      bookbag: `bookbags/${j.crewId}`,
    };
    // The real writer stamps the current time; history from weeks ago is written with the same
    // event shape and an older time.
    if (fresh) await enqueueGradingJob(layout, job);
    else
      await log.append([
        event(
          'job.enqueued',
          jobKey(j.issueNumber, j.crewId),
          { ...job, jobKey: jobKey(j.issueNumber, j.crewId) },
          at,
        ),
      ]);
    writeBookbag(stateDir, j.crewId, j.issueNumber, at);
  }
  const dead = jobKey(102, 'crew-102-a1');
  const graded = jobKey(103, 'crew-103-a2');
  const t = (ms: number) => new Date(at.getTime() + ms);
  const events: GradingEvent[] = [];
  for (let n = 1; n <= 3; n++) {
    events.push(
      event(
        'job.claimed',
        `claim:${dead}:${n}`,
        { jobKey: dead, worker: 'w1', attempt: n, leaseUntil: t(n * 1000).toISOString() },
        t(n * 10),
      ),
    );
    events.push(
      event(
        'job.failed',
        `failed:${dead}:${n}`,
        { jobKey: dead, worker: 'w1', attempt: n, error: `reviewer exited 1 (try ${n})` },
        t(n * 10 + 1),
      ),
    );
  }
  events.push(
    event(
      'job.dead_lettered',
      `dead:${dead}:0`,
      { jobKey: dead, attempts: 3, lastError: 'reviewer exited 1 (try 3)' },
      t(50),
    ),
  );
  events.push(
    event(
      'job.claimed',
      `claim:${graded}:1`,
      { jobKey: graded, worker: 'w2', attempt: 1, leaseUntil: t(9000).toISOString() },
      t(60),
    ),
  );
  events.push(
    event(
      'job.graded',
      `graded:${graded}`,
      { jobKey: graded, worker: 'w2', verdict: { accepted: true } },
      t(70),
    ),
  );
  await log.append(events);
  return { pending: jobKey(101, 'crew-101-a1'), deadLetter: dead, graded };
}

export function writeBookbag(
  stateDir: string,
  crewId: string,
  issueNumber: number,
  at: Date,
  extra: Record<string, string> = {},
) {
  const dir = join(stateDir, 'bookbags', crewId);
  mkdirSync(dir, { recursive: true });
  const record = {
    schema: 1,
    crewId,
    issueNumber,
    timings: { startedAt: at.toISOString(), finishedAt: at.toISOString(), durationMs: 1 },
  };
  writeFileSync(join(dir, 'bookbag.json'), JSON.stringify(record, null, 2) + '\n');
  writeFileSync(join(dir, 'report.md'), `# Report for #${issueNumber}\n\nDone.\n`);
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, name), text);
}

/** A clone of `bare` with the state directory inside it, as a job's workspace would be. */
export function cloneWorkspace(bare: string, dir: string): { workspace: string; stateDir: string } {
  git(join(dir, '..'), 'clone', '-q', bare, dir);
  return { workspace: dir, stateDir: join(dir, '.school', 'state') };
}

/** A bare remote whose state branch holds one checkpoint of `writeGradingState`, and the workspace that saved it. */
export async function savedBranch(
  root: string,
): Promise<{ bare: string; w: { workspace: string; stateDir: string } }> {
  const { bare } = initBareRemote(root);
  const w = cloneWorkspace(bare, join(root, 'w'));
  await writeGradingState(w.stateDir);
  await saveCheckpoint({
    stateDir: w.stateDir,
    sources: [new BranchSource({ remote: bare })],
    compactAfterDays: 14,
  });
  return { bare, w };
}
