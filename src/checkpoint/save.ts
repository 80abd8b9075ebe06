import { readFileSync } from 'node:fs';
import { message } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { actor } from '../state/audit.js';
import { writeFileAtomic } from '../state/atomic.js';
import { StateLayout } from '../state/layout.js';
import { compact } from './compact.js';
import { parseManifest, seal, serializeManifest, type Manifest } from './manifest.js';
import type { UnionReport } from './logs.js';
import { mergeFiles } from './merge.js';
import { scrubFiles } from './scrub.js';
import { SourceUnavailableError, type Snapshot, type SnapshotSource, type SourceName } from './source.js';
import { readTree, type TreeRead } from './tree.js';

export interface SaveOptions {
  stateDir: string;
  sources: readonly SnapshotSource[];
  /** Events older than this many days are folded (config.checkpoint.compactAfterDays). */
  compactAfterDays: number;
  now?: Date;
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
  dryRun: boolean;
}

/** Sources in the order they are written: the authoritative copy first, accelerators after. */
const ORDER: Record<SourceName, number> = { branch: 0, directory: 1, cache: 2, artifact: 3 };
const DURABLE = new Set<SourceName>(['branch', 'directory']);

/**
 * Saves the state directory: read → redact record by record → (merge with the source's current
 * checkpoint → compact → seal) → write. The first source (the state branch when configured) is
 * the durable copy: its failure fails the save. The others then receive exactly the snapshot it
 * stored, and their failures are warnings (DESIGN §5).
 */
export async function saveCheckpoint(options: SaveOptions): Promise<SaveResult> {
  const log = options.logger ?? silentLogger;
  if (options.sources.length === 0)
    throw new Error('checkpoint save: no sources configured; name at least one');
  const now = options.now ?? new Date();
  const layout = new StateLayout(options.stateDir);
  const tree = readTree(layout.root);
  const localGeneration = readLocalManifest(layout, log)?.generation ?? 0;
  const clean = scrubFiles(tree.files, (m) => log.warning(m));
  const horizon = new Date(now.getTime() - options.compactAfterDays * 86_400_000);
  const report: UnionReport = { divergentKeys: 0 };
  let compactedBelow = 0;
  let unfolded: string[] = [];
  const build = (base: Snapshot | undefined): Snapshot => {
    const merged = base ? mergeFiles(base.files, clean.files, report, (m) => log.warning(m)) : clean.files;
    const result = compact(merged, { horizon, warn: (m) => log.warning(m) });
    unfolded = result.unfolded;
    compactedBelow = Object.values(result.belowWatermark).reduce((a, b) => a + b, 0);
    return seal(result.files, {
      generation: Math.max(base?.manifest.generation ?? 0, localGeneration) + 1,
      writer: options.writer ?? actor(),
      createdAt: now,
      redacted: clean.redacted,
      compacted: result.compacted,
    });
  };
  const [primary, ...rest] = [...options.sources].sort((a, b) => ORDER[a.name] - ORDER[b.name]);
  const result: SaveResult = {
    snapshot: undefined as unknown as Snapshot,
    generation: 0,
    saved: [],
    failed: [],
    skipped: tree.skipped,
    unfolded,
    divergentKeys: 0,
    belowWatermark: 0,
    dryRun: options.dryRun === true,
  };
  if (options.dryRun) {
    let base: Snapshot | undefined;
    try {
      base = await primary!.load();
    } catch (e) {
      log.warning(`checkpoint (dry run): could not read ${primary!.name}: ${message(e)}`);
    }
    result.snapshot = build(base);
  } else {
    try {
      result.snapshot = await primary!.save(build);
      result.saved.push(primary!.name);
    } catch (e) {
      // The branch and a directory are durable copies: losing them fails the save. A cache or an
      // artifact as the only source is an accelerator that did not work this time (DESIGN §5).
      if (!(e instanceof SourceUnavailableError) || DURABLE.has(primary!.name)) throw e;
      log.warning(`checkpoint: copy not saved: ${prefixed(primary!.name, message(e))}`);
      result.failed.push({ source: primary!.name, reason: prefixed(primary!.name, message(e)) });
      result.snapshot = build(undefined);
    }
    const final = result.snapshot;
    for (const source of rest) {
      try {
        await source.save(() => final);
        result.saved.push(source.name);
      } catch (e) {
        log.warning(`checkpoint: copy not saved: ${prefixed(source.name, message(e))}`);
        result.failed.push({ source: source.name, reason: prefixed(source.name, message(e)) });
      }
    }
    writeFileAtomic(layout.file('manifest'), serializeManifest(final.manifest));
  }
  result.generation = result.snapshot.manifest.generation;
  result.unfolded = unfolded;
  result.divergentKeys = report.divergentKeys;
  result.belowWatermark = (report.belowWatermark ?? 0) + compactedBelow;
  if (result.belowWatermark > 0) {
    log.warning(
      `checkpoint: dropped ${result.belowWatermark} event(s) older than their log's watermark: ` +
        'a stale copy of history this checkpoint has already folded',
    );
  }
  if (report.divergentKeys > 0) {
    log.warning(
      `checkpoint: ${report.divergentKeys} event key(s) were folded by another writer's compaction only; ` +
        'they stay deduplicated but their folded effect could not be merged',
    );
  }
  return result;
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
