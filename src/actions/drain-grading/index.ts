import * as core from '@actions/core';
import { actionsClaimPort, claimsHere } from '../../github/actions-services.js';
import { hideCredentials } from '../../github/credentials.js';
import { actionsLogger, runAction } from '../../github/runtime.js';
import { writeBlocks } from '../../github/summary-blocks.js';
import { drainJob } from '../../loop/drain-job.js';
import { boardSummary } from '../board-summary.js';
import { readInputs } from './inputs.js';
import { drainOutputs, drainSummary } from './summary.js';
import { runContextFrom } from '../../process/run-context.js';

/** drain-grading: parse the inputs, run the job (src/loop/drain-job.ts), report the result. */
void runAction(async () => {
  const logger = actionsLogger();
  const inputs = readInputs();
  // The tokens are in `inputs` now; children and /proc/<pid>/environ never see them again.
  hideCredentials();
  // The judge and the grade import the crew jobs' handoffs: a shared standby crew's claim is checked
  // against the run's claim artifacts, listed once with the runner's runtime token (lent for the
  // call only). Off Actions and on GHES nothing was claimed.
  const context = runContextFrom(process.env);
  const claims = claimsHere(context) ? actionsClaimPort : undefined;
  const { config, layout, result } = await drainJob(
    claims ? { ...inputs, bookbags: { ...inputs.bookbags, claims } } : inputs,
    logger,
    context,
  );
  for (const [name, value] of Object.entries(drainOutputs(result))) core.setOutput(name, value);
  const board = result.mode === 'drain' ? boardSummary('drain-grading', layout, config, logger) : undefined;
  await writeBlocks(drainSummary(result, board), logger);
  if (result.mode !== 'read-only' && result.drained.fatal)
    throw new Error(`grading stopped: ${result.drained.fatal}`);
});
