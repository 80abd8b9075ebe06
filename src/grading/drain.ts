import { hostname } from 'node:os';
import type { SchoolConfig } from '../config/schema.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import type { GradingJob } from '../schemas/grading.js';
import type { StateLayout } from '../state/layout.js';
import { defaultGrader, type GradeFn } from './judges.js';
import { ScoreLedger, type ScoreApplied } from './ledger.js';
import { observationOf, recordObservations, type Observation } from './observations.js';
import type { Deliverer } from '../delivery/deliver.js';
import { Outbox, resultComment, type GitHubPort, type OutboxEntry } from './outbox.js';
import { GradingQueue, pendingKeys, type ClaimOptions, type ClaimResult, type QueueState } from './queue.js';
import type { Verdict } from './verdict.js';

/**
 * One drain (docs/architecture.md, seed 000 §3.2): take ONE snapshot of the pending jobs and work through it
 * in waves of at most `maxWorkers` jobs (never above the fleet's capacity, N6.1), attempting each
 * job at most once. Per job the effects happen in this order: claim → judge → ledger apply
 * (idempotent) → mark graded → outbox record → observation. Marking a wave graded and claiming the
 * next one is one transaction on the queue log, and outbox records and observations are appended in
 * batches, so a wave costs two lock acquisitions (queue, ledger). A crash anywhere leaves the job claimed;
 * its lease expires, another drain delivers it again, and the ledger key keeps the score single.
 * `drain` never throws: a fatal condition (a corrupt ledger) stops it and is returned as `fatal`.
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
  /** Lock waits of the queue claims and ledger applies, in ms (for benchmarks and diagnostics). */
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

function outboxEntries(
  config: SchoolConfig,
  job: GradingJob,
  verdict: Verdict,
  deliver: boolean,
): OutboxEntry[] {
  const labels = [verdict.accepted ? config.grading.labels.accepted : config.grading.labels.rejected];
  const entries: OutboxEntry[] = [
    {
      id: `outbox:${job.jobKey}:labels`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'labels',
      labels,
    },
  ];
  if (config.grading.comment) {
    entries.push({
      id: `outbox:${job.jobKey}:comment`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'comment',
      body: resultComment(job.jobKey, job.crewId, verdict),
    });
  }
  if (deliver && verdict.accepted) {
    const { decidedBy, code, score, reasons } = verdict;
    entries.push({
      id: `outbox:${job.jobKey}:delivery`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'delivery',
      crewId: job.crewId,
      verdict: { decidedBy, code, score, reasons },
    });
  }
  return entries;
}

/** Graded jobs whose outbox entries were never recorded (a crash between the two): record them. */
async function reconcileOutbox(
  config: SchoolConfig,
  queue: QueueState,
  outbox: Outbox,
  now: Date,
  deliver: boolean,
) {
  const known = outbox.state().items;
  const missing: OutboxEntry[] = [];
  for (const j of Object.values(queue.jobs)) {
    if (j.status !== 'graded' || !j.verdict) continue;
    for (const e of outboxEntries(config, j.job, j.verdict, deliver)) if (!known[e.id]) missing.push(e);
  }
  await outbox.record(missing, now);
}

/** Outbox records and observations are flushed at this many entries or this age, and at the end. */
const FLUSH_ENTRIES = 256;
const FLUSH_MS = 2_000;
/** Waves held for one ledger fsync: up to this many jobs or this age (see the drain loop). */
const GROUP_JOBS = 64;
const GROUP_MS = 50;

