import { event } from '../state/event-log.js';
import { boundError } from '../security/bound.js';
import {
  type ClaimOptions,
  type JobClaimed,
  type JobState,
  type QueueEvent,
  type QueueRequest,
  type QueueState,
} from './queue.js';

/**
 * The queue's decisions, pure over a folded state: which candidates a claim takes (and which
 * expired leases count as failed drains or dead letters), and what a failed drain records. The
 * queue makes them under its log's lock and appends the events they return (queue.ts).
 */
/** Whether a job may be claimed at `now`: pending, or claimed under a lease that has expired. */
export function claimable(j: JobState, now: Date): boolean {
  if (j.status === 'pending') return true;
  if (j.status !== 'claimed' || !j.lease) return false;
  const until = j.lease.leaseUntil;
  // Leases are written by toISOString: same-length ISO times order as strings, without a parse.
  const at = isoOf(now);
  return until.length === at.length ? until <= at : Date.parse(until) <= now.getTime();
}

let lastNow: { date: Date; iso: string } | undefined;
function isoOf(date: Date): string {
  if (lastNow?.date !== date) lastNow = { date, iso: date.toISOString() };
  return lastNow.iso;
}

/**
 * The claim decision (see GradingQueue.claim), pure over a folded state. Takes candidates off the
 * front of `candidates` until `limit` jobs are claimed.
 */
export function decideClaims(state: QueueState, candidates: string[], o: ClaimOptions) {
  const append: QueueEvent[] = [];
  const claimed: JobState[] = [];
  const deadLettered: JobState[] = [];
  while (candidates.length > 0 && claimed.length < o.limit) {
    const key = candidates.shift()!;
    const j = state.jobs[key];
    if (!j || !claimable(j, o.now)) continue;
    let attempts = j.attempts;
    let lastError = j.lastError ?? '';
    if (j.status === 'claimed' && j.lease) {
      lastError = boundError(
        `lease of ${j.lease.worker} expired at ${j.lease.leaseUntil} without a verdict (drainer lost)`,
      );
      append.push(
        event(
          'job.failed',
          `failed:${key}:${j.claims}`,
          { jobKey: key, worker: j.lease.worker, attempt: j.lease.attempt, error: lastError },
          o.now,
        ),
      );
      attempts++;
      if (attempts >= o.maxAttempts) {
        append.push(deadEvent(key, j.cycle, attempts, lastError, o.now));
        deadLettered.push({ ...j, status: 'dead_letter', attempts, lastError });
        continue;
      }
    }
    const claim: JobClaimed = {
      jobKey: key,
      worker: o.worker,
      attempt: attempts + 1,
      leaseUntil: new Date(o.now.getTime() + o.leaseMs).toISOString(),
    };
    append.push(event('job.claimed', `claim:${key}:${j.claims + 1}`, claim, o.now));
    claimed.push({
      ...j,
      status: 'claimed',
      attempts,
      claims: j.claims + 1,
      lease: { worker: claim.worker, attempt: claim.attempt, leaseUntil: claim.leaseUntil },
    });
  }
  return { append, claimed, deadLettered };
}

/** The failure decision (see GradingQueue.markFailed), pure over a folded state. */
export function decideFailures(
  state: QueueState,
  items: Array<{ jobKey: string; error: string }>,
  o: { worker: string; now: Date; maxAttempts: number },
) {
  const append: QueueEvent[] = [];
  const failed: string[] = [];
  const deadLettered: string[] = [];
  for (const item of items) {
    const j = state.jobs[item.jobKey];
    // Someone else took the job over (our lease expired) or it is done: theirs is the truth.
    if (!j || j.status !== 'claimed' || j.lease?.worker !== o.worker) continue;
    const error = boundError(item.error);
    append.push(
      event(
        'job.failed',
        `failed:${item.jobKey}:${j.claims}`,
        { jobKey: item.jobKey, worker: o.worker, attempt: j.lease.attempt, error },
        o.now,
      ),
    );
    if (j.attempts + 1 >= o.maxAttempts) {
      append.push(deadEvent(item.jobKey, j.cycle, j.attempts + 1, error, o.now));
      deadLettered.push(item.jobKey);
    } else failed.push(item.jobKey);
  }
  return { append, failed, deadLettered };
}

export function deadEvent(jobKey: string, cycle: number, attempts: number, lastError: string, now: Date) {
  return event('job.dead_lettered', `dead:${jobKey}:${cycle}`, { jobKey, attempts, lastError }, now);
}

/**
 * A wave's events: its graded marks, its failures, then its claims taken from `candidates` (see
 * GradingQueue.settleHeld). The claims are decided on the state before the marks and failures: a
 * drain never has a job of its wave among its candidates (a claim takes it off them).
 */
export function decideSettle(state: QueueState, r: QueueRequest, candidates: string[]) {
  const append: QueueEvent[] = r.graded.map((i) =>
    event(
      'job.graded',
      `graded:${i.jobKey}`,
      { jobKey: i.jobKey, worker: r.worker, verdict: i.verdict, score: i.score },
      r.now,
    ),
  );
  const fails = decideFailures(state, [...r.failed], r);
  append.push(...fails.append);
  let claim: { claimed: JobState[]; deadLettered: JobState[] } | undefined;
  if (r.claim) {
    const c = decideClaims(state, candidates, r.claim.options);
    append.push(...c.append);
    claim = { claimed: c.claimed, deadLettered: c.deadLettered };
  }
  return { append, failed: fails.failed, deadLettered: fails.deadLettered, claim };
}
