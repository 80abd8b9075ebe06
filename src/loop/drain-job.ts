import { z } from 'zod';
import { resolveConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { deliveryFor } from '../delivery/setup.js';
import { ConfigError } from '../errors.js';
import { createGitHubClient } from '../github/client.js';
import { booleanInput, wholeNumberInput } from '../github/inputs.js';
import { drain, type DrainResult } from '../grading/drain.js';
import { octokitPort } from '../grading/github-port.js';
import { octokitFeedback } from '../feedback/port.js';
import { importBookbags } from '../grading/import.js';
import { GradingQueue, pendingKeys, type JobState } from '../grading/queue.js';
import { countsLine, deadLetterTable, verdictTable, type Table } from '../grading/report.js';
import { handoffDirs } from '../handoff/handoff.js';
import { importHandoffs } from '../handoff/import.js';
import type { Logger } from '../log.js';
import type { SummaryBlock } from '../schemas/summary.js';
import { StateLayout } from '../state/layout.js';

/**
 * The job drain-grading does, without the runner: import what crew jobs handed on, requeue, drain
 * the queue (judges, ledger, outbox, delivery), and describe it. The action entry parses its inputs
 * with `parseDrainInputs`, calls `drainJob`, and renders `drainSummary(result)`.
 */
const drainInputsSchema = z.object({
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
  return { ...r.data, requeue };
}

export type DrainJobResult =
  | { mode: 'read-only'; pending: number; dead: JobState[] }
  | { mode: 'drain'; drained: DrainResult; pending: number; dead: JobState[] };

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
    }),
  );
  logger.info(countsLine(drained));
  const pending = pendingKeys(queue.state(), new Date()).length;
  return done({ mode: 'drain', drained, pending, dead: queue.deadLetters() });
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
  return [
    { heading: 'Grading' },
    { raw: `${countsLine(d)}\n\n` },
    ...(d.fatal ? [{ raw: `**Grading stopped:** ${d.fatal}\n\n` }] : []),
    ...(board ? [{ raw: board }] : []),
    { heading: 'Verdicts of this drain', level: 3 },
    d.verdicts.length > 0 ? table(verdictTable(d)) : { raw: 'None.\n' },
    ...deadLetters,
  ];
}
