import { z } from 'zod';
import { resolveConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { auditActor, type RunContext } from '../process/run-context.js';
import type { ArtifactPort } from './artifact-source.js';
import type { CachePort } from './cache-source.js';
import { restoreCheckpoint } from './restore.js';
import { saveCheckpoint } from './save.js';
import { buildSources, parseSourceList } from './sources.js';
import { fromRestore, fromSave, type CheckpointReport } from './summary.js';

/**
 * One checkpoint step as the action and the CLI run it: the inputs parsed once
 * (`parseCheckpointInputs`), the gaps filled from school.yml, the sources built, restore or save.
 */
export const checkpointInputsSchema = z.object({
  mode: z.enum(['restore', 'save'], { error: 'mode: use "restore" or "save"' }),
  stateDir: z.string().min(1).optional(),
  branch: z.string().min(1).optional(),
  remote: z.string().min(1).optional(),
  directory: z.string().min(1).optional(),
  cacheKeyPrefix: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, 'cache-key-prefix: letters, digits, dot, dash, underscore')
    .optional(),
  retentionDays: z.coerce
    .number({ error: 'retention-days: a whole number of days from 1 to 90' })
    .int('retention-days: a whole number of days from 1 to 90')
    .min(1, 'retention-days: at least 1')
    .max(90, 'retention-days: at most 90')
    .optional(),
  sources: z.string().optional(),
  token: z.string().optional(),
  config: z.string().optional(),
  dryRun: z.boolean().default(false),
});
export type CheckpointInputs = z.input<typeof checkpointInputsSchema>;
/** The inputs parsed and checked: what `runCheckpoint` takes. */
export type CheckpointOptions = z.output<typeof checkpointInputsSchema>;

export interface CheckpointDeps {
  logger: Logger;
  cachePort?: CachePort;
  artifactPort?: ArtifactPort;
  /** Where the repository is checked out (GITHUB_WORKSPACE or the working directory). */
  workspace?: string;
  /** The run: its id and attempt name the cache key and the artifact, its runner's temp holds the scratch. */
  context: RunContext;
  now?: Date;
}

/**
 * The inputs (the action's strings or the CLI's options) into one typed object, or a ConfigError
 * that names each bad field. The action reads its `mode` as a plain string: the schema checks it.
 */
export function parseCheckpointInputs(raw: CheckpointInputs | Record<string, unknown>): CheckpointOptions {
  const parsed = checkpointInputsSchema.safeParse(raw);
  if (!parsed.success) {
    const msgs = parsed.error.issues.map((i) =>
      i.message.includes(':') ? i.message : `${i.path.join('.')}: ${i.message}`,
    );
    throw new ConfigError(`checkpoint-state: ${msgs.join('; ')}`, msgs);
  }
  return parsed.data;
}

export async function runCheckpoint(
  inputs: CheckpointOptions,
  deps: CheckpointDeps,
): Promise<CheckpointReport> {
  const config = resolveConfig(inputs.config);
  const defaults = inputs.directory
    ? 'directory'
    : inputs.mode === 'save'
      ? 'branch,cache,artifact'
      : 'branch,cache';
  let names = parseSourceList(inputs.sources ?? defaults);
  if (inputs.mode === 'restore' && names.includes('artifact')) {
    // Artifacts are the audit copy: written on save, never read back.
    deps.logger.debug('checkpoint: artifact is a save-only source; not read on restore');
    names = names.filter((n) => n !== 'artifact');
  }
  const sources = await buildSources({
    names,
    branch: {
      name: inputs.branch ?? config.checkpoint.branch,
      remote: inputs.remote,
      workspace: deps.workspace,
      token: inputs.token,
    },
    directory: inputs.directory,
    cachePrefix: inputs.cacheKeyPrefix ?? config.checkpoint.cachePrefix,
    retentionDays: inputs.retentionDays ?? config.checkpoint.retentionDays,
    run: {
      id: deps.context.run?.id,
      attempt: deps.context.run?.attempt,
      scratchRoot: deps.context.runner.temp,
    },
    ports: { cache: deps.cachePort, artifact: deps.artifactPort },
    logger: deps.logger,
  });
  const stateDir = inputs.stateDir ?? config.stateDir;
  if (inputs.mode === 'restore') {
    return fromRestore(
      await restoreCheckpoint({ stateDir, sources, logger: deps.logger, dryRun: inputs.dryRun }),
    );
  }
  return fromSave(
    await saveCheckpoint({
      stateDir,
      sources,
      compactAfterDays: config.checkpoint.compactAfterDays,
      logger: deps.logger,
      dryRun: inputs.dryRun,
      now: deps.now,
      writer: auditActor(deps.context),
    }),
  );
}
