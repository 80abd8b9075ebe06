import { SchoolError } from '../errors.js';
import type { GradingJob, GradingEvent } from '../schemas/grading.js';
import { EventLog, event, freshEvents, type LogContents } from '../state/event-log.js';
import { byCodePoint, foldLog, registerFold, type LogFold } from '../state/fold.js';
import type { Warn } from '../state/jsonl.js';
import type { StateLayout } from '../state/layout.js';
import { redactText } from '../security/redact.js';
import type { Verdict } from './verdict.js';
import { claimable, decideSettle, overlay } from './claims.js';
import { withLock } from '../state/lock.js';

export { claimable } from './claims.js';

/**
 * The grading queue (docs/architecture.md, seed 000 §3.2): a fold of `grading.jsonl`. Enqueue is deduplicated
 * by key (enqueue.ts); delivery is at-least-once with a lease per job; failed drains are counted
 * and a job that used its budget becomes a dead letter that only an operator requeues.
 *
 * Keys: `grade:<issue>:<crew>` (enqueued), `claim:<job>:<n>`, `failed:<job>:<n>`, `graded:<job>`,
 * `dead:<job>:<cycle>`, `requeued:<job>:<cycle>`. `n` counts claims, `cycle` counts requeues, so
 * every fact has exactly one key and a replay of any of them is a no-op.
 */
export type JobStatus = 'pending' | 'claimed' | 'graded' | 'dead_letter';

/** Errors kept in state are redacted and bounded: a stack trace must not grow the checkpoint. */
export const MAX_ERROR_LENGTH = 500;

export interface JobLease {
  worker: string;
  attempt: number;
  leaseUntil: string;
}

export interface JobState {
  job: GradingJob;
  status: JobStatus;
  /** Failed drains in the current cycle (reset by a requeue). */
  attempts: number;
  /** Claims ever made: numbers claim and failure keys. */
  claims: number;
  /** Requeues so far. */
  cycle: number;
  lease?: JobLease;
  lastError?: string;
  /** Kept across requeues so an operator sees why the job was dead before. */
  previousFailure?: string;
  verdict?: Verdict;
  /** The score applied for this job, as its graded mark carries it (marks written before it lack it). */
  score?: MarkedScore;
  enqueuedAt: string;
  updatedAt: string;
}

/**
 * A graded mark carries what its job's score event needs beyond the job and the verdict (records.ts
 * `scoreOf`): the EMA weight and the event's time. Appends are not fsynced one by one, so after a
 * machine crash a mark may survive its score; the writer then applies the score again from the
 * mark (the same key and time: a no-op when the ledger has it). Marks written before carry none.
 */
export interface MarkedScore {
  alpha: number;
  at: string;
}

export interface QueueState {
  jobs: Record<string, JobState>;
}

export interface JobClaimed {
  jobKey: string;
  worker: string;
  attempt: number;
  leaseUntil: string;
}
export interface JobGraded {
  jobKey: string;
  worker: string;
  verdict: Verdict;
  score?: MarkedScore;
}
export interface JobFailed {
  jobKey: string;
  worker: string;
  attempt: number;
  error: string;
}
export interface JobDeadLettered {
  jobKey: string;
  attempts: number;
  lastError: string;
}
export interface JobRequeued {
  jobKey: string;
  previousFailure: string;
}

export type QueueEvent =
  | GradingEvent
  | ReturnType<typeof event<'job.claimed', JobClaimed>>
  | ReturnType<typeof event<'job.graded', JobGraded>>
  | ReturnType<typeof event<'job.failed', JobFailed>>
  | ReturnType<typeof event<'job.dead_lettered', JobDeadLettered>>
  | ReturnType<typeof event<'job.requeued', JobRequeued>>;

export function boundError(text: string): string {
  const clean = redactText(text).replace(/\s+/g, ' ').trim();
  return clean.length > MAX_ERROR_LENGTH ? `${clean.slice(0, MAX_ERROR_LENGTH - 1)}…` : clean;
}

