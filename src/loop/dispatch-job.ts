import { join } from 'node:path';
import { resolveConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { heartbeatTtlSeconds, rosterProblem } from '../dispatch/fleet.js';
import { configuredJobTimeout, jobTimeoutNote, ttlFromSchedule } from '../dispatch/job-settings.js';
import type { JobLiveness } from '../dispatch/lease.js';
import { clearPause } from '../dispatch/pause.js';
import type { PlanResult } from '../dispatch/plan.js';
import { readRegistry } from '../dispatch/registry.js';
import { ConfigError, CorruptStateError } from '../errors.js';
import { booleanInput, wholeNumberInput } from '../github/inputs.js';
import { z } from 'zod';
import { markHandoff, writeHandoff } from '../handoff/handoff.js';
import { importHandoffs, type HandoffImport } from '../handoff/import.js';
import { handoffSummary } from '../handoff/summary.js';
import type { Logger } from '../log.js';
import type { SummaryBlock } from '../schemas/summary.js';
import { StateLayout } from '../state/layout.js';
import { ptraceWarning } from '../crew/host.js';
import { beatDaemon, planStep, progressLine, runStep, type RunStepResult } from './steps.js';

/**
 * The job dispatch-crew does, mode by mode, without the runner: the action entry parses its inputs
 * into `DispatchJobInput`, calls `dispatchJob`, and renders `dispatchSummary(result)`.
 */
export interface DispatchJobInput {
  mode: 'plan' | 'run' | 'heartbeat' | 'import';
  daemon?: string;
  config?: string;
  stateDir?: string;
  maxCrews?: number;
  /** The crew job's timeout-minutes: the one job limit (admission plans only what fits in it). */
  jobTimeoutMinutes?: number;
  clearPause?: string;
  /** Mode plan: plan only these issues (the workflow's event-issue input); empty plans all. */
  onlyIssues?: number[];
  bookbagsPath?: string;
  handoffPath?: string;
  jobStartedAt?: Date;
  dryRun: boolean;
  /** argv prefix that starts a crew runner (mode run). */
  launcher: readonly string[];
  /** Asks the Actions API about a job, for the repository the config names. */
  jobLiveness?: (repository: string | undefined) => JobLiveness | undefined;
}

const dispatchInputsSchema = z.object({
  mode: z.enum(['plan', 'run', 'heartbeat', 'import'], {
    message: 'mode: expected "plan", "run", "heartbeat" or "import"',
  }),
  daemon: z.string().optional(),
  config: z.string().optional(),
  stateDir: z.string().optional(),
  maxCrews: wholeNumberInput('max-crews'),
  jobTimeoutMinutes: wholeNumberInput('job-timeout-minutes'),
  clearPause: z.string().optional(),
  onlyIssues: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const parts = (v ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      const out: number[] = [];
      for (const p of parts) {
        const n = Number(p);
        if (!/^\d+$/.test(p) || !Number.isSafeInteger(n) || n <= 0) {
          ctx.addIssue({
            code: 'custom',
            message: `only-issues: expected issue numbers separated by commas (e.g. 12,14), found "${p.slice(0, 40)}"`,
          });
          return z.NEVER;
        }
        out.push(n);
      }
      return out.length ? out : undefined;
    }),
  bookbagsPath: z.string().optional(),
  handoffPath: z.string().optional(),
  jobStartedAt: z.iso
    .datetime({ message: 'job-started-at: expected an ISO time, e.g. 2026-01-01T00:00:00Z' })
    .optional(),
  dryRun: booleanInput('dry-run'),
  token: z.string().optional(),
});

