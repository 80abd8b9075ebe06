import { z } from 'zod';
import type { StateEvent } from '../state/event-log.js';

/**
 * Crew lifecycle and worktree leases, as events in `crews.jsonl` (docs/architecture.md). The crew
 * registry (`views/crew_runs.json`) is a fold of these.
 *
 * Keys: `planned:<crew_id>`, `claimed:<crew_id>`, `started:<crew_id>`, `lease:<daemon>/<slot>:<crew_id>`,
 * `heartbeat:<crew_id>:<n>`, `released:<crew_id>`, `finished:<crew_id>`.
 */

/** Who holds a lease: checked before an expired lease is reclaimed. */
export const leaseOwnerSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('local'),
    host: z.string(),
    pid: z.number().int(),
    /** Process start identity (e.g. /proc/<pid>/stat starttime) so a reused pid is not mistaken. */
    start: z.string().optional(),
  }),
  z.object({
    kind: z.literal('actions'),
    runId: z.string(),
    runAttempt: z.string(),
    /** The job (GITHUB_JOB, or the job's display-name prefix, e.g. `crew` for `crew d1`). */
    job: z.string(),
    /** Set on a planned crew's owner: the matrix job of `job` for this daemon is expected to start it. */
    daemon: z.string().optional(),
  }),
]);
export type LeaseOwner = z.infer<typeof leaseOwnerSchema>;

export const CREW_OUTCOMES = [
  'succeeded',
  'failed',
  'timed_out',
  'usage_limit',
  /**
   * A usage limit only the student claimed (an exit 75, a report marker, a limit line in its answer
   * or its CLI's prose) that nothing the student cannot write confirmed (src/dispatch/leases/limit-probe.ts):
   * the issue's, not the agent's. Its issue goes to the back of the queue; enough of them stop it.
   */
  'limit_unconfirmed',
  'overloaded',
  'aborted',
  'lost',
  'cancelled',
] as const;
export type CrewOutcome = (typeof CREW_OUTCOMES)[number];

/**
 * Outcomes that pause new launches instead of counting as a failed run (seed 002): a usage or
 * credit limit. A rate limit or service overload (`overloaded`) is an interruption — retried later,
 * never a failure and never a school-wide pause.
 */
export const PAUSING_OUTCOMES: readonly CrewOutcome[] = ['usage_limit'];

/** Outcomes that neither count as a failure nor pause the school: the issue is retried later. */
export const INTERRUPTION_OUTCOMES: readonly CrewOutcome[] = [
  'usage_limit',
  'limit_unconfirmed',
  'overloaded',
  'cancelled',
];

export interface CrewPlanned {
  crewId: string;
  issueNumber: number;
  daemon: string;
  agent: string;
  weight: string;
  fences: string[];
  repair: boolean;
  /** 1 for a first run, 2 for its repair. A third is never planned. */
  attempt: number;
  /**
   * Who is expected to start it (issue: never-started crews). Local: the planning process (it runs
   * the driver). Actions: the run and attempt whose crew job for `daemon` is expected to start it.
   * When that owner is gone and the crew never started, the next plan cancels it.
   */
  plannedBy?: LeaseOwner;
  /**
   * Planned behind its daemon's first wave (Actions crew jobs, whose state is a per-job copy): the
   * crew job starts it when one of its slots frees, if the job still has time for it. A queued crew
   * never raises how many crews the daemon runs at once.
   */
  queued?: true;
  /**
   * Planned by the crew job that ran this failed crew, as its repair in the same job
   * (dispatch/gates/standby.ts `planJobRepair`); the import accepts it only as such.
   */
  repairOf?: string;
  /** A revision crew: feedback on the pull request an earlier crew of this issue delivered. */
  revision?: RevisionPlan;
  /**
   * A standby crew of one GitHub run's shared queue (docs/dispatch.md, "One queue per run"): the
   * daemons whose crew jobs may claim it, `daemon` (the planned one) first. Whoever runs it, the
   * planned daemon included, must first win its claim (`crew.claimed`, src/dispatch/leases/claims.ts).
   */
  eligible?: string[];
  /** Why a learning choice sent this agent (docs/dispatch.md, "Choosing an agent"); absent under greedy. */
  choice?: PlannedChoice;
  /**
   * The issue's domain, difficulty and size estimate (minutes) as planned: what the records file the
   * crew's minutes under once the issue has left the curriculum (src/dispatch/choice/record.ts).
   */
  cell?: PlannedCell;
  /**
   * One crew of a contest (docs/dispatch.md, "Contests"): every listed crew takes the same issue in
   * its own slot; the judges pick one, only it is delivered. Absent on an ordinary crew.
   */
  contest?: ContestPlan;
}

export interface PlannedCell {
  domain: string;
  difficulty: number;
  size: number;
}

/** A contest as planned: its id and every crew in it (this one included), in plan order. */
export interface ContestPlan {
  id: string;
  of: string[];
}

/** One agent as the learning choice saw it for an issue. */
export interface ChoiceDraw {
  agent: string;
  /** A draw from the agent's posterior on merged work in the issue's cell. */
  draw: number;
  /** That posterior's mean. */
  mean: number;
  /** Expected spend of one crew of the agent in the cell (USD). */
  expectedCostUsd: number;
  /**
   * draw − λ × expectedCostUsd, λ the merged work per dollar the school's records reach
   * (`targetPerDollar`, src/dispatch/choice/choice.ts); draw / expectedCostUsd while no crew recorded a cost.
   */
  value: number;
}

/** The record of a learning choice: the issue's cell, the winner's draw and the runner-up's. */
export interface PlannedChoice extends Omit<ChoiceDraw, 'agent'> {
  rule: 'learning';
  domain: string;
  difficulty: number;
  /** The ledger's generation the draws were seeded with. */
  generation: number;
  runnerUp?: ChoiceDraw;
}