export const queueFold: LogFold<QueueState, QueueEvent> = registerFold<QueueState, QueueEvent>({
  file: 'grading',
  empty: () => ({ jobs: {} }),
  apply(state, e) {
    const d = e.data as Record<string, unknown>;
    if (e.type === 'job.enqueued') {
      const job = d as unknown as GradingJob;
      if (!state.jobs[job.jobKey]) {
        state.jobs[job.jobKey] = {
          job,
          status: 'pending',
          attempts: 0,
          claims: 0,
          cycle: 0,
          enqueuedAt: e.at,
          updatedAt: e.at,
        };
      }
      return state;
    }
    const j = state.jobs[String(d.jobKey)];
    if (!j || j.status === 'graded') return state; // graded is terminal: late events are history
    j.updatedAt = e.at;
    switch (e.type) {
      case 'job.claimed': {
        const c = d as unknown as JobClaimed;
        if (j.status === 'dead_letter') break;
        j.status = 'claimed';
        j.claims += 1;
        j.lease = { worker: c.worker, attempt: c.attempt, leaseUntil: c.leaseUntil };
        break;
      }
      case 'job.failed': {
        const f = d as unknown as JobFailed;
        if (j.status === 'dead_letter') break;
        j.attempts += 1;
        j.lastError = f.error;
        j.status = 'pending';
        delete j.lease;
        break;
      }
      case 'job.graded': {
        const g = d as unknown as JobGraded;
        j.status = 'graded';
        j.verdict = g.verdict;
        if (g.score) j.score = g.score;
        delete j.lease;
        break;
      }
      case 'job.dead_lettered': {
        j.status = 'dead_letter';
        j.lastError = (d as unknown as JobDeadLettered).lastError;
        delete j.lease;
        break;
      }
      case 'job.requeued': {
        if (j.status !== 'dead_letter') break;
        j.status = 'pending';
        j.attempts = 0;
        j.cycle += 1;
        j.previousFailure = (d as unknown as JobRequeued).previousFailure;
        break;
      }
    }
    return state;
  },
  prune(state, _horizon, scope) {
    // Pending, claimed and dead-lettered jobs are live and must survive compaction. Graded jobs are
    // history (a replay of their events is below the snapshot's watermark), except the two latest
    // of each open issue: the crew registry keeps an open issue's last two crews, and their
    // verdicts decide the issue's repair and the board's accepted and rejected lanes. Those keep
    // the verdict without its findings, and no score (the ledger applied it).
    const open = scope?.openIssues;
    const graded = new Map<number, Array<[string, JobState]>>();
    for (const [k, j] of Object.entries(state.jobs)) {
      if (j.status !== 'graded' || !open?.has(j.job.issueNumber)) continue;
      const list = graded.get(j.job.issueNumber) ?? [];
      list.push([k, j]);
      graded.set(j.job.issueNumber, list);
    }
    const kept = new Set<string>();
    for (const list of graded.values()) {
      list.sort(([ka, a], [kb, b]) => byCodePoint(b.enqueuedAt, a.enqueuedAt) || byCodePoint(kb, ka));
      for (const [k] of list.slice(0, 2)) kept.add(k);
    }
    const jobs: Record<string, JobState> = {};
    for (const [k, j] of Object.entries(state.jobs)) {
      if (j.status !== 'graded') jobs[k] = j;
      else if (kept.has(k)) jobs[k] = verdictOnly(j);
    }
    return { jobs };
  },
  // Every key is created once, at its own time: an enqueue when a crew finishes (import refuses a
  // bookbag older than this log's watermark), claims/failures/grades numbered from a job the fold
  // keeps while it is live. So an old event can only return as a stale copy: a watermark suffices.
  dedup: 'watermark',
});

/** A graded job as compaction keeps it: what its issue's state and the board read. */
function verdictOnly(j: JobState): JobState {
  const { score: _score, lease: _lease, lastError: _error, previousFailure: _previous, ...rest } = j;
  return rest.verdict ? { ...rest, verdict: { ...rest.verdict, findings: [] } } : rest;
}

export class QueueError extends SchoolError {
  constructor(message: string) {
    super(message);
    this.name = 'QueueError';
  }
}

export interface ClaimOptions {
  worker: string;
  now: Date;
  leaseMs: number;
  /**
   * Jobs judged at once. A claim bigger than one wave leases its k-th wave (counting from 0) for
   * (k + 1) × `leaseMs`: each job still gets `leaseMs` from when its wave can start. Default: `limit`.
   */
  wave?: number;
  maxAttempts: number;
  /** Upper bound of jobs claimed in this transaction. */
  limit: number;
}

export interface ClaimResult {
  claimed: JobState[];
  /** Jobs whose expired lease used the last attempt: dead-lettered instead of claimed. */
  deadLettered: JobState[];
  /** Candidates that were taken off the list (claimed, dead, or no longer claimable). */
  consumed: number;
  lockWaitMs: number;
}

/** One drain's part of a settle: what it graded and failed, and the next wave it wants. */
export interface QueueRequest {
  worker: string;
  now: Date;
  maxAttempts: number;
  graded: ReadonlyArray<{ jobKey: string; verdict: Verdict; score?: MarkedScore }>;
  failed: ReadonlyArray<{ jobKey: string; error: string }>;
  /** Without `candidates`, the drain's snapshot is taken now (see `pendingKeys`). */
  claim?: { candidates?: string[]; options: ClaimOptions };
}

