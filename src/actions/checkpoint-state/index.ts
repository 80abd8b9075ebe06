import * as core from '@actions/core';
import { runCheckpoint } from '../../checkpoint/run.js';
import { actionsArtifactPort, actionsCachePort } from '../../github/actions-services.js';
import { hideCredentials } from '../../github/credentials.js';
import { actionsLogger, runAction } from '../../github/runtime.js';
import { writeBlocks } from '../../github/summary-blocks.js';
import { boardSummaryFrom } from '../board-summary.js';
import { runContextFrom } from '../../process/run-context.js';
import { readInputs } from './inputs.js';
import { checkpointOutputs, checkpointSummary } from './summary.js';

/** checkpoint-state: restore or save the school's state (docs/checkpoint.md, src/checkpoint/run.ts). */
void runAction(async () => {
  const logger = actionsLogger();
  const inputs = readInputs();
  hideCredentials();
  const context = runContextFrom(process.env);
  const report = await logger.group('checkpoint', () =>
    runCheckpoint(inputs, {
      logger,
      cachePort: actionsCachePort,
      artifactPort: actionsArtifactPort,
      workspace: context.workspace,
      context,
    }),
  );
  for (const [name, value] of Object.entries(checkpointOutputs(report))) core.setOutput(name, value);
  // After a restore the board shows what the job starts from; after a save, what was saved.
  const board = boardSummaryFrom('checkpoint-state', inputs.config, inputs.stateDir, logger);
  await writeBlocks(checkpointSummary(report, board), logger);
});