/** dispatch-crew's inputs (strings as the runner gives them) into one typed object, or a clear error. */
export function parseDispatchInputs(raw: Record<string, string | undefined>) {
  const r = dispatchInputsSchema.safeParse(raw);
  if (!r.success)
    throw new ConfigError(`dispatch-crew inputs: ${r.error.issues.map((i) => i.message).join('; ')}`);
  if (r.data.mode === 'import' && !r.data.handoffPath)
    throw new ConfigError(
      'dispatch-crew: mode import needs the handoff-path input (the downloaded handoffs).',
    );
  if ((r.data.mode === 'run' || r.data.mode === 'heartbeat') && !r.data.daemon)
    throw new ConfigError(
      `dispatch-crew: mode ${r.data.mode} needs the daemon input (the fleet daemon id this runner is).`,
    );
  return r.data;
}

export interface PlanNotes {
  loud?: string;
  roster?: { text: string; loud: boolean };
  cleared?: string;
  ttlNote?: string;
  jobNote?: string;
  jobLimitMinutes: number;
  dryRun: boolean;
}

export type DispatchJobResult =
  | { mode: 'plan'; plan: PlanResult; notes: PlanNotes }
  | { mode: 'import'; imported: HandoffImport }
  | { mode: 'heartbeat'; daemon: string }
  | { mode: 'run'; daemon: string; run: RunStepResult }
  | { mode: 'dry-run'; of: string };

export interface DispatchJob {
  config: SchoolConfig;
  layout: StateLayout;
  result: DispatchJobResult;
}

export async function dispatchJob(input: DispatchJobInput, logger: Logger): Promise<DispatchJob> {
  const started = performance.now();
  const job = jobSetup(input, logger);
  const done = (result: DispatchJobResult): DispatchJob => ({
    config: job.config,
    layout: job.layout,
    result,
  });
  if (input.mode === 'plan') return done(await planMode(input, job, logger));
  if (input.dryRun) return done({ mode: 'dry-run', of: input.mode });
  if (input.mode === 'import') return done(await importMode(input, job, logger));
  if (input.mode === 'heartbeat') return done(await heartbeatMode(input, job));
  return done(await runMode(input, job, logger, started));
}

/** What every mode starts from: the configuration with the job's overrides, and the notes on it. */
interface JobSetup {
  config: SchoolConfig;
  layout: StateLayout;
  ttlNote?: string;
  jobNote?: string;
  jobStatus?: JobLiveness;
}

function jobSetup(input: DispatchJobInput, logger: Logger): JobSetup {
  const dispatch = {
    ...(input.maxCrews ? { maxCrews: input.maxCrews } : {}),
    ...(input.jobTimeoutMinutes ? { jobTimeoutMinutes: input.jobTimeoutMinutes } : {}),
  };
  const ttl = ttlFromSchedule(
    resolveConfig(input.config, {
      ...(input.stateDir ? { stateDir: input.stateDir } : {}),
      ...(Object.keys(dispatch).length ? { dispatch } : {}),
    }),
  );
  const config = ttl.config;
  if (ttl.problem) logger.warning(`dispatch-crew: ${ttl.problem}`);
  const jobNote = input.jobTimeoutMinutes
    ? jobTimeoutNote(configuredJobTimeout(input.config), input.jobTimeoutMinutes)
    : undefined;
  if (jobNote) logger.warning(`dispatch-crew: ${jobNote}`);
  const jobStatus = input.jobLiveness?.(config.repository ?? process.env.GITHUB_REPOSITORY);
  return {
    config,
    layout: new StateLayout(config.stateDir),
    ...(ttl.note ? { ttlNote: ttl.note } : {}),
    ...(jobNote ? { jobNote } : {}),
    ...(jobStatus ? { jobStatus } : {}),
  };
}

