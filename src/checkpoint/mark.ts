import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../state/atomic.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { sha256 } from './manifest.js';
import type { SnapshotSource, SourceName } from './source.js';

/**
 * What the state directory held when it last matched a durable checkpoint: the files written by a
 * restore, or the files read by a save, with the checkpoint's id at its source (the state branch
 * commit). A save whose files still match and whose source still points at that id has nothing to
 * add, and returns without fetching, merging or pushing. Local only: never part of a checkpoint.
 */
export const MARK_FILE = 'checkpoint-mark.json';

const markSchema = z.strictObject({
  schema: z.literal(1),
  source: z.enum(['branch', 'cache', 'artifact', 'directory']),
  id: z.string().min(1),
  generation: z.number().int().positive(),
  files: z.record(z.string(), z.strictObject({ size: z.number().int().nonnegative(), sha256: z.string() })),
});
export type CheckpointMark = z.infer<typeof markSchema>;

export function markOf(
  source: SourceName,
  id: string,
  generation: number,
  files: ReadonlyMap<string, Buffer>,
): CheckpointMark {
  const entries: CheckpointMark['files'] = {};
  for (const [path, data] of files) entries[path] = { size: data.length, sha256: sha256(data) };
  return { schema: 1, source, id, generation, files: entries };
}

export function writeMark(layout: StateLayout, mark: CheckpointMark): void {
  writeFileAtomic(join(layout.root, MARK_FILE), JSON.stringify(mark) + '\n');
}

/** The mark, or undefined when there is none or it does not parse (then a save does the full work). */
export function readMark(layout: StateLayout): CheckpointMark | undefined {
  try {
    const parsed = markSchema.safeParse(JSON.parse(readFileSync(join(layout.root, MARK_FILE), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `files` are exactly the files of the mark: same paths, sizes and SHA-256. */
export function matchesMark(mark: CheckpointMark, files: ReadonlyMap<string, Buffer>): boolean {
  const listed = Object.keys(mark.files);
  if (listed.length !== files.size) return false;
  for (const path of listed) {
    const data = files.get(path);
    if (!data || data.length !== mark.files[path]!.size) return false;
  }
  for (const path of listed) if (sha256(files.get(path)!) !== mark.files[path]!.sha256) return false;
  return true;
}

/**
 * Whether the state directory still holds exactly the files of the checkpoint it last matched, and
 * the primary source still points at that checkpoint. Only sources that name their head cheaply
 * (the state branch) take part; anything unexpected means "changed", i.e. a full save.
 */
export async function unchangedSince(
  layout: StateLayout,
  primary: SnapshotSource,
  files: ReadonlyMap<string, Buffer>,
  generation: number,
  log: Logger,
): Promise<boolean> {
  const mark = readMark(layout);
  if (!mark || !primary.head || mark.source !== primary.name || mark.generation !== generation) return false;
  if (!matchesMark(mark, files)) return false;
  try {
    return (await primary.head()) === mark.id;
  } catch (e) {
    log.info(`checkpoint: could not read the ${primary.name} head (${message(e)}); saving in full`);
    return false;
  }
}
