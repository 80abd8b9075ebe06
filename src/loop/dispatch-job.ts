import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { heartbeatTtlSeconds, rosterProblem } from '../dispatch/fleet/fleet.js';
import { configuredJobTimeout, jobTimeoutNote, ttlFromSchedule } from '../dispatch/fleet/job-settings.js';
import type { JobLiveness } from '../dispatch/leases/lease.js';
import { clearPause } from '../dispatch/gates/pause.js';
import type { PlanResult } from '../dispatch/plan.js';
import { readRegistry } from '../dispatch/logs/registry.js';
import { readCrewState } from '../dispatch/leases/lease.js';
import { CLAIMS_DIR, type ClaimContext, type ClaimPort } from '../dispatch/leases/claims.js';
import { ConfigError, CorruptStateError, message } from '../errors.js';
import { markHandoff, writeHandoff } from '../handoff/handoff.js';
import { importHandoffs, type HandoffImport } from '../handoff/import.js';
import type { Logger } from '../log.js';
import { StateLayout } from '../state/layout.js';
import { ptraceWarning } from '../crew/machine/host.js';
import { actionsSchedule } from '../dispatch/fleet/schedule.js';
import { statusLinks } from '../feedback/status.js';
import { auditActor, LOCAL_RUN, type RunContext } from '../process/run-context.js';
import { planScope, unknownPullRequestNote, type PlanScope } from './event-scope.js';
import { readNextCycle, recordNextCycle, thisRun, type NextCycleDecision } from '../dispatch/next-cycle.js';
import { gradingVerdicts } from '../grading/feedback.js';
import { workflowTarget, type WorkflowTarget } from '../github/next-cycle.js';
import { type RunStepResult, beatDaemons, onScratch, planCrews, progressLine, runStep } from './steps.js';
import { runStages } from './stages.js';
import { claimsHere, claimsUnsupported } from '../github/actions-services.js';
import { createGitHubClient } from '../github/client.js';
import { octokitFeedback } from '../github/feedback-port.js';
import { octokitPort } from '../github/issues-port.js';
import { publishStatuses } from '../feedback/refresh.js';
import { watchDeliveries, type WatchResult } from '../feedback/watch.js';
import { CrewJobControl, type ControlPort } from '../feedback/crew-job-control.js';

/**
 * The job dispatch-crew does, mode by mode, without the runner: the action
 * (src/actions/dispatch-crew/) parses its inputs into one of the mode inputs below, calls
 * `dispatchJob`, and reports the result (outputs and summary). Each mode has its own input: a field
 * means one thing wherever it appears.
 */
export type DispatchJobInput = PlanInput | RunInput | HeartbeatInput | ImportInput | NextCycleInput;
export type DispatchMode = DispatchJobInput['mode'];

/** What every mode has: where the configuration and the state are, and whether to write nothing. */
interface ModeInput {
  config?: string;
  stateDir?: string;
  /** Mode plan plans on a scratch copy of the state (nothing recorded); the other modes do nothing. */
  dryRun: boolean;
}

/** The crew job's limits (modes plan and run). */
export interface JobLimits {
  /** Global cap on concurrent crews (overrides dispatch.maxCrews). */
  maxCrews?: number;
  /** The crew job's timeout-minutes: the one job limit (admission plans only what fits in it). */
  jobTimeoutMinutes?: number;
  /** When the job started: the time budget (N3.1) and the soft deadline (N3.3) count from it. */
  jobStartedAt?: Date;
}

/** Asks the Actions API about a job, for the repository the config names. */
export type JobLivenessFor = (repository: string | undefined) => JobLiveness | undefined;

export interface PlanInput extends ModeInput {
  mode: 'plan';
  limits?: JobLimits;
  clearPause?: string;
  /**
   * Plan only these issues (the workflow's event-issue input), and the issues of these pull
   * requests, each mapped through the outbox's deliveries (event-pull-request; a pull request the
   * school did not deliver plans nothing). Neither: the whole curriculum.
   */
  only?: { issues?: number[]; pullRequests?: number[] };
  /**
   * Where standby crews wait (docs/dispatch.md, "One queue per run"). `shared`: one queue for the
   * run, each crew with the daemons eligible for it, which crew jobs claim from; `daemon`: behind
   * the daemon planned for it; `auto` (default): shared in GitHub Actions on github.com and GHE.com,
   * per daemon elsewhere (GitHub Enterprise Server has no artifact service to claim with).
   */
  standbyQueue?: StandbyQueue;
  /**
   * With a token, the delivered pull requests are scanned before planning (reviews, `/school`
   * comments, failed CI; merges), so trusted feedback plans its revision crew this cycle, and the
   * status comments say "queued". `pull-requests`, `checks`, `statuses`, `actions` read;
   * `issues: write`.
   */
  token?: string;
  jobLiveness?: JobLivenessFor;
}

