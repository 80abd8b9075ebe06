import { statSync } from 'node:fs';
import { event, isKnown } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import { withLock } from '../state/lock.js';
import type { GradingJob } from '../schemas/grading.js';
import type { ScoreApplied, ScoreLedger } from './ledger.js';
import { appendObservationsHeld, observationOf } from './observations.js';
import type { Outbox, OutboxEntry } from '../outbox/outbox.js';
import type { ClaimOptions, GradingQueue, QueueState } from './queue.js';
import { missingOutboxEntries, movesScore, outboxEntries, scoreOf, type OutboxPolicy } from './records.js';
import type { Contests } from './contest.js';
import type { Verdict } from './verdict.js';

/**
 * One drain wave as one transaction under the grading lock (docs/grading.md, "Drain"): read the
 * tail of the grading files, decide, append, release. The lock (`grading.jsonl`'s) also guards
 * `scores.jsonl` and `observations.jsonl`; `outbox.jsonl` keeps its own lock, taken inside it.
 * Any number of drains of one state directory take turns at it, each deciding on what the others
 * appended before it, so two drains never claim the same job and a crew's score is applied once.
 */
export interface WaveContext {
  layout: StateLayout;
  files: WaveFiles;
  policy: OutboxPolicy;
  claim: WaveClaim;
  /** The EMA weight the scores carry. */
  alpha: number;
  /** Called after the wave's scores are appended and before its marks (tests crash here). */
  onScored?: (jobKeys: readonly string[]) => void | Promise<void>;
  /** What the drain's earlier transactions leave for its later ones. */
  drain: WaveDrainState;
}

/** The grading files a wave reads and appends to. */
export interface WaveFiles {
  queue: GradingQueue;
  ledger: ScoreLedger;
  outbox: Outbox;
  /** Contests (./contest.ts): their crews' entries wait for the decision, made here once complete. */
  contests?: Contests;
}

/** The terms of the drain's claims (redacted worker id, lease, attempts, workers); a wave adds its time. */
export type WaveClaim = Omit<ClaimOptions, 'now'>;

export interface WaveDrainState {
  /** Set once the drain has looked for what a crash left unrecorded (its first transaction). */
  reconciled?: boolean;
  /** Set when the drain applied scores: its last transaction rewrites `views/scores.json`. */
  viewStale?: boolean;
}

export interface WaveInput {
  /** The drain's clock: the time of this wave's events. */
  now: Date;
  /** The verdicts judged in the wave, redacted. */
  graded: ReadonlyArray<{ job: GradingJob; verdict: Verdict }>;
  /** The jobs whose grading failed in the wave, errors redacted. */
  failed: ReadonlyArray<{ jobKey: string; error: string }>;
  /** The drain's snapshot left to claim from; undefined: take the snapshot now. Empty: no claim. */
  candidates: readonly string[] | undefined;
}

export interface WaveOutcome {
  /** Jobs marked graded now (a verdict whose job another drain graded first is dropped). */
  graded: string[];
  failed: string[];
  deadLettered: string[];
  /** The next wave; empty when the drain is done. */
  claimed: GradingJob[];
  /** Jobs whose expired lease used their last attempt: dead letters now, not claimed. */
  expired: Array<{ jobKey: string; lastError: string }>;
  /** The size of the snapshot, when this transaction took it. */
  snapshot?: number;
  remaining: string[];
  /** Fail-soft problems (observations or the view not written). */
  warnings: string[];
  /** How long the transaction waited for the grading lock, in ms. */
  waitedMs: number;
}

/**
 * In this order, under the grading lock:
 *
 * 1. with a claim to make, the ledger is checked (N5.2: a corrupt or quarantined ledger stops
 *    grading before anything is claimed);
 * 2. the wave's scores, in one append to `scores.jsonl`, fsynced — only for jobs still in the
 *    queue and not graded (another drain that graded the job applied its score first);
 * 3. the graded marks, failures (with dead letters) and the next claim, in one append to
 *    `grading.jsonl`, fsynced: a mark never reaches the disk before its score;
 * 4. the outbox entries and observations of the jobs marked now, not fsynced: an entry lost with
 *    the page cache is recorded again from its mark, observations are fail-soft. In the drain's
 *    first transaction, also what a crash left unrecorded: the outbox entries of graded jobs that
 *    lack them, and scores carried by marks that the ledger lacks;
 * 5. in the drain's last transaction (nothing more claimed), `views/scores.json`, when the drain
 *    applied scores or the view is missing or older than the ledger.
 *
 * A crash anywhere leaves the wave's jobs claimed: after their lease another drain delivers them
 * again, and the keys of scores and marks make the second application a no-op (N2.3).
 */
export function commitWave(ctx: WaveContext, w: WaveInput): Promise<WaveOutcome> {
  return withLock(ctx.layout.file('grading'), async ({ waitedMs }) => {
    const claim = w.candidates === undefined || w.candidates.length > 0;
    if (claim) ctx.files.ledger.check();
    await applyScores(ctx, w);
    const settled = ctx.files.queue.settleHeld(settlement(ctx, w, claim), { redacted: true });
    const markedNow = new Set(settled.graded);
    const marked = w.graded.filter((g) => markedNow.has(g.job.jobKey));
    const entries = reconcile(ctx, w, marked);
    await ctx.files.outbox.record(entries, w.now, { sync: false, redacted: true });
    const warnings: string[] = [];
    const warn = { warning: (m: string) => warnings.push(m) };
    appendObservationsHeld(
      ctx.layout,
      marked.map((g) => observationOf(g.job, g.verdict, w.now)),
      warn,
      { sync: false, redacted: true },
    );

    const next = settled.claim;
    const claimed = next?.claimed.map((j) => j.job) ?? [];
    if (claimed.length === 0) writeView(ctx, warnings);
    return {
      graded: settled.graded,
      failed: settled.failed,
      deadLettered: settled.deadLettered,
      claimed,
      expired: (next?.deadLettered ?? []).map((j) => ({
        jobKey: j.job.jobKey,
        lastError: j.lastError ?? '',
      })),
      snapshot: next?.snapshot,
      remaining: next?.remaining ?? [],
      warnings,
      waitedMs,
    };
  });
}

