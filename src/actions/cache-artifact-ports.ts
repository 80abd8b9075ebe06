import { withActionsRuntime } from '../github/credentials.js';
import { onGhes, type ArtifactPort } from '../checkpoint/artifact-source.js';
import type { CachePort } from '../checkpoint/cache-source.js';

/**
 * Production implementations of the cache and artifact ports. Imported only by the action entry.
 * The service clients are loaded on first use: they are large, and a restore from the branch alone
 * (or a run that fails on a bad input) should not pay for loading them. `saveCache` already turns a
 * reserve collision into a logged warning and -1; anything it throws is caught by CacheSource.
 */
export const actionsCachePort: CachePort = {
  available: () => withActionsRuntime(async () => (await import('@actions/cache')).isFeatureAvailable()),
  save: (paths, key) =>
    withActionsRuntime(async () => (await (await import('@actions/cache')).saveCache(paths, key)) !== -1),
  restore: (paths, primaryKey, restoreKeys) =>
    withActionsRuntime(async () =>
      (await import('@actions/cache')).restoreCache(paths, primaryKey, restoreKeys),
    ),
};

export const actionsArtifactPort: ArtifactPort = {
  unsupported: () =>
    onGhes(process.env.GITHUB_SERVER_URL)
      ? `GitHub Enterprise Server (${process.env.GITHUB_SERVER_URL}) does not support @actions/artifact 2 or later; the state branch holds the checkpoint (docs/workflows.md, "GitHub Enterprise Server")`
      : undefined,
  upload: (name, files, root, retentionDays) =>
    withActionsRuntime(async () => {
      const { DefaultArtifactClient } = await import('@actions/artifact');
      await new DefaultArtifactClient().uploadArtifact(name, files, root, { retentionDays });
    }),
};