export interface RunInput extends ModeInput {
  mode: 'run';
  /** The fleet daemon this runner is. */
  daemon: string;
  limits?: JobLimits;
  /** Where finished bookbags are copied (default: `<handoffOut>/bookbags`). */
  bookbagsPath?: string;
  /** Directory the job hands on what it recorded (events, bookbags, claims) for a job without student code to import. */
  handoffOut?: string;
  /** The plan job's run attempt, which the claim artifacts' names carry (as the handoff's do). */
  planAttempt?: string;
  ports: RunPorts;
}

/** What a crew job talks to besides the state. */
export interface RunPorts {
  /** argv prefix that starts a crew runner. */
  launcher: readonly string[];
  jobLiveness?: JobLivenessFor;
  /** The run's claim artifacts (the action passes `actionsClaimPort`); used only in GitHub Actions off GHES, with a handoff. */
  claimPort?: ClaimPort;
  /**
   * Reads `/school stop|steer` on the issues of this job's running crews while they run
   * (src/feedback/crew-job-control.ts), for the repository the job works on; the action builds it
   * from the `control-token` input. Absent: commands reach this job's crews only through the next plan.
   */
  control?: (repository: string) => ControlPort;
  /** How often `control` reads (default `CONTROL_POLL_MS`). */
  controlEveryMs?: number;
}

export interface HeartbeatInput extends ModeInput {
  mode: 'heartbeat';
  daemon: string;
  /** Directory the beat is handed on in, for a job without student code to import. */
  handoffOut?: string;
}

export interface ImportInput extends ModeInput {
  mode: 'import';
  /** Directory holding the downloaded handoffs, one subdirectory per artifact. */
  handoffsIn: string;
  /** The run's claim artifacts, to check the claims of shared crews against (crew handoffs only). */
  claimPort?: ClaimPort;
}

export interface NextCycleInput extends ModeInput {
  mode: 'next-cycle';
  /** Runs in a row the loop may start itself (0: off). */
  nextCycleRuns?: number;
  /** Starts the workflow this run belongs to again (`workflow_dispatch`). */
  startWorkflow?: (target: WorkflowTarget) => Promise<void>;
}

export const STANDBY_QUEUES = ['auto', 'shared', 'daemon'] as const;
export type StandbyQueue = (typeof STANDBY_QUEUES)[number];

export interface PlanNotes {
  loud?: string;
  roster?: { text: string; loud: boolean };
  cleared?: string;
  ttlNote?: string;
  jobNote?: string;
  jobLimitMinutes: number;
  dryRun: boolean;
  /** The event's pull requests: mapped to their issues, or not the school's (nothing planned). */
  pullRequests?: PlanScope['pullRequests'];
  unknownPullRequests?: string[];
  /** Where this plan's standby crews wait, and why when not in one queue for the run. */
  standbyQueue?: { shared: boolean; why?: string };
}

export type DispatchJobResult =
  | { mode: 'plan'; plan: PlanResult; notes: PlanNotes; feedback?: WatchResult }
  | { mode: 'import'; imported: HandoffImport }
  | { mode: 'heartbeat'; daemon: string }
  | { mode: 'run'; daemon: string; run: RunStepResult }
  | { mode: 'next-cycle'; decision: NextCycleDecision; started: boolean; problem?: string }
  | { mode: 'dry-run'; of: string };

export interface DispatchJob {
  config: SchoolConfig;
  layout: StateLayout;
  result: DispatchJobResult;
}

/** Runs the mode `input` names in `context` (the run, built by the entry: src/process/run-context.ts). */
export async function dispatchJob(
  input: DispatchJobInput,
  logger: Logger,
  context: RunContext = LOCAL_RUN,
): Promise<DispatchJob> {
  const started = performance.now();
  const job = jobSetup(input, logger, context);
  const done = (result: DispatchJobResult): DispatchJob => ({
    config: job.config,
    layout: job.layout,
    result,
  });
  if (input.mode === 'plan') return done(await planMode(input, job, logger));
  if (input.dryRun) return done({ mode: 'dry-run', of: input.mode });
  if (input.mode === 'import') return done(await importMode(input, job, logger));
  if (input.mode === 'heartbeat') return done(await heartbeatMode(input, job));
  if (input.mode === 'next-cycle') return done(await nextCycleMode(input, job, logger));
  return done(await runMode(input, job, logger, started));
}