export async function drain(o: DrainOptions): Promise<DrainResult> {
  const { config, layout, logger } = o;
  const now = o.now ?? (() => new Date());
  const worker = o.workerId ?? defaultWorkerId();
  const maxAttempts = o.maxAttempts ?? config.grading.maxAttempts;
  const workers = Math.max(1, Math.min(o.maxWorkers ?? config.grading.maxWorkers, fleetCapacity(config)));
  const grade = o.grade ?? defaultGrader({ config, layout });
  const warn = (m: string) => logger.warning(m);
  const queue = new GradingQueue(layout, warn);
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
  try {
    // N5.2: a corrupt or quarantined ledger stops grading before anything is claimed or written.
    ledger.state();
    const state = queue.state();
    await reconcileOutbox(config, state, outbox, now(), !!o.delivery);
    const candidates = pendingKeys(state, now());
    r.snapshot = candidates.length;
    if (o.maxWorkers !== undefined && o.maxWorkers > workers) {
      logger.info(`max-workers ${o.maxWorkers} capped at the fleet capacity of ${workers} worktree(s)`);
    }
    const claimOptions = (): ClaimOptions => ({
      worker,
      now: now(),
      leaseMs: config.grading.leaseSeconds * 1000,
      maxAttempts,
      limit: workers,
    });
    // Outbox records and observations are appended in batches: a crash before a batch is written
    // loses nothing, because the next drain records the outbox entries of every graded job that
    // lacks them (reconcileOutbox) and observations are fail-soft.
    const later: { outbox: OutboxEntry[]; observations: Observation[]; since: number } = {
      outbox: [],
      observations: [],
      since: performance.now(),
    };
    const flush = async () => {
      // The graded marks first reach the disk: an outbox entry must never outlive its mark.
      if (later.outbox.length > 0) queue.sync();
      const { outbox: entries, observations } = later;
      later.outbox = [];
      later.observations = [];
      later.since = performance.now();
      await outbox.record(entries, now());
      if (observations.length > 0) await recordObservations(layout, observations, logger);
    };
    const held: {
      judged: Array<{ job: GradingJob; verdict: Verdict }>;
      errors: Array<{ jobKey: string; error: string }>;
      since: number;
    } = { judged: [], errors: [], since: performance.now() };
    /** Makes the held waves' scores durable, marks them graded and (optionally) claims the next wave. */
    const commit = async (claimNext: boolean): Promise<ClaimResult | undefined> => {
      const { judged, errors } = held;
      held.judged = [];
      held.errors = [];
      held.since = performance.now();
      if (judged.length > 0) ledger.sync();
      // One transaction ends the held waves and claims the next: graded marks, failures, claims.
      const settled = await queue.settle(
        { graded: judged.map(({ job, verdict }) => ({ jobKey: job.jobKey, verdict })), failed: errors },
        { worker, now: now(), maxAttempts },
        claimNext ? { candidates, options: claimOptions() } : undefined,
      );
      const gradedNow = new Set(settled.graded);
      for (const { job } of judged) await stage('graded', job.jobKey);
      const fresh = judged.filter(({ job }) => gradedNow.has(job.jobKey));
      for (const { job, verdict } of fresh) {
        if (verdict.accepted) r.accepted++;
        else r.rejected++;
        r.verdicts.push({
          jobKey: job.jobKey,
          issueNumber: job.issueNumber,
          crewId: job.crewId,
          agent: job.agent,
          accepted: verdict.accepted,
          decidedBy: verdict.decidedBy,
          code: verdict.code,
          reasons: verdict.reasons,
          score: verdict.score,
        });
      }
      if (errors.length > 0) {
        r.failed += settled.failed.length;
        r.deadLettered += settled.deadLettered.length;
        r.errors.push(...errors);
        for (const e of errors) logger.warning(`grading job ${e.jobKey} failed this drain: ${e.error}`);
      }
      later.outbox.push(
        ...fresh.flatMap(({ job, verdict }) => outboxEntries(config, job, verdict, !!o.delivery)),
      );
      later.observations.push(...fresh.map(({ job, verdict }) => observationOf(job, verdict, now())));
      if (later.outbox.length >= FLUSH_ENTRIES || performance.now() - later.since >= FLUSH_MS) await flush();
      return settled.claim;
    };
    let claim: ClaimResult | undefined =
      candidates.length > 0 ? await queue.claim(candidates, claimOptions()) : undefined;
    while (claim) {
      r.lockWaitsMs.push(claim.lockWaitMs);
      r.deadLettered += claim.deadLettered.length;
      for (const d of claim.deadLettered)
        logger.warning(`grading job ${d.job.jobKey} is a dead letter: ${d.lastError}`);
      if (claim.claimed.length === 0) {
        claim = candidates.length > 0 ? await queue.claim(candidates, claimOptions()) : undefined;
        continue;
      }
      const wave = await Promise.all(
        claim.claimed.map(async ({ job }) => {
          try {
            await stage('claimed', job.jobKey);
            const verdict = await grade(job);
            await stage('judged', job.jobKey);
            return { job, verdict };
          } catch (e) {
            return { job, error: message(e) };
          }
        }),
      );
      const judged = wave.filter((w): w is { job: GradingJob; verdict: Verdict } => 'verdict' in w);
      const scores: ScoreApplied[] = judged.map(({ job, verdict }) => ({
        crewId: job.crewId,
        jobKey: job.jobKey,
        agent: job.agent,
        domain: job.domain,
        difficulty: job.difficulty,
        accepted: verdict.accepted,
        score: verdict.score,
        alpha: config.grading.emaAlpha,
      }));
      // Group commit: scores are appended without an fsync and waves are held until one fsync
      // of the ledger covers them all; only then are they marked graded (a mark must never reach
      // the disk without its score). With real judges a wave takes longer than GROUP_MS, so each
      // wave commits on its own.
      const applied = await ledger.apply(scores, now(), { sync: false });
      if (scores.length > 0) r.lockWaitsMs.push(applied.lockWaitMs);
      for (const { job } of judged) await stage('scored', job.jobKey);
      held.judged.push(...judged);
      held.errors.push(
        ...wave.flatMap((w) =>
          'error' in w && w.error !== undefined ? [{ jobKey: w.job.jobKey, error: w.error }] : [],
        ),
      );
      const due =
        candidates.length === 0 ||
        held.judged.length + held.errors.length >= GROUP_JOBS ||
        performance.now() - held.since >= GROUP_MS;
      if (due) claim = await commit(candidates.length > 0);
      else claim = await queue.claim(candidates, claimOptions());
    }
    if (held.judged.length + held.errors.length > 0) await commit(false);
    queue.sync();
    await flush();
  } catch (e) {
    r.fatal = message(e);
    logger.error(`grading stopped: ${r.fatal}`);
  }
  await finish(o, r, ledger, outbox, now);
  return r;
}

/** Outbox delivery and views: best effort, after the grades are durable (N7.2). */
async function finish(o: DrainOptions, r: DrainResult, ledger: ScoreLedger, outbox: Outbox, now: () => Date) {
  try {
    if (o.github || o.delivery) {
      const d = await outbox.deliver(o.github, {
        logger: o.logger,
        now,
        ...(o.delivery ? { delivery: o.delivery } : {}),
      });
      r.outboxDelivered = d.delivered;
    }
    r.outboxPending = outbox.pending().length;
  } catch (e) {
    o.logger.warning(`GitHub outbox not delivered: ${message(e)}; entries stay pending for the next drain`);
  }
  if (r.fatal) return;
  try {
    ledger.writeView();
  } catch (e) {
    o.logger.warning(`could not write views/scores.json: ${message(e)}`);
  }
}
