import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GRADED_OUTCOMES } from '../agents/outcome.js';
import { message } from '../errors.js';
import { readRegistry, type CrewRecord, type CrewRegistry } from '../dispatch/logs/registry.js';
import type { SpendEvent } from '../dispatch/gates/spend.js';
import type { OutboxEntry } from '../outbox/outbox.js';
import type { GradingJob } from '../schemas/grading.js';
import { EventLog } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import type { ContestDecided, ContestEntrantRecord, LedgerState } from './ledger.js';
import type { QueueState } from './queue.js';
import { outboxEntries, type OutboxPolicy } from './records.js';
import type { Verdict } from './verdict.js';

/**
 * The judges pick a contest's crew (docs/grading.md, "Contests"; the plan side is
 * src/dispatch/contest.ts). Each crew is graded as usual; once every crew of the contest is graded
 * or ended without a grade, one decision: among the accepted crews, more passed named sealed tests
 * wins; ties go to the reviewer's score, then the lower cost, then the lower crew id. Only the
 * winner's outbox entries (its label and its delivery) are recorded; the others are the contest's
 * losers in the ledger (`contest.decided`, ./ledger.ts). No crew accepted: the issue's rejected
 * label once, and the issue counts one failed run (src/dispatch/logs/history.ts).
 *
 * Until then a contest crew's entries are held: no label, no branch, no pull request.
 *
 * A crew that ended with a graded outcome and a finished bookbag but no grading job waits for its
 * job until its grading deadline: its end plus `dispatch.gradingReserveSeconds`, at least
 * MIN_ENQUEUE_WAIT_MS (the job is enqueued moments after the end, by the crew itself or by the import
 * of its handoff). After that it ended without a grade (NO_GRADING_JOB) and the contest is decided
 * among the rest; a job enqueued later is graded, but its entries stay held.
 */

/** Why a finished crew counts as ended without a grade when its grading job never came. */
export const NO_GRADING_JOB = 'no grading job by its grading deadline';

/** The least a finished crew's contest waits for its grading job. */
export const MIN_ENQUEUE_WAIT_MS = 60_000;

/** One crew of a contest as the decision sees it. */
export interface Entrant extends ContestEntrantRecord {
  /** Its verdict, once graded. */
  verdict?: Verdict;
  /** Why it has no grade, when it ended without one (an abort, a dead letter). */
  ended?: string;
  /** What it cost (the spend ledger's rows naming it), when known. */
  costUsd?: number;
}

interface Rank {
  sealed: number;
  reviewer: number;
  cost: number;
}

function rankOf(e: Entrant): Rank {
  const findings = e.verdict?.findings ?? [];
  const sealed = findings.find((f) => f.judge === 'sealed')?.tests?.passed;
  const review = findings.find((f) => f.judge === 'reviewer' || f.judge === 'rubric');
  return {
    sealed: sealed ?? -1,
    reviewer: review?.score ?? e.verdict?.score ?? 0,
    cost: e.costUsd !== undefined && Number.isFinite(e.costUsd) ? e.costUsd : Infinity,
  };
}

/** Best first: named sealed tests passed, the reviewer's score, lower cost, lower crew id. */
function compare(a: Entrant, b: Entrant): number {
  const ra = rankOf(a);
  const rb = rankOf(b);
  return (
    rb.sealed - ra.sealed ||
    rb.reviewer - ra.reviewer ||
    (ra.cost === rb.cost ? 0 : ra.cost < rb.cost ? -1 : 1) ||
    (a.crewId < b.crewId ? -1 : a.crewId > b.crewId ? 1 : 0)
  );
}

const usd = (n: number) => (Number.isFinite(n) ? `$${n.toFixed(2)}` : 'unknown');

/** Why `w` ranks above `l`: the first rule that told them apart. */
function beats(w: Entrant, l: Entrant): string {
  const rw = rankOf(w);
  const rl = rankOf(l);
  if (rw.sealed !== rl.sealed)
    return `more named sealed tests passed (${w.crewId}: ${Math.max(0, rw.sealed)}, ${l.crewId}: ${Math.max(0, rl.sealed)})`;
  if (rw.reviewer !== rl.reviewer)
    return `the same named sealed tests passed; the higher reviewer's score (${w.crewId}: ${rw.reviewer.toFixed(2)}, ${l.crewId}: ${rl.reviewer.toFixed(2)})`;
  if (rw.cost !== rl.cost)
    return `the same sealed tests and reviewer's score; the lower cost (${w.crewId}: ${usd(rw.cost)}, ${l.crewId}: ${usd(rl.cost)})`;
  return `the same sealed tests, reviewer's score and cost; the lower crew id`;
}

