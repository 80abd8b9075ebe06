import type { SchoolConfig } from '../config/schema.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import type { GradingJob } from '../schemas/grading.js';
import type { StateLayout } from '../state/layout.js';
import { defaultGrader, type GradeFn } from './judges.js';
import type { CleanVerify } from './judge-verify.js';
import type { InstalledDependencies } from './sealed-run.js';
import { ScoreLedger } from './ledger.js';
import { redact, redactText } from '../security/redact.js';
import { Outbox } from '../outbox/outbox.js';
import { GradingQueue, pendingKeys } from './queue.js';
import type { DrainProgress } from './progress.js';
import { outboxPolicy } from './records.js';
import type { Verdict } from './verdict.js';
import { commitWave, type WaveContext, type WaveOutcome } from './wave.js';
import { Contests } from './contest.js';
import { hostEnvOf } from '../process/env.js';
import { LOCAL_RUN, workerId, type RunContext } from '../process/run-context.js';

/**
 * One drain (docs/grading.md, seed 000 §3.2): ONE snapshot of the pending jobs, worked through in
 * waves of at most `maxWorkers` jobs (never above the fleet's capacity, N6.1), each job attempted at
 * most once. Per job the effects happen in this order: claim → judge → ledger apply (idempotent) →
 * mark graded, with its outbox entries and observation. One transaction under the grading lock
 * (wave.ts) settles a wave and claims the next; the judges run outside it. A crash anywhere
 * leaves the job claimed; its lease expires, another drain delivers it again, and the ledger key
 * keeps the score single. `drain` never throws: a fatal condition (a corrupt ledger) stops it and
 * is returned as `fatal`.
 *
 * Grading ends at the ledger: a drain records its waves' outbox entries and delivers nothing. The
 * feedback watch, the outbox delivery and the status refresh are the loop's step after it
 * (src/loop/after-grading.ts), once per cycle.
 */
export type DrainStage = 'claimed' | 'judged' | 'scored' | 'graded';

export interface DrainOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  /**
   * Accepted work is recorded for delivery as a branch or pull request (a Deliverer is configured:
   * src/delivery/setup.ts); the step after grading delivers it. Default false (delivery mode none).
   */
  deliver?: boolean;
  /** The drain's clock: the time of its claims, leases and events. Default the wall clock. */
  now?: () => Date;
  limits?: DrainLimits;
  judging?: DrainJudging;
  worker?: DrainWorker;
  observe?: DrainObservers;
}

/** How many jobs are judged at once, and how often one job is tried. Default: `grading` in the config. */
export interface DrainLimits {
  /** Capped at the fleet's capacity (N6.1). */
  maxWorkers?: number;
  maxAttempts?: number;
}

/** Which jobs are judged, and by what. */
export interface DrainJudging {
  /** The judges; defaults to verification → sealed tests → evidence → reviewer/rubric. */
  grade?: GradeFn;
  /**
   * The default judges' clean-checkout verification (src/crew/checkout/clean-checkout.ts, injected: grading
   * sits below crew): the evidence judge runs a patch's added tests at the base with it.
   */
  verifyOnCleanCheckout?: CleanVerify;
  /** The base's installed dependencies, for a sealed suite laid into the checkout (injected too). */
  installedDependencies?: InstalledDependencies;
  /**
   * Only these jobs are claimed (the grade job: those with a usable verdict from the judge job);
   * the others stay pending, their attempts untouched. Default: every pending job.
   */
  only?: (jobKey: string) => boolean;
}

/** Who drains, and on what host. */
export interface DrainWorker {
  /**
   * The run (src/process/run-context.ts): the default judges take PATH, HOME, the tool cache and
   * agent keys from its host environment. Default: this process's (src/process/env.ts hostEnvOf).
   */
  context?: RunContext;
  /** The id on its grading leases; default `workerId(context)`: this host and pid outside Actions. */
  id?: string;
}

/** Who watches the drain as it goes. */
export interface DrainObservers {
  /** Prints which job of how many is being judged, and how long (./progress.ts). */
  progress?: DrainProgress;
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
  verdicts: DrainVerdict[];
  errors: Array<{ jobKey: string; error: string }>;
  /** Per wave transaction, how long it waited for the grading lock, in ms (diagnostics). */
  lockWaitsMs: number[];
  fatal?: string;
}

