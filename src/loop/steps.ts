import { readCurriculumStrict } from '../curriculum/store.js';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { freeDiskBytes } from '../crew/machine/disk.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { recordHeartbeat } from '../dispatch/fleet/fleet.js';
import { orcaUnavailable } from '../crew/orca/classroom.js';
import { planDispatch, type PlanResult } from '../dispatch/plan.js';
import { gradingVerdicts, ledgerCounts, ledgerScores } from '../grading/feedback.js';
import type { Logger } from '../log.js';
import type { LeaseOwner } from '../schemas/crew.js';
import { StateLayout } from '../state/layout.js';
import {
  runAssignments,
  type DriverLaunch,
  type DriverResult,
  type Progress,
} from '../crew/driver/driver.js';
import { driverAlive } from '../crew/driver/driver-lock.js';
import type { JobLiveness } from '../dispatch/leases/lease.js';
import type { ClaimContext } from '../dispatch/leases/claims.js';
import { readCrewState } from '../dispatch/leases/lease.js';
import { plannerOwner } from '../dispatch/leases/liveness.js';
import { planJobRepair } from '../dispatch/gates/standby.js';
import type { VerdictLookup } from '../dispatch/logs/history.js';
import { defaultRuntimeDir } from '../crew/spec.js';
import { revisionRequests } from '../feedback/revisions.js';
import type { RevisionRequest } from '../dispatch/revision.js';
import { pullRequestDelivery, type OpenPullRequest } from '../dispatch/gates/back-pressure.js';
import { openPullRequestsOf } from '../feedback/open-pulls.js';
import { message } from '../errors.js';
import { crewPreflight } from './preflight.js';
import { LOCAL_RUN, type RunContext } from '../process/run-context.js';
import { hostEnvOf } from '../process/env.js';

/**
 * The two halves of dispatch-crew, shared by the action and `school dispatch`:
 * - `planStep`: read the curriculum, plan a batch with the dispatch office (`planDispatch`, which
 *   records `crew.planned` atomically) using the grading verdicts and the score ledger, and return
 *   the plan. `dryRun` plans on a scratch copy of the
 *   state directory, so nothing is recorded.
 * - `runStep`: on a daemon's machine, beat the roster, run every crew planned for that daemon with
 *   its K slots (the driver), and copy the finished bookbags to an output directory for upload.
 */

export { freeDiskBytes } from '../crew/machine/disk.js';

export interface PlanStepOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  dryRun?: boolean;
  jobStartedAt?: Date;
  /** Daemons on this machine to beat before planning (the local CLI runs every daemon here). */
  beat?: string[];
  /** The run that plans (src/process/run-context.ts); a local run by default. */
  context?: RunContext;
  /** Who is expected to start the planned crews, and how to ask whether an Actions job has ended. */
  owners?: PlanStepOwners;
  /** What this plan covers: standby crews, one shared queue, only some issues. */
  mode?: PlanStepMode;
}

export interface PlanStepOwners {
  /**
   * Asks the API whether an Actions job has ended: lets the plan reconcile crews whose crew job was
   * cancelled or never started, and running crews whose owner is gone. Without it (locally) only
   * local owners are checked.
   */
  jobStatus?: JobLiveness;
  /** Who is expected to start the planned crews; default `plannerOwner(context)`: the run's `crew` jobs. */
  plannedBy?: LeaseOwner;
}

export interface PlanStepMode {
  /** Plan standby crews behind each daemon's first wave (crew jobs that cannot refill from the office). */
  standby?: boolean;
  /**
   * One queue per GitHub run (with `standby`): every standby crew may be claimed by any crew job of
   * the run that could run it (`eligible`), not only its planned daemon's (src/dispatch/leases/claims.ts).
   */
  sharedQueue?: boolean;
  /**
   * Plan only these issues (an event-driven cycle: the issue a label or a comment concerns). The
   * rest of the curriculum is neither planned nor refused this time; the scheduled cycle plans it.
   */
  onlyIssues?: ReadonlySet<number>;
}

/**
 * The stages `beat` and `plan` for a local caller (`school dispatch`, tests): beat `o.beat`, then
 * plan; a dry run does both on a scratch copy of the state, so nothing is recorded.
 */
