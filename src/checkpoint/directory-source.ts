import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeFileAtomic } from '../state/atomic.js';
import { withLock } from '../state/lock.js';
import { readSnapshotDir, writeSnapshotDir } from './snapshot-dir.js';
import type { Snapshot, SnapshotBuilder, SnapshotSource } from './source.js';

/**
 * Checkpoints in a local directory (local runs and tests): `snapshots/<generation>-<id>/` holds
 * each checkpoint, `HEAD` names the current one and is replaced atomically after the snapshot is
 * complete, so a crash mid-save leaves the previous checkpoint current. Saves are serialized by
 * the state lock, which makes them a compare-and-swap as well.
 */
export class DirectorySource implements SnapshotSource {
  readonly name = 'directory' as const;
  readonly authoritative = false;
  readonly root: string;

  constructor(
    root: string,
    private readonly keep = 3,
  ) {
    this.root = resolve(root);
  }

  async load(): Promise<Snapshot | undefined> {
    const current = this.current();
    return current
      ? readSnapshotDir(join(this.root, 'snapshots', current), `directory ${this.root}`)
      : undefined;
  }

  async save(build: SnapshotBuilder): Promise<Snapshot> {
    mkdirSync(join(this.root, 'snapshots'), { recursive: true });
    return withLock(join(this.root, 'HEAD'), async () => {
      const snapshot = build(await this.load());
      const name = `${String(snapshot.manifest.generation).padStart(9, '0')}-${randomBytes(3).toString('hex')}`;
      writeSnapshotDir(join(this.root, 'snapshots', name), snapshot);
      writeFileAtomic(join(this.root, 'HEAD'), `${name}\n`);
      this.prune(name);
      return snapshot;
    });
  }

  private current(): string | undefined {
    try {
      const name = readFileSync(join(this.root, 'HEAD'), 'utf8').trim();
      if (/^[0-9]{9}-[0-9a-f]{6}$/.test(name)) return name;
    } catch {
      // No HEAD yet: fall back to the newest complete snapshot directory, if any.
    }
    return this.list().at(-1);
  }

  private list(): string[] {
    try {
      return readdirSync(join(this.root, 'snapshots'))
        .filter((n) => /^[0-9]{9}-[0-9a-f]{6}$/.test(n))
        .sort();
    } catch {
      return [];
    }
  }

  private prune(current: string): void {
    const old = this.list().filter((n) => n !== current);
    for (const n of old.slice(0, Math.max(0, old.length - (this.keep - 1)))) {
      rmSync(join(this.root, 'snapshots', n), { recursive: true, force: true });
    }
  }
}
