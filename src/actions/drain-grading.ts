import * as core from '@actions/core';
import { hideCredentials } from '../github/credentials.js';
import { z } from 'zod';
import { resolveConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { deliveryFor } from '../delivery/setup.js';
import { drain } from '../grading/drain.js';
import { octokitPort } from '../grading/github-port.js';
import { importBookbags } from '../grading/import.js';
import { handoffDirs } from '../handoff/handoff.js';
import { importHandoffs } from '../handoff/import.js';
import { GradingQueue, pendingKeys } from '../grading/queue.js';
import { countsLine, deadLetterTable, verdictTable, type Table } from '../grading/report.js';
import { createGitHubClient } from '../github/client.js';
import { boardSummary } from './board-summary.js';
import { booleanInput, wholeNumberInput } from '../github/inputs.js';
import { actionsLogger, optionalInput, runAction, secretInput, writeSummary } from '../github/runtime.js';
import { StateLayout } from '../state/layout.js';

/** drain-grading: thin entry (STYLE) — parse the inputs once, call the grading core, report. */

const inputsSchema = z.object({
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

function parseInputs() {
  const r = inputsSchema.safeParse({
    maxWorkers: optionalInput('max-workers'),
    maxAttempts: optionalInput('max-attempts'),
    requeue: optionalInput('requeue-dead-letter'),
    listDeadLetters: optionalInput('list-dead-letters'),
    dryRun: optionalInput('dry-run'),
    bookbagsPath: optionalInput('bookbags-path'),
    config: optionalInput('config'),
    stateDir: optionalInput('state-dir'),
    token: secretInput('token'),
    deliveryToken: secretInput('delivery-token'),
  });
  if (!r.success)
    throw new ConfigError(`drain-grading inputs: ${r.error.issues.map((i) => i.message).join('; ')}`);
  const requeue = (r.data.requeue ?? '').split(/[\s,]+/).filter(Boolean);
  return { ...r.data, requeue };
}

const toSummary = (t: Table) => [t[0]!.map((data) => ({ data, header: true })), ...t.slice(1)];

void runAction(async () => {
  const logger = actionsLogger();
  const inputs = parseInputs();
  // The token is in `inputs` now; children and /proc/<pid>/environ never see it again.
  hideCredentials();
  const config = resolveConfig(inputs.config, inputs.stateDir ? { stateDir: inputs.stateDir } : {});
  const layout = new StateLayout(config.stateDir);
  const queue = new GradingQueue(layout, (m) => logger.warning(m));

  // list-dead-letters and dry-run only read: nothing is imported, requeued, graded or delivered.
  if (inputs.listDeadLetters || inputs.dryRun) {
    const state = queue.state();
    const dead = queue.deadLetters();
    const pending = pendingKeys(state, new Date()).length;
    core.setOutput('dead-letters', String(dead.length));
    core.setOutput('pending', String(pending));
    logger.info(`${pending} job(s) pending, ${dead.length} dead letter(s)`);
    for (const d of dead)
      logger.info(`dead letter ${d.job.jobKey} (${d.attempts} attempts): ${d.lastError ?? ''}`);
    await writeSummary((s) => {
      s.addHeading('Grading queue', 2).addRaw(
        `${pending} job(s) pending (nothing graded: read-only run)\n\n`,
      );
      s.addHeading('Dead letters', 3);
      if (dead.length > 0) s.addTable(toSummary(deadLetterTable(dead)));
      else s.addRaw('None.\n');
    }, logger);
    return;
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
  const github =
    inputs.token && repository
      ? octokitPort(createGitHubClient({ token: inputs.token, logger }), repository)
      : undefined;
  if (!github)
    logger.warning('no token or repository: labels and comments stay in the outbox for a later drain');
  // Accepted work becomes a branch and a pull request (docs/delivery.md). A pull request opened with
  // the workflow's GITHUB_TOKEN triggers no workflows: delivery-token takes an App or PAT token.
  const delivery = deliveryFor({
    config,
    layout,
    logger,
    actions: true,
    ...((inputs.deliveryToken ?? inputs.token) ? { token: inputs.deliveryToken ?? inputs.token } : {}),
    ...(repository ? { repository } : {}),
  });

  const result = await logger.group('Drain the grading queue', () =>
    drain({
      config,
      layout,
      logger,
      github,
      delivery,
      maxWorkers: inputs.maxWorkers,
      maxAttempts: inputs.maxAttempts,
    }),
  );
  logger.info(countsLine(result));
  const dead = queue.deadLetters();
  core.setOutput('accepted', String(result.accepted));
  core.setOutput('rejected', String(result.rejected));
  core.setOutput('failed', String(result.failed));
  core.setOutput('dead-lettered', String(result.deadLettered));
  core.setOutput('outbox-delivered', String(result.outboxDelivered));
  core.setOutput('outbox-pending', String(result.outboxPending));
  core.setOutput('dead-letters', String(dead.length));
  core.setOutput('pending', String(pendingKeys(queue.state(), new Date()).length));

  const board = boardSummary('drain-grading', layout, config, logger);
  await writeSummary((s) => {
    s.addHeading('Grading', 2).addRaw(`${countsLine(result)}\n\n`);
    if (result.fatal) s.addRaw(`**Grading stopped:** ${result.fatal}\n\n`);
    // The leaderboard, lanes and pauses come from the board's view model.
    if (board) s.addRaw(board, true);
    s.addHeading('Verdicts of this drain', 3);
    if (result.verdicts.length > 0) s.addTable(toSummary(verdictTable(result)));
    else s.addRaw('None.\n');
    s.addHeading('Dead letters', 3);
    if (dead.length > 0) s.addTable(toSummary(deadLetterTable(dead)));
    else s.addRaw('None.\n');
  }, logger);
  if (result.fatal) throw new Error(`grading stopped: ${result.fatal}`);
});
