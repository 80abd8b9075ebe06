import { hostname } from 'node:os';
import type { SchoolConfig } from '../config/schema.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import type { GradingJob } from '../schemas/grading.js';
import type { StateLayout } from '../state/layout.js';
import { monotonicMs } from '../state/lock.js';
import { defaultGrader, type GradeFn } from './judges.js';
import { ScoreLedger } from './ledger.js';
import { redact, redactText } from '../security/redact.js';
import type { Deliverer } from '../delivery/deliver.js';
import { Outbox, type GitHubPort } from './outbox.js';
import { GradingQueue } from './queue.js';
import { missingOutboxEntries, outboxEntryCount, outboxPolicy } from './records.js';
import type { CommitRequest } from './commit.js';
import { GradingWriter } from './handover.js';
import type { Verdict } from './verdict.js';

/**
 * One drain (docs/grading.md, seed 000 §3.2): ONE snapshot of the pending jobs, worked through in
 * waves of at most `maxWorkers` jobs (never above the fleet's capacity, N6.1), each job attempted at
 * most once. Per job the effects happen in this order: claim → judge → ledger apply (idempotent) →
 * mark graded, with its outbox entries and observation. Every write goes through the grading
 * writer (handover.ts): one round under the grading lock settles the waves judged and claims the
 * next — whoever holds the lock writes the rounds of every drain waiting for it. A crash anywhere
 * leaves the job claimed; its lease expires, another drain delivers it again, and the ledger key
 * keeps the score single. `drain` never throws: a fatal condition (a corrupt ledger) stops it and
 * is returned as `fatal`.
 */
export type DrainStage = 'claimed' | 'judged' | 'scored' | 'graded';

export interface DrainOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  github?: GitHubPort;
  /** Delivers accepted work as a branch or pull request (src/delivery); absent: mode none. */
  delivery?: Deliverer;
  maxWorkers?: number;
  maxAttempts?: number;
  workerId?: string;
  now?: () => Date;
  /** The judges; defaults to verification → sealed tests → reviewer/rubric. */
  grade?: GradeFn;
  /** Observes progress per job (progress reporting; tests use it to crash at a chosen point). */
  onStage?: (stage: DrainStage, jobKey: string) => void | Promise<void>;
}

export interface DrainVerdict {
  jobKey: string;
  issueNumber: number;
  crewId: string;
  agent: string;
  accepted: boolean;
  decidedBy: string;
  code: string;
  reasons: string[];
  score: number;
}

export interface DrainResult {
  workers: number;
  snapshot: number;
  accepted: number;
  rejected: number;
  failed: number;
  deadLettered: number;
  outboxDelivered: number;
  outboxPending: number;
  verdicts: DrainVerdict[];
  errors: Array<{ jobKey: string; error: string }>;
  /**
   * Per request to the grading writer, how long it waited for the lock holder to write it (0 when
   * this drain wrote it itself), in ms: for benchmarks and diagnostics.
   */
  lockWaitsMs: number[];
  fatal?: string;
}

/** Fleet capacity = Σ worktrees over the configured daemons (N6.1). */
export function fleetCapacity(config: SchoolConfig): number {
  return config.fleet.daemons.reduce((n, d) => n + d.worktrees, 0);
}

export function defaultWorkerId(): string {
  return process.env.GITHUB_RUN_ID
    ? `actions:${process.env.GITHUB_RUN_ID}/${process.env.GITHUB_RUN_ATTEMPT ?? '1'}:${process.pid}`
    : `${hostname()}:${process.pid}`;
}

function verdictOf(job: GradingJob, verdict: Verdict): DrainVerdict {
  return {
    jobKey: job.jobKey,
    issueNumber: job.issueNumber,
    crewId: job.crewId,
    agent: job.agent,
    accepted: verdict.accepted,
    decidedBy: verdict.decidedBy,
    code: verdict.code,
    reasons: verdict.reasons,
    score: verdict.score,
  };
}

/**
 * A claimed batch judged within FAST_BATCH_MS makes the next claim twice as big, up to
 * MAX_BATCH_WAVES waves of `workers` jobs; judging stays at most `workers` jobs at once (N6.1).
 */
const FAST_BATCH_MS = 50;
const MAX_BATCH_WAVES = 8;

/** Runs `fn` over `items`, at most `limit` at once; results in the order of `items`. */
async function inPool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

