/**
 * The dispatch office's planning step (docs/architecture.md): one batch, decided atomically.
 *
 * Stable API (used by the crew runtime, the `dispatch-crew` action and `school dispatch`):
 *
 *   planDispatch(input: PlanInput): Promise<PlanResult>
 *     Reads the crew registry (fold of `crews.jsonl`), the spend ledger (`spend.jsonl`, re-read every
 *     batch), pauses and the roster (`school.jsonl`) — all inside the crews-log lock — orders the
 *     curriculum, admits and assigns, and appends one `crew.planned` event per assignment (key
 *     `planned:<crewId>`, crewId `c<issue>-<8 hex>`) in the same `EventLog.transact`. So any number of
 *     concurrent planners never plan one issue twice, never exceed `maxCrews` nor a daemon's slots.
 *     First, in the same transaction, it reconciles crews whose owner is gone (./reconcile.ts:
 *     planned-never-started → `cancelled`, running with an expired lease → `lost`); `plannedBy` is
 *     recorded on every planned crew for that purpose.
 *     Afterwards it records pauses implied by the registry and rewrites `views/crew_runs.json`.
 *     It never throws for a corrupt registry or ledger: it returns everything refused (`state-corrupt`).
 *
 *   PlanResult.assignments[]  {crewId, issueNumber, daemon, agent, weight, fences, attempt, repair,
 *                              classroom, fallback, role, domain, difficulty}
 *   PlanResult.refused[]      {issue, code, reason} — every curriculum issue not planned, with why
 *   PlanResult.reconciled[]   {crewId, issueNumber, outcome, reason} — crews settled before planning
 *   PlanResult.loud           the `SPEND CAP REACHED …` line when the cap froze the batch
 *   PlanResult.matrix[]       {daemon, labels, assignments: crewId[]} — daemons with work only; no issue
 *                              text, safe for a job output
 *
 * Companions: recordHeartbeat/fleetStatus (./fleet.js), pauseSchool/pauseForOutcome/clearPause/
 * pauseStatus (./pause.js), recordSpend/totalSpend (./spend.js), readRegistry/crewLog/crewFold
 * (./registry.js), issueStates (./history.js).
 *
 * Runners must beat (`recordHeartbeat`) within `fleet.heartbeatTtlSeconds` to be planned onto: a
 * daemon without a fresh heartbeat is offline and never auto-assigned.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { CAPACITY_CLASSES, ROLES, type SchoolConfig } from '../config/schema.js';
import { CorruptStateError, message } from '../errors.js';
import type { Logger } from '../log.js';
import type { CurriculumItem } from '../schemas/curriculum.js';
import type { JobLiveness } from './leases/lease.js';
import type { CrewEvent, CrewPlanned, LeaseOwner } from '../schemas/crew.js';
import { finiteOr } from '../security/sanitize.js';
import { audit } from '../state/audit.js';
import { event } from '../state/event-log.js';
import { foldLog } from '../state/fold.js';
import { STATE_FILES, type StateLayout } from '../state/layout.js';
import {
  admit,
  type AdmissionDaemon,
  type AdmissionInput,
  type Admitted,
  type Refusal,
} from './gates/admission.js';
import { admitStandby, capUsage, sharedEligible, typicalCrewMs } from './gates/standby.js';
import { choiceRule, chooserFor, type ChoiceRule, type ScoreLookup } from './choice/assign.js';
import { RecordBook, type LedgerCounts } from './choice/record.js';
import { cleanFences } from './gates/fences.js';
import { completeContests, contestPlans, expandContests } from './contest.js';
import { untrustedReason } from '../curriculum/trust.js';
import { fleetStatus, type DaemonStatus } from './fleet/fleet.js';
import { READY, issueStates, type VerdictLookup } from './logs/history.js';
import { decideRevision, type RevisionRequest } from './revision.js';
import {
  limited,
  reviewLine,
  reviewLoad,
  ReviewRoom,
  type OpenPullRequest,
  type ReviewLoad,
} from './gates/back-pressure.js';
import { orderCandidates, quickCut, type Candidate } from './choice/order.js';
import { Predictor } from './choice/predict.js';
import { describeAgentPauses, describePauses, pendingPauses, splitPauses } from './gates/pause.js';
import { askOwners, reconcile, type Reconciled } from './leases/reconcile.js';
import { activeCrews, crewFold, crewLog, readRegistry, type CrewRegistry } from './logs/registry.js';
import {
  activePauses,
  schoolFold,
  schoolLog,
  type ActivePause,
  type SchoolEvent,
  type SchoolState,
} from './logs/school-log.js';
import { SpendLedgerError, readSpend, type SpendEvent } from './gates/spend.js';
import { dailyBudgets, hasDailyBudgets, type DailyBudgets } from './gates/budgets.js';
import { EventLog } from '../state/event-log.js';
import { writeCrewRunsView } from './logs/view.js';

export type { Refusal, RefusalCode } from './gates/admission.js';
export type { ScoreLookup } from './choice/assign.js';
export type { LedgerCounts } from './choice/record.js';
export type { VerdictLookup } from './logs/history.js';
export type { Reconciled } from './leases/reconcile.js';
export type { RevisionRequest } from './revision.js';
export type { OpenPullRequest, ReviewLoad } from './gates/back-pressure.js';

export interface PlanInput {
  config: SchoolConfig;
  layout: StateLayout;
  /** Sanitized, classified issues (`curriculum.jsonl`). */
  curriculum: readonly CurriculumItem[];
  logger: Logger;
  /** The time the plan is made at and the time left for the job that runs its crews. */
  clock?: PlanClock;
  /** Fresh readings of what bounds the batch: free disk, spend, waves per slot. */
  limits?: PlanLimits;
  /** What grading and review said of earlier work. */
  record?: PlanRecord;
  /** Who is expected to start the planned crews, and who is still alive. */
  owners?: PlanOwners;
  /** The kind of plan: standby crews, a shared queue, a refill for one daemon. */
  mode?: PlanMode;
}

