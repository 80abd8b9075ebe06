import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { message } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { fsyncDir } from '../state/atomic.js';
import { StateLayout } from '../state/layout.js';
import { MANIFEST_FILE, serializeManifest, verify } from './manifest.js';
import type { UnionReport } from './logs.js';
import { mergeFiles } from './merge.js';
import { MARK_FILE, markOf } from './mark.js';
import type { Snapshot, SnapshotSource, SourceName } from './source.js';
import { readTree, writeTree } from './tree.js';

export interface RestoreOptions {
  stateDir: string;
  sources: readonly SnapshotSource[];
  logger?: Logger;
  /** Choose and verify, write nothing. */
  dryRun?: boolean;
}

export interface RestoreResult {
  source: SourceName | 'none';
  generation: number;
  files: Array<{ path: string; size: number }>;
  /** Sources whose snapshot did not verify or could not be read. */
  rejected: Array<{ source: SourceName; reason: string }>;
  /** True when the state directory already held files and they were merged in. */
  mergedLocal: boolean;
  /** Local events dropped on the merge because they are older than their log's watermark. */
  belowWatermark: number;
  dryRun: boolean;
}

/**
 * Restores the state directory (docs/architecture.md). Every configured source is read and verified; a
 * snapshot whose hashes do not verify is rejected with a warning. The authoritative copy wins when
 * it verifies; otherwise the newest verified snapshot does. No state anywhere means an empty state,
 * said out loud. Files already in the state directory are merged in (union of event logs), never
 * discarded. The result is written to a staging directory and swapped in by rename, so a crash
 * leaves the old state or the new one, never a mix.
 */
