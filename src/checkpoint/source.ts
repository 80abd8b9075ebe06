import { SchoolError, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { Manifest } from './manifest.js';

/**
 * A checkpoint of the state directory (docs/architecture.md): its files, by POSIX path relative to the
 * state directory, plus a manifest holding the generation and the SHA-256 of every file.
 */
export interface Snapshot {
  manifest: Manifest;
  files: Map<string, Buffer>;
}

/**
 * Produces the snapshot to write on top of `base` (what the source holds now, when it holds
 * anything). A compare-and-swap source calls it again with the newer base after a rejected write,
 * so the result is always a union of both writers' events (docs/architecture.md).
 */
export type SnapshotBuilder = (base: Snapshot | undefined) => Snapshot;

export type SourceName = 'branch' | 'cache' | 'artifact' | 'directory';

/**
 * Where checkpoints live. The state branch is authoritative; the cache is an accelerator; the
 * artifact is an audit copy; the directory serves local runs and tests. `save` takes a builder
 * rather than a finished snapshot because the authoritative source must rebuild on top of a
 * concurrent writer's checkpoint; the others call it once and write what it returns.
 */
export interface SnapshotSource {
  readonly name: SourceName;
  /** True for the one source whose copy outranks the others when it is reachable. */
  readonly authoritative: boolean;
  /** The newest snapshot this source holds, unverified, or undefined when it holds none. */
  load(): Promise<Snapshot | undefined>;
  /** Writes a snapshot and returns what was written (after any rebuild). */
  save(build: SnapshotBuilder): Promise<Snapshot>;
  /**
   * Optional, for sources that can name their newest checkpoint cheaply (the state branch: its head
   * commit, one `ls-remote`): lets a save of an unchanged state directory skip all work.
   */
  head?(): Promise<string | undefined>;
  /** Id of the checkpoint last loaded or saved through this source (with `head`). */
  readonly lastId?: string | undefined;
  /** Milliseconds of the last save's own phases (fetch, write, push), when the source measures them. */
  readonly timings?: Record<string, number>;
}

/**
 * A copy saved once per run attempt under its own name, `<prefix>-<run_id>-<run_attempt>-<generation>`
 * (the cache and the artifact): a run saves more than once, and neither service takes a name twice.
 */
export interface RunCopyOptions {
  prefix: string;
  runId: string;
  runAttempt: string;
  /** Directory the payload is staged in. */
  path: string;
  logger?: Logger;
}

/**
 * The cache and the artifact copy: an accelerator and an audit copy, never authoritative, each
 * saved under a name of its run attempt.
 */
export abstract class RunCopySource<O extends RunCopyOptions> implements SnapshotSource {
  abstract readonly name: SourceName;
  readonly authoritative = false;

  constructor(protected readonly options: O) {}

  abstract load(): Promise<Snapshot | undefined>;
  abstract save(build: SnapshotBuilder): Promise<Snapshot>;

  /** The run attempt's name for a copy of `generation`; without it, the attempt's own prefix. */
  protected copyName(generation?: number): string {
    const attempt = `${this.options.prefix}-${this.options.runId}-${this.options.runAttempt}`;
    return generation === undefined ? attempt : `${attempt}-${generation}`;
  }
}

/** A source that was asked to work and could not: the caller decides whether that is fatal. */
export class SourceUnavailableError extends SchoolError {
  override readonly code: ErrorCode = 'checkpoint-source-unavailable';
  constructor(
    readonly source: SourceName,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${source}: ${message}`, options);
    this.name = 'SourceUnavailableError';
  }
}

/**
 * A copy this platform cannot hold (the artifact copy on GitHub Enterprise Server): not a failure,
 * a notice. The save goes on with the other sources.
 */
export class SourceNotSupportedError extends SourceUnavailableError {
  override readonly code = 'checkpoint-source-not-supported';
  constructor(source: SourceName, message: string) {
    super(source, message);
    this.name = 'SourceNotSupportedError';
  }
}
