import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, CorruptStateError } from '../errors.js';
import type { Logger } from '../log.js';
import { curriculumItemSchema, type CurriculumItem } from '../schemas/curriculum.js';
import { writeFileAtomic, writeJsonAtomic } from '../state/atomic.js';
import { readJsonl } from '../state/jsonl.js';
import type { StateLayout } from '../state/layout.js';
import { redact } from '../security/redact.js';

/**
 * `curriculum-meta.json`: what the last fetch asked and what it got back, so the next poll can be a
 * conditional request. `query` identifies the question (source, repository, labels, rules);
 * when it differs, the stored ETag and cursor mean nothing and the next fetch is a full listing.
 */
export const curriculumMetaSchema = z.object({
  /** 2: items carry the author's association (the intake trust gate); a version-1 cursor refetches. */
  version: z.literal(2),
  source: z.enum(['github', 'file']),
  query: z.string(),
  /** `since` of the conditional incremental request; null: next fetch is a full listing. */
  since: z.string().nullable(),
  /** ETag of page 1 of the incremental request at `since` (github) or SHA-256 of the file (file). */
  etag: z.string().nullable(),
  lastPollStartedAt: z.string(),
  lastFullAt: z.string().nullable(),
});

export type CurriculumMeta = z.infer<typeof curriculumMetaSchema>;

/**
 * The one reader of `curriculum.jsonl`. A corrupt line throws CorruptStateError (the file is
 * quarantined by readJsonl); records that parse as JSON but are not curriculum items are counted in
 * `invalid` (their line numbers), so each caller makes its choice explicit: the fetch rebuilds from
 * a full listing, planning refuses (`readCurriculumStrict`), the board shows the rest and says so.
 */
export function readCurriculumFile(
  layout: StateLayout,
  warn?: (message: string) => void,
): { items: CurriculumItem[]; invalid: number[] } {
  const { records } = readJsonl<unknown>(layout.file('curriculum'), warn);
  const items: CurriculumItem[] = [];
  const invalid: number[] = [];
  for (const [i, r] of records.entries()) {
    const parsed = curriculumItemSchema.safeParse(r);
    if (parsed.success) items.push(parsed.data);
    else invalid.push(i + 1);
  }
  return { items, invalid };
}

/** Every item, or an error naming the first record that is not one (planning never guesses). */
export function readCurriculumStrict(layout: StateLayout): CurriculumItem[] {
  const { items, invalid } = readCurriculumFile(layout);
  if (invalid.length)
    throw new ConfigError(
      `${layout.file('curriculum')}: line ${invalid[0]} is not a curriculum item (${invalid.length} such line(s)); run fetch-curriculum again to rebuild it`,
    );
  return items;
}

/**
 * The stored curriculum, keyed by issue number. It is a view rebuilt from GitHub (the source of
 * truth), so a corrupt file is quarantined by readJsonl and reported, and the fetch starts over
 * with a full listing rather than failing: nothing is lost that GitHub cannot give back.
 */
export function readCurriculum(layout: StateLayout, logger: Logger): Map<number, CurriculumItem> | undefined {
  const path = layout.file('curriculum');
  try {
    const { items: list, invalid } = readCurriculumFile(layout, (m) => logger.warning(m));
    if (invalid.length) {
      logger.warning(
        `${path}: line ${invalid[0]} is not a curriculum item; rebuilding the curriculum from a full listing`,
      );
      return undefined;
    }
    const items = new Map<number, CurriculumItem>();
    for (const item of list) items.set(item.number, item);
    return items;
  } catch (e) {
    if (e instanceof CorruptStateError) {
      logger.warning(`${e.message} The curriculum is rebuilt from a full listing.`);
      return undefined;
    }
    throw e;
  }
}

/** Absent, unreadable or from another version: undefined (the next fetch is a full listing). */
export function readMeta(layout: StateLayout, logger: Logger): CurriculumMeta | undefined {
  const path = layout.file('curriculumMeta');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return curriculumMetaSchema.parse(JSON.parse(text));
  } catch {
    logger.warning(`${path} is not valid fetch metadata; the next listing is a full one`);
    return undefined;
  }
}

/** Lines of curriculum.jsonl, sorted by issue number so equal curricula give equal bytes. */
export function serializeCurriculum(items: Iterable<CurriculumItem>): string {
  const sorted = [...items].sort((a, b) => a.number - b.number);
  return sorted.map((i) => JSON.stringify(redact(i))).join('\n') + (sorted.length ? '\n' : '');
}

/** Replaces curriculum.jsonl atomically; skips the write when the bytes would not change. */
export function writeCurriculum(layout: StateLayout, items: Iterable<CurriculumItem>): boolean {
  const path = layout.file('curriculum');
  const text = serializeCurriculum(items);
  try {
    if (readFileSync(path, 'utf8') === text) return false;
  } catch {
    /* absent: write it */
  }
  writeFileAtomic(path, text);
  return true;
}

export function writeMeta(layout: StateLayout, meta: CurriculumMeta): void {
  writeJsonAtomic(layout.file('curriculumMeta'), meta);
}

/** Counts of a merge: by issue number, `changed` when anything but the update time differs. */
export function diffCurricula(
  before: ReadonlyMap<number, CurriculumItem>,
  after: ReadonlyMap<number, CurriculumItem>,
): { added: number; changed: number; removed: number } {
  let added = 0;
  let changed = 0;
  let removed = 0;
  for (const [n, item] of after) {
    const old = before.get(n);
    if (!old) added++;
    else if (comparable(old) !== comparable(item)) changed++;
  }
  for (const n of before.keys()) if (!after.has(n)) removed++;
  return { added, changed, removed };
}

function comparable(item: CurriculumItem): string {
  const { updatedAt: _u, ...rest } = item;
  return JSON.stringify(rest);
}
