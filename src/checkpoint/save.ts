import { readFileSync } from 'node:fs';
import { message, SchoolError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { writeFileAtomic } from '../state/atomic.js';
import { StateLayout } from '../state/layout.js';
import { compact } from './compact.js';
import { parseManifest, seal, serializeManifest, type Manifest } from './manifest.js';
import type { UnionReport } from './logs.js';
import { mergeFiles } from './merge.js';
import { markOf, unchangedSince, writeMark } from './mark.js';
import { scrubFiles } from './scrub.js';
import {
  SourceNotSupportedError,
  SourceUnavailableError,
  type Snapshot,
  type SnapshotSource,
  type SourceName,
} from './source.js';
import { readTree, type TreeRead } from './tree.js';

export interface SaveOptions {
  stateDir: string;
  sources: readonly SnapshotSource[];
  /** Events older than this many days are folded (config.checkpoint.compactAfterDays). */
  compactAfterDays: number;
  now?: Date;
  /** Who saves, for the manifest (`auditActor` of the run context); this local process by default. */
  writer?: string;
  logger?: Logger;
  /** Build and report the checkpoint, write it nowhere. */
  dryRun?: boolean;
}

export interface SaveResult {
  snapshot: Snapshot;
  generation: number;
  /** Sources that hold the new checkpoint. */
  saved: SourceName[];
  /** Sources that were asked and did not take it (warnings). */
  failed: Array<{ source: SourceName; reason: string }>;
  /** Sources this platform cannot hold, skipped with a notice (the artifact copy on GHES). */
  notSupported?: Array<{ source: SourceName; reason: string }>;
  skipped: TreeRead['skipped'];
  /** Event logs kept whole because no fold is registered for them. */
  unfolded: string[];
  /** Keys another writer folded that we could not merge (see logs.ts). */
  divergentKeys: number;
  /**
   * Events dropped because they are older than their log's watermark: a stale copy of history the
   * checkpoint has already folded (see LogFold.dedup).
   */
  belowWatermark: number;
  /**
   * Nothing was appended since the checkpoint this directory last matched, and its source still
   * points at it: nothing was written (the checkpoint already holds this state).
   */
  unchanged: boolean;
  /** Milliseconds per phase: read, scrub, check, fetch, merge, compact, seal, write, push. */
  timings: Record<string, number>;
  dryRun: boolean;
}

/** Sources in the order they are written: the authoritative copy first, accelerators after. */
const ORDER: Record<SourceName, number> = { branch: 0, directory: 1, cache: 2, artifact: 3 };
const DURABLE = new Set<SourceName>(['branch', 'directory']);

/** Milliseconds per phase, summed when a phase runs more than once (merge and compact on a retry). */
function phaseClock() {
  const timings: Record<string, number> = {};
  let t = performance.now();
  return {
    timings,
    /** Starts a new phase now (the time before it is not counted). */
    restart: () => void (t = performance.now()),
    /** Ends the phase named: adds the time since the last lap or restart. */
    lap: (phase: string) => {
      const at = performance.now();
      timings[phase] = (timings[phase] ?? 0) + (at - t);
      t = at;
    },
  };
}

/**
 * Saves the state directory: read → redact record by record → (merge with the source's current
 * checkpoint → compact → seal) → write. The first source (the state branch when configured) is
 * the durable copy: its failure fails the save. The others then receive exactly the snapshot it
 * stored, and their failures are warnings (docs/architecture.md).
 */
export async function saveCheckpoint(options: SaveOptions): Promise<SaveResult> {
  const log = options.logger ?? silentLogger;
  if (options.sources.length === 0)
    throw new SchoolError('checkpoint save: no sources configured; name at least one', {
      code: 'checkpoint-config',
    });
  const layout = new StateLayout(options.stateDir);
  const clock = phaseClock();
  const tree = readTree(layout.root);
  const localManifest = readLocalManifest(layout, log);
  clock.lap('read');
  const [primary, ...rest] = [...options.sources].sort((a, b) => ORDER[a.name] - ORDER[b.name]);
  if (!options.dryRun && localManifest) {
    const same = await unchangedSince(layout, primary!, tree.files, localManifest.generation, log);
    clock.lap('check');
    if (same) return unchangedResult(localManifest, tree, primary!.name, clock.timings, log);
  }
  const builder = snapshotBuilder(tree, localManifest?.generation ?? 0, options, clock, log);
  const result: SaveResult = {
    snapshot: undefined as unknown as Snapshot,
    generation: 0,
    saved: [],
    failed: [],
    skipped: tree.skipped,
    unfolded: [],
    divergentKeys: 0,
    belowWatermark: 0,
    unchanged: false,
    timings: clock.timings,
    dryRun: options.dryRun === true,
  };
  if (options.dryRun) {
    result.snapshot = builder.build(await loadForDryRun(primary!, log));
  } else {
    await writeToSources(primary!, rest, builder.build, result, log);
    const final = result.snapshot;
    writeFileAtomic(layout.file('manifest'), serializeManifest(final.manifest));
    const id = primary!.lastId;
    if (result.saved[0] === primary!.name && id) {
      writeMark(layout, markOf(primary!.name, id, final.manifest.generation, tree.files));
    }
    for (const [phase, ms] of Object.entries(primary!.timings ?? {})) {
      if (phase !== 'build') clock.timings[phase] = ms;
    }
  }
  result.generation = result.snapshot.manifest.generation;
  result.unfolded = builder.stats.unfolded;
  result.divergentKeys = builder.report.divergentKeys;
  result.belowWatermark = (builder.report.belowWatermark ?? 0) + builder.stats.compactedBelow;
  warnAboutMerge(result, log);
  return result;
}

/** The result of a save that found the primary source already holding this state. */
function unchangedResult(
  manifest: Manifest,
  tree: TreeRead,
  primary: SourceName,
  timings: Record<string, number>,
  log: Logger,
): SaveResult {
  log.info(
    `checkpoint: nothing changed since generation ${manifest.generation} and ${primary} still holds it; nothing to write`,
  );
  return {
    snapshot: { manifest, files: tree.files },
    generation: manifest.generation,
    // The primary source already holds it (the other copies got it when it was written).
    saved: [primary],
    failed: [],
    skipped: tree.skipped,
    unfolded: [],
    divergentKeys: 0,
    belowWatermark: 0,
    unchanged: true,
    timings,
    dryRun: false,
  };
}

/**
 * The scrubbed files and the function a source calls with its current checkpoint (or none) to get
 * the snapshot it stores: merge → compact → seal. The counts of the last build stay in `stats`.
 */
function snapshotBuilder(
  tree: TreeRead,
  localGeneration: number,
  options: SaveOptions,
  clock: ReturnType<typeof phaseClock>,
  log: Logger,
) {
  const now = options.now ?? new Date();
  const clean = scrubFiles(tree.files, (m) => log.warning(m));
  clock.lap('scrub');
  const horizon = new Date(now.getTime() - options.compactAfterDays * 86_400_000);
  const report: UnionReport = { divergentKeys: 0 };
  const stats = { compactedBelow: 0, unfolded: [] as string[] };
  const build = (base: Snapshot | undefined): Snapshot => {
    clock.restart();
    const merged = base ? mergeFiles(base.files, clean.files, report, (m) => log.warning(m)) : clean.files;
    clock.lap('merge');
    const result = compact(merged, { horizon, warn: (m) => log.warning(m) });
    stats.unfolded = result.unfolded;
    stats.compactedBelow = Object.values(result.belowWatermark).reduce((a, b) => a + b, 0);
    clock.lap('compact');
    const sealed = seal(result.files, {
      generation: Math.max(base?.manifest.generation ?? 0, localGeneration) + 1,
      writer: options.writer ?? `local:${process.pid}`,
      createdAt: now,
      redacted: clean.redacted,
      compacted: result.compacted,
    });
    clock.lap('seal');
    return sealed;
  };
  return { build, report, stats };
}

/** A dry run merges with what the primary source holds when it can read it, else with nothing. */
async function loadForDryRun(primary: SnapshotSource, log: Logger): Promise<Snapshot | undefined> {
  try {
    return await primary.load();
  } catch (e) {
    log.warning(`checkpoint (dry run): could not read ${primary.name}: ${message(e)}`);
    return undefined;
  }
}

/**
 * Saves to the primary source (built on its current checkpoint), then hands exactly that snapshot
 * to the others. Records in `result` which sources took it, which failed and which cannot hold it.
 */
async function writeToSources(
  primary: SnapshotSource,
  rest: readonly SnapshotSource[],
  build: (base: Snapshot | undefined) => Snapshot,
  result: SaveResult,
  log: Logger,
): Promise<void> {
  const failed = (source: SourceName, e: unknown) => {
    log.warning(`checkpoint: copy not saved: ${prefixed(source, message(e))}`);
    result.failed.push({ source, reason: prefixed(source, message(e)) });
  };
  try {
    result.snapshot = await primary.save(build);
    result.saved.push(primary.name);
  } catch (e) {
    // The branch and a directory are durable copies: losing them fails the save. A cache or an
    // artifact as the only source is an accelerator that did not work this time (docs/architecture.md).
    if (!(e instanceof SourceUnavailableError) || DURABLE.has(primary.name)) throw e;
    failed(primary.name, e);
    result.snapshot = build(undefined);
  }
  const final = result.snapshot;
  for (const source of rest) {
    try {
      await source.save(() => final);
      result.saved.push(source.name);
    } catch (e) {
      if (e instanceof SourceNotSupportedError) {
        log.info(`checkpoint: ${message(e)}`);
        (result.notSupported ??= []).push({ source: source.name, reason: message(e) });
        continue;
      }
      failed(source.name, e);
    }
  }
}

/** Warns about events the merge dropped as stale and keys it could not merge. */
function warnAboutMerge(result: SaveResult, log: Logger): void {
  if (result.belowWatermark > 0) {
    log.warning(
      `checkpoint: dropped ${result.belowWatermark} event(s) older than their log's watermark: ` +
        'a stale copy of history this checkpoint has already folded',
    );
  }
  if (result.divergentKeys > 0) {
    log.warning(
      `checkpoint: ${result.divergentKeys} event key(s) were folded by another writer's compaction only; ` +
        'they stay deduplicated but their folded effect could not be merged',
    );
  }
}

const prefixed = (source: string, text: string) =>
  text.startsWith(`${source}:`) ? text : `${source}: ${text}`;

/** The manifest of the checkpoint this state directory was last restored from or saved as. */
export function readLocalManifest(layout: StateLayout, log: Logger = silentLogger): Manifest | undefined {
  let data: Buffer;
  try {
    data = readFileSync(layout.file('manifest'));
  } catch {
    return undefined;
  }
  try {
    return parseManifest(data, layout.file('manifest'));
  } catch (e) {
    log.warning(`checkpoint: ignoring the local manifest: ${message(e)}`);
    return undefined;
  }
}