export interface PlanClock {
  /** Wall clock for event times and heartbeat TTLs. Default: now. */
  now?: Date;
  /** Monotonic milliseconds for in-process durations (N3.2). Default: performance.now. */
  monotonic?: () => number;
  /**
   * When the job that will run the crews started: a wall-clock Date (across processes, e.g. the
   * workflow run's start) or a monotonic reading taken in this process. Default: now (a full job).
   */
  jobStartedAt?: Date | { monotonicMs: number };
  /** Remaining job time in ms, measured by the caller (the driver's monotonic budget). Overrides
   * `jobStartedAt`. */
  remainingMs?: number;
}

export interface PlanLimits {
  /** Fresh free-disk figures: one number for every daemon (one machine), or per daemon id. Takes
   * precedence over the roster's figure. */
  freeDiskBytes?: number | Readonly<Record<string, number>>;
  /** Overrides: the cap (default `dispatch.spendCap`) and the spent total (default: the ledger). */
  spend?: { capUsd?: number; spentUsd?: number };
  /** Crew-timeout waves one daemon slot may run back to back in this job (slot refill). Default 1. */
  maxWaves?: number;
}

export interface PlanRecord {
  /** Agent scores from the grading ledger. */
  scores?: ScoreLookup;
  /**
   * The grading ledger's counts (graded, accepted, merged, closed unmerged per cell): with
   * `dispatch.choice: learning` the agents are chosen from these, the registry's crews and the
   * spend ledger (./choice.ts). Without them the greedy rule (`scores`) chooses.
   */
  ledger?: LedgerCounts;
  /** Grading verdicts: a succeeded crew that grading rejected counts as a failed run. */
  verdicts?: VerdictLookup;
  /**
   * Trusted feedback on delivered pull requests still open (`revisionRequests` in
   * src/feedback/revisions.ts): an issue that is done but has unanswered feedback gets a revision
   * crew (./revision.ts), bounded by `delivery.revisions`.
   */
  revisions?: readonly RevisionRequest[];
  /**
   * The delivered pull requests nobody merged or closed yet (./back-pressure.ts), given where
   * delivery opens pull requests: `delivery.maxOpenPullRequests` and `agents[].maxOpenPullRequests`
   * hold new issues against them. Absent: no back-pressure (branch delivery, or unreadable state).
   */
  openPullRequests?: readonly OpenPullRequest[];
}

export interface PlanOwners {
  /**
   * Recorded on every planned crew: who is expected to start it. Local: this process's identity.
   * Actions: `{runId, runAttempt, job: <crew job>}`; the planner adds each crew's daemon.
   */
  plannedBy?: LeaseOwner;
  /** Asks whether an Actions job has ended (reconciliation of planned and expired crews). */
  jobStatus?: JobLiveness;
  /** A live driver runs this daemon here (it may still start that daemon's planned crews). */
  driving?: (daemon: string) => boolean;
}

export interface PlanMode {
  /**
   * Plan standby crews behind each daemon's first wave (./standby.ts): for Actions crew jobs, which
   * cannot ask the office for more while they run. Locally the driver refills from the office instead.
   */
  standby?: boolean;
  /**
   * One queue per GitHub run (with `standby`): each standby crew is recorded with the daemons whose
   * crew jobs may claim it (`eligible`, ./standby.ts `sharedEligible`). Off on GHES and locally.
   */
  sharedQueue?: boolean;
  /**
   * Refill (`refillFor` in src/loop/steps.ts): admit only onto this daemon. The other daemons keep their place in the
   * decision (pools, fallback rules) but offer no slot, so the same admission runs for one daemon.
   */
  forDaemon?: string;
}

