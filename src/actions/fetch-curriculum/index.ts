import * as core from '@actions/core';
import { hideCredentials } from '../../github/credentials.js';
import { actionsLogger, runAction } from '../../github/runtime.js';
import { writeBlocks } from '../../github/summary-blocks.js';
import { headline } from '../../curriculum/summary.js';
import { fetchJob } from '../../loop/fetch-job.js';
import { boardSummary } from '../board-summary.js';
import { readInputs } from './inputs.js';
import { fetchOutputs, fetchSummary } from './summary.js';
import { runContextFrom } from '../../process/run-context.js';

/** fetch-curriculum: parse the inputs, run the job (src/loop/fetch-job.ts), report the result. */
void runAction(async () => {
  const inputs = readInputs();
  // The token is in `inputs` now; children and /proc/<pid>/environ never see it again.
  hideCredentials();
  const logger = actionsLogger();
  const { config, layout, result } = await fetchJob(inputs, logger, runContextFrom(process.env));
  for (const [name, value] of Object.entries(fetchOutputs(result))) core.setOutput(name, value);
  core.info(headline(result));
  const board = boardSummary('fetch-curriculum', layout, config, logger);
  await writeBlocks(fetchSummary(result, board), logger);
});
