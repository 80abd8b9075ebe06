import type { ArtifactPort } from '../checkpoint/artifact-source.js';
import type { CachePort } from '../checkpoint/cache-source.js';
import { withActionsRuntime } from './credentials.js';

/**
 * GitHub Enterprise Server: a server that is neither github.com nor a GHE.com data-residency host
 * (`*.ghe.com`), which run the same artifact service as github.com. `@actions/artifact` 2 and later
 * (and upload/download-artifact v4 and later) refuse GHES with GHESNotSupportedError.
 */
export function onGhes(serverUrl: string | undefined): boolean {
  if (!serverUrl) return false;
  let host: string;
  try {
    host = new URL(serverUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host !== 'github.com' && !host.endsWith('.ghe.com');
}

/**
 * Production implementations of the checkpoint's cache and artifact ports (`CachePort` in
 * src/checkpoint/cache-source.ts, `ArtifactPort` in src/checkpoint/artifact-source.ts). Imported
 * only by the checkpoint-state entry. The service clients are loaded on first use: they are
 * large, and a restore from the branch alone (or a run that fails on a bad input) should not pay for
 * loading them. `saveCache` already turns a reserve collision into a logged warning and -1;
 * anything it throws is caught by CacheSource.
 */
export const actionsCachePort: CachePort = {
  available: (): Promise<boolean> =>
    withActionsRuntime(async () => (await import('@actions/cache')).isFeatureAvailable()),
  save: (paths: string[], key: string): Promise<boolean> =>
    withActionsRuntime(async () => (await (await import('@actions/cache')).saveCache(paths, key)) !== -1),
  restore: (paths: string[], primaryKey: string, restoreKeys: string[]): Promise<string | undefined> =>
    withActionsRuntime(async () =>
      (await import('@actions/cache')).restoreCache(paths, primaryKey, restoreKeys),
    ),
};

export const actionsArtifactPort: ArtifactPort = {
  unsupported: (): string | undefined =>
    onGhes(process.env.GITHUB_SERVER_URL)
      ? `GitHub Enterprise Server (${process.env.GITHUB_SERVER_URL}) does not support @actions/artifact 2 or later; the state branch holds the checkpoint (docs/workflows.md, "GitHub Enterprise Server")`
      : undefined,
  upload: (name: string, files: string[], root: string, retentionDays: number): Promise<void> =>
    withActionsRuntime(async () => {
      const { DefaultArtifactClient } = await import('@actions/artifact');
      await new DefaultArtifactClient().uploadArtifact(name, files, root, { retentionDays });
    }),
};