export interface Assignment extends Omit<CrewPlanned, 'plannedBy'> {
  classroom: DaemonStatus['classroom'];
  fallback: boolean;
  role: string;
  domain: string;
  difficulty: number;
}

export interface MatrixEntry {
  daemon: string;
  labels: string[];
  assignments: string[];
}

export interface PlanResult {
  assignments: Assignment[];
  refused: Refusal[];
  loud?: string;
  matrix: MatrixEntry[];
  /** Crews settled at the start of this plan because their owner is gone (./reconcile.ts). */
  reconciled: Reconciled[];
  /** Why nothing could be trusted (corrupt or quarantined state), when so. */
  blocked?: string;
  paused?: string;
  waves: number;
  spend: { spentUsd?: number; capUsd?: number };
  /** Per-daemon view for the job summary: status, busy before this batch, assigned in it. */
  fleet: Array<DaemonStatus & { busy: number; assigned: number }>;
  /**
   * Back-pressure on review (./back-pressure.ts), as it stood before this batch: pull requests
   * waiting for review, new issues in progress, the limits and who they hold. Absent without
   * `record.openPullRequests`.
   */
  review?: ReviewLoad & { line: string };
}

export async function planDispatch(input: PlanInput): Promise<PlanResult> {
  const { config, layout, logger } = input;
  const clock = input.clock ?? {};
  const now = clock.now ?? new Date();
  const monotonic = clock.monotonic ?? (() => performance.now());
  const started = clock.jobStartedAt;
  const elapsedMs =
    started === undefined
      ? 0
      : started instanceof Date
        ? now.getTime() - started.getTime()
        : monotonic() - started.monotonicMs;
  const remainingMs =
    clock.remainingMs ?? config.dispatch.jobTimeoutMinutes * 60_000 - Math.max(0, elapsedMs);

  // One plan over a registry: read what else it needs, decide (pure), and the events to append.
  const plan = (registry: CrewRegistry, corrupt?: string) => {
    const readings = readPlanInputs(input, registry, now, corrupt);
    const decided = decide(input, registry, readings, now, remainingMs);
    return { ...decided, pending: readings.pending, events: plannedEvents(decided.result, input, now) };
  };
  let planned: ReturnType<typeof plan> | undefined;
  // Owners on GitHub are asked before the lock (the answers are async); the registry read here is
  // only to know whom to ask — the decision uses the registry read under the lock.
  try {
    const jobStatus = input.owners?.jobStatus;
    const endedJobs = jobStatus
      ? await askOwners(readRegistry(layout), now, jobStatus)
      : new Map<string, string>();
    const tx = await crewLog(layout).transact((current) => {
      const registry = foldLog(crewFold, current);
      // Reconcile first, in the same transaction: a crew whose owner is gone frees its issue, slot
      // and place under maxCrews for this very plan.
      const settled = reconcile(registry, now, {
        endedJobs,
        driving: input.owners?.driving,
      });
      for (const e of settled.events) crewFold.apply(registry, e);
      const p = plan(registry);
      p.result.reconciled = settled.reconciled;
      return { append: [...settled.events, ...p.events], result: p };
    });
    planned = tx.result;
  } catch (e) {
    if (!(e instanceof CorruptStateError)) throw e;
    // N5.1: the registry is unreadable (now quarantined): assume the fleet is full.
    planned = plan({ crews: {}, leases: {} }, message(e));
  }
  const { result, pending, warnings } = planned;
  for (const w of warnings) logger.warning(w);

  if (pending.length > 0) await schoolLog(layout).append(pending);
  // A blocked registry is not rewritten into the view: an empty view would read as "no crews".
  if (!result.blocked) {
    await writeCrewRunsView(layout, now).catch((e: unknown) =>
      logger.warning(`views/crew_runs.json not refreshed: ${message(e)}`),
    );
  }
  report(result, logger);
  await audit(layout, 'dispatch.planned', {
    planned: result.assignments.map((a) => a.crewId),
    ...(result.reconciled.length ? { reconciled: result.reconciled } : {}),
    refused: result.refused.length,
    ...(result.loud ? { loud: result.loud } : {}),
    ...(result.blocked ? { blocked: result.blocked } : {}),
  });
  return result;
}

/** What a plan reads from the state directory besides the registry (under the crews-log lock). */
interface PlanReadings {
  /** Why nothing can be trusted: a corrupt or quarantined registry or control ledger. */
  blocked?: string;
  school: SchoolState;
  /** Pauses the registry implies that `school.jsonl` does not hold yet (recorded after the plan). */
  pending: SchoolEvent[];
  capUsd?: number;
  spentUsd?: number;
  /** Daily budgets reached (./budgets.ts), when any is configured. */
  daily?: DailyBudgets;
  /** Spend rows naming a crew, for the learning choice's costs. */
  spendRows: Array<{ crewId?: string; costUsd: number }>;
}

