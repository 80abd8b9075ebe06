import * as core from '@actions/core';
import { hideCredentials } from '../github/credentials.js';
import { actionsLogger, optionalInput, runAction, secretInput } from '../github/runtime.js';
import { writeBlocks } from '../github/summary-blocks.js';
import { drainJob, drainOutputs, drainSummary, parseDrainInputs } from '../loop/drain-job.js';
import { boardSummary } from './board-summary.js';

/** drain-grading: parse the inputs, run the job (src/loop/drain-job.ts), render its summary. */
void runAction(async () => {
  const logger = actionsLogger();
  const inputs = parseDrainInputs({
    mode: optionalInput('mode'),
    verdictsPath: optionalInput('verdicts-path'),
    verdictsDigest: optionalInput('verdicts-digest'),
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
  // The tokens are in `inputs` now; children and /proc/<pid>/environ never see them again.
  hideCredentials();
  const { config, layout, result } = await drainJob(inputs, logger);
  for (const [name, value] of Object.entries(drainOutputs(result))) core.setOutput(name, value);
  const board = result.mode === 'drain' ? boardSummary('drain-grading', layout, config, logger) : undefined;
  await writeBlocks(drainSummary(result, board), logger);
  if (result.mode !== 'read-only' && result.drained.fatal)
    throw new Error(`grading stopped: ${result.drained.fatal}`);
});