/** Why a crew that cannot win did not. */
function outOf(e: Entrant): string {
  if (e.ended !== undefined) return `ended without a grade: ${e.ended}`;
  const v = e.verdict!;
  const tests = v.findings.find((f) => f.judge === 'sealed')?.tests;
  const counts = tests ? `; ${tests.passed} named sealed test(s) passed, ${tests.failed} failed` : '';
  return `rejected by the ${v.decidedBy} judge (${v.code})${counts}`;
}

/** The decision over every crew of a contest (each graded or ended). Pure. */
export function decideContest(
  contestId: string,
  issueNumber: number,
  entrants: readonly Entrant[],
  decidedAt: string,
): ContestDecided {
  const record = (e: Entrant): ContestEntrantRecord => ({
    crewId: e.crewId,
    agent: e.agent,
    domain: e.domain,
    difficulty: e.difficulty,
  });
  const accepted = entrants.filter((e) => e.verdict?.accepted).sort(compare);
  const winner = accepted[0];
  const losers = entrants
    .filter((e) => e !== winner)
    .map((e) => ({
      ...record(e),
      accepted: e.verdict?.accepted === true,
      reason: e.verdict?.accepted
        ? `accepted, not chosen: ${winner!.crewId} had ${beats(winner!, e)}`
        : outOf(e),
    }));
  const why = !winner
    ? `no crew of the ${entrants.length} was accepted`
    : accepted.length === 1
      ? `${winner.crewId} (${winner.agent}) was the only crew of ${entrants.length} the judges accepted`
      : `${winner.crewId} (${winner.agent}) won among ${accepted.length} accepted crews: ${beats(winner, accepted[1]!)}`;
  return {
    contestId,
    issueNumber,
    ...(winner ? { winner: record(winner) } : {}),
    why,
    losers,
    decidedAt,
  };
}

/**
 * The contests of one drain, for the wave transactions (./wave.ts), under the grading lock. The
 * registry is read once, when the drain first needs it: a crew it shows unfinished only makes its
 * contest wait for a later drain.
 */
export class Contests {
  private registry?: CrewRegistry;

  constructor(
    private readonly layout: StateLayout,
    private readonly warn: (m: string) => void,
    /** `dispatch.gradingReserveSeconds` in ms: how long after its end a crew's grading job may come. */
    private readonly gradingReserveMs: number,
  ) {}

  private crews(): CrewRegistry {
    if (!this.registry) {
      try {
        this.registry = readRegistry(this.layout);
      } catch (e) {
        this.warn(`contests not decided this drain: the crew registry cannot be read (${message(e)})`);
        this.registry = { crews: {}, leases: {} };
      }
    }
    return this.registry;
  }

  /** Whether a job is a contest crew's: its entries wait for the contest's decision. */
  holds(job: Pick<GradingJob, 'crewId'>): boolean {
    return this.crews().crews[job.crewId]?.contest !== undefined;
  }

  /**
   * Decides every contest whose crews are all graded or ended and that the ledger has not decided.
   * Returns the decisions and the outbox entries they release.
   */
  settle(
    queue: QueueState,
    ledger: LedgerState,
    policy: OutboxPolicy,
    now: Date,
  ): { decided: ContestDecided[]; entries: OutboxEntry[] } {
    const registry = this.crews();
    const contests = new Map<string, { issue: number; of: string[] }>();
    for (const c of Object.values(registry.crews))
      if (c.contest && !ledger.contests?.decided[c.contest.id])
        contests.set(c.contest.id, { issue: c.issueNumber, of: c.contest.of });
    if (contests.size === 0) return { decided: [], entries: [] };
    const jobs = new Map(Object.values(queue.jobs).map((j) => [j.job.crewId, j]));
    const costs = contests.size > 0 ? this.costs() : new Map<string, number>();
    const decided: ContestDecided[] = [];
    const entries: OutboxEntry[] = [];
    for (const [id, { issue, of }] of contests) {
      const entrants: Entrant[] = [];
      for (const crewId of of) {
        const e = this.entrant(registry.crews[crewId], crewId, jobs.get(crewId), costs.get(crewId), now);
        if (e === 'pending') break;
        entrants.push(e);
      }
      if (entrants.length < of.length) continue;
      const d = decideContest(id, issue, entrants, now.toISOString());
      decided.push(d);
      entries.push(...released(d, policy, queue));
    }
    return { decided, entries };
  }