/** The plan's I/O: quarantined copies, the school log, the spend ledger, the implied pauses. */
function readPlanInputs(
  input: PlanInput,
  registry: CrewRegistry,
  now: Date,
  corrupt: string | undefined,
): PlanReadings {
  const { config, layout } = input;
  let blocked = corrupt ?? quarantined(layout);
  let school: SchoolState = schoolFold.empty();
  let schoolDedup: { keys: ReadonlySet<string>; watermark: string } = { keys: new Set(), watermark: '' };
  try {
    const contents = schoolLog(layout).read();
    school = foldLog(schoolFold, contents);
    schoolDedup = contents;
  } catch (e) {
    if (!(e instanceof CorruptStateError)) throw e;
    blocked ??= message(e);
  }
  const capUsd = input.limits?.spend?.capUsd ?? config.dispatch.spendCap;
  let spentUsd = input.limits?.spend?.spentUsd;
  let daily: DailyBudgets | undefined;
  const needsDaily = hasDailyBudgets(config);
  if ((spentUsd === undefined && capUsd !== undefined) || needsDaily) {
    try {
      const spend = readSpend(layout);
      spentUsd ??= capUsd !== undefined ? spend.totalUsd : undefined;
      if (needsDaily) daily = dailyBudgets(config, spend, now);
    } catch (e) {
      if (!(e instanceof CorruptStateError) && !(e instanceof SpendLedgerError)) throw e;
      blocked ??= message(e);
    }
  }
  const spendRows = input.record?.ledger && config.dispatch.choice === 'learning' ? crewSpend(layout) : [];
  const pending = blocked
    ? []
    : pendingPauses(registry, schoolDedup, now, layout, config.dispatch.agentPauseMaxMinutes * 60_000);
  return {
    ...(blocked !== undefined ? { blocked } : {}),
    school,
    pending,
    spendRows,
    ...(daily ? { daily } : {}),
    ...(capUsd !== undefined ? { capUsd } : {}),
    ...(spentUsd !== undefined ? { spentUsd } : {}),
  };
}

/**
 * The decision, pure over what was read: which curriculum issues are candidates, what admission
 * (and the standby pass) makes of them, and the plan's result. Writes nothing; the crew ids are
 * the only thing not derived from the inputs.
 */
function decide(
  input: PlanInput,
  registry: CrewRegistry,
  read: PlanReadings,
  now: Date,
  remainingMs: number,
): { result: PlanResult; warnings: string[] } {
  const { config } = input;
  const { blocked, capUsd, spentUsd } = read;
  // A pause that holds one agent only refuses that agent's crews (admission chooses another).
  const split = splitPauses(
    activePauses(
      [
        ...read.school.pauses,
        ...read.pending.map((e) => ({ ...(e.data as ActivePause), at: e.at, key: e.key })),
      ],
      now,
    ),
  );
  const pauses: ActivePause[] = split.school;
  const pausedAgents = describeAgentPauses(split.agents);
  const sorted = sortCurriculum(
    input,
    issueStates(registry, input.record?.verdicts, read.school.requeues, {
      maxUnconfirmedLimitClaims: config.dispatch.maxUnconfirmedLimitClaims,
    }),
    registry,
  );
  const records = recordBook(input, registry, read.spendRows);
  const rule = choiceRule(config.dispatch, {
    scores: input.record?.scores,
    // Chosen by the records only when the ledger's counts were given.
    records: input.record?.ledger ? records : undefined,
  });
  predictRunTimes(input, records, sorted.candidates, rule);
  const daemons = withLoad(fleetStatus(config, read.school, now), registry, input.limits?.freeDiskBytes);
  const open = input.record?.openPullRequests;
  const review = open ? reviewLoad(config, open, registry) : undefined;
  const admitted = admissionInput(input, registry, daemons, sorted.candidates, {
    remainingMs,
    spend: { spentUsd: spentUsd ?? 0, ...(capUsd !== undefined ? { capUsd } : {}) },
    holds: {
      ...(blocked !== undefined ? { blocked } : {}),
      ...(pauses.length > 0 ? { paused: describePauses(pauses)! } : {}),
      ...(pausedAgents.size > 0 ? { pausedAgents } : {}),
      ...(read.daily ? { dailyBudgets: read.daily } : {}),
      ...(review && limited(review) ? { review: new ReviewRoom(review) } : {}),
    },
    rule,
  });
  // Contests (./contest.ts): a contested issue is one entry per agent, at least two placed or none.
  // An agent a pause holds or over its daily budget takes no part: fewer than two left, no contest.
  const held = new Map([...(read.daily?.agents ?? []), ...pausedAgents]);
  const contests = expandContests(admitted.candidates, config, held);
  const admission = { ...admitted, candidates: contests.candidates };
  const decision = { ...admit(admission) };
  Object.assign(decision, completeContests(decision.admitted, decision.refused, contests.entries));
  const standby = input.mode?.standby
    ? admitStandby(
        // A contest's crews are all placed in the first wave: none waits as a standby crew.
        { ...admission, candidates: admission.candidates.filter((c) => !contests.entries.has(c)) },
        decision,
        typicalCrewMs(registry, admission.time.crewTimeoutMs),
        config.dispatch.order,
      )
    : { standby: [], refused: decision.refused };
  const eligible = input.mode?.sharedQueue ? sharedEligible(admission, decision, standby.standby) : [];
  const first = decision.admitted.map((a) => toAssignment(a, false));
  const contested = contestPlans(first, (_, i) => contests.entries.has(decision.admitted[i]!.candidate));
  for (const [a, contest] of contested) a.contest = contest;
  const assignments = [...first, ...standby.standby.map((a, i) => toAssignment(a, true, eligible[i]))];
  const byDaemon = new Map<string, string[]>();
  for (const a of assignments) byDaemon.set(a.daemon, [...(byDaemon.get(a.daemon) ?? []), a.crewId]);
  const result: PlanResult = {
    assignments,
    reconciled: [],
    refused: [...sorted.refused, ...standby.refused],
    ...(decision.loud ? { loud: decision.loud } : {}),
    matrix: daemons
      .filter((d) => byDaemon.has(d.id))
      .map((d) => ({ daemon: d.id, labels: d.labels, assignments: byDaemon.get(d.id)! })),
    ...(blocked !== undefined ? { blocked } : {}),
    ...(pauses.length > 0 ? { paused: describePauses(pauses)! } : {}),
    waves: decision.waves,
    spend: { ...(spentUsd !== undefined ? { spentUsd } : {}), ...(capUsd !== undefined ? { capUsd } : {}) },
    fleet: daemons.map((d) => ({ ...d, assigned: byDaemon.get(d.id)?.length ?? 0 })),
    ...(review ? { review: { ...review, line: reviewLine(review) } } : {}),
  };
  return { result, warnings: sorted.warnings };
}

