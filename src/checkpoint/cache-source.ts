import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { message } from '../errors.js';
import { readSnapshotDir, writeSnapshotDir } from './snapshot-dir.js';
import {
  SourceUnavailableError,
  type Snapshot,
  type SnapshotBuilder,
  RunCopySource,
  type RunCopyOptions,
} from './source.js';

/**
 * The narrow port over the Actions cache. Production: @actions/cache (src/github/actions-services.ts);
 * tests fake only this port because the real service cannot be reached from a test.
 */
export interface CachePort {
  /** True when the cache service can be used in this run. */
  available(): Promise<boolean>;
  /** Saves `paths` under `key`; false when the service declined (reserve collision, quota, outage). */
  save(paths: string[], key: string): Promise<boolean>;
  /** Restores into `paths`; returns the key that hit, or undefined on a miss. */
  restore(paths: string[], primaryKey: string, restoreKeys: string[]): Promise<string | undefined>;
}

/** Save and restore must use the same `path` (it is part of the cache version). */
export interface CacheSourceOptions extends RunCopyOptions {
  port: CachePort;
}

/**
 * The fast copy (docs/architecture.md). Cache entries are immutable and evicted after 7 days: each save
 * has its own key (a run saves more than once: its plan, heartbeats and grade jobs each save, and the
 * service refuses a key it already holds) and restore takes the newest entry by prefix; nothing is
 * ever deleted first.
 * A cache that is unavailable or declines a save is a warning, never a failure: the state branch
 * is the durable copy.
 */
export class CacheSource extends RunCopySource<CacheSourceOptions> {
  readonly name = 'cache' as const;
  /** Key that hit on the last load, or was written on the last save. */
  lastKey: string | undefined;

  /** This run attempt's key for a save of `generation`; without it, the attempt's own prefix. */
  key(generation?: number): string {
    return this.copyName(generation);
  }

  async load(): Promise<Snapshot | undefined> {
    const { port, path, prefix } = this.options;
    if (!(await port.available()))
      throw new SourceUnavailableError('cache', 'the cache service is not available in this run');
    rmSync(path, { recursive: true, force: true });
    mkdirSync(path, { recursive: true });
    let hit: string | undefined;
    try {
      hit = await port.restore([path], this.key(), [`${prefix}-`]);
    } catch (e) {
      throw new SourceUnavailableError('cache', `restore failed: ${message(e)}`, { cause: e });
    }
    if (!hit) return undefined;
    this.lastKey = hit;
    return readSnapshotDir(path, `cache entry ${hit}`);
  }

  /** Throws SourceUnavailableError when the copy was not stored; the caller makes that a warning. */
  async save(build: SnapshotBuilder): Promise<Snapshot> {
    const { port, path } = this.options;
    const snapshot = build(undefined);
    if (!(await port.available())) {
      throw new SourceUnavailableError(
        'cache',
        'the cache service is not available in this run; the cache copy was skipped',
      );
    }
    writeSnapshotDir(path, snapshot);
    const key = this.key(snapshot.manifest.generation);
    let saved: boolean;
    try {
      saved = await port.save([path], key);
    } catch (e) {
      throw new SourceUnavailableError('cache', `save under ${key} failed: ${message(e)}`, {
        cause: e,
      });
    }
    if (!saved) {
      throw new SourceUnavailableError(
        'cache',
        `the cache declined ${key} (already reserved, or unavailable); the other copies stand`,
      );
    }
    this.lastKey = key;
    return snapshot;
  }
}

export const defaultCachePath = (root: string) => join(root, 'school-checkpoint-cache');