export interface QueueOutcome {
  graded: string[];
  failed: string[];
  deadLettered: string[];
  claim?: Omit<ClaimResult, 'lockWaitMs'> & {
    /** For a claim that took the snapshot: its size, and the keys this claim left for later ones. */
    snapshot?: { size: number; remaining: string[] };
  };
}

export interface SettleResult {
  /** Jobs marked graded now (a second delivery's verdict is dropped: `graded:<job>` is one key). */
  graded: string[];
  failed: string[];
  deadLettered: string[];
  /** The next wave, claimed in the same transaction when `next` was given. */
  claim?: ClaimResult;
}

/** The grading queue over one state directory. */
export class GradingQueue {
  readonly log: EventLog<QueueEvent, QueueState>;
  /** The fold of what this instance last read under the lock, advanced by the events read since. */
  private folded?: { contents: LogContents<QueueEvent, QueueState>; applied: number; state: QueueState };

  constructor(layout: StateLayout, warn?: Warn) {
    this.log = new EventLog<QueueEvent, QueueState>(layout.file('grading'), warn, { incremental: true });
  }

  state(): QueueState {
    return fold(this.log.read());
  }

  /** Flushes claims and graded marks appended without an fsync to the disk. */
  sync(): void {
    this.log.sync();
  }

  /** The current state, for a caller holding the log's lock; read it, never change it. */
  stateHeld(): QueueState {
    return this.current(this.log.readLatest());
  }

  /** The current state inside a transaction, folding only the events read since the last one. */
  private current(contents: LogContents<QueueEvent, QueueState>): QueueState {
    const f = this.folded;
    if (f && f.contents === contents && f.applied <= contents.events.length) {
      for (let i = f.applied; i < contents.events.length; i++)
        f.state = queueFold.apply(f.state, contents.events[i]!);
      f.applied = contents.events.length;
      return f.state;
    }
    const state = fold(contents);
    this.folded = { contents, applied: contents.events.length, state };
    return state;
  }

  /**
   * Claims, under the log lock, up to `limit` jobs taken in order from `candidates` (which it
   * shifts). A claim whose previous lease expired without a verdict counts as a failed drain
   * (the drainer was lost): with no attempts left the job is dead-lettered instead (N2.3, N6.1).
   */
  async claim(candidates: string[], o: ClaimOptions): Promise<ClaimResult> {
    const r = await this.settle({ graded: [], failed: [] }, { ...o }, { candidates, options: o });
    return r.claim!;
  }

  /** Marks jobs graded. `graded:<job>` is one key: a second delivery's verdict is dropped. */
  async markGraded(items: Array<{ jobKey: string; verdict: Verdict }>, worker: string, now: Date) {
    return (await this.settle({ graded: items, failed: [] }, { worker, now, maxAttempts: Infinity })).graded;
  }

  /**
   * Records failed drains for jobs this worker still holds. The attempt that reaches `maxAttempts`
   * dead-letters the job in the same transaction, with its last error kept visible.
   */
  async markFailed(
    items: Array<{ jobKey: string; error: string }>,
    o: { worker: string; now: Date; maxAttempts: number },
  ): Promise<{ failed: string[]; deadLettered: string[] }> {
    const r = await this.settle({ graded: [], failed: items }, o);
    return { failed: r.failed, deadLettered: r.deadLettered };
  }

  /**
   * One wave's end in one transaction (one lock, one append): the verdicts marked graded, the
   * failures recorded, and — with `next` — the next wave claimed. The same facts with the same keys
   * as markGraded, markFailed and claim one after the other. Appended without an fsync (see
   * `settleHeld`).
   */
  async settle(
    items: {
      graded: Array<{ jobKey: string; verdict: Verdict }>;
      failed: Array<{ jobKey: string; error: string }>;
    },
    o: { worker: string; now: Date; maxAttempts: number },
    next?: { candidates: string[]; options: ClaimOptions },
  ): Promise<SettleResult> {
    if (items.graded.length === 0 && items.failed.length === 0 && !next) {
      return { graded: [], failed: [], deadLettered: [] };
    }
    return withLock(this.log.path, (lock) => {
      const [r] = this.settleHeld([{ ...o, ...items, ...(next ? { claim: next } : {}) }]);
      const { claim, ...rest } = r!;
      return { ...rest, ...(claim ? { claim: { ...claim, lockWaitMs: lock.waitedMs } } : {}) };
    });
  }