/**
 * The curriculum sorted into candidates and refusals by each issue's history (active, stopped,
 * done) and the intake trust gate; an entry whose number is not a positive integer is skipped with
 * a warning, a repeated number counts once.
 */
function sortCurriculum(
  input: PlanInput,
  states: ReturnType<typeof issueStates>,
  registry: CrewRegistry,
): { candidates: Candidate[]; refused: Refusal[]; warnings: string[] } {
  const { config } = input;
  const revisions = new Map((input.record?.revisions ?? []).map((r) => [r.issue, r]));
  const refused: Refusal[] = [];
  const candidates: Candidate[] = [];
  const warnings: string[] = [];
  const seen = new Set<number>();
  for (const item of input.curriculum) {
    if (!Number.isSafeInteger(item.number) || item.number <= 0) {
      warnings.push(`curriculum: skipped an entry whose issue number is ${JSON.stringify(item.number)}`);
      continue;
    }
    if (seen.has(item.number)) continue;
    seen.add(item.number);
    const state = states.get(item.number) ?? READY;
    if (state.kind === 'active') {
      refused.push({
        issue: item.number,
        code: 'active-crew',
        reason: `crew ${state.crewId} is already planned or running`,
      });
    } else if (state.kind === 'stopped' && state.stoppedBy) {
      refused.push({
        issue: item.number,
        code: 'stopped-by-person',
        reason: `its crew ${state.crewIds[0]} was stopped by ${state.stoppedBy}; it is not planned again until \`school requeue ${item.number}\``,
      });
    } else if (state.kind === 'stopped' && state.orphaned) {
      refused.push({
        issue: item.number,
        code: 'stopped-after-orphanings',
        reason: `its classroom lost ${state.orphaned} crews in a row (the last ${state.crewIds.join(', ')}): Orca crashed or restarted under them; none counted as an attempt. Fix the daemon, then \`school requeue ${item.number}\``,
      });
    } else if (state.kind === 'stopped' && state.limitUnconfirmed) {
      refused.push({
        issue: item.number,
        code: 'stopped-after-unconfirmed-limit-claims',
        reason: `${state.limitUnconfirmed} of its crews (the last ${state.crewIds.join(', ')}) claimed a usage limit that nothing confirmed (limit_unconfirmed: not the API, not the school's probe of the agent, not another issue's crew); its text may be asking the model to claim one. Look at the issue, then \`school dead-letters requeue issue:${item.number}\` (or \`school requeue ${item.number}\`)`,
      });
    } else if (state.kind === 'stopped' && state.limitClaims) {
      refused.push({
        issue: item.number,
        code: 'limit-claims-stopped',
        reason: `${state.limitClaims} of its crews (the last ${state.crewIds.join(', ')}) ended with a usage limit only the agent reported, not the API; each paused its agent. Look at the issue, then \`school requeue ${item.number}\``,
      });
    } else if (state.kind === 'stopped') {
      refused.push({
        issue: item.number,
        code: 'repair-stopped-after-two-failures',
        reason: `two consecutive failed runs (${state.crewIds.join(', ')}); a third attempt is never launched`,
      });
    } else if (state.kind === 'done') {
      // Feedback on its delivered pull request reopens a done issue as a revision; a revision is not
      // a first attempt, so the two-failure stop does not apply: `delivery.revisions` bounds it.
      const request = revisions.get(item.number);
      const r = request
        ? decideRevision(registry, request, config.delivery.revisions)
        : { kind: 'none' as const };
      const untrusted = r.kind === 'plan' ? untrustedReason(item, config.curriculum.trust) : undefined;
      if (r.kind === 'plan' && untrusted)
        refused.push({ issue: item.number, code: 'untrusted-author', reason: untrusted });
      else if (r.kind === 'plan')
        candidates.push({
          ...toCandidate(item, false, config),
          forceAgent: r.agent,
          revision: r.revision,
        });
      else if (r.kind === 'stopped')
        refused.push({ issue: item.number, code: 'revisions-exhausted', reason: r.reason });
      else refused.push({ issue: item.number, code: 'done', reason: `crew ${state.crewId} succeeded` });
    } else {
      // Intake trust gate: an issue is a prompt, so only trusted authors (or a trigger label a
      // maintainer applied) put one in front of an agent.
      const untrusted = untrustedReason(item, config.curriculum.trust);
      if (untrusted) refused.push({ issue: item.number, code: 'untrusted-author', reason: untrusted });
      else
        candidates.push({
          ...toCandidate(item, state.kind === 'repair', config),
          // Its last run failed on the machine, not the agent: it waits behind the others (./order.ts).
          ...((state.kind === 'repair' || state.kind === 'ready') && state.environment
            ? { environment: true }
            : {}),
          // Its last crew's limit claim went unconfirmed: the issue's, so it waits behind the others.
          ...((state.kind === 'repair' || state.kind === 'ready') && state.limitClaim
            ? { limitClaim: true }
            : {}),
        });
    }
  }
  return { candidates, refused, warnings };
}

