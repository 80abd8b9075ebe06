import { SchoolError } from '../errors.js';
import type { GradingJob, GradingEvent } from '../schemas/grading.js';
import { EventLog, event, type LogContents } from '../state/event-log.js';
import { IncrementalFold, byCodePoint, foldLog, registerFold, type LogFold } from '../state/fold.js';
import type { AppendOptions, Warn } from '../state/jsonl.js';
import type { StateLayout } from '../state/layout.js';
import { boundError } from '../security/bound.js';
import type { Verdict } from './verdict.js';
import { claimable, decideSettle } from './claims.js';
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
 * `scoreOf`): the EMA weight and the event's time. A drain fsyncs a wave's scores before its marks,
 * but state written by earlier versions (which fsynced less often) may hold a mark whose score a
 * machine crash lost: the next drain applies the score again from the mark (the same key and time:
 * a no-op when the ledger has it, wave.ts). Marks written before marks carried a score have none.
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
  override readonly code = 'queue';
  constructor(message: string) {
    super(message);
    this.name = 'QueueError';
  }
}

export interface ClaimOptions {
  worker: string;
  now: Date;
  leaseMs: number;
  maxAttempts: number;
  /** Upper bound of jobs claimed in this transaction. */
  limit: number;
}

export interface ClaimResult {
  claimed: JobState[];
  /** Jobs whose expired lease used the last attempt: dead-lettered instead of claimed. */
  deadLettered: JobState[];
  /** The candidates not looked at yet (the claim stopped at `limit`), in order. */
  remaining: string[];
  /** For a claim that took the drain's snapshot: how many jobs it held. */
  snapshot?: number;
}

/** One drain wave's end: what it graded and failed, and the next wave it wants. */
export interface QueueRequest {
  worker: string;
  now: Date;
  maxAttempts: number;
  graded: ReadonlyArray<{ jobKey: string; verdict: Verdict; score?: MarkedScore }>;
  failed: ReadonlyArray<{ jobKey: string; error: string }>;
  /** Without `candidates`, the drain's snapshot is taken now (see `pendingKeys`). */
  claim?: { candidates?: readonly string[]; options: ClaimOptions };
}

export interface SettleResult {
  /** Jobs marked graded now (a second delivery's verdict is dropped: `graded:<job>` is one key). */
  graded: string[];
  failed: string[];
  deadLettered: string[];
  /** The next wave, claimed in the same transaction when a claim was asked for. */
  claim?: ClaimResult;
}

/** The grading queue over one state directory. */
export class GradingQueue {
  readonly log: EventLog<QueueEvent, QueueState>;
  /** The fold of what this instance last read under the lock, advanced by the events read since. */
  private readonly folded = new IncrementalFold(queueFold);

  constructor(layout: StateLayout, warn?: Warn) {
    this.log = new EventLog<QueueEvent, QueueState>(layout.file('grading'), warn, { incremental: true });
  }

  state(): QueueState {
    return fold(this.log.read());
  }

  /** The current state, for a caller holding the log's lock; read it, never change it. */
  stateHeld(): QueueState {
    return this.current(this.log.readLatest());
  }

  /** The current state inside a transaction, folding only the events read since the last one. */
  private current(contents: LogContents<QueueEvent, QueueState>): QueueState {
    return this.folded.of(contents);
  }

  /**
   * Claims, under the log lock, up to `limit` jobs taken in order from `candidates`. A claim whose
   * previous lease expired without a verdict counts as a failed drain (the drainer was lost): with
   * no attempts left the job is dead-lettered instead (N2.3, N6.1).
   */
  async claim(candidates: readonly string[], o: ClaimOptions): Promise<ClaimResult> {
    const r = await this.settle({ ...o, graded: [], failed: [], claim: { candidates, options: o } });
    return r.claim!;
  }

  /** Marks jobs graded. `graded:<job>` is one key: a second delivery's verdict is dropped. */
  async markGraded(items: Array<{ jobKey: string; verdict: Verdict }>, worker: string, now: Date) {
    return (await this.settle({ worker, now, maxAttempts: Infinity, graded: items, failed: [] })).graded;
  }

  /**
   * Records failed drains for jobs this worker still holds. The attempt that reaches `maxAttempts`
   * dead-letters the job in the same transaction, with its last error kept visible.
   */
  async markFailed(
    items: Array<{ jobKey: string; error: string }>,
    o: { worker: string; now: Date; maxAttempts: number },
  ): Promise<{ failed: string[]; deadLettered: string[] }> {
    const r = await this.settle({ ...o, graded: [], failed: items });
    return { failed: r.failed, deadLettered: r.deadLettered };
  }

  /** `settleHeld` under the log's lock. */
  settle(request: QueueRequest): Promise<SettleResult> {
    return withLock(this.log.path, () => this.settleHeld(request));
  }

  /**
   * One wave's end in one append, for a caller holding the log's lock: the verdicts marked graded,
   * the failures recorded, and — with `claim` — the next wave claimed, all decided on the state
   * just read. Fsynced unless `sync: false`. `redacted`: the request holds redacted data only, and
   * its events are not walked again on the way to the file.
   */
  settleHeld(r: QueueRequest, options: AppendOptions = {}): SettleResult {
    try {
      const { result, appended } = this.log.transactHeld((current) => {
        const state = this.current(current);
        const snapshot = r.claim && !r.claim.candidates ? pendingKeys(state, r.claim.options.now) : undefined;
        const candidates = [...(r.claim?.candidates ?? snapshot ?? [])];
        const d = decideSettle(state, r, candidates);
        const claim = d.claim && {
          ...d.claim,
          remaining: candidates,
          ...(snapshot ? { snapshot: snapshot.length } : {}),
        };
        return { append: d.append, result: { failed: d.failed, deadLettered: d.deadLettered, claim } };
      }, options);
      const graded = appended.filter((e) => e.type === 'job.graded').map((e) => (e.data as JobGraded).jobKey);
      return { graded, ...result };
    } catch (e) {
      this.folded.reset(); // the append may have failed half-way: fold afresh next time
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