/** What every mode starts from: the configuration with the job's overrides, and the notes on it. */
interface JobSetup {
  config: SchoolConfig;
  layout: StateLayout;
  ttlNote?: string;
  jobNote?: string;
  jobStatus?: JobLiveness;
  /** The run this job belongs to. */
  context: RunContext;
  /** The repository the job talks to on GitHub: school.yml's, else the run's. */
  repository?: string;
}

function jobSetup(input: DispatchJobInput, logger: Logger, context: RunContext): JobSetup {
  const limits = 'limits' in input ? input.limits : undefined;
  const dispatch = {
    ...(limits?.maxCrews ? { maxCrews: limits.maxCrews } : {}),
    ...(limits?.jobTimeoutMinutes ? { jobTimeoutMinutes: limits.jobTimeoutMinutes } : {}),
  };
  const ttl = ttlFromSchedule(
    resolveConfig(input.config, {
      ...(input.stateDir ? { stateDir: input.stateDir } : {}),
      ...(Object.keys(dispatch).length ? { dispatch } : {}),
    }),
    actionsSchedule(context),
  );
  const config = ttl.config;
  if (ttl.problem) logger.warning(`dispatch-crew: ${ttl.problem}`);
  const jobNote = limits?.jobTimeoutMinutes
    ? jobTimeoutNote(configuredJobTimeout(input.config), limits.jobTimeoutMinutes)
    : undefined;
  if (jobNote) logger.warning(`dispatch-crew: ${jobNote}`);
  const liveness =
    input.mode === 'plan' ? input.jobLiveness : input.mode === 'run' ? input.ports.jobLiveness : undefined;
  const repository = config.repository ?? context.repository;
  const jobStatus = liveness?.(repository);
  return {
    config,
    layout: new StateLayout(config.stateDir, auditActor(context)),
    context,
    ...(repository ? { repository } : {}),
    ...(ttl.note ? { ttlNote: ttl.note } : {}),
    ...(jobNote ? { jobNote } : {}),
    jobStatus,
  };
}

/** Mode plan: clear pauses when asked, plan the crews (standby included), and note the roster. */
async function planMode(input: PlanInput, job: JobSetup, logger: Logger): Promise<DispatchJobResult> {
  const { config, layout, jobStatus } = job;
  // First: a standby queue this server cannot have fails the step before anything is recorded.
  const queue = standbyQueue(input.standbyQueue, job.context);
  const scope = planScope(layout, input.only?.issues, input.only?.pullRequests);
  const unknown = scope.unknown.map(unknownPullRequestNote);
  let cleared: string | undefined;
  let feedback: WatchResult | undefined;
  let plan!: PlanResult;
  let roster: ReturnType<typeof rosterProblem>;
  await runStages(
    'dispatch-crew plan',
    {
      'clear-pauses': async () => {
        if (input.clearPause?.trim()) cleared = await clearPauses(layout, input.clearPause, input.dryRun);
        if (cleared) logger.info(`dispatch-crew: ${cleared}`);
      },
      feedback: async () => {
        feedback = await scanBeforePlanning(input, job, logger);
      },
      // A dry run plans on a scratch copy of the state: nothing is recorded.
      plan: async () => {
        plan = await logger.group('Plan crews', () =>
          onScratch(layout, input.dryRun, (state) =>
            planCrews({
              config,
              layout: state,
              logger,
              context: job.context,
              mode: {
                // Crew jobs work on their own copy of the state: each gets standby crews behind its first wave.
                standby: true,
                // One queue for the run: every crew job whose daemon is eligible may claim a standby crew.
                sharedQueue: queue.shared,
                onlyIssues: scope.issues,
              },
              jobStartedAt: input.limits?.jobStartedAt,
              owners: { jobStatus },
            }),
          ),
        );
      },
      // The status comments say "queued" (with a link to this run) as soon as the crews are planned,
      // not only when the grade job ends the run (src/feedback/refresh.ts; never throws).
      statuses: () => statusesAfterPlanning(input, job, logger, scope.issues),
      roster: () => {
        roster = rosterProblem(
          plan.fleet,
          heartbeatTtlSeconds(config),
          job.context.host.SCHOOL_RUNNER_PREFIX,
        );
        if (roster && !roster.loud) logger.info(`dispatch-crew: ${roster.text}`);
      },
    },
    // A dry run reads and records nothing on GitHub.
    { skip: input.dryRun ? ['feedback', 'statuses'] : [] },
  );
  return {
    mode: 'plan',
    plan,
    ...(feedback ? { feedback } : {}),
    notes: {
      ...(plan.loud ? { loud: plan.loud } : {}),
      ...(roster ? { roster } : {}),
      ...(cleared ? { cleared } : {}),
      ...(job.ttlNote ? { ttlNote: job.ttlNote } : {}),
      ...(job.jobNote ? { jobNote: job.jobNote } : {}),
      jobLimitMinutes: config.dispatch.jobTimeoutMinutes,
      dryRun: input.dryRun,
      ...(scope.pullRequests.length ? { pullRequests: scope.pullRequests } : {}),
      ...(unknown.length ? { unknownPullRequests: unknown } : {}),
      standbyQueue: queue,
    },
  };
}