/**
 * The records (./record.ts) the plan predicts and chooses by: the ledger's verdicts and merges (when
 * given), the registry's finished crews (their cell and estimate as recorded when planned, else the
 * issue's in this curriculum) and what the spend ledger says they cost. One fold per plan.
 */
function recordBook(input: PlanInput, registry: CrewRegistry, spend: PlanReadings['spendRows']): RecordBook {
  const d = input.config.curriculum.defaults;
  const cells = new Map(
    input.curriculum.map((i) => [
      i.number,
      {
        size: finiteOr(i.size, d.size, { min: 0, max: Number.MAX_SAFE_INTEGER }),
        domain: typeof i.domain === 'string' ? i.domain : d.domain,
        difficulty: Math.round(finiteOr(i.difficulty, d.difficulty, { min: 1, max: 5 })),
      },
    ]),
  );
  return new RecordBook({
    ...(input.record?.ledger ? { ledger: input.record.ledger } : {}),
    crews: Object.values(registry.crews),
    spend,
    cellOf: (n) => cells.get(n),
  });
}

/**
 * Each candidate's predicted minutes and chance of a repair (./predict.ts over the records), for
 * the agent admission will choose for it × its domain × difficulty. What tail-guard orders by and
 * the standby split balances.
 */
function predictRunTimes(
  input: PlanInput,
  records: RecordBook,
  candidates: Candidate[],
  rule: ChoiceRule,
): void {
  const predictor = new Predictor(records);
  const agents = chooserFor(input.config.agents, rule);
  for (const c of candidates) {
    const choice = agents.choose(c);
    if (!('agent' in choice)) continue;
    const p = predictor.predict(c.size, choice.agent, c.domain, c.difficulty);
    if (p.minutes !== undefined) c.predicted = p.minutes;
    if (p.pFail !== undefined) c.pFail = p.pFail;
  }
}

/**
 * Spend rows that name a crew. Unreadable spend leaves costs to their priors (a warning is the cap
 * gate's business, which reads the same ledger and fails closed).
 */
function crewSpend(layout: StateLayout): Array<{ crewId?: string; costUsd: number }> {
  try {
    return new EventLog<SpendEvent>(layout.file('spend'))
      .read()
      .events.filter((e) => e.type === 'spend.recorded' && typeof e.data?.crewId === 'string')
      .map((e) => ({ crewId: e.data.crewId, costUsd: e.data.costUsd }));
  } catch {
    return [];
  }
}