export async function restoreCheckpoint(options: RestoreOptions): Promise<RestoreResult> {
  const log = options.logger ?? silentLogger;
  const layout = new StateLayout(options.stateDir);
  recoverInterruptedSwap(layout.root, log);
  const rejected: RestoreResult['rejected'] = [];
  const candidates: Array<{ source: SnapshotSource; snapshot: Snapshot }> = [];
  for (const source of options.sources) {
    let snapshot: Snapshot | undefined;
    try {
      snapshot = await source.load();
    } catch (e) {
      log.warning(`checkpoint: ${source.name} unavailable: ${message(e)}`);
      rejected.push({ source: source.name, reason: message(e) });
      continue;
    }
    if (!snapshot) {
      log.info(`checkpoint: ${source.name} holds no checkpoint`);
      continue;
    }
    const problems = verify(snapshot);
    if (problems.length) {
      const reason = `generation ${snapshot.manifest.generation} does not verify: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? ` (+${problems.length - 3} more)` : ''}`;
      log.warning(`checkpoint: rejected the ${source.name} snapshot, ${reason}`);
      rejected.push({ source: source.name, reason });
      continue;
    }
    candidates.push({ source, snapshot });
  }
  const chosen = choose(candidates, log);
  const result: RestoreResult = {
    source: chosen?.source.name ?? 'none',
    generation: chosen?.snapshot.manifest.generation ?? 0,
    files: [],
    rejected,
    mergedLocal: false,
    belowWatermark: 0,
    dryRun: options.dryRun === true,
  };
  if (!chosen) {
    log.info(
      `checkpoint: no checkpoint in ${options.sources.map((s) => s.name).join(', ') || 'any source'}; starting with an empty state`,
    );
    if (!options.dryRun) mkdirSync(layout.root, { recursive: true });
    return result;
  }
  const local = readTree(layout.root);
  let files = chosen.snapshot.files;
  if (local.files.size > 0) {
    const report: UnionReport = { divergentKeys: 0 };
    files = mergeFiles(chosen.snapshot.files, local.files, report, (m) => log.warning(m));
    result.mergedLocal = true;
    result.belowWatermark = report.belowWatermark ?? 0;
    if (result.belowWatermark > 0) {
      log.warning(
        `checkpoint: dropped ${result.belowWatermark} local event(s) older than their log's watermark: ` +
          'the checkpoint has already folded them',
      );
    }
  }
  result.files = [...files].map(([path, data]) => ({ path, size: data.length }));
  if (options.dryRun) return result;
  const stage = join(
    dirname(layout.root),
    `.${basename(layout.root)}.restore-${randomBytes(4).toString('hex')}`,
  );
  try {
    writeTree(stage, files);
    writeTree(stage, new Map([[MANIFEST_FILE, serializeManifest(chosen.snapshot.manifest)]]));
    // The mark says "this directory is exactly that checkpoint": not true when local events were merged in.
    const id = chosen.source.lastId;
    if (id && sameFiles(files, chosen.snapshot.files)) {
      writeTree(
        stage,
        new Map([
          [
            MARK_FILE,
            Buffer.from(
              JSON.stringify(markOf(chosen.source.name, id, chosen.snapshot.manifest.generation, files)) +
                '\n',
            ),
          ],
        ]),
      );
    }
    fsyncDir(stage);
    swapIn(
      layout.root,
      stage,
      local.skipped.map((s) => s.path),
    );
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  log.info(
    `checkpoint: restored generation ${result.generation} from ${result.source} (${result.files.length} files)`,
  );
  return result;
}

function sameFiles(a: ReadonlyMap<string, Buffer>, b: ReadonlyMap<string, Buffer>): boolean {
  if (a.size !== b.size) return false;
  for (const [path, data] of a) if (!b.get(path)?.equals(data)) return false;
  return true;
}

function choose(
  candidates: Array<{ source: SnapshotSource; snapshot: Snapshot }>,
  log: Logger,
): { source: SnapshotSource; snapshot: Snapshot } | undefined {
  const authoritative = candidates.find((c) => c.source.authoritative);
  const newest = candidates.reduce<(typeof candidates)[number] | undefined>(
    (best, c) => (!best || c.snapshot.manifest.generation > best.snapshot.manifest.generation ? c : best),
    undefined,
  );
  if (
    authoritative &&
    newest &&
    newest.snapshot.manifest.generation > authoritative.snapshot.manifest.generation
  ) {
    // A copy claiming to be ahead of the durable one is either a save whose branch push failed or
    // a forged entry: the branch is the truth (docs/architecture.md).
    log.warning(
      `checkpoint: ${newest.source.name} claims generation ${newest.snapshot.manifest.generation}, ahead of the ` +
        `${authoritative.source.name} (${authoritative.snapshot.manifest.generation}); using the ${authoritative.source.name}`,
    );
  }
  return authoritative ?? newest;
}

/**
 * Replaces `root` by `stage` with two renames. Paths the checkpoint leaves out (quarantined files,
 * views) are carried over from the old directory. A crash between the renames leaves
 * `.<name>.previous-*` next to a missing state directory, which recoverInterruptedSwap puts back.
 */
function swapIn(root: string, stage: string, carry: readonly string[]): void {
  const parent = dirname(root);
  mkdirSync(parent, { recursive: true });
  if (!existsSync(root)) {
    renameSync(stage, root);
    fsyncDir(parent);
    return;
  }
  const previous = join(parent, `.${basename(root)}.previous-${randomBytes(4).toString('hex')}`);
  renameSync(root, previous);
  renameSync(stage, root);
  fsyncDir(parent);
  for (const path of carry) {
    const from = join(previous, path);
    const to = join(root, path);
    if (existsSync(from) && !existsSync(to)) {
      mkdirSync(dirname(to), { recursive: true });
      renameSync(from, to);
    }
  }
  rmSync(previous, { recursive: true, force: true });
}

export function recoverInterruptedSwap(root: string, log: Logger = silentLogger): void {
  const parent = dirname(root);
  const name = basename(root);
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  const previous = entries.filter((e) => e.startsWith(`.${name}.previous-`)).sort();
  if (!existsSync(root) && previous.length > 0) {
    renameSync(join(parent, previous[0]!), root);
    log.warning(`checkpoint: an earlier restore was interrupted; put the previous state directory back`);
  }
  for (const e of entries) {
    if (e.startsWith(`.${name}.restore-`) || (e.startsWith(`.${name}.previous-`) && existsSync(root))) {
      rmSync(join(parent, e), { recursive: true, force: true });
    }
  }
}
