import { cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { resolveConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { verifyOnCleanCheckout } from '../crew/clean-checkout.js';
import { deliveryFor } from '../delivery/setup.js';
import { ConfigError } from '../errors.js';
import { createGitHubClient } from '../github/client.js';
import { booleanInput, wholeNumberInput } from '../github/inputs.js';
import { drain, type DrainOptions, type DrainResult } from '../grading/drain.js';
import { octokitPort } from '../grading/github-port.js';
import { octokitFeedback } from '../feedback/port.js';
import { importBookbags } from '../grading/import.js';
import { judgeGrader } from '../grading/judge-verify.js';
import { drainProgress } from '../grading/progress.js';
import {
  alertRefusals,
  applicableJobs,
  appliedGrader,
  loadVerdicts,
  recordVerdictSpend,
  recordingGrader,
  verdictsDigest,
  writeVerdicts,
  type Refusal,
  type VerdictEntry,
} from '../grading/verdicts.js';
import { GradingQueue, pendingKeys, type JobState } from '../grading/queue.js';
import { countsLine, deadLetterTable, verdictTable, type Table } from '../grading/report.js';
import { handoffDirs } from '../handoff/handoff.js';
import { importHandoffs } from '../handoff/import.js';
import type { Logger } from '../log.js';
import type { SummaryBlock } from '../schemas/summary.js';
import { escapeHtml } from '../security/html.js';
import { StateLayout } from '../state/layout.js';

/**
 * The job drain-grading does, without the runner: import what crew jobs handed on, requeue, drain
 * the queue (judges, ledger, outbox, delivery), and describe it. The action entry parses its inputs
 * with `parseDrainInputs`, calls `drainJob`, and renders `drainSummary(result)`.
 *
 * Three modes (docs/grading.md, "Where each judge runs"):
 * - `drain` (default, and `school drain`): the judges run here, in their sandbox, and the verdicts
 *   are applied here — for a machine where no write token sits next to them;
 * - `judge` (the workflow's `judge` job, no write token): the judges run on a throwaway copy of
 *   the state, with verification re-run on a clean checkout; nothing is delivered or saved; the
 *   verdicts are written to `verdicts-path` for the grade job;
 * - `apply` (the `grade` job, write token): no judge runs; the verdicts in `verdicts-path` are
 *   validated as data and applied (./../grading/verdicts.ts); a job without one stays queued.
 */
export const DRAIN_MODES = ['drain', 'judge', 'apply'] as const;
export type DrainMode = (typeof DRAIN_MODES)[number];

const drainInputsSchema = z.object({
  mode: z
    .string()
    .optional()
    .transform((v, c) => {
      const m = v || 'drain';
      if ((DRAIN_MODES as readonly string[]).includes(m)) return m as DrainMode;
      c.addIssue({
        code: 'custom',
        message: `mode: "${v}" is not one of ${DRAIN_MODES.join(', ')}`,
      });
      return z.NEVER;
    }),
  verdictsPath: z.string().optional(),
  verdictsDigest: z
    .string()
    .optional()
    .refine((v) => !v || /^sha256:[0-9a-f]{64}$/.test(v), {
      message: "verdicts-digest: expected sha256:<64 hex digits>, the judge step's verdicts-digest output",
    }),
  maxWorkers: wholeNumberInput('max-workers'),
  maxAttempts: wholeNumberInput('max-attempts'),
  requeue: z.string().optional(),
  listDeadLetters: booleanInput('list-dead-letters'),
  dryRun: booleanInput('dry-run'),
  bookbagsPath: z.string().optional(),
  config: z.string().optional(),
  stateDir: z.string().optional(),
  token: z.string().optional(),
  deliveryToken: z.string().optional(),
});

export type DrainJobInput = ReturnType<typeof parseDrainInputs>;

/** drain-grading's inputs (strings as the runner gives them) into one typed object. */
export function parseDrainInputs(raw: Record<string, string | undefined>) {
  const r = drainInputsSchema.safeParse(raw);
  if (!r.success)
    throw new ConfigError(`drain-grading inputs: ${r.error.issues.map((i) => i.message).join('; ')}`);
  const requeue = (r.data.requeue ?? '').split(/[\s,]+/).filter(Boolean);
  if (r.data.mode !== 'drain' && !r.data.verdictsPath)
    throw new ConfigError(
      `drain-grading inputs: mode ${r.data.mode} needs verdicts-path (the directory of verdicts.json)`,
    );
  return { ...r.data, requeue };
}

export type DrainJobResult =
  | { mode: 'read-only'; pending: number; dead: JobState[] }
  | {
      mode: 'drain';
      drained: DrainResult;
      pending: number;
      dead: JobState[];
      /** apply: verdicts refused (each alerted), and why none were read at all. */
      refused?: Refusal[];
      missing?: string;
    }
  | {
      mode: 'judge';
      drained: DrainResult;
      verdicts: number;
      file: string;
      digest: string;
      pending: number;
      dead: JobState[];
    };

export interface DrainJob {
  config: SchoolConfig;
  layout: StateLayout;
  result: DrainJobResult;
}

export async function drainJob(inputs: DrainJobInput, logger: Logger): Promise<DrainJob> {
  const config = resolveConfig(inputs.config, inputs.stateDir ? { stateDir: inputs.stateDir } : {});
  const layout = new StateLayout(config.stateDir);
  const queue = new GradingQueue(layout, (m) => logger.warning(m));
  const done = (result: DrainJobResult): DrainJob => ({ config, layout, result });

  // list-dead-letters and dry-run only read: nothing is imported, requeued, graded or delivered.
  if (inputs.listDeadLetters || inputs.dryRun) {
    const dead = queue.deadLetters();
    const pending = pendingKeys(queue.state(), new Date()).length;
    logger.info(`${pending} job(s) pending, ${dead.length} dead letter(s)`);
    for (const d of dead)
      logger.info(`dead letter ${d.job.jobKey} (${d.attempts} attempts): ${d.lastError ?? ''}`);
    return done({ mode: 'read-only', pending, dead });
  }
  if (inputs.mode === 'judge') return judgeJob(inputs, config, logger);

  await importAndRequeue(inputs, config, layout, queue, logger);
  const repository = config.repository ?? process.env.GITHUB_REPOSITORY;
  const client = inputs.token && repository ? createGitHubClient({ token: inputs.token, logger }) : undefined;
  const github = client && repository ? octokitPort(client, repository) : undefined;
  // Merged or closed delivered pull requests are the last judge (src/feedback/watch.ts).
  const feedback = client && repository ? octokitFeedback(client, repository) : undefined;
  if (!github)
    logger.warning('no token or repository: labels and comments stay in the outbox for a later drain');
  // Accepted work becomes a branch and a pull request (docs/delivery.md). A pull request opened with
  // the workflow's GITHUB_TOKEN triggers no workflows: delivery-token takes an App or PAT token.
  const token = inputs.deliveryToken ?? inputs.token;
  const delivery = deliveryFor({
    config,
    layout,
    logger,
    actions: true,
    ...(token ? { token } : {}),
    ...(repository ? { repository } : {}),
  });
  let applied: Pick<DrainOptions, 'only' | 'grade'> = {};
  let verdicts: { refused: Refusal[]; missing?: string } | undefined;
  if (inputs.mode === 'apply') {
    // No judge runs in this process: the judge job's verdicts, validated as data, are applied.
    const now = new Date();
    const state = queue.state();
    const loaded = await loadVerdicts(
      layout,
      inputs.verdictsPath,
      state,
      now,
      inputs.verdictsDigest || undefined,
    );
    await alertRefusals(layout, loaded.refused, logger);
    for (const x of loaded.skipped) logger.info(`verdict for ${x.jobKey} not applied now: ${x.reason}`);
    await recordVerdictSpend(layout, loaded);
    if (loaded.missing)
      logger.warning(`${loaded.missing}: every pending job stays queued for the next cycle`);
    const { keys, unreadable } = await applicableJobs(layout, state, loaded, now);
    const waiting = pendingKeys(state, now).filter((k) => !keys.has(k)).length;
    if (waiting > 0) logger.info(`${waiting} pending job(s) have no usable verdict: they stay queued`);
    applied = { only: (k) => keys.has(k), grade: appliedGrader(loaded, unreadable) };
    verdicts = { refused: loaded.refused, ...(loaded.missing ? { missing: loaded.missing } : {}) };
  }
  const drained = await logger.group('Drain the grading queue', () =>
    drain({
      config,
      layout,
      logger,
      github,
      delivery,
      ...(feedback ? { feedback } : {}),
      maxWorkers: inputs.maxWorkers,
      maxAttempts: inputs.maxAttempts,
      progress: drainProgress({ logger }),
      ...applied,
    }),
  );
  logger.info(countsLine(drained));
  const pending = pendingKeys(queue.state(), new Date()).length;
  return done({ mode: 'drain', drained, pending, dead: queue.deadLetters(), ...verdicts });
}

/** Imports what the crew jobs handed on (`bookbags-path`), then requeues the named dead letters. */
async function importAndRequeue(
  inputs: DrainJobInput,
  config: SchoolConfig,
  layout: StateLayout,
  queue: GradingQueue,
  logger: Logger,
): Promise<void> {
  if (inputs.bookbagsPath) {
    const from = inputs.bookbagsPath;
    await logger.group('Import bookbags', async () => {
      // Handoffs of crew jobs are validated and imported whole (events and bookbags).
      if (handoffDirs(from).length) {
        const h = await importHandoffs(layout, from, { config, logger });
        logger.info(`imported ${h.dirs.length} handoff(s); refused ${h.refused.length} item(s)`);
        return;
      }
      const r = await importBookbags(layout, from, logger);
      logger.info(
        `imported ${r.imported} bookbag(s), enqueued ${r.enqueued} new job(s), skipped ${r.skipped.length}`,
      );
    });
  }
  for (const key of inputs.requeue) {
    const j = await queue.requeue(key);
    logger.info(`requeued ${key}; previous failure: ${j.previousFailure ?? ''}`);
  }
}

/**
 * The judge job: the judges on a throwaway copy of the state (the restored state is not touched and
 * nothing is saved), delivery and GitHub off, every verdict written to `verdicts-path`.
 */
async function judgeJob(inputs: DrainJobInput, restored: SchoolConfig, logger: Logger): Promise<DrainJob> {
  const copy = mkdtempSync(join(tmpdir(), 'school-judge-state-'));
  cpSync(resolve(restored.stateDir), copy, {
    recursive: true,
    filter: (src) => !src.endsWith('.lock'),
  });
  const config: SchoolConfig = { ...restored, stateDir: copy };
  const layout = new StateLayout(copy);
  const queue = new GradingQueue(layout, (m) => logger.warning(m));
  await importAndRequeue(inputs, config, layout, queue, logger);
  const entries: VerdictEntry[] = [];
  const drained = await logger.group('Judge the pending jobs', () =>
    drain({
      config,
      layout,
      logger,
      maxWorkers: inputs.maxWorkers,
      maxAttempts: inputs.maxAttempts,
      grade: recordingGrader(layout, judgeGrader({ config, layout, verifyOnCleanCheckout }), entries),
      progress: drainProgress({ logger }),
    }),
  );
  mkdirSync(inputs.verdictsPath!, { recursive: true });
  const file = writeVerdicts(inputs.verdictsPath!, entries);
  logger.info(`${entries.length} verdict(s) handed on in ${file}`);
  const pending = pendingKeys(queue.state(), new Date()).length;
  return {
    config,
    layout,
    result: {
      mode: 'judge',
      drained,
      verdicts: entries.length,
      file,
      digest: verdictsDigest(readFileSync(file)),
      pending,
      dead: queue.deadLetters(),
    },
  };
}

export function drainOutputs(r: DrainJobResult): Record<string, string> {
  const common = { 'dead-letters': String(r.dead.length), pending: String(r.pending) };
  if (r.mode === 'read-only') return common;
  const d = r.drained;
  return {
    accepted: String(d.accepted),
    rejected: String(d.rejected),
    failed: String(d.failed),
    'dead-lettered': String(d.deadLettered),
    'outbox-delivered': String(d.outboxDelivered),
    'outbox-pending': String(d.outboxPending),
    ...(r.mode === 'judge' ? { 'verdicts-digest': r.digest } : {}),
    ...common,
  };
}

const table = (t: Table): SummaryBlock => ({ table: { header: t[0]!, rows: t.slice(1) } });

/** The job summary as blocks; `board` (leaderboard, lanes, pauses) comes from the board's view model. */
export function drainSummary(r: DrainJobResult, board?: string): SummaryBlock[] {
  const deadLetters: SummaryBlock[] = [
    { heading: 'Dead letters', level: 3 },
    r.dead.length > 0 ? table(deadLetterTable(r.dead)) : { raw: 'None.\n' },
  ];
  if (r.mode === 'read-only')
    return [
      { heading: 'Grading queue' },
      { raw: `${r.pending} job(s) pending (nothing graded: read-only run)\n\n` },
      ...deadLetters,
    ];
  const d = r.drained;
  if (r.mode === 'judge')
    return [
      { heading: 'Judging' },
      {
        raw: `${r.verdicts} verdict(s) handed on to the grade job (nothing applied or delivered here): ${countsLine(d)}\n\n`,
      },
      ...(d.fatal ? [{ raw: `**Judging stopped:** ${d.fatal}\n\n` }] : []),
      { heading: 'Verdicts of the judges', level: 3 },
      d.verdicts.length > 0 ? table(verdictTable(d)) : { raw: 'None.\n' },
    ];
  const refused: SummaryBlock[] =
    r.refused && r.refused.length > 0
      ? [
          { heading: 'Verdicts refused (not applied)', level: 3 },
          table([['Job', 'Why'], ...r.refused.map((x) => [escapeHtml(x.jobKey), escapeHtml(x.reason)])]),
        ]
      : [];
  return [
    { heading: 'Grading' },
    { raw: `${countsLine(d)}\n\n` },
    ...(r.missing ? [{ raw: `${r.missing}: the pending jobs stay queued for the next cycle.\n\n` }] : []),
    ...refused,
    ...(d.fatal ? [{ raw: `**Grading stopped:** ${d.fatal}\n\n` }] : []),
    ...(board ? [{ raw: board }] : []),
    { heading: 'Verdicts of this drain', level: 3 },
    d.verdicts.length > 0 ? table(verdictTable(d)) : { raw: 'None.\n' },
    ...deadLetters,
  ];
}