/** Admission's input: the ordered candidates, the daemons with their load, the caps and gates. */
function admissionInput(
  input: PlanInput,
  registry: CrewRegistry,
  daemons: AdmissionDaemon[],
  candidates: Candidate[],
  gates: Pick<AdmissionInput, 'spend' | 'holds'> & { remainingMs: number; rule: ChoiceRule },
): AdmissionInput {
  const { config } = input;
  const { remainingMs, rule, ...rest } = gates;
  // Refill: every other daemon counts as full (K × any number of waves), so only `forDaemon` places.
  const offered = input.mode?.forDaemon
    ? daemons.map((d) => (d.id === input.mode?.forDaemon ? d : { ...d, busy: Number.MAX_SAFE_INTEGER }))
    : daemons;
  return {
    candidates: orderCandidates(candidates, {
      order: config.dispatch.order,
      slots: config.fleet.daemons.reduce((n, d) => n + d.worktrees, 0),
      ...quickOf(input),
    }),
    daemons: offered,
    agents: config.agents,
    choice: rule,
    limits: {
      maxCrews: config.dispatch.maxCrews,
      activeCrews: capUsage(registry, config),
      minFreeDiskBytes: config.dispatch.minFreeDiskGiB * 1024 ** 3,
      maxFallbacks: config.dispatch.maxFallbacks,
    },
    heldFences: activeCrews(registry).map((c) => ({
      fences: c.fences,
      holder: `crew ${c.crewId} (issue #${c.issueNumber})`,
    })),
    time: {
      remainingMs,
      crewTimeoutMs: config.dispatch.crewTimeoutSeconds * 1000,
      gradingReserveMs: config.dispatch.gradingReserveSeconds * 1000,
      maxWaves: Math.max(1, Math.floor(finiteOr(input.limits?.maxWaves, 1))),
    },
    ...rest,
  };
}

/**
 * Tail-guard's quick cut (./order.ts `quickCut`) over every issue the curriculum lists, whatever its
 * state: done and running issues stay listed until closed, so the cut does not climb as quick ones finish.
 */
function quickOf(input: PlanInput): { quickMinutes?: number } {
  const d = input.config.curriculum.defaults;
  const cut = quickCut(
    input.curriculum.map((i) => finiteOr(i.size, d.size, { min: 0, max: Number.MAX_SAFE_INTEGER })),
  );
  return cut === undefined ? {} : { quickMinutes: cut };
}

/** An admitted candidate as an assignment, under a fresh crew id `c<issue>-<8 hex>`. */
function toAssignment(a: Admitted, standby: boolean, eligible?: string[]): Assignment {
  return {
    crewId: `c${a.candidate.issueNumber}-${randomBytes(4).toString('hex')}`,
    issueNumber: a.candidate.issueNumber,
    daemon: a.daemon,
    agent: a.agent,
    weight: a.candidate.weight,
    fences: [...a.candidate.fences],
    attempt: a.candidate.attempt,
    repair: a.candidate.repair,
    classroom: a.classroom,
    fallback: a.fallback,
    role: a.candidate.role,
    domain: a.candidate.domain,
    difficulty: a.candidate.difficulty,
    ...(standby ? { queued: true as const } : {}),
    ...(a.candidate.revision ? { revision: a.candidate.revision } : {}),
    ...(eligible ? { eligible } : {}),
    ...(a.why ? { choice: a.why } : {}),
    cell: { domain: a.candidate.domain, difficulty: a.candidate.difficulty, size: a.candidate.size },
  };
}

/** One `crew.planned` per assignment (key `planned:<crewId>`); a standby crew is `queued: true`. */
function plannedEvents(result: PlanResult, input: PlanInput, now: Date): CrewEvent[] {
  return result.assignments.map((a) =>
    event(
      'crew.planned',
      `planned:${a.crewId}`,
      {
        crewId: a.crewId,
        issueNumber: a.issueNumber,
        daemon: a.daemon,
        agent: a.agent,
        weight: a.weight,
        fences: a.fences,
        repair: a.repair,
        attempt: a.attempt,
        ...(a.queued ? { queued: a.queued } : {}),
        ...(a.revision ? { revision: a.revision } : {}),
        ...(a.eligible ? { eligible: a.eligible } : {}),
        ...(a.choice ? { choice: a.choice } : {}),
        ...(a.cell ? { cell: a.cell } : {}),
        ...(a.contest ? { contest: a.contest } : {}),
        ...plannedBy(input.owners?.plannedBy, a.daemon),
      },
      now,
    ),
  );
}

/** An Actions planner names the crew job of this crew's daemon; a local planner is itself. */
function plannedBy(owner: LeaseOwner | undefined, daemon: string): { plannedBy?: LeaseOwner } {
  if (!owner) return {};
  return { plannedBy: owner.kind === 'actions' ? { ...owner, daemon } : owner };
}