/**
 * The plan's standby queue for the `standby-queue` input. `shared` needs what a crew job claims
 * with: GitHub Actions and the artifact service, which GitHub Enterprise Server lacks; asked for
 * there, it is refused with the fix rather than planned into crews no job could claim.
 */
export function standbyQueue(
  asked: StandbyQueue | undefined,
  context: Pick<RunContext, 'actions' | 'serverUrl'>,
): { shared: boolean; why?: string } {
  asked ??= 'auto';
  const ghes = claimsUnsupported(context.serverUrl);
  if (asked === 'daemon') return { shared: false, why: 'standby-queue is daemon' };
  if (asked === 'shared') {
    if (ghes)
      throw new ConfigError(
        `dispatch-crew: standby-queue "shared" is not possible here: ${ghes}. Set standby-queue to auto or daemon.`,
      );
    return { shared: true };
  }
  if (ghes) return { shared: false, why: ghes };
  if (!context.actions)
    return { shared: false, why: 'not a GitHub Actions run (the daemons share one crew log here)' };
  return { shared: true };
}

/**
 * The feedback scan before planning (src/feedback/watch.ts): one conditional request when nothing
 * changed. Without a token or a repository, planning goes on with the feedback already recorded.
 */
async function scanBeforePlanning(
  input: PlanInput,
  { config, layout, repository }: JobSetup,
  logger: Logger,
): Promise<WatchResult | undefined> {
  if (!input.token || !repository) return undefined;
  const port = octokitFeedback(createGitHubClient({ token: input.token, logger }), repository);
  return logger.group('Read feedback on delivered pull requests', () =>
    watchDeliveries({ config, layout, logger, port }),
  );
}

/** Mode plan, with a token: publishes the status comments of the issues it concerns (`issues: write`). */
async function statusesAfterPlanning(
  input: PlanInput,
  { config, layout, repository, context }: JobSetup,
  logger: Logger,
  only: ReadonlySet<number> | undefined,
): Promise<void> {
  if (!input.token || !repository || !config.grading.comment) return;
  const github = octokitPort(createGitHubClient({ token: input.token, logger }), repository);
  const links = statusLinks(context);
  await logger.group('Status comments', () =>
    publishStatuses({ config, layout, logger, github, ...links, ...(only ? { only } : {}) }),
  );
}

/** Mode import: the crew jobs' handoffs into this job's state. */
async function importMode(input: ImportInput, job: JobSetup, logger: Logger): Promise<DispatchJobResult> {
  const claims = importClaims(input, job.context);
  let imported!: HandoffImport;
  await runStages('dispatch-crew import', {
    import: async () => {
      imported = await logger.group("Import the crew jobs' handoffs", () =>
        importHandoffs(job.layout, input.handoffsIn, { config: job.config, logger, claims }),
      );
    },
  });
  return { mode: 'import', imported };
}

/**
 * The claim port for an import of crew handoffs (the grade job), where shared crews' claims are
 * checked against the run's list; none for the roster's heartbeats, which carry no crew, nor off
 * GitHub Actions or on GHES, where nothing was claimed.
 */
function importClaims(input: ImportInput, context: RunContext): ClaimPort | undefined {
  if (!input.claimPort || !claimsHere(context)) return undefined;
  const root = input.handoffsIn;
  const crews = existsSync(root) && readdirSync(root).some((d) => d.startsWith('school-handoff-'));
  return crews ? input.claimPort : undefined;
}

