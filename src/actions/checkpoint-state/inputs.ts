import * as core from '@actions/core';
import { parseCheckpointInputs, type CheckpointOptions } from '../../checkpoint/run.js';
import { ConfigError } from '../../errors.js';
import { optionalInput, secretInput } from '../../github/runtime.js';

/**
 * checkpoint-state's inputs as the runner gives them, parsed once: the schema is the checkpoint's
 * own (`parseCheckpointInputs` in src/checkpoint/run.ts), shared with `school checkpoint`.
 */
export function readInputs(): CheckpointOptions {
  const dryRun = optionalInput('dry-run') ?? 'false';
  if (dryRun !== 'true' && dryRun !== 'false') {
    throw new ConfigError(`dry-run: use "true" or "false", found "${dryRun}"`);
  }
  return parseCheckpointInputs({
    mode: core.getInput('mode', { required: true }),
    stateDir: optionalInput('state-dir'),
    branch: optionalInput('branch'),
    cacheKeyPrefix: optionalInput('cache-key-prefix'),
    retentionDays: optionalInput('retention-days'),
    sources: optionalInput('sources'),
    token: secretInput('token'),
    config: optionalInput('config'),
    dryRun: dryRun === 'true',
  });
}