/**
 * The curriculum is validated when it is fetched, but the file can be edited by hand: anything out of
 * range falls back to the configured default (N1.3) instead of reaching the arithmetic.
 */
function toCandidate(item: CurriculumItem, repair: boolean, config: SchoolConfig): Candidate {
  const d = config.curriculum.defaults;
  return {
    issueNumber: item.number,
    role: ROLES.includes(item.role) ? item.role : d.role,
    domain: typeof item.domain === 'string' ? item.domain : d.domain,
    difficulty: Math.round(finiteOr(item.difficulty, d.difficulty, { min: 1, max: 5 })),
    weight: CAPACITY_CLASSES.includes(item.weight) ? item.weight : d.weight,
    fences: Array.isArray(item.fences) ? cleanFences(item.fences.filter((f) => typeof f === 'string')) : [],
    priority: finiteOr(item.priority, d.priority, { min: 0, max: 4 }),
    size: finiteOr(item.size, d.size, { min: 0, max: Number.MAX_SAFE_INTEGER }),
    ...(item.forceAgent !== undefined ? { forceAgent: item.forceAgent } : {}),
    repair,
    attempt: repair ? 2 : 1,
  };
}

/** Busy slots per daemon: crews planned or running there, plus any crew still holding a lease there. */
function withLoad(
  fleet: DaemonStatus[],
  registry: CrewRegistry,
  disk: PlanLimits['freeDiskBytes'],
): AdmissionDaemon[] {
  const busy = new Map<string, Set<string>>();
  const add = (daemon: string, crewId: string) => {
    const s = busy.get(daemon) ?? new Set<string>();
    s.add(crewId);
    busy.set(daemon, s);
  };
  for (const c of activeCrews(registry)) add(c.daemon, c.crewId);
  for (const l of Object.values(registry.leases)) add(l.daemon, l.crewId);
  return fleet.map((d) => {
    const fresh = typeof disk === 'number' ? disk : disk?.[d.id];
    return {
      ...d,
      ...(fresh !== undefined && Number.isFinite(fresh) ? { freeDiskBytes: fresh } : {}),
      busy: busy.get(d.id)?.size ?? 0,
    };
  });
}

/**
 * N5.1: a quarantined control file stays a stop sign. Once `crews.jsonl` was moved aside the log is
 * merely absent — which would read as an empty registry and over-admit — so while any
 * `<file>.corrupt-<ts>` of the registry or a control ledger exists, dispatch assumes the fleet full.
 */
function quarantined(layout: StateLayout): string | undefined {
  let names: string[];
  try {
    names = readdirSync(layout.root);
  } catch {
    return undefined;
  }
  const watched = [STATE_FILES.crews, STATE_FILES.school, STATE_FILES.spend];
  const found = names.filter((n) => watched.some((w) => n.startsWith(`${w}.corrupt-`))).sort();
  if (found.length === 0) return undefined;
  return `quarantined state ${found.join(', ')} in ${layout.root}: run \`school checkpoint recover\` to merge what still parses back and resume dispatch (never delete the quarantined copy: delivered issues would be planned again)`;
}

function report(result: PlanResult, logger: Logger): void {
  if (result.loud) logger.error(result.loud);
  if (result.blocked) logger.error(`dispatch denied: ${result.blocked}`);
  if (result.paused) logger.warning(`dispatch paused: ${result.paused}`);
  // Once per plan, and only when a limit holds something back (the summary always says it).
  if (result.review && (result.review.full || result.review.agents.some((a) => a.full)))
    logger.info(result.review.line);
  for (const r of result.reconciled) {
    logger.warning(`reconciled ${r.crewId} (issue #${r.issueNumber}) as ${r.outcome}: ${r.reason}`);
  }
  for (const a of result.assignments) {
    logger.info(
      `planned ${a.crewId}: issue #${a.issueNumber} → ${a.daemon} (${a.classroom}${a.fallback ? ', fallback' : ''}) agent ${a.agent}, attempt ${a.attempt}${a.repair ? ' (repair)' : ''}${a.contest ? ` (contest ${a.contest.id} of ${a.contest.of.length} crews)` : ''}${a.revision ? ` (revision ${a.revision.round} of ${a.revision.of}, pull request #${a.revision.pr})` : ''}`,
    );
  }
  const codes = new Map<string, number>();
  for (const r of result.refused) codes.set(r.code, (codes.get(r.code) ?? 0) + 1);
  if (codes.size > 0) {
    logger.info(`refused ${result.refused.length}: ${[...codes].map(([c, n]) => `${c} ${n}`).join(', ')}`);
  }
  for (const r of result.refused.slice(0, 50)) logger.debug(`refused #${r.issue} [${r.code}]: ${r.reason}`);
}
