import { hostname } from 'node:os';
import type { Logger } from '../log.js';
import { event, isKnown } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import { monotonicMs } from '../state/lock.js';
import type { ScoreApplied, ScoreLedger } from './ledger.js';
import { appendObservationsHeld, observationOf, type Observation } from './observations.js';
import type { Outbox, OutboxEntry, OutboxState } from './outbox.js';
import { claimable } from './claims.js';
import { outboxEntries, scoreOf, type OutboxPolicy } from './records.js';
import type { GradingJob } from '../schemas/grading.js';
import type { GradingQueue, MarkedScore, QueueState } from './queue.js';
import type { Verdict } from './verdict.js';

/**
 * What a drain asks of the grading writer in one round (docs/grading.md, "Writer and handover"):
 * the verdicts to mark graded, the failures, the next wave to claim, and which graded jobs' outbox
 * entries and observations to record. Plain JSON: it travels through a file when another process
 * holds the grading lock (handover.ts). Every field holds redacted data only: the drain redacts its
 * verdicts and errors as it builds the request (drain.ts), so the mailbox holds no secret and a
 * round appends what it builds from requests without walking it again.
 *
 * A request carries verdicts, not what follows from them: the writer derives each job's score,
 * outbox entries and observation from the verdict and the job in the queue (records.ts), as it
 * does for the entries a crash left unrecorded. A request stays a few hundred bytes per job, and
 * the work is done by the one writer instead of once in every drain.
 */
export interface CommitRequest {
  id: string;
  worker: string;
  /** The drain's clock (ISO): the time of its events. */
  at: string;
  maxAttempts: number;
  /**
   * Verdicts to mark graded, each with the score event its mark carries (see MarkedScore). Their
   * scores are applied first, derived from the verdict and the job (records.ts `scoreOf`).
   */
  graded: Array<{ jobKey: string; verdict: Verdict; score: MarkedScore }>;
  failed: Array<{ jobKey: string; error: string }>;
  /**
   * The next jobs: up to `limit`, taken in order from `candidates` — or, without them, from the
   * drain's snapshot, taken in this round (the reply returns it) — and leased for `leaseMs` per
   * wave of `wave` jobs (see ClaimOptions.wave).
   */
  claim?: { candidates?: string[]; limit: number; wave: number; leaseMs: number };
  /**
   * The outbox entries (after `policy`) and observations of these graded jobs, recorded after the
   * marks are fsynced — `now`, or only `if-ending` (this request turns out to be the drain's
   * last): jobs marked in earlier rounds, and those of `graded` if this round marks them.
   */
  record?: { jobs: string[]; policy: OutboxPolicy; when: 'now' | 'if-ending' };
  /**
   * The drain's last request — `always`, or `if-nothing-claimed` for a request that settles all the
   * drain holds and claims a wave that may turn out empty: the scores and marks are fsynced before
   * the reply.
   */
  last?: 'always' | 'if-nothing-claimed';
  /** The requesting process, so a request whose process died claims nothing for it. */
  pid: number;
  host: string;
}

export interface CommitReply {
  id: string;
  /** Crews whose score this round applied (a crew already in the ledger is skipped). */
  applied: string[];
  /** Jobs this round marked graded (a second delivery's verdict is dropped). */
  graded: string[];
  failed: string[];
  deadLettered: string[];
  claim?: {
    /** The jobs claimed: what a judge needs of them. */
    claimed: GradingJob[];
    /** Jobs whose expired lease used their last attempt: dead letters now. */
    deadLettered: Array<{ jobKey: string; lastError: string }>;
    /** Candidates taken off the list (claimed, dead, or no longer claimable). */
    consumed: number;
    /** When the request took its snapshot here: its size and the keys left after this claim. */
    snapshot?: { size: number; remaining: string[] };
  };
  /** The drain ends with this request (see `last`): its grades are on the disk. */
  ended: boolean;
  /** Outbox entries waiting for delivery after this round. */
  outboxPending: number;
  /** Fail-soft problems (observations not recorded), for the requester's log. */
  warnings: string[];
}

export interface RoundContext {
  layout: StateLayout;
  queue: GradingQueue;
  ledger: ScoreLedger;
  outbox: Outbox;
  /**
   * Outbox entries of graded jobs that lack them (a writer killed between the marks and the
   * outbox entries), recorded in this writer's first round.
   */
  reconcile?: (queue: QueueState, outbox: OutboxState, watermark: string) => OutboxEntry[];
  /**
   * Called after the scores of the round are appended and before any mark: the one point where a
   * score exists without its mark (tests crash here; so can a real writer).
   */
  onScored?: (requests: readonly CommitRequest[]) => void | Promise<void>;
  /** Fail-soft problems of the writer itself (the score view not written). */
  warn?: (message: string) => void;
}

const hostName = hostname();

