import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { ArtifactSource, type ArtifactPort } from './artifact-source.js';
import { BranchSource, resolveRemote } from './branch-source.js';
import { CacheSource, type CachePort } from './cache-source.js';
import { DirectorySource } from './directory-source.js';
import type { SnapshotSource, SourceName } from './source.js';

export const SOURCE_NAMES: readonly SourceName[] = ['branch', 'cache', 'artifact', 'directory'];

/** Parses a comma list such as "branch,cache,artifact"; names the field and the allowed values. */
export function parseSourceList(text: string, field = 'sources'): SourceName[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0)
    throw new ConfigError(`${field}: empty; use a comma list of ${SOURCE_NAMES.join(', ')}`);
  const out: SourceName[] = [];
  for (const n of names) {
    if (!(SOURCE_NAMES as readonly string[]).includes(n)) {
      throw new ConfigError(`${field}: unknown source "${n}"; allowed: ${SOURCE_NAMES.join(', ')}`);
    }
    if (!out.includes(n as SourceName)) out.push(n as SourceName);
  }
  return out;
}

export interface SourceSettings {
  names: readonly SourceName[];
  branch: BranchSettings;
  directory?: string;
  cachePrefix: string;
  retentionDays: number;
  run?: RunSettings;
  ports?: SourcePorts;
  logger?: Logger;
}

/** Where the state branch lives and how it is reached. */
export interface BranchSettings {
  name: string;
  /** Remote URL or path, or the name of a remote of `workspace` (default `origin`). */
  remote?: string;
  workspace?: string;
  token?: string;
}

/** The run a cache or artifact copy belongs to (default: a local run, attempt 1), and its scratch space. */
export interface RunSettings {
  id?: string;
  attempt?: string;
  /** Scratch space (RUNNER_TEMP on Actions; default the system's temporary directory). */
  scratchRoot?: string;
}

/** What GitHub Actions serves: the cache and the artifact store. */
export interface SourcePorts {
  cache?: CachePort;
  artifact?: ArtifactPort;
}

/** Builds the sources named in `settings.names`, in that order. */
export async function buildSources(settings: SourceSettings): Promise<SnapshotSource[]> {
  const scratch = settings.run?.scratchRoot ?? tmpdir();
  const runId = settings.run?.id ?? 'local';
  const runAttempt = settings.run?.attempt ?? '1';
  const runCopy = { prefix: settings.cachePrefix, runId, runAttempt, logger: settings.logger };
  const sources: SnapshotSource[] = [];
  for (const name of settings.names) {
    if (name === 'branch') {
      // A bare name ("origin") is a remote of the workspace; anything with / or : is a URL or path.
      const b = settings.branch;
      const remote =
        b.remote && /[/:]/.test(b.remote)
          ? b.remote
          : await resolveRemote(b.workspace ?? process.cwd(), b.remote ?? 'origin');
      sources.push(
        new BranchSource({
          remote,
          branch: b.name,
          token: b.token,
          logger: settings.logger,
          scratchRoot: scratch,
        }),
      );
    } else if (name === 'directory') {
      if (!settings.directory) throw new ConfigError('sources: "directory" needs a directory (--dir PATH)');
      sources.push(new DirectorySource(settings.directory));
    } else if (name === 'cache') {
      const port = onActions(settings.ports?.cache, name);
      sources.push(new CacheSource({ ...runCopy, port, path: join(scratch, 'school-checkpoint-cache') }));
    } else {
      const port = onActions(settings.ports?.artifact, name);
      const path = join(scratch, `school-checkpoint-artifact-${runId}-${runAttempt}`);
      sources.push(new ArtifactSource({ ...runCopy, port, retentionDays: settings.retentionDays, path }));
    }
  }
  return sources;
}

/** The port of a source GitHub Actions serves, or a ConfigError naming the source. */
function onActions<P>(port: P | undefined, name: SourceName): P {
  if (!port) throw new ConfigError(`sources: "${name}" is only available inside GitHub Actions`);
  return port;
}