export async function planStep(o: PlanStepOptions): Promise<PlanResult> {
  return onScratch(o.layout, o.dryRun, async (layout) => {
    await beatDaemons(layout, o.config, o.beat ?? []);
    return planCrews({ ...o, layout });
  });
}

/**
 * Runs `fn` on the state, or for a dry run on a scratch copy of it that is removed after: what a dry
 * run records (a heartbeat, planned crews) is never seen by the real state.
 */
export async function onScratch<T>(
  layout: StateLayout,
  dryRun: boolean | undefined,
  fn: (layout: StateLayout) => Promise<T>,
): Promise<T> {
  if (!dryRun) return fn(layout);
  const scratch = mkdtempSync(join(tmpdir(), 'school-dry-run-'));
  try {
    if (existsSync(layout.root)) cpSync(layout.root, scratch, { recursive: true });
    return await fn(new StateLayout(scratch, layout.actor));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The stage `plan`: the dispatch office plans from the folded state — the curriculum, the
 * grading's verdicts and scores, the revisions and the open pull requests the feedback stage
 * recorded (`planningRecord`) — and records `crew.planned` atomically (src/dispatch/plan.ts).
 */
export async function planCrews(o: Omit<PlanStepOptions, 'beat' | 'dryRun'>): Promise<PlanResult> {
  const { layout } = o;
  const disk = freeDiskBytes(layout.root);
  const only = o.mode?.onlyIssues;
  const curriculum = readCurriculumStrict(layout);
  return planDispatch({
    config: o.config,
    layout,
    curriculum: only ? curriculum.filter((i) => only.has(i.number)) : curriculum,
    logger: o.logger,
    limits: { freeDiskBytes: disk },
    record: planningRecord(layout, o.logger, prsOpened(o.config, o.context)),
    owners: {
      plannedBy: o.owners?.plannedBy ?? plannerOwner(o.context ?? LOCAL_RUN),
      jobStatus: o.owners?.jobStatus,
      driving: (daemon) => driverAlive(defaultRuntimeDir(layout.root), daemon),
    },
    mode: {
      standby: o.mode?.standby,
      sharedQueue: o.mode?.standby && o.mode.sharedQueue,
    },
    clock: o.jobStartedAt ? { jobStartedAt: o.jobStartedAt } : undefined,
  });
}

/** The stage `beat`: this machine's roster heartbeat for each of `daemons`. */
export async function beatDaemons(layout: StateLayout, config: SchoolConfig, daemons: readonly string[]) {
  if (!daemons.length) return;
  const disk = freeDiskBytes(layout.root);
  for (const daemon of daemons) await beat(layout, config, daemon, disk);
}

async function beat(layout: StateLayout, config: SchoolConfig, daemon: string, disk: number): Promise<void> {
  const d = config.fleet.daemons.find((x) => x.id === daemon);
  // No measurement of the machine exists yet: the declared class is the observed one.
  // An orca daemon whose Orca is not running beats as unavailable: the planner routes around it.
  const unavailable = d?.classroom === 'orca' ? orcaUnavailable({ daemon: d }) : undefined;
  await recordHeartbeat(layout, config, {
    daemon,
    observedClass: d?.class ?? 'standard',
    freeDiskBytes: disk,
    ...(unavailable ? { unavailable } : {}),
  });
}

/**
 * Refill for one daemon (seed 002: "refill one freed slot immediately after that room finishes"):
 * the same `planDispatch` as a cycle's plan — reconciliation, global cap, per-daemon slots, fences,
 * pauses, spend cap, the time gate (crew timeout + grading reserve within `remainingMs`) — restricted
 * to `daemon`, inside the crew log's lock, so two daemons refilling at once can never take one
 * issue. The disk figure is the daemon's own reading taken right now. Returns every crew planned
 * for the daemon and not started yet (what was just planned and anything planned meanwhile).
 */
export async function refillFor(o: {
  config: SchoolConfig;
  layout: StateLayout;
  daemon: string;
  logger: Logger;
  freeDiskBytes: number;
  remainingMs?: number;
  jobStatus?: JobLiveness;
  context?: RunContext;
}): Promise<string[]> {
  // A daemon that refills is alive: beat first, so a job longer than the heartbeat TTL stays online.
  await beat(o.layout, o.config, o.daemon, o.freeDiskBytes);
  // Planning is chatty at info level; a refill reports only what it took (below).
  const quiet: Logger = { ...o.logger, info: (m) => o.logger.debug(m) };
  const plan = await planDispatch({
    config: o.config,
    layout: o.layout,
    curriculum: readCurriculumStrict(o.layout),
    logger: quiet,
    mode: { forDaemon: o.daemon },
    limits: { freeDiskBytes: { [o.daemon]: o.freeDiskBytes } },
    ...(o.remainingMs !== undefined ? { clock: { remainingMs: o.remainingMs } } : {}),
    record: planningRecord(o.layout, o.logger, prsOpened(o.config, o.context)),
    owners: {
      plannedBy: plannerOwner(o.context ?? LOCAL_RUN),
      jobStatus: o.jobStatus,
      driving: (daemon) => driverAlive(defaultRuntimeDir(o.layout.root), daemon),
    },
  });
  for (const a of plan.assignments) {
    o.logger.info(`refill: ${a.crewId} (issue #${a.issueNumber}) → ${a.daemon}, agent ${a.agent}`);
  }
  return plannedFor(o.layout, o.daemon);
}

/** What grading and the feedback stage recorded, folded for the plan (it reads no GitHub itself). */
function planningRecord(layout: StateLayout, logger: Logger, prs: boolean) {
  const verdicts = gradingVerdicts(layout, logger);
  const scores = ledgerScores(layout, logger);
  const ledger = ledgerCounts(layout, logger);
  const revisions = revisionsOf(layout, logger);
  const open = prs ? openOf(layout, logger) : undefined;
  return {
    verdicts,
    scores,
    ledger,
    ...(revisions.length ? { revisions } : {}),
    openPullRequests: open,
  };
}

/** Where accepted work goes out as pull requests, the review back-pressure counts them. */
function prsOpened(config: SchoolConfig, context: RunContext | undefined): boolean {
  return pullRequestDelivery(config, (context ?? LOCAL_RUN).actions);
}

/** The pull requests waiting for review; unreadable state holds nothing back (a warning). */
function openOf(layout: StateLayout, logger: Logger): OpenPullRequest[] | undefined {
  try {
    return openPullRequestsOf(layout);
  } catch (e) {
    logger.warning(
      `review back-pressure not applied this time: feedback.jsonl or the outbox is unreadable: ${message(e)}`,
    );
    return undefined;
  }
}

/** Feedback on delivered pull requests, for revision crews; unreadable feedback plans none (a warning). */
function revisionsOf(layout: StateLayout, logger: Logger): RevisionRequest[] {
  try {
    return revisionRequests(layout);
  } catch (e) {
    logger.warning(`no revision crews this time: feedback.jsonl or the outbox is unreadable: ${message(e)}`);
    return [];
  }
}

export interface RunStepOptions {
  config: SchoolConfig;
  layout: StateLayout;
  daemon: string;
  logger: Logger;
  /** How crews are launched: the crew runner's argv, its stop grace, the disk floor's reading and wait. */
  launch: RunStepLaunch;
  /** Where finished bookbags are copied for upload. */
  bookbagsPath?: string;
  remainingMs?: () => number;
  /** What the run asks the dispatch office for while crews run: refills, repairs, claims. */
  office?: RunStepOffice;
  onProgress?: (p: Progress) => void;
  /** The run the crews run in (src/process/run-context.ts); a local run by default. */
  context?: RunContext;
}

export type RunStepLaunch = Pick<DriverLaunch, 'launcher' | 'graceMs' | 'freeDisk' | 'diskWaitMs' | 'halt'>;

export interface RunStepOffice {
  /** Asks the API whether an Actions job has ended (the refill's plan reconciles with it). */
  jobStatus?: JobLiveness;
  /**
   * Keep the daemon's slots full: when its planned crews are started, plan more for it at once
   * (`refillFor`) until nothing admissible is left or the job's time budget is spent. Default: on
   * where the state directory is the one every planner locks (the `school` CLI, one machine); off
   * in a GitHub Actions job, whose state is a per-job copy merged later — a crew job there runs
   * its first wave and then the standby crews its cycle's plan put behind it (dispatch/gates/standby.ts,
   * docs/dispatch.md "Refill").
   */
  refill?: boolean;
  /**
   * A crew job that cannot refill (GitHub Actions) plans and starts the repair of its own failed
   * crew at once (`dispatch.repairInJob`, dispatch/gates/standby.ts `planJobRepair`).
   */
  repairInJob?: boolean;
  /**
   * A crew job of a run's shared queue (src/dispatch/leases/claims.ts): shared standby crews are claimed
   * before they launch, and other daemons' are taken once this job's own are done.
   */
  claims?: ClaimContext;
}

export interface RunStepResult extends DriverResult {
  copied: string[];
  /** Why no crew was started here: the sandbox would not run what the host runs (./preflight.ts). */
  refused?: string;
}

/** A run the preflight refused: its planned crews left planned (the next plan settles them, not counted). */
function refusedRun(planned: string[], refused: string): RunStepResult {
  const skipped = planned.map((crewId) => ({ crewId, reason: 'not started: the sandbox check refused' }));
  return {
    launched: [],
    adopted: [],
    finished: [],
    lost: [],
    skipped,
    refilled: [],
    diskWaits: 0,
    copied: [],
    refused,
  };
}

/** Crews planned for `daemon` and not started, in the order they were planned. */
export function plannedFor(layout: StateLayout, daemon: string): string[] {
  const { registry } = readCrewState(layout);
  return Object.values(registry.crews)
    .filter((c) => c.daemon === daemon && c.status === 'planned')
    .map((c) => c.crewId);
}

export async function runStep(o: RunStepOptions): Promise<RunStepResult> {
  const context = o.context ?? LOCAL_RUN;
  const refused = await crewPreflight({
    config: o.config,
    layout: o.layout,
    logger: o.logger,
    env: hostEnvOf(o.context),
  });
  if (refused) return refusedRun(plannedFor(o.layout, o.daemon), refused);
  const disk = freeDiskBytes(o.layout.root);
  await beat(o.layout, o.config, o.daemon, disk);
  const office = o.office ?? {};
  const result = await runAssignments({
    config: o.config,
    layout: o.layout,
    daemon: o.daemon,
    assignments: plannedFor(o.layout, o.daemon).map((crewId) => ({ crewId })),
    logger: o.logger,
    launch: o.launch,
    ...(o.remainingMs ? { clock: { remainingMs: o.remainingMs } } : {}),
    onProgress: o.onProgress,
    office: {
      claims: office.claims,
      ...(office.repairInJob && o.config.dispatch.repairInJob
        ? {
            repair: (crewId: string) =>
              planJobRepair(o.layout, {
                crewId,
                plannedBy: plannerOwner(context),
                ...verdictOf(gradingVerdicts(o.layout, o.logger)),
              }),
          }
        : {}),
      ...(!(office.refill ?? !context.actions)
        ? {}
        : {
            refill: (ctx: { freeDiskBytes: number; remainingMs?: number }) =>
              refillFor({
                config: o.config,
                layout: o.layout,
                daemon: o.daemon,
                logger: o.logger,
                ...ctx,
                context,
                jobStatus: office.jobStatus,
              }),
          }),
    },
    context,
  });
  const copied: string[] = [];
  if (o.bookbagsPath) {
    mkdirSync(o.bookbagsPath, { recursive: true });
    for (const f of result.finished) {
      const from = o.layout.bookbag(f.crewId);
      if (!existsSync(join(from, 'done.flag'))) continue;
      cpSync(from, join(o.bookbagsPath, f.crewId), { recursive: true });
      copied.push(f.crewId);
    }
  }
  return { ...result, copied };
}

function verdictOf(verdict: VerdictLookup | undefined): { verdict?: VerdictLookup } {
  return verdict ? { verdict } : {};
}

/** One progress line for people: `[d1 slot 0] c7-1a2b3c4d #7 running 42s`. */
export function progressLine(daemon: string, p: Progress): string {
  const where = `[${daemon}${p.slot !== undefined ? ` slot ${p.slot}` : ''}]`;
  const issue = p.issueNumber !== undefined ? ` #${p.issueNumber}` : '';
  const secs = p.elapsedMs > 0 ? ` ${Math.round(p.elapsedMs / 1000)}s` : '';
  const tail = p.outcome
    ? ` ${p.outcome}${p.detail ? `: ${p.detail.slice(0, 300)}` : ''}`
    : p.detail
      ? ` (${p.detail})`
      : '';
  return `${where} ${p.crewId}${issue} ${p.phase}${secs}${tail}`;
}
