import * as core from '@actions/core';
import { actionsArtifactPort, actionsCachePort } from './cache-artifact-ports.js';
import { runCheckpoint } from '../checkpoint/run.js';
import { checkpointSummary } from '../checkpoint/summary.js';
import { writeBlocks } from '../github/summary-blocks.js';
import { resolveConfig } from '../config/load.js';
import { ConfigError, message } from '../errors.js';
import { boardSummary } from './board-summary.js';
import { StateLayout } from '../state/layout.js';
import { hideCredentials } from '../github/credentials.js';
import { actionsLogger, optionalInput, runAction, secretInput } from '../github/runtime.js';

/** checkpoint-state: restore or save the school's state (docs/checkpoint.md). */
void runAction(async () => {
  const logger = actionsLogger();
  const dryRun = optionalInput('dry-run') ?? 'false';
  if (dryRun !== 'true' && dryRun !== 'false') {
    throw new ConfigError(`dry-run: use "true" or "false", found "${dryRun}"`);
  }
  const inputs = {
    mode: core.getInput('mode', { required: true }) as 'restore' | 'save',
    stateDir: optionalInput('state-dir'),
    branch: optionalInput('branch'),
    cacheKeyPrefix: optionalInput('cache-key-prefix'),
    retentionDays: optionalInput('retention-days'),
    sources: optionalInput('sources'),
    token: secretInput('token'),
    config: optionalInput('config'),
    dryRun: dryRun === 'true',
  };
  hideCredentials();
  const report = await logger.group('checkpoint', () =>
    runCheckpoint(inputs, {
      logger,
      cachePort: actionsCachePort,
      artifactPort: actionsArtifactPort,
      workspace: process.env.GITHUB_WORKSPACE,
      scratchRoot: process.env.RUNNER_TEMP,
      runId: process.env.GITHUB_RUN_ID,
      runAttempt: process.env.GITHUB_RUN_ATTEMPT,
    }),
  );
  // Outputs carry names and numbers only: never state content or issue text (docs/architecture.md).
  core.setOutput('source', report.sources.join(','));
  core.setOutput('generation', String(report.generation));
  core.setOutput('files', String(report.files.length));
  // After a restore the board shows what the job starts from; after a save, what was saved.
  let board: string | undefined;
  try {
    const stateDir = optionalInput('state-dir');
    const config = resolveConfig(optionalInput('config'), stateDir ? { stateDir } : {});
    board = boardSummary('checkpoint-state', new StateLayout(config.stateDir), config, logger);
  } catch (e) {
    logger.warning(`could not add the board to the job summary: ${message(e)}`);
  }
  await writeBlocks(checkpointSummary(report, board), logger);
});