  /** Entries a decided contest releases that the outbox lacks (a crash after the decision). */
  missing(
    ledger: LedgerState,
    policy: OutboxPolicy,
    queue: QueueState,
    has: (id: string) => boolean,
    watermark: string,
  ) {
    const out: OutboxEntry[] = [];
    for (const d of Object.values(ledger.contests?.decided ?? {})) {
      if (watermark !== '' && (d.decidedAt ?? '') < watermark) continue;
      out.push(...released(d, policy, queue).filter((e) => !has(e.id)));
    }
    return out;
  }

  /** A crew's place in its contest: graded, ended without a grade, or still to come. */
  private entrant(
    crew: CrewRecord | undefined,
    crewId: string,
    job: QueueState['jobs'][string] | undefined,
    costUsd: number | undefined,
    now: Date,
  ): Entrant | 'pending' {
    if (!crew) return 'pending';
    const base = {
      crewId,
      agent: crew.agent,
      domain: job?.job.domain ?? crew.choice?.domain ?? '',
      difficulty: job?.job.difficulty ?? crew.choice?.difficulty ?? 0,
      costUsd,
    };
    if (job?.status === 'graded' && job.verdict) return { ...base, verdict: job.verdict };
    if (job?.status === 'dead_letter')
      return { ...base, ended: `its grading is a dead letter (${job.lastError ?? ''})` };
    if (job || crew.status !== 'finished') return 'pending';
    // Finished without a job: a graded outcome with a finished bookbag is about to be enqueued,
    // until its grading deadline.
    const bookbag = join(this.layout.bookbag(crewId), 'done.flag');
    if (crew.outcome && GRADED_OUTCOMES.includes(crew.outcome) && existsSync(bookbag)) {
      const wait = Math.max(this.gradingReserveMs, MIN_ENQUEUE_WAIT_MS);
      const deadline = Date.parse(crew.finishedAt ?? '') + wait;
      if (Number.isFinite(deadline) && now.getTime() <= deadline) return 'pending';
      const by = Number.isFinite(deadline) ? ` (${new Date(deadline).toISOString()})` : '';
      return { ...base, ended: `${crew.outcome}, ${NO_GRADING_JOB}${by}` };
    }
    const why = [crew.outcome ?? 'ended', crew.infra ? '(infra)' : '', crew.orphaned ? '(orphaned)' : '']
      .filter(Boolean)
      .join(' ');
    return { ...base, ended: why };
  }

  /** Spend per crew from the spend ledger; unreadable spend leaves costs unknown. */
  private costs(): Map<string, number> {
    const out = new Map<string, number>();
    try {
      for (const e of new EventLog<SpendEvent>(this.layout.file('spend')).read().events) {
        const crewId = e.type === 'spend.recorded' ? e.data?.crewId : undefined;
        if (typeof crewId === 'string' && Number.isFinite(e.data.costUsd))
          out.set(crewId, (out.get(crewId) ?? 0) + e.data.costUsd);
      }
    } catch (e) {
      this.warn(`contest costs unknown: ${message(e)}`);
    }
    return out;
  }
}

/** What a decision releases: the winner's entries (label, delivery), else one rejected label. */
function released(d: ContestDecided, policy: OutboxPolicy, queue: QueueState): OutboxEntry[] {
  const graded = (crewId: string) =>
    Object.values(queue.jobs).find((j) => j.job.crewId === crewId && j.status === 'graded' && j.verdict);
  if (d.winner) {
    const j = graded(d.winner.crewId);
    return j ? outboxEntries(policy, j.job, j.verdict!) : [];
  }
  for (const l of d.losers) {
    const j = graded(l.crewId);
    if (j) return outboxEntries(policy, j.job, j.verdict!);
  }
  return [];
}