/**
 * Step 2: the wave's scores, only for jobs still in the queue and not graded (another drain that
 * graded the job applied its score first).
 */
async function applyScores(ctx: WaveContext, w: WaveInput): Promise<void> {
  const jobs = ctx.files.queue.stateHeld().jobs;
  const scores = w.graded.flatMap(({ job, verdict }) => {
    const status = jobs[job.jobKey]?.status;
    return status && status !== 'graded' && movesScore(verdict) ? [scoreOf(job, verdict, ctx.alpha)] : [];
  });
  if (ctx.files.ledger.applyHeld(scores, w.now, { redacted: true }).length > 0) ctx.drain.viewStale = true;
  await ctx.onScored?.(w.graded.map((g) => g.job.jobKey));
}

/** Step 3: the graded marks, the failures and, when the drain goes on, the next claim. */
function settlement(
  ctx: WaveContext,
  w: WaveInput,
  claim: boolean,
): Parameters<GradingQueue['settleHeld']>[0] {
  const at = w.now.toISOString();
  return {
    worker: ctx.claim.worker,
    now: w.now,
    maxAttempts: ctx.claim.maxAttempts,
    graded: w.graded.map(({ job, verdict }) => ({
      jobKey: job.jobKey,
      verdict,
      score: { alpha: ctx.alpha, at },
    })),
    failed: w.failed,
    ...(claim
      ? {
          claim: {
            candidates: w.candidates,
            options: { ...ctx.claim, now: w.now },
          },
        }
      : {}),
  };
}

/**
 * Step 4: the outbox entries of the jobs marked now (a contest's crews wait for its decision); in
 * the drain's first transaction also what a crash left unrecorded; a contest's decision once all
 * its crews are graded or ended.
 */
function reconcile(ctx: WaveContext, w: WaveInput, marked: WaveInput['graded']): OutboxEntry[] {
  const contests = ctx.files.contests;
  const held = (job: GradingJob) => contests?.holds(job) ?? false;
  const entries = marked.flatMap((g) => (held(g.job) ? [] : outboxEntries(ctx.policy, g.job, g.verdict)));
  const first = !ctx.drain.reconciled;
  if (first) {
    const queue = ctx.files.queue.stateHeld();
    for (const lost of lostScores(queue, ctx.files.ledger))
      if (ctx.files.ledger.applyHeld([lost.score], lost.at, { redacted: true }).length > 0)
        ctx.drain.viewStale = true;
    const outbox = ctx.files.outbox.current();
    entries.push(
      ...missingOutboxEntries(ctx.policy, queue, outbox, ctx.files.outbox.watermark()).filter(
        (e) => !contests || !queue.jobs[e.jobKey] || !held(queue.jobs[e.jobKey]!.job),
      ),
    );
    if (contests)
      entries.push(
        ...contests.missing(
          ctx.files.ledger.state(),
          ctx.policy,
          queue,
          (id) => !!outbox.items[id],
          ctx.files.outbox.watermark(),
        ),
      );
    ctx.drain.reconciled = true;
  }
  // A contest is decided once all its crews are graded or ended: in the drain's first transaction
  // (crews that ended without a grade) and whenever a wave marks a contest crew.
  if (contests && (first || marked.some((g) => held(g.job)))) {
    const d = contests.settle(ctx.files.queue.stateHeld(), ctx.files.ledger.state(), ctx.policy, w.now);
    ctx.files.ledger.decideHeld(d.decided, w.now, { redacted: true });
    entries.push(...d.entries);
  }
  return entries;
}

/** Scores carried by graded marks that the ledger lacks (lost with the page cache), with their times. */
function lostScores(queue: QueueState, ledger: ScoreLedger): Array<{ score: ScoreApplied; at: Date }> {
  const contents = ledger.log.readLatest();
  const lost: Array<{ score: ScoreApplied; at: Date }> = [];
  for (const j of Object.values(queue.jobs)) {
    if (j.status !== 'graded' || !j.score || !j.verdict || !movesScore(j.verdict)) continue;
    const score = scoreOf(j.job, j.verdict, j.score.alpha);
    const at = new Date(j.score.at);
    if (!isKnown(contents, event('score.applied', `score:${score.crewId}`, score, at)))
      lost.push({ score, at });
  }
  return lost;
}

/**
 * `views/scores.json`, under the grading lock (so no older view is renamed over a newer one): when
 * this drain applied scores, or the view is missing or older than the ledger (a restore brings the
 * ledger, not the view).
 */
function writeView(ctx: WaveContext, warnings: string[]): void {
  const { ledger } = ctx.files;
  try {
    const view = statSync(ledger.layout.view('scores.json'), { throwIfNoEntry: false });
    const scores = statSync(ledger.log.path, { throwIfNoEntry: false });
    if (ctx.drain.viewStale || !view || (scores && scores.mtimeMs > view.mtimeMs)) ledger.writeView();
    ctx.drain.viewStale = false;
  } catch (e) {
    warnings.push(`could not write views/scores.json: ${(e as Error).message}`);
  }
}