/**
 * One round of the grading writer, under the grading lock held by the caller (which also guards
 * `scores.jsonl` and `observations.jsonl`; `outbox.jsonl` keeps its own lock, shared with the
 * deliverer). In this order:
 *
 * 1. with a claim among the requests, the ledger is checked first (N5.2: a corrupt or quarantined
 *    ledger stops grading before anything is claimed);
 * 2. every request's scores, derived from its verdicts and the queue's jobs, in one append to
 *    `scores.jsonl`;
 * 3. every request's graded marks, failures and claims, in one append to `grading.jsonl`, decided
 *    request after request on the state the previous ones left (GradingQueue.settleHeld);
 * 4. when a request records outbox entries or ends its drain: one fsync of `grading.jsonl` (and
 *    of `scores.jsonl` for an ending drain), then the outbox entries and observations of jobs
 *    marked now or before, built from their marks, in one append each.
 *
 * `views/scores.json` is rewritten once per tenure of the writer, when it ends (handover.ts).
 *
 * Durability is that of SQLite's WAL with `synchronous=NORMAL`, plus an fsync before each drain
 * returns: every append is complete in the page cache before the reply — so a SIGKILL of any
 * process loses nothing acknowledged — and appends are fsynced only where the order matters to a
 * machine crash: the marks before the outbox entries that announce them (an entry must never
 * outlive its mark), and everything before a drain's last reply. A machine crash mid-drain may
 * keep a mark and lose its score: the writer's first round re-applies scores from the marks that
 * carry them. A score that lost its mark is a redelivery, which the ledger key absorbs. Outbox
 * entries lost with the page cache are recorded again from their marks (`reconcile`);
 * observations are fail-soft.
 *
 * Requests hold redacted data only (see CommitRequest), and a round builds every record it
 * appends from them and from the state (redacted on its way in): the appends skip a second
 * redaction walk.
 *
 * A throw before step 3 has appended leaves no mark and no claim behind, only scores, which a
 * retried request finds already applied.
 */
export async function commitRound(
  ctx: RoundContext & { reconciled?: boolean; seen?: Map<string, number>; viewStale?: boolean },
  requests: readonly CommitRequest[],
  /** The writer's own request, if any: while others are active its claims stay at one wave. */
  own?: CommitRequest,
): Promise<CommitReply[]> {
  if (requests.some((r) => r.claim)) ctx.ledger.check();
  const scores = requests.some((r) => r.graded.length > 0)
    ? scoresOf(ctx.queue.stateHeld(), requests)
    : requests.map(() => []);
  const applied = new Set(
    ctx.ledger.applyHeld(
      requests.map((r, i) => ({ items: scores[i]!, at: new Date(r.at) })),
      { sync: false, redacted: true },
    ),
  );
  if (applied.size > 0) ctx.viewStale = true;
  await ctx.onScored?.(requests);

  const share = fairShare(ctx, requests, own);
  const outcomes = ctx.queue.settleHeld(
    requests.map((r) => {
      const now = new Date(r.at);
      const claim =
        r.claim && alive(r)
          ? {
              ...(r.claim.candidates ? { candidates: [...r.claim.candidates] } : {}),
              options: {
                worker: r.worker,
                now,
                leaseMs: r.claim.leaseMs,
                wave: r.claim.wave,
                maxAttempts: r.maxAttempts,
                limit: share(r, r.claim.limit, r.claim.wave),
              },
            }
          : undefined;
      return {
        worker: r.worker,
        now,
        maxAttempts: r.maxAttempts,
        graded: r.graded,
        failed: r.failed,
        ...(claim ? { claim } : {}),
      };
    }),
    { redacted: true },
  );
  const ending = requests.map(
    (r, i) =>
      r.last === 'always' ||
      (r.last === 'if-nothing-claimed' && (outcomes[i]!.claim?.claimed.length ?? 0) === 0),
  );

  const outbox: OutboxEntry[] = [];
  const observations: Observation[] = [];
  let jobs: QueueState['jobs'] | undefined;
  requests.forEach((r, i) => {
    if (!r.record || (r.record.when === 'if-ending' && !ending[i])) return;
    // Only jobs this drain's marks graded: one of `graded` whose mark this round dropped (another
    // drain's verdict came first) announces nothing of this drain's.
    const asked = new Set(r.graded.map((g) => g.jobKey));
    const now = new Set(outcomes[i]!.graded);
    jobs ??= ctx.queue.stateHeld().jobs; // after this round's marks
    for (const key of r.record.jobs) {
      const j = jobs[key];
      if ((asked.has(key) && !now.has(key)) || j?.status !== 'graded' || !j.verdict) continue;
      outbox.push(...outboxEntries(r.record.policy, j.job, j.verdict));
      observations.push(observationOf(j.job, j.verdict, new Date(j.score?.at ?? r.at)));
    }
  });
  if (!ctx.reconciled) {
    const queue = ctx.queue.stateHeld();
    ctx.ledger.applyHeld(lostScores(queue, ctx.ledger), { sync: false, redacted: true });
    if (ctx.reconcile) outbox.push(...ctx.reconcile(queue, ctx.outbox.current(), ctx.outbox.watermark()));
    ctx.reconciled = true;
  }
  const end = ending.includes(true);
  if (end) ctx.ledger.sync();
  if (outbox.length > 0 || end) ctx.queue.sync();
  const last = requests.at(-1);
  await ctx.outbox.record(outbox, last ? new Date(last.at) : new Date(), { sync: false, redacted: true });
  const warnings: string[] = [];
  const warn: Pick<Logger, 'warning'> = { warning: (m) => warnings.push(m) };
  appendObservationsHeld(ctx.layout, observations, warn, { sync: false, redacted: true });
  let outboxPending = 0;
  for (const item of Object.values(ctx.outbox.current().items))
    if (item.status === 'pending') outboxPending++;

  return requests.map((r, i) => {
    const o = outcomes[i]!;
    return {
      id: r.id,
      applied: scores[i]!.filter((s) => applied.has(s.crewId)).map((s) => s.crewId),
      graded: o.graded,
      failed: o.failed,
      deadLettered: o.deadLettered,
      ...(r.claim
        ? {
            claim: o.claim
              ? {
                  claimed: o.claim.claimed.map((j) => j.job),
                  deadLettered: o.claim.deadLettered.map((j) => ({
                    jobKey: j.job.jobKey,
                    lastError: j.lastError ?? '',
                  })),
                  consumed: o.claim.consumed,
                  ...(o.claim.snapshot ? { snapshot: o.claim.snapshot } : {}),
                }
              : { claimed: [], deadLettered: [], consumed: r.claim.candidates?.length ?? 0 },
          }
        : {}),
      ended: ending[i]!,
      outboxPending,
      warnings,
    };
  });
}