/** Mode plan: clear pauses when asked, plan the crews (standby included), and note the roster. */
async function planMode(input: DispatchJobInput, job: JobSetup, logger: Logger): Promise<DispatchJobResult> {
  const { config, layout, jobStatus } = job;
  const cleared = input.clearPause?.trim()
    ? await clearPauses(layout, input.clearPause, input.dryRun)
    : undefined;
  if (cleared) logger.info(`dispatch-crew: ${cleared}`);
  const plan = await logger.group('Plan crews', () =>
    planStep({
      config,
      layout,
      logger,
      dryRun: input.dryRun,
      // Crew jobs work on their own copy of the state: each gets standby crews behind its first wave.
      standby: true,
      ...(input.onlyIssues?.length ? { onlyIssues: new Set(input.onlyIssues) } : {}),
      ...(input.jobStartedAt ? { jobStartedAt: input.jobStartedAt } : {}),
      ...(jobStatus ? { jobStatus } : {}),
    }),
  );
  const roster = rosterProblem(plan.fleet, heartbeatTtlSeconds(config));
  if (roster && !roster.loud) logger.info(`dispatch-crew: ${roster.text}`);
  return {
    mode: 'plan',
    plan,
    notes: {
      ...(plan.loud ? { loud: plan.loud } : {}),
      ...(roster ? { roster } : {}),
      ...(cleared ? { cleared } : {}),
      ...(job.ttlNote ? { ttlNote: job.ttlNote } : {}),
      ...(job.jobNote ? { jobNote: job.jobNote } : {}),
      jobLimitMinutes: config.dispatch.jobTimeoutMinutes,
      dryRun: input.dryRun,
    },
  };
}

/** Mode import: the crew jobs' handoffs into this job's state. */
async function importMode(
  input: DispatchJobInput,
  job: JobSetup,
  logger: Logger,
): Promise<DispatchJobResult> {
  const imported = await logger.group("Import the crew jobs' handoffs", () =>
    importHandoffs(job.layout, input.handoffPath!, { config: job.config, logger }),
  );
  return { mode: 'import', imported };
}

/**
 * Safe outputs: a job that runs students saves no state; it hands on what it appended. Returns
 * the function that writes the handoff (nothing without a handoff path).
 */
function handOn(input: DispatchJobInput, layout: StateLayout, daemon: string): () => void {
  const marks = input.handoffPath ? markHandoff(layout) : undefined;
  return () => {
    if (marks) writeHandoff(layout, marks, input.handoffPath!, daemon);
  };
}

/** Mode heartbeat: a runner beats the roster so the next plan may assign to it (a silent daemon is offline). */
async function heartbeatMode(input: DispatchJobInput, job: JobSetup): Promise<DispatchJobResult> {
  const daemon = input.daemon!;
  const handoff = handOn(input, job.layout, daemon);
  await beatDaemon(job.layout, job.config, daemon);
  handoff();
  return { mode: 'heartbeat', daemon };
}