/**
 * Safe outputs: a job that runs students saves no state; it hands on what it appended. Returns
 * the function that writes the handoff (nothing without a handoff path).
 */
function handOn(input: RunInput | HeartbeatInput, layout: StateLayout, daemon: string): () => void {
  const out = input.handoffOut;
  const marks = out ? markHandoff(layout) : undefined;
  return () => {
    if (marks && out) writeHandoff(layout, marks, out, daemon);
  };
}

/** Mode heartbeat: a runner beats the roster so the next plan may assign to it (a silent daemon is offline). */
async function heartbeatMode(input: HeartbeatInput, job: JobSetup): Promise<DispatchJobResult> {
  const daemon = input.daemon;
  const handoff = handOn(input, job.layout, daemon);
  await runStages('dispatch-crew heartbeat', { beat: () => beatDaemons(job.layout, job.config, [daemon]) });
  handoff();
  return { mode: 'heartbeat', daemon };
}

/** Mode run: this daemon's crews, within the job's remaining time, handed on even when the run fails. */
async function runMode(
  input: RunInput,
  job: JobSetup,
  logger: Logger,
  started: number,
): Promise<DispatchJobResult> {
  const { config, layout, jobStatus } = job;
  const daemon = input.daemon;
  const handoff = handOn(input, layout, daemon);
  const ptrace = ptraceWarning();
  if (ptrace) logger.warning(`dispatch-crew: ${ptrace}`);
  const budgetMs =
    config.dispatch.jobTimeoutMinutes * 60_000 -
    (input.limits?.jobStartedAt ? Math.max(0, Date.now() - input.limits.jobStartedAt.getTime()) : 0);
  const bookbagsPath =
    input.bookbagsPath ?? (input.handoffOut ? join(input.handoffOut, 'bookbags') : undefined);
  const claims = runClaims(input, logger, job.context, () => plannedAttempt(layout, job.context.run?.id));
  const control = crewJobControl(input, job, logger);
  control?.start();
  // Handed on also when the run fails: finished crews and released leases must not be lost.
  let run!: RunStepResult;
  const runCrews = () =>
    logger.group(`Run the crews of daemon ${daemon}`, () =>
      runStep({
        config,
        layout,
        daemon,
        logger,
        launch: { launcher: input.ports.launcher },
        context: job.context,
        bookbagsPath,
        // N3.3: the job's remaining time, measured in-process on the monotonic clock (N3.2).
        remainingMs: () => budgetMs - (performance.now() - started),
        office: {
          // It cannot ask the office (its state is this job's copy); its own repairs it can plan.
          repairInJob: true,
          jobStatus,
          claims,
        },
        onProgress: (p) => logger.info(progressLine(daemon, p)),
      }),
    );
  await runStages('dispatch-crew run', { run: async () => void (run = await runCrews()) }).finally(
    async () => {
      await control?.stop();
      handoff();
    },
  );
  return { mode: 'run', daemon, run };
}

/**
 * The reader of `/school stop|steer` for this job's running crews, when the job has a control port
 * and knows its repository; a job without either says so once (commands then wait for the next plan).
 */
function crewJobControl(input: RunInput, job: JobSetup, logger: Logger): CrewJobControl | undefined {
  if (!input.ports.control) return undefined;
  if (!job.repository) {
    logger.warning(
      'dispatch-crew: /school stop|steer are not read in this job: no repository (set repository in school.yml)',
    );
    return undefined;
  }
  return new CrewJobControl({
    layout: job.layout,
    config: job.config,
    daemon: input.daemon,
    logger,
    port: input.ports.control(job.repository),
    ...(input.ports.controlEveryMs ? { everyMs: input.ports.controlEveryMs } : {}),
  });
}

/**
 * What a crew job claims shared standby crews with: its run's names, and `<handoff>/claims` for the
 * claim files the grade job checks. Only in GitHub Actions off GHES and with a handoff (the claim
 * files travel in it). The plan's attempt names the claims: the `plan-attempt` input, else what the
 * plan recorded on the shared crews it planned in this run (a workflow written before the input
 * existed); without either it cannot name a claim, and says so.
 */