  /**
   * Settles several drains' requests in one transaction, for a caller holding the log's lock (the
   * grading writer, src/grading/commit.ts): each request is decided on the state the ones before
   * it left (so two requests never claim the same job), and all their events are appended at once.
   *
   * Claims and settles are appended without an fsync (see appendJsonl): they are safe against a
   * process crash at once, and losing one to a machine crash only means a redelivery, which the
   * ledger's per-crew key turns into a no-op. The ledger apply before them is fsynced; call
   * `sync()` before anything that must not outlive a lost mark (the writer does, before recording
   * outbox entries). `redacted`: the requests hold redacted data only (the writer's are), and
   * their events are not walked again on the way to the file.
   */
  settleHeld(requests: readonly QueueRequest[], options: { redacted?: boolean } = {}): QueueOutcome[] {
    try {
      return this.log.transactHeld(
        (current) => {
          const base = this.current(current);
          const view = overlay(base);
          let live: JobState[] | undefined;
          const append: QueueEvent[] = [];
          const outcomes = requests.map((request): QueueOutcome => {
            let snapshot: string[] | undefined;
            if (request.claim && !request.claim.candidates) {
              // The drain's one snapshot, taken now: the jobs claimable at its clock, oldest first.
              live ??= liveJobs(base);
              const at = request.claim.options.now;
              snapshot = live
                .filter((j) => claimable(view.state.jobs[j.job.jobKey] ?? j, at))
                .map((j) => j.job.jobKey);
              request = { ...request, claim: { ...request.claim, candidates: snapshot } };
            }
            const d = decideSettle(view.state, request);
            const fresh = freshEvents(current, d.append).filter((e) => !view.has(e.key));
            view.apply(fresh);
            append.push(...fresh);
            const graded = fresh
              .filter((e) => e.type === 'job.graded')
              .map((e) => (e.data as JobGraded).jobKey);
            const claim =
              d.claim && snapshot
                ? { ...d.claim, snapshot: { size: d.claim.consumed + snapshot.length, remaining: snapshot } }
                : d.claim;
            return { graded, failed: d.failed, deadLettered: d.deadLettered, claim };
          });
          // A snapshot comes back without the jobs the later requests of this round claimed: the
          // drain need not carry them in its next claim (often nothing is left to carry).
          for (const [i, o] of outcomes.entries()) {
            const rest = o.claim?.snapshot;
            if (!rest) continue;
            const at = requests[i]!.claim!.options.now;
            rest.remaining = rest.remaining.filter((k) => claimable(view.state.jobs[k]!, at));
          }
          return { append, result: outcomes };
        },
        { sync: false, ...options },
      ).result;
    } catch (e) {
      this.folded = undefined; // the append may have failed half-way: fold afresh next time
      throw e;
    }
  }

  /** Operator requeue of a dead letter: a fresh attempt budget, the failure summary kept. */
  async requeue(jobKey: string, now = new Date()): Promise<JobState> {
    const { result } = await this.log.transact((current) => {
      const state = this.current(current);
      const j = state.jobs[jobKey];
      if (!j)
        throw new QueueError(
          `dead-letters requeue: no grading job "${jobKey}"; run \`school dead-letters list\` for the keys.`,
        );
      if (j.status !== 'dead_letter') {
        throw new QueueError(
          `dead-letters requeue: job "${jobKey}" is ${j.status}, not a dead letter; only dead letters are requeued.`,
        );
      }
      const previousFailure = boundError(
        `dead-lettered after ${j.attempts} failed drain(s); last error: ${j.lastError ?? 'unknown'}`,
      );
      const e = event('job.requeued', `requeued:${jobKey}:${j.cycle + 1}`, { jobKey, previousFailure }, now);
      return {
        append: [e],
        result: { ...j, status: 'pending' as const, attempts: 0, cycle: j.cycle + 1, previousFailure },
      };
    });
    return result;
  }

  deadLetters(): JobState[] {
    return Object.values(this.state().jobs)
      .filter((j) => j.status === 'dead_letter')
      .sort((a, b) => byCodePoint(a.job.jobKey, b.job.jobKey));
  }
}

export function fold(contents: LogContents<QueueEvent, QueueState>): QueueState {
  return foldLog(queueFold, contents);
}

/** Keys of jobs claimable at `now`, oldest first: the snapshot one drain works through. */
export function pendingKeys(state: QueueState, now: Date): string[] {
  return liveJobs(state)
    .filter((j) => claimable(j, now))
    .map((j) => j.job.jobKey);
}

/** Pending and claimed jobs, oldest first (enqueue time, then key). */
function liveJobs(state: QueueState): JobState[] {
  return Object.values(state.jobs)
    .filter((j) => j.status === 'pending' || j.status === 'claimed')
    .sort((a, b) => byCodePoint(a.enqueuedAt, b.enqueuedAt) || byCodePoint(a.job.jobKey, b.job.jobKey));
}
