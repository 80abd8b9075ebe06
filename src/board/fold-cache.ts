import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../state/atomic.js';

/**
 * The board's persisted fold, `views/board-fold.json` (VIEW_FILES.boardFold): the folded state the
 * board needs, with a mark per log saying how far it was read and which file that was. The next
 * `school status` folds only what was appended since (src/board/board-fold.ts).
 *
 * It is derived data and never trusted over the logs: a file that is missing, truncated, corrupt
 * (its digest does not match), of another format or written by other fold code is ignored and
 * rebuilt, never an error for the user. It lives under `views/`, which checkpoint-state never saves.
 * Writers replace it atomically (temp file + rename), so concurrent `school status` runs each leave
 * a whole file: the last rename wins, and any whole file is a valid starting point.
 *
 * Layout: one JSON document, `{"header":{…},` on the first line (format, fold-code fingerprint, the
 * body's length and SHA-256) and `"body":{…}}` on the second, so the body's bytes are checked
 * before they are parsed, and the whole file still reads as JSON (`jq` works on it).
 */
export const FOLD_FORMAT = 'school-board-fold';
export const FOLD_VERSION = 1;

const markSchema = z.object({
  dev: z.number(),
  ino: z.number(),
  birth: z.number(),
  bytes: z.number().int().nonnegative(),
  head: z.string(),
  tail: z.string(),
});

/** A folded log: `mark` null when the log did not exist (its state is then the fold's empty state). */
const logSchema = z.object({
  mark: markSchema.nullable(),
  /** The compaction watermark of the log ('' when none): later events before it are stale copies. */
  watermark: z.string(),
  /** Every idempotency key folded, as sorted 32-bit hashes (src/board/key-hashes.ts). */
  keys: z.string(),
  fold: z.unknown(),
});

/** The curriculum is replaced, not appended: it is reused only while it is the very same file. */
const fileIdSchema = z.object({
  dev: z.number(),
  ino: z.number(),
  birth: z.number(),
  size: z.number(),
  mtimeMs: z.number(),
  ctimeMs: z.number(),
});

/** One issue as the board keeps it; checked by hand, as thousands of them are read on every run. */
interface CachedIssue {
  number: number;
  title: string;
  labels: string[];
  authorAssociation?: string;
}
const isIssue = (v: unknown): v is CachedIssue => {
  const i = v as Partial<CachedIssue> | null;
  return (
    typeof i === 'object' &&
    i !== null &&
    typeof i.number === 'number' &&
    typeof i.title === 'string' &&
    Array.isArray(i.labels) &&
    i.labels.every((l) => typeof l === 'string') &&
    (i.authorAssociation === undefined || typeof i.authorAssociation === 'string')
  );
};

const curriculumSchema = z.object({
  file: fileIdSchema.nullable(),
  items: z.custom<CachedIssue[]>((v) => Array.isArray(v) && v.every(isIssue), 'curriculum items'),
  invalid: z.number().int().nonnegative(),
});

export const foldBodySchema = z.object({
  logs: z.record(z.string(), logSchema),
  curriculum: curriculumSchema.optional(),
});

const headerSchema = z.object({
  format: z.literal(FOLD_FORMAT),
  version: z.literal(FOLD_VERSION),
  /** Fingerprint of the fold code that wrote it: other code folds differently, so it starts over. */
  code: z.string(),
  bytes: z.number().int().nonnegative(),
  sha256: z.string(),
});

export type CachedLog = z.infer<typeof logSchema>;
export type CachedCurriculum = z.infer<typeof curriculumSchema>;
export type FileId = z.infer<typeof fileIdSchema>;
export type FoldBody = z.infer<typeof foldBodySchema>;

/** The persisted fold at `path` when it is whole and was written by this fold code; else undefined. */
export function readFoldCache(path: string, code: string): FoldBody | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return undefined;
  }
  try {
    const nl = buf.indexOf(0x0a);
    const first = buf.toString('utf8', 0, nl);
    if (nl < 0 || !first.startsWith(HEAD) || !first.endsWith(',')) return undefined;
    const header = headerSchema.safeParse(JSON.parse(first.slice(HEAD.length, -1)));
    if (!header.success || header.data.code !== code) return undefined;
    const rest = buf.subarray(nl + 1);
    const body = rest.subarray(BODY.length, rest.length - END.length);
    if (
      rest.toString('utf8', 0, BODY.length) !== BODY ||
      rest.toString('utf8', rest.length - END.length) !== END
    )
      return undefined;
    if (body.length !== header.data.bytes) return undefined;
    if (createHash('sha256').update(body).digest('base64') !== header.data.sha256) return undefined;
    const parsed = foldBodySchema.safeParse(JSON.parse(body.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const HEAD = '{"header":';
const BODY = '"body":';
const END = '}\n';

/** Replaces the persisted fold atomically. Not fsynced: it is rebuilt from the logs if lost. */
export function writeFoldCache(path: string, code: string, body: FoldBody): void {
  const data = Buffer.from(JSON.stringify(body), 'utf8');
  const header = {
    format: FOLD_FORMAT,
    version: FOLD_VERSION,
    code,
    bytes: data.length,
    sha256: createHash('sha256').update(data).digest('base64'),
  };
  const text = (s: string) => Buffer.from(s, 'utf8');
  writeFileAtomic(
    path,
    Buffer.concat([text(`${HEAD}${JSON.stringify(header)},\n${BODY}`), data, text(END)]),
    { durable: false },
  );
}