export function runClaims(
  input: RunInput,
  logger: Logger,
  context: RunContext,
  recorded: () => string | undefined = () => undefined,
): ClaimContext | undefined {
  const port = input.ports.claimPort;
  if (!port || !input.handoffOut || !claimsHere(context)) return undefined;
  const runId = context.run?.id ?? '';
  const jobAttempt = context.run?.attempt ?? '1';
  if (!/^\d+$/.test(runId) || !/^\d+$/.test(jobAttempt)) {
    logger.warning(
      `dispatch-crew: no claims from the run's shared queue: GITHUB_RUN_ID "${runId}" or GITHUB_RUN_ATTEMPT "${jobAttempt}" is not a number`,
    );
    return undefined;
  }
  const attempt = input.planAttempt ?? recorded();
  if (!attempt) {
    logger.warning(
      "dispatch-crew: no claims from the run's shared queue: the plan-attempt input is empty (pass the plan job's attempt output, as school-loop.yml does) and this job's state holds no shared crew planned by this run; this job claims no shared standby crew",
    );
    return undefined;
  }
  return {
    port,
    runId,
    attempt,
    jobAttempt,
    dir: join(input.handoffOut, CLAIMS_DIR),
  };
}

/** The attempt of this run whose plan recorded shared standby crews (their `plannedBy`), if any. */
export function plannedAttempt(layout: StateLayout, runId: string | undefined): string | undefined {
  if (!runId) return undefined;
  let attempt: number | undefined;
  for (const c of Object.values(readCrewState(layout).registry.crews)) {
    const by = c.plannedBy;
    if (!c.eligible || by?.kind !== 'actions' || by.runId !== runId || !/^\d+$/.test(by.runAttempt)) continue;
    attempt = Math.max(attempt ?? 0, Number(by.runAttempt));
  }
  return attempt === undefined ? undefined : String(attempt);
}

/**
 * Mode next-cycle (the grade job, after its save): start the next run at once when work is waiting
 * (dispatch/next-cycle.ts). The record is written first, so the next run knows its place in the
 * chain; a failed request is a warning (the schedule goes on), never a failed grade.
 */
async function nextCycleMode(
  input: NextCycleInput,
  job: JobSetup,
  logger: Logger,
): Promise<DispatchJobResult> {
  const run = thisRun(job.context);
  if (!run) {
    const decision = { start: false, chain: 0, reason: 'not a GitHub Actions run' };
    return { mode: 'next-cycle', decision, started: false };
  }
  const decision = readNextCycle(
    job.layout,
    job.config,
    run,
    input.nextCycleRuns ?? 0,
    gradingVerdicts(job.layout, logger),
  );
  if (!decision.start) {
    logger.info(`dispatch-crew: next cycle not started: ${decision.reason}`);
    return { mode: 'next-cycle', decision, started: false };
  }
  const target = workflowTarget(job.context);
  const problem =
    typeof target === 'string' ? target : input.startWorkflow ? undefined : 'no token to start a workflow';
  if (problem || typeof target === 'string') {
    logger.warning(`dispatch-crew: next cycle not started: ${problem}; the schedule goes on`);
    return { mode: 'next-cycle', decision, started: false, ...(problem ? { problem } : {}) };
  }
  await recordNextCycle(job.layout, run, decision.chain);
  try {
    await input.startWorkflow!(target);
  } catch (e) {
    const why = `starting ${target.file} on ${target.ref} failed: ${message(e)} (the job needs actions: write, the workflow a workflow_dispatch trigger)`;
    logger.warning(`dispatch-crew: next cycle not started: ${why}; the schedule goes on`);
    return { mode: 'next-cycle', decision, started: false, problem: why };
  }
  logger.info(
    `dispatch-crew: next cycle started (${target.file} on ${target.ref}, run ${decision.chain} of at most ${input.nextCycleRuns} in a row): ${decision.reason}`,
  );
  return { mode: 'next-cycle', decision, started: true };
}

/** Lifts every launch pause with the given reason (the workflow input clear-pause). */
async function clearPauses(layout: StateLayout, reason: string, dryRun: boolean): Promise<string> {
  if (dryRun) return `dry run: the pauses are not cleared (reason given: ${reason.trim()}).`;
  let registry;
  try {
    registry = readRegistry(layout);
  } catch (e) {
    if (!(e instanceof CorruptStateError)) throw e;
    // Dispatch stays denied while the registry is quarantined; the pause can still be lifted.
  }
  const { cleared } = await clearPause(layout, reason, registry);
  return cleared.length === 0
    ? 'clear-pause: no pause was in force.'
    : `clear-pause: lifted ${cleared.length} pause(s), reason recorded: ${reason.trim()}`;
}