/** Mode run: this daemon's crews, within the job's remaining time, handed on even when the run fails. */
async function runMode(
  input: DispatchJobInput,
  job: JobSetup,
  logger: Logger,
  started: number,
): Promise<DispatchJobResult> {
  const { config, layout, jobStatus } = job;
  const daemon = input.daemon!;
  const handoff = handOn(input, layout, daemon);
  const ptrace = ptraceWarning();
  if (ptrace) logger.warning(`dispatch-crew: ${ptrace}`);
  const budgetMs =
    config.dispatch.jobTimeoutMinutes * 60_000 -
    (input.jobStartedAt ? Math.max(0, Date.now() - input.jobStartedAt.getTime()) : 0);
  const bookbagsPath =
    input.bookbagsPath ?? (input.handoffPath ? join(input.handoffPath, 'bookbags') : undefined);
  // Handed on also when the run fails: finished crews and released leases must not be lost.
  const run = await logger
    .group(`Run the crews of daemon ${daemon}`, () =>
      runStep({
        config,
        layout,
        daemon,
        logger,
        launcher: input.launcher,
        ...(bookbagsPath ? { bookbagsPath } : {}),
        // N3.3: the job's remaining time, measured in-process on the monotonic clock (N3.2).
        remainingMs: () => budgetMs - (performance.now() - started),
        ...(jobStatus ? { jobStatus } : {}),
        onProgress: (p) => logger.info(progressLine(daemon, p)),
      }),
    )
    .finally(handoff);
  return { mode: 'run', daemon, run };
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

/** Outputs carry identifiers and counts only: daemon ids, labels from school.yml, crew ids. */
export function dispatchOutputs(r: DispatchJobResult): Record<string, string> {
  switch (r.mode) {
    case 'plan':
      return {
        matrix: JSON.stringify(
          r.plan.matrix.map((m) => ({ daemon: m.daemon, labels: m.labels, assignments: m.assignments })),
        ),
        // Every configured daemon's id, work or not: the roster job beats each one.
        fleet: JSON.stringify(r.plan.fleet.map((d) => d.id)),
        admitted: String(r.plan.assignments.length),
        refused: String(r.plan.refused.length),
      };
    case 'import':
      return {
        imported: String(r.imported.dirs.reduce((n, d) => n + d.accepted, 0)),
        refused: String(r.imported.refused.length),
      };
    case 'run':
      return {
        finished: String(r.run.finished.length),
        lost: String(r.run.lost.length),
        paused: r.run.paused ? 'true' : 'false',
      };
    default:
      return {};
  }
}

/** The job summary of each mode, as blocks; `board` is the school board appended below it. */
export function dispatchSummary(r: DispatchJobResult, board?: string): SummaryBlock[] {
  const tail: SummaryBlock[] = board ? [{ raw: board }] : [];
  if (r.mode === 'import') return [{ raw: handoffSummary(r.imported) }];
  if (r.mode === 'run') {
    return [
      { heading: `dispatch-crew: daemon ${r.daemon}` },
      ...(r.run.paused ? [{ raw: `**${r.run.paused}**` }] : []),
      {
        table: {
          header: ['crew', 'outcome', 'reason'],
          rows: [
            ...r.run.finished.map((f) => [f.crewId, f.outcome, f.reason]),
            ...r.run.lost.map((id) => [id, 'lost', 'unexplained exit: launches paused']),
            ...r.run.skipped.map((k) => [k.crewId, 'not started', k.reason]),
          ],
        },
      },
      ...tail,
    ];
  }
  if (r.mode !== 'plan') return [];
  const { plan, notes } = r;
  const raw = (text: string | undefined, bold = false): SummaryBlock[] =>
    text ? [{ raw: bold ? `**${text}**` : text }] : [];
  return [
    { heading: 'dispatch-crew: plan' },
    ...raw(notes.loud, true),
    ...raw(notes.roster?.text, notes.roster?.loud),
    ...raw(plan.blocked ? `Blocked: ${plan.blocked}` : undefined),
    ...raw(notes.cleared),
    ...raw(notes.ttlNote),
    ...raw(notes.jobNote, true),
    { raw: `Crew job limit: ${notes.jobLimitMinutes} minutes.` },
    ...raw(plan.paused),
    {
      raw: `Admitted ${plan.assignments.length}${standbyNote(plan)}, refused ${plan.refused.length}${notes.dryRun ? ' (dry run: nothing recorded)' : ''}.`,
    },
    {
      table: {
        header: ['crew', 'issue', 'daemon', 'agent', 'starts'],
        rows: plan.assignments.map((a) => [
          a.crewId,
          `#${a.issueNumber}`,
          a.daemon,
          a.agent,
          a.queued ? 'when a slot frees' : 'at once',
        ]),
      },
    },
    ...(plan.refused.length
      ? [
          {
            table: {
              header: ['issue', 'refused because'],
              rows: plan.refused.map((x) => [`#${x.issue}`, x.reason]),
            },
          },
        ]
      : []),
    {
      table: {
        header: ['daemon', 'online', 'slots', 'busy', 'assigned'],
        rows: plan.fleet.map((d) => [
          d.id,
          d.online ? 'yes' : `no (${d.offlineReason ?? 'offline'})`,
          String(d.slots),
          String(d.busy),
          String(d.assigned),
        ]),
      },
    },
    ...tail,
  ];
}

/** ` (2 at once, 5 on standby behind them)` when the plan put crews on standby behind the first wave. */
function standbyNote(plan: PlanResult): string {
  const standby = plan.assignments.filter((a) => a.queued).length;
  return standby ? ` (${plan.assignments.length - standby} at once, ${standby} on standby behind them)` : '';
}