/** Fleet capacity = Σ worktrees over the configured daemons (N6.1). */
export function fleetCapacity(config: SchoolConfig): number {
  return config.fleet.daemons.reduce((n, d) => n + d.worktrees, 0);
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

export async function drain(o: DrainOptions): Promise<DrainResult> {
  const { config, logger } = o;
  const now = o.now ?? (() => new Date());
  const { maxWorkers } = o.limits ?? {};
  const { only } = o.judging ?? {};
  const { progress, onStage } = o.observe ?? {};
  const workers = Math.max(1, Math.min(maxWorkers ?? config.grading.maxWorkers, fleetCapacity(config)));
  const grade =
    o.judging?.grade ??
    defaultGrader({
      config,
      layout: o.layout,
      host: hostEnvOf(o.worker?.context),
      verifyOnCleanCheckout: o.judging?.verifyOnCleanCheckout,
      installedDependencies: o.judging?.installedDependencies,
    });
  const stage: Stage = async (s, key) => {
    if (onStage) await onStage(s, key);
  };
  const r: DrainResult = {
    workers,
    snapshot: 0,
    accepted: 0,
    rejected: 0,
    failed: 0,
    deadLettered: 0,
    verdicts: [],
    errors: [],
    lockWaitsMs: [],
  };

  if (maxWorkers !== undefined && maxWorkers > workers) {
    logger.info(`max-workers ${maxWorkers} capped at the fleet capacity of ${workers} worktree(s)`);
  }
  const ctx = waveContext(o, workers, stage);
  /** The snapshot's keys not yet taken; undefined until the first transaction takes the snapshot. */
  let candidates: readonly string[] | undefined;

  /** One transaction: settles the wave just judged and claims the next (none when done). */
  const settle = async (judged: Judged[], failed: Failed[]): Promise<GradingJob[]> => {
    const w = await commitWave(ctx, {
      now: now(),
      // Redacted once, here: the transaction appends what it builds from them without a second walk.
      graded: judged.map(({ job, verdict }) => ({ job, verdict: redact(verdict) })),
      failed: failed.map((f) => ({ jobKey: f.jobKey, error: redactText(f.error) })),
      candidates,
    });
    await tally(r, w, { judged, failed }, { logger, progress }, stage);
    candidates = w.remaining;
    return w.claimed;
  };

  try {
    if (only) {
      // Taken here, not under the lock: the claim checks each candidate again under it.
      candidates = pendingKeys(ctx.files.queue.state(), now()).filter(only);
      r.snapshot = candidates.length;
    }
    let claimed = await settle([], []);
    while (claimed.length > 0) {
      const results = await inPool(claimed, workers, (job) => judge(job, grade, stage, progress));
      claimed = await settle(
        results.flatMap((w) => (w.verdict ? [{ job: w.job, verdict: w.verdict }] : [])),
        results.flatMap((w) => (w.verdict ? [] : [{ jobKey: w.job.jobKey, error: w.error! }])),
      );
    }
  } catch (e) {
    r.fatal = message(e);
    logger.error(`grading stopped: ${r.fatal}`);
  }
  progress?.stop();
  return r;
}

type Stage = (s: DrainStage, key: string) => Promise<void>;
type Judged = { job: GradingJob; verdict: Verdict };
type Failed = { jobKey: string; error: string };

/** What every transaction of one drain shares: the logs, the outbox policy, the claim's terms. */
function waveContext(o: DrainOptions, workers: number, stage: Stage): WaveContext {
  const { config, layout, logger } = o;
  const warn = (m: string) => logger.warning(m);
  return {
    layout,
    files: {
      queue: new GradingQueue(layout, warn),
      ledger: new ScoreLedger(layout, warn),
      outbox: new Outbox(layout),
      contests: new Contests(layout, warn, config.dispatch.gradingReserveSeconds * 1000),
    },
    policy: outboxPolicy(config, o.deliver ?? false),
    claim: {
      worker: redactText(o.worker?.id ?? workerId(o.worker?.context ?? LOCAL_RUN)),
      maxAttempts: o.limits?.maxAttempts ?? config.grading.maxAttempts,
      leaseMs: config.grading.leaseSeconds * 1000,
      limit: workers,
    },
    alpha: config.grading.emaAlpha,
    onScored: async (keys) => {
      for (const key of keys) await stage('scored', key);
    },
    drain: {},
  };
}

/** One claimed job judged; an error is the job's failure this drain, never the drain's. */
async function judge(
  job: GradingJob,
  grade: GradeFn,
  stage: Stage,
  progress: DrainObservers['progress'],
): Promise<{ job: GradingJob; verdict?: Verdict; error?: string }> {
  try {
    await stage('claimed', job.jobKey);
    progress?.started(job.jobKey);
    const verdict = await grade(job).finally(() => progress?.finished(job.jobKey));
    await stage('judged', job.jobKey);
    return { job, verdict };
  } catch (e) {
    return { job, error: message(e) };
  }
}

/** Counts and logs what one transaction settled: verdicts, failures, dead letters, the snapshot. */
async function tally(
  r: DrainResult,
  w: WaveOutcome,
  wave: { judged: Judged[]; failed: Failed[] },
  o: { logger: Logger; progress?: DrainProgress | undefined },
  stage: Stage,
): Promise<void> {
  const { logger } = o;
  r.lockWaitsMs.push(w.waitedMs);
  for (const m of w.warnings) logger.warning(m);
  const gradedNow = new Set(w.graded);
  for (const { job, verdict } of wave.judged) {
    await stage('graded', job.jobKey);
    if (!gradedNow.has(job.jobKey)) continue;
    if (verdict.accepted) r.accepted++;
    else r.rejected++;
    r.verdicts.push(verdictOf(job, verdict));
  }
  if (wave.failed.length > 0) {
    r.failed += w.failed.length;
    r.deadLettered += w.deadLettered.length;
    r.errors.push(...wave.failed);
    for (const e of wave.failed) logger.warning(`grading job ${e.jobKey} failed this drain: ${e.error}`);
  }
  if (w.snapshot !== undefined) r.snapshot = w.snapshot;
  o.progress?.total(r.snapshot);
  r.deadLettered += w.expired.length;
  for (const d of w.expired) logger.warning(`grading job ${d.jobKey} is a dead letter: ${d.lastError}`);
}
