import * as cache from '@actions/cache';
import { DefaultArtifactClient } from '@actions/artifact';
import type { ArtifactPort } from './artifact-source.js';
import type { CachePort } from './cache-source.js';

/**
 * Production implementations of the cache and artifact ports. Imported only by the action entry,
 * so the CLI bundle does not carry the Actions service clients. `saveCache` already turns a reserve
 * collision into a logged warning and -1; anything it throws is caught by CacheSource.
 */
export const actionsCachePort: CachePort = {
  available: () => cache.isFeatureAvailable(),
  save: async (paths, key) => (await cache.saveCache(paths, key)) !== -1,
  restore: (paths, primaryKey, restoreKeys) => cache.restoreCache(paths, primaryKey, restoreKeys),
};

export const actionsArtifactPort: ArtifactPort = {
  async upload(name, files, root, retentionDays) {
    await new DefaultArtifactClient().uploadArtifact(name, files, root, { retentionDays });
  },
};