/** A drain counts as active this long after its last request (for the fair share of claims). */
const ACTIVE_MS = 2_000;

/**
 * Claims bigger than one wave (a drain whose judge is fast, see drain.ts) are capped at a fair
 * share: the claimable jobs divided by the drains this writer saw lately. The writer's own drain
 * claims without a round trip, so it would take the queue and judge it on the core every round
 * runs on while the others wait: while others are active, it claims one wave at a time.
 */
function fairShare(
  ctx: RoundContext & { seen?: Map<string, number> },
  requests: readonly CommitRequest[],
  own: CommitRequest | undefined,
): (r: CommitRequest, limit: number, wave: number) => number {
  const seen = (ctx.seen ??= new Map());
  const now = monotonicMs();
  for (const r of requests) seen.set(r.worker, now);
  for (const [worker, at] of seen) if (now - at > ACTIVE_MS) seen.delete(worker);
  if (seen.size <= 1) return (_r, limit) => limit;
  let claimableJobs: number | undefined;
  return (r, limit, wave) => {
    if (limit <= wave) return limit;
    if (r === own) return wave;
    if (claimableJobs === undefined) {
      const at = new Date();
      claimableJobs = Object.values(ctx.queue.stateHeld().jobs).filter((j) => claimable(j, at)).length;
    }
    return Math.min(limit, Math.max(wave, Math.ceil(claimableJobs / seen.size)));
  };
}

/**
 * The scores of each request's verdicts. A verdict whose job the queue does not hold has its score
 * already: compaction drops graded jobs only, and a job is graded once its score is applied.
 */
function scoresOf(queue: QueueState, requests: readonly CommitRequest[]): ScoreApplied[][] {
  return requests.map((r) =>
    r.graded.flatMap((g) => {
      const j = queue.jobs[g.jobKey];
      return j ? [scoreOf(j.job, g.verdict, g.score.alpha)] : [];
    }),
  );
}

/** Scores carried by graded marks that the ledger lacks (lost with the page cache), with their times. */
function lostScores(queue: QueueState, ledger: ScoreLedger): Array<{ items: ScoreApplied[]; at: Date }> {
  const contents = ledger.log.readLatest();
  const lost: Array<{ items: ScoreApplied[]; at: Date }> = [];
  for (const j of Object.values(queue.jobs)) {
    if (j.status !== 'graded' || !j.score || !j.verdict) continue;
    const data = scoreOf(j.job, j.verdict, j.score.alpha);
    const at = new Date(j.score.at);
    if (!isKnown(contents, event('score.applied', `score:${data.crewId}`, data, at)))
      lost.push({ items: [data], at });
  }
  return lost;
}

/**
 * False when the requesting process is known to be gone (same host, no such process): its request
 * is still settled — its verdicts are facts — but nothing is claimed for it, since nobody would
 * grade those jobs before their leases expire.
 */
function alive(r: CommitRequest): boolean {
  if (r.pid === process.pid || r.host !== hostName) return true;
  try {
    process.kill(r.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