/** Outbox entries and observations are recorded in batches: this many entries, or this old. */
const FLUSH_ENTRIES = 256;
const FLUSH_MS = 2_000;

export async function drain(o: DrainOptions): Promise<DrainResult> {
  const { config, layout, logger } = o;
  const now = o.now ?? (() => new Date());
  const worker = o.workerId ?? defaultWorkerId();
  const maxAttempts = o.maxAttempts ?? config.grading.maxAttempts;
  const workers = Math.max(1, Math.min(o.maxWorkers ?? config.grading.maxWorkers, fleetCapacity(config)));
  const grade = o.grade ?? defaultGrader({ config, layout });
  const warn = (m: string) => logger.warning(m);
  const ledger = new ScoreLedger(layout, warn);
  const outbox = new Outbox(layout);
  const stage = async (s: DrainStage, key: string) => {
    if (o.onStage) await o.onStage(s, key);
  };
  const r: DrainResult = {
    workers,
    snapshot: 0,
    accepted: 0,
    rejected: 0,
    failed: 0,
    deadLettered: 0,
    outboxDelivered: 0,
    outboxPending: 0,
    verdicts: [],
    errors: [],
    lockWaitsMs: [],
  };

  if (o.maxWorkers !== undefined && o.maxWorkers > workers) {
    logger.info(`max-workers ${o.maxWorkers} capped at the fleet capacity of ${workers} worktree(s)`);
  }
  const scoredInRound = new Set<string>();
  const safeWorker = redactText(worker);
  const policy = outboxPolicy(config, !!o.delivery);
  const writer = new GradingWriter({
    layout,
    queue: new GradingQueue(layout, warn),
    ledger,
    outbox,
    reconcile: (q, known, watermark) => missingOutboxEntries(policy, q, known, watermark),
    warn,
    // When this drain writes its own round: the point where its scores exist without their marks.
    onScored: async (requests) => {
      for (const q of requests.filter((q) => q.worker === safeWorker))
        for (const g of q.graded) {
          scoredInRound.add(g.jobKey);
          await stage('scored', g.jobKey);
        }
    },
  });
  const identity = GradingWriter.identity();
  const leaseMs = config.grading.leaseSeconds * 1000;
  /** The snapshot's keys not yet taken; undefined until the first claim takes the snapshot. */
  let candidates: string[] | undefined;
  /**
   * Jobs marked graded whose outbox entries (`entries` of them) and observations wait to be
   * recorded in a batch.
   */
  let later: { jobs: string[]; entries: number; since: number } = {
    jobs: [],
    entries: 0,
    since: monotonicMs(),
  };
  let ended = false;
  /** Jobs claimed at a time: `workers`, more while batches are judged quickly (see below). */
  let batch = workers;

  /**
   * One request to the grading writer: the wave just judged (scores, marks, failures), the next
   * wave to claim, and — when due — the outbox entries and observations waiting. `last`: the end
   * of this drain, or (`if-nothing-claimed`) its end unless the claim brings another wave.
   */
  const send = async (
    wave: Array<{ job: GradingJob; verdict: Verdict }>,
    failed: Array<{ jobKey: string; error: string }>,
    claim: boolean,
    last?: CommitRequest['last'],
  ) => {
    const at = now().toISOString();
    // A request holds redacted data only (CommitRequest): the verdicts are redacted here, once; the
    // writer derives the scores, outbox entries and observations from them and the jobs.
    const safe = wave.map(({ job, verdict }) => ({ job, verdict: redact(verdict) }));
    const entries = safe.reduce((n, { verdict }) => n + outboxEntryCount(policy, verdict.accepted), 0);
    const waiting = later.entries + entries;
    // Recorded now when due; with a request that may end the drain, recorded if it does.
    const when =
      last === 'always' ||
      waiting >= FLUSH_ENTRIES ||
      (waiting > 0 && monotonicMs() - later.since >= FLUSH_MS)
        ? 'now'
        : last && waiting > 0
          ? 'if-ending'
          : undefined;
    const request: CommitRequest = {
      id: writer.nextId(),
      worker: safeWorker,
      at,
      maxAttempts,
      ...identity,
      graded: safe.map(({ job, verdict }) => ({
        jobKey: job.jobKey,
        verdict,
        score: { alpha: config.grading.emaAlpha, at },
      })),
      failed: failed.map((f) => ({ jobKey: f.jobKey, error: redactText(f.error) })),
      ...(claim
        ? { claim: { ...(candidates ? { candidates } : {}), limit: batch, wave: workers, leaseMs } }
        : {}),
      ...(when
        ? { record: { jobs: [...later.jobs, ...safe.map(({ job }) => job.jobKey)], policy, when } }
        : {}),
      ...(last ? { last } : {}),
    };
    const { reply, waitedMs } = await writer.commit(request);
    r.lockWaitsMs.push(waitedMs);
    r.outboxPending = reply.outboxPending;
    ended ||= reply.ended;
    const record = when === 'now' || (when === 'if-ending' && reply.ended);
    if (record) later = { jobs: [], entries: 0, since: monotonicMs() };
    for (const w of reply.warnings) logger.warning(w);
    const gradedNow = new Set(reply.graded);
    for (const { job, verdict } of wave) {
      if (!scoredInRound.delete(job.jobKey)) await stage('scored', job.jobKey);
      await stage('graded', job.jobKey);
      if (!gradedNow.has(job.jobKey)) continue;
      if (verdict.accepted) r.accepted++;
      else r.rejected++;
      r.verdicts.push(verdictOf(job, verdict));
      if (!record) {
        later.jobs.push(job.jobKey);
        later.entries += outboxEntryCount(policy, verdict.accepted);
      }
    }
    if (failed.length > 0) {
      r.failed += reply.failed.length;
      r.deadLettered += reply.deadLettered.length;
      r.errors.push(...failed);
      for (const e of failed) logger.warning(`grading job ${e.jobKey} failed this drain: ${e.error}`);
    }
    const c = reply.claim;
    if (!c) return [];
    if (c.snapshot) {
      r.snapshot = c.snapshot.size;
      candidates = c.snapshot.remaining;
    } else candidates!.splice(0, c.consumed);
    r.deadLettered += c.deadLettered.length;
    for (const d of c.deadLettered)
      logger.warning(`grading job ${d.jobKey} is a dead letter: ${d.lastError}`);
    return c.claimed;
  };

  try {
    let claimed = await send([], [], true);
    while (claimed.length > 0) {
      const started = monotonicMs();
      const results = await inPool(claimed, workers, async (job) => {
        try {
          await stage('claimed', job.jobKey);
          const verdict = await grade(job);
          await stage('judged', job.jobKey);
          return { job, verdict };
        } catch (e) {
          return { job, error: message(e) };
        }
      });
      // A batch judged this fast: claim a bigger one next (fewer rounds; its later waves are leased
      // for longer, see ClaimOptions.wave); a slow one (real judges take seconds): one wave again.
      batch =
        monotonicMs() - started < FAST_BATCH_MS ? Math.min(batch * 2, workers * MAX_BATCH_WAVES) : workers;
      const wave = results.flatMap((w) => (w.verdict ? [{ job: w.job, verdict: w.verdict }] : []));
      const failed = results.flatMap((w) => (w.verdict ? [] : [{ jobKey: w.job.jobKey, error: w.error! }]));
      // One round settles this wave and claims the next; the drain ends with the round whose claim
      // comes back empty, or with its snapshot used up.
      const more = candidates!.length > 0;
      claimed = await send(wave, failed, more, more ? 'if-nothing-claimed' : 'always');
    }
    if (later.jobs.length > 0 || (!ended && r.verdicts.length + r.failed > 0))
      await send([], [], false, 'always');
  } catch (e) {
    r.fatal = message(e);
    logger.error(`grading stopped: ${r.fatal}`);
  }
  try {
    await writer.close();
  } catch (e) {
    logger.warning(`grading writer: ${message(e)}`);
  }
  await finish(o, r, outbox, now);
  return r;
}

/**
 * Outbox delivery (N7.2). The score view is the grading writer's (handover.ts): it rewrites it when
 * its tenure ends.
 */
async function finish(o: DrainOptions, r: DrainResult, outbox: Outbox, now: () => Date) {
  try {
    if (o.github || o.delivery) {
      const d = await outbox.deliver(o.github, {
        logger: o.logger,
        now,
        ...(o.delivery ? { delivery: o.delivery } : {}),
      });
      r.outboxDelivered = d.delivered;
      r.outboxPending = d.pending;
    } else if (r.lockWaitsMs.length === 0) r.outboxPending = outbox.pending().length;
  } catch (e) {
    o.logger.warning(`GitHub outbox not delivered: ${message(e)}; entries stay pending for the next drain`);
  }
}