/**
 * A shared standby crew taken by one crew job (src/dispatch/leases/claims.ts): that job created the run's
 * claim artifact for it first. The crew is that daemon's from here on; the claim file is in the
 * job's handoff (`claims/<crewId>.json`), and its SHA-256 is the digest the artifact service lists.
 */
export interface CrewClaimed {
  crewId: string;
  daemon: string;
  /** The crew job's run attempt (the handoff artifact's `<job attempt>`). */
  jobAttempt: string;
  nonce: string;
  /** SHA-256 (hex) of the claim file as uploaded. */
  sha256: string;
}

/**
 * What a revision crew answers (docs/delivery.md, "Revisions"): trusted feedback on a delivered pull
 * request — a review requesting changes, a `/school` comment, failed CI on its head — recorded in
 * `feedback.jsonl`. The crew starts from the branch head (the delivered commit, or a later commit
 * someone pushed), is graded like any crew, and is delivered as a new commit on the same branch.
 */
export interface RevisionPlan {
  /** 1-based round on this pull request; never more than `of`. */
  round: number;
  /** `delivery.revisions` when planned. */
  of: number;
  pr: number;
  /** `school/issue-<N>`. */
  branch: string;
  /** The branch head the revision starts from: its base commit. */
  headSha: string;
  /** The delivered crew it revises: its bookbag holds the brief, the diff and the session store. */
  revises: string;
  /** Feedback ids (`review:<id>`, `comment:<id>`, `ci:<sha>`) this round answers, in feedback.jsonl. */
  feedback: string[];
  /** A refresh round (the base moved under the pull request): what it merges. */
  refresh?: RefreshPlan;
}

/**
 * A refresh on base drift (docs/delivery.md, "Refresh"): the pull request's head and its base's new
 * commit merged by the school (src/delivery/refresh-base.ts) into the commit the crew starts from —
 * `headSha` of its round, parents [head, baseSha], conflicts left marked for the crew to resolve.
 * Delivery commits the crew's tree with those two parents, so the pull request contains the base.
 */
export interface RefreshPlan {
  /** The base branch (`main`). */
  base: string;
  /** The base commit measured and merged: at most one refresh per base move. */
  baseSha: string;
  /** The pull request's head merged with it. */
  head: string;
  /** Paths the merge left with conflict markers (empty: it merged cleanly). */
  conflicts: string[];
}
export interface CrewStarted {
  crewId: string;
  daemon: string;
  slot: number;
  worktree: string;
  owner: LeaseOwner;
}
export interface LeaseAcquired {
  crewId: string;
  daemon: string;
  slot: number;
  owner: LeaseOwner;
  expiresAt: string;
}
export interface LeaseHeartbeat {
  crewId: string;
  expiresAt: string;
}
export interface LeaseReleased {
  crewId: string;
  reason: string;
}
export interface CrewFinished {
  crewId: string;
  issueNumber: number;
  outcome: CrewOutcome;
  reason: string;
  durationMs?: number;
  /**
   * N4.1: set on an `aborted` crew whose slot failed the pre-verify (a foreign change was found
   * before the student ran). Not the agent's fault: it never counts toward the two-failure stop.
   */
  preVerify?: boolean;
  /**
   * Set on a `succeeded` crew that ran no agent turn: a clean refresh whose merge of the base passed
   * verification before any turn (src/agents/session.ts `verifyFirst`). The work judged is the
   * school's merge, not the agent's: the crew adds nothing to its agent's cost or time records.
   */
  noTurn?: boolean;
  /**
   * Set on an `aborted` crew whose agent could not start (its CLI missing, its credentials refused):
   * an infrastructure alert, never counted toward the two-failure stop.
   */
  infra?: boolean;
  /**
   * N7.1: set on an `aborted` crew its classroom lost (Orca crashed, restarted or stopped answering)
   * before its student finished: the student was stopped and its unfinished change is not graded. Not
   * the student's failed run; consecutive orphanings of one issue are bounded on their own
   * (`MAX_ORPHANINGS`, src/dispatch/logs/history.ts).
   */
  orphaned?: boolean;
  /**
   * A `usage_limit` the school saw itself: the API's own limit answer, as the host side of the key
   * proxy recorded it. Absent, the limit is the student's word (an exit code, a line of output) and
   * counts toward the issue's limit-claim stop (src/dispatch/logs/history.ts).
   */
  upstream?: { status: number; at: string; resetAt?: string };
  /**
   * A `usage_limit` without `upstream` that the school confirmed itself (src/dispatch/leases/limit-probe.ts):
   * its own probe of the agent answered with the limit (`probe`), or a crew of another issue of the
   * same agent reported it within the window (`crews`). Not the student's word alone: it does not
   * count toward the issue's limit-claim stop.
   */
  confirmed?: 'probe' | 'crews';
  /**
   * A `cancelled` crew a person stopped (`/school stop`, `school crew stop`: src/dispatch/logs/control-log.ts):
   * who. Not the agent's failure, no score; the issue waits for `school requeue` rather than being
   * planned again at once (src/dispatch/logs/history.ts).
   */
  stoppedBy?: string;
}

export type CrewEvent =
  | StateEvent<'crew.planned', CrewPlanned>
  | StateEvent<'crew.claimed', CrewClaimed>
  | StateEvent<'crew.started', CrewStarted>
  | StateEvent<'lease.acquired', LeaseAcquired>
  | StateEvent<'lease.heartbeat', LeaseHeartbeat>
  | StateEvent<'lease.released', LeaseReleased>
  | StateEvent<'crew.finished', CrewFinished>;
