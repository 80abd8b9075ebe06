import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ArtifactPort } from '../checkpoint/artifact-source.js';
import type { CachePort } from '../checkpoint/cache-source.js';
import type { ClaimOutcome, ClaimPort } from '../dispatch/leases/claims.js';
import { message, SchoolError } from '../errors.js';
import { withActionsRuntime } from './credentials.js';
import * as core from '@actions/core';
import type { RunContext } from '../process/run-context.js';

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

/** Why the shared queue cannot claim on this server, or undefined where it can. */
export function claimsUnsupported(
  serverUrl: string | undefined = process.env.GITHUB_SERVER_URL,
): string | undefined {
  return onGhes(serverUrl)
    ? `GitHub Enterprise Server (${serverUrl}) does not support @actions/artifact 2 or later, so crew jobs cannot claim from one queue; each daemon keeps its own standby crews`
    : undefined;
}

/**
 * The refusal of a name already taken in this run: `CreateArtifact` answers 409 Conflict, which the
 * client does not retry and reports as `Failed to CreateArtifact: Received non-retryable error:
 * Failed request: (409) Conflict: …`. A 409 from any other call (a finalize) is not a lost race.
 */
const TAKEN = /^Failed to CreateArtifact: .*\(409\)/s;

/**
 * The shared queue's claims (src/dispatch/leases/claims.ts) over the run's artifacts, with the runner's
 * runtime token (lent only for the call). `skipArchive` uploads the one file as it is, but names
 * the artifact after the file (`uploadArtifact` replaces the name with the file's basename), so
 * the claim file is copied under the claim's name into a scratch directory first: the artifact is
 * then `name`, its content the file's bytes, its digest their SHA-256. A won claim costs
 * `CreateArtifact` and `FinalizeArtifact` (plus two requests to the blob storage the service signs),
 * a lost one `CreateArtifact` alone (test/github/claim-port.test.ts counts them).
 */
export const CLAIM_RETENTION_DAYS = 7;

/**
 * Days a claim is kept: 7, or the repository's longest artifact retention when it is shorter (the
 * runner gives it as GITHUB_RETENTION_DAYS; asking for more makes the client warn on every claim).
 */
export function claimRetentionDays(env: NodeJS.ProcessEnv = process.env): number {
  const max = Number(env.GITHUB_RETENTION_DAYS);
  return Number.isInteger(max) && max > 0 ? Math.min(CLAIM_RETENTION_DAYS, max) : CLAIM_RETENTION_DAYS;
}

export const actionsClaimPort: ClaimPort = {
  create: async (name: string, path: string): Promise<ClaimOutcome> => {
    const unsupported = claimsUnsupported();
    if (unsupported) return { kind: 'failed', reason: unsupported };
    const scratch = mkdtempSync(join(tmpdir(), 'school-claim-'));
    try {
      const file = join(scratch, name);
      copyFileSync(path, file);
      const { digest } = await quietly(() =>
        withActionsRuntime(async () => {
          const { DefaultArtifactClient } = await import('@actions/artifact');
          return new DefaultArtifactClient().uploadArtifact(name, [file], scratch, {
            skipArchive: true,
            // A claim matters only while its run does, but the run's judge and grade jobs list it
            // after the crew jobs end, and a self-hosted crew job may run for days (GitHub allows 5).
            retentionDays: claimRetentionDays(),
          });
        }),
      );
      return {
        kind: 'won',
        sha256: bareDigest(digest) ?? createHash('sha256').update(readFileSync(file)).digest('hex'),
      };
    } catch (e) {
      const why = message(e);
      return TAKEN.test(why) ? { kind: 'taken' } : { kind: 'failed', reason: why };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },
  list: async (prefix: string): Promise<Map<string, string[]>> => {
    const unsupported = claimsUnsupported();
    if (unsupported) throw new SchoolError(unsupported, { code: 'github-unsupported' });
    const { artifacts } = await quietly(() =>
      withActionsRuntime(async () => {
        const { DefaultArtifactClient } = await import('@actions/artifact');
        // Every attempt's artifact of a name, not only the newest: a re-run may have claimed again.
        return new DefaultArtifactClient().listArtifacts({ latest: false });
      }),
    );
    const out = new Map<string, string[]>();
    for (const a of artifacts) {
      if (!a.name.startsWith(prefix)) continue;
      const digests = out.get(a.name) ?? [];
      const hex = bareDigest(a.digest);
      if (hex) digests.push(hex);
      out.set(a.name, digests);
    }
    return out;
  },
};

/** Whether this step can claim or list the run's claims: a GitHub Actions run off GHES. */
export function claimsHere(context: Pick<RunContext, 'actions' | 'serverUrl'>): boolean {
  return context.actions && !claimsUnsupported(context.serverUrl);
}

/**
 * The artifact client narrates every upload in the step's log (about eight lines: name valid, root
 * valid, upload begun, bytes, digest, finalized…); a crew job claims a crew per freed slot, so its log
 * would drown in them. While `fn` runs, what it prints goes to the debug log instead (shown when the
 * run is re-run with debug logging); workflow commands it prints (warnings, errors) pass as they are.
 * The caller awaits `fn` alone: nothing else of the step writes meanwhile.
 */
export async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const write = process.stdout.write;
  const held: string[] = [];
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    held.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write;
  try {
    return await fn();
  } finally {
    process.stdout.write = write;
    for (const line of held.join('').split(/\r?\n/)) {
      if (!line.trim()) continue;
      if (line.startsWith('::') && !line.startsWith('::debug::')) process.stdout.write(`${line}\n`);
      else core.debug(line.replace(/^::debug::/, ''));
    }
  }
}

/** `sha256:<hex>` (as the service lists it) or bare hex, as lower-case hex; undefined otherwise. */
export function bareDigest(digest: string | undefined): string | undefined {
  const m = /^(?:sha256:)?([0-9a-fA-F]{64})$/.exec(digest?.trim() ?? '');
  return m ? m[1]!.toLowerCase() : undefined;
}
