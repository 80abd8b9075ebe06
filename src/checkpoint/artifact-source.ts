import { rmSync } from 'node:fs';
import { message } from '../errors.js';
import { writeSnapshotDir } from './snapshot-dir.js';
import { MANIFEST_FILE } from './manifest.js';
import {
  SourceNotSupportedError,
  SourceUnavailableError,
  type Snapshot,
  type SnapshotBuilder,
  RunCopySource,
  type RunCopyOptions,
} from './source.js';

/** The narrow port over @actions/artifact's uploadArtifact (production adapter: src/github/actions-services.ts). */
export interface ArtifactPort {
  upload(name: string, files: string[], root: string, retentionDays: number): Promise<void>;
  /** Why this platform cannot take an upload at all (GHES), checked before anything is staged. */
  unsupported?(): string | undefined;
}

export interface ArtifactSourceOptions extends RunCopyOptions {
  port: ArtifactPort;
  retentionDays: number;
}

/**
 * The audit copy (docs/architecture.md): one immutable artifact per save,
 * `<prefix>-<run_id>-<run_attempt>-<generation>` (a run's plan, heartbeats and grade jobs each save,
 * and the artifact service refuses a second artifact of one name in a run), kept for the configured
 * retention. Save only: restore never reads artifacts. An upload failure
 * throws SourceUnavailableError, which the save turns into a warning.
 */
export class ArtifactSource extends RunCopySource<ArtifactSourceOptions> {
  readonly name = 'artifact' as const;
  uploaded: string | undefined;

  artifactName(generation: number): string {
    return this.copyName(generation);
  }

  async load(): Promise<Snapshot | undefined> {
    return undefined;
  }

  async save(build: SnapshotBuilder): Promise<Snapshot> {
    const { path, port, retentionDays } = this.options;
    // On GHES the audit copy is skipped with a notice: the state branch (authoritative) and the
    // cache hold the checkpoint, and an upload would only fail the same way every run.
    const why = port.unsupported?.();
    if (why) throw new SourceNotSupportedError('artifact', `the artifact copy is skipped: ${why}`);
    const snapshot = build(undefined);
    writeSnapshotDir(path, snapshot);
    const files = [MANIFEST_FILE, ...snapshot.files.keys()].map((p) => `${path}/${p}`);
    const name = this.artifactName(snapshot.manifest.generation);
    try {
      await port.upload(name, files, path, retentionDays);
      this.uploaded = name;
    } catch (e) {
      throw new SourceUnavailableError('artifact', `${name} was not uploaded: ${message(e)}`, {
        cause: e,
      });
    } finally {
      rmSync(path, { recursive: true, force: true });
    }
    return snapshot;
  }
}
