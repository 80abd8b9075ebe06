import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isUtf8 } from 'node:buffer';
import {
  BOOKBAG_FILES,
  CREW_ID_PATTERN,
  bookbagSchema,
  doneFlagSchema,
  sha256,
  type Bookbag,
} from './schema.js';
import { writeFileAtomic, writeJsonAtomic, writeTextAtomic } from '../state/atomic.js';
import { audit } from '../state/audit.js';
import type { StateLayout } from '../state/layout.js';
import { SchoolError, type ErrorCode } from '../errors.js';
import { SESSION_STORE_MAX_BYTES } from './session-store.js';
import { readUntrusted } from '../security/untrusted-file.js';

export { sha256 } from './schema.js';

/** N4.2: a reader asked for a bookbag it is not entitled to. */
export class BookbagAccessError extends SchoolError {
  override readonly code = 'bookbag-access';
  constructor(
    readonly crewId: string,
    readonly reader: string,
  ) {
    super(
      `bookbag ${crewId}: refused to ${reader}; only the crew that wrote it, a revision of it and the graders may read it`,
    );
    this.name = 'BookbagAccessError';
  }
}

/** A bookbag without a valid done flag: still being written, or torn. */
export class BookbagIncompleteError extends SchoolError {
  override readonly code: ErrorCode = 'bookbag-incomplete';
  constructor(crewId: string, detail: string) {
    super(`bookbag ${crewId} is not complete: ${detail}`);
    this.name = 'BookbagIncompleteError';
  }
}

/**
 * A crew's patch is not the one collected from its worktree: its bytes no longer match the digest
 * recorded at collection (written after the crew, or cut), or they are not the text every step
 * carries. The school's error, never the student's: no verdict is given on it and nothing is
 * delivered; the attempt fails with this message and an alert (docs/grading.md).
 */
export class PatchIntegrityError extends BookbagIncompleteError {
  override readonly code = 'patch-integrity';
  constructor(
    readonly crewId: string,
    detail: string,
  ) {
    super(crewId, detail);
    this.message = `the patch of crew ${crewId} ${detail}; the school's error, not the student's: it is neither graded nor delivered`;
    this.name = 'PatchIntegrityError';
  }
}

/**
 * The patch as the text every step carries (the verification, the judges, the reviewer): the bytes
 * collected, decoded as UTF-8 — or PatchIntegrityError when they are not UTF-8 (a text file in
 * another encoding), which no step could then carry byte for byte.
 */
export function patchText(bytes: Buffer, crewId: string): string {
  if (!isUtf8(bytes)) {
    throw new PatchIntegrityError(
      crewId,
      'is not UTF-8 text (a text file in another encoding): the school carries a patch as text and cannot keep this one byte for byte',
    );
  }
  return bytes.toString('utf8');
}

/**
 * Bookbags (`bookbags/<crew_id>/`, schema in src/schemas/bookbag.ts). N2.2: every file is written
 * atomically (temp + fsync + rename) and passes the redactor — but the patch, which is data: its
 * bytes are the ones collected from the worktree, written as they are (a redacted patch does not
 * apply, or delivers `[REDACTED]` as code; the secret scan, not the redactor, keeps credentials out
 * of it). `done.flag` is written last, holding the SHA-256 of the record and of the diff, so a
 * reader that sees the flag sees complete data and can prove it.
 */

export interface BookbagFiles {
  record: Omit<Bookbag, 'diffSha'>;
  /** The patch: the collected bytes (a string is written as UTF-8). */
  diff: string | Buffer;
  report?: string;
  verificationLog?: string;
  /** The brief the student received (`brief.md`), for reviewers. */
  brief?: string;
  /** `session-store.json` as serialized (./session-store.ts); the record's `sessionStore` vouches for it. */
  sessionStore?: string;
}

/** Writes the data, then the done flag. Returns the stored diff's SHA-256. */
export function writeBookbag(dir: string, files: BookbagFiles): { diffSha: string; recordSha: string } {
  // A flag left by an interrupted earlier write must not vouch for the data written now.
  rmSync(join(dir, BOOKBAG_FILES.done), { force: true });
  const diffPath = join(dir, BOOKBAG_FILES.diff);
  const patch = typeof files.diff === 'string' ? Buffer.from(files.diff, 'utf8') : files.diff;
  writeFileAtomic(diffPath, patch);
  const diffSha = sha256(readFileSync(diffPath));
  if (diffSha !== sha256(patch))
    throw new PatchIntegrityError(files.record.crewId, 'written but read back otherwise');
  if (files.report !== undefined) writeTextAtomic(join(dir, BOOKBAG_FILES.report), files.report);
  if (files.verificationLog !== undefined) {
    writeTextAtomic(join(dir, BOOKBAG_FILES.verificationLog), files.verificationLog);
  }
  if (files.brief !== undefined) writeTextAtomic(join(dir, BOOKBAG_FILES.brief), files.brief);
  if (files.sessionStore !== undefined)
    writeTextAtomic(join(dir, BOOKBAG_FILES.sessionStore), files.sessionStore);
  else rmSync(join(dir, BOOKBAG_FILES.sessionStore), { force: true });
  const record = bookbagSchema.parse({ ...files.record, diffSha });
  const recordPath = join(dir, BOOKBAG_FILES.record);
  writeJsonAtomic(recordPath, record);
  const recordSha = sha256(readFileSync(recordPath));
  writeJsonAtomic(join(dir, BOOKBAG_FILES.done), { crewId: record.crewId, recordSha, diffSha });
  return { diffSha, recordSha };
}

/**
 * Who reads a bookbag: the graders; the crew that wrote it; a revision crew, the bookbag of the
 * crew it revises (its plan names it: the caller reads `revises` from the registry).
 */
export type BookbagReader =
  | { role: 'grader' }
  | { role: 'crew'; crewId: string }
  | { role: 'revision'; crewId: string; revises: string };

export interface ReadBookbag {
  record: Bookbag;
  /** The patch as text (UTF-8). */
  diff: string;
  /** The patch's bytes, as collected: their SHA-256 is the record's `diffSha`. */
  patch: Buffer;
  report?: string;
  verificationLog?: string;
  /** The brief the student received, when the crew stored it. */
  brief?: string;
}

/**
 * The one bookbag reader (N4.2, N2.2). A bookbag is readable by the graders and by the crew that
 * wrote it; any other reader is refused with BookbagAccessError and an audit line. The path is
 * derived from a validated crew id only (no separators, no `..`), under the state's bookbags
 * directory or, for an import of downloaded bookbags, under `root`. Only a complete bookbag is
 * returned: its done flag (written last) names this crew, and the bytes of the record and the diff
 * match the digests the flag and the record vouch for. Anything else is BookbagIncompleteError
 * naming what is wrong.
 */
export async function readBookbag(
  layout: StateLayout,
  crewId: string,
  reader: BookbagReader,
  root?: string,
): Promise<ReadBookbag> {
  const who =
    reader.role === 'grader'
      ? 'grader'
      : reader.role === 'crew'
        ? `crew ${reader.crewId}`
        : `revision crew ${reader.crewId}`;
  const entitled =
    reader.role === 'grader' ||
    (reader.role === 'crew' ? reader.crewId === crewId : reader.revises === crewId);
  if (!CREW_ID_PATTERN.test(crewId) || !entitled) {
    await audit(layout, 'bookbag.refused', {
      crewId: CREW_ID_PATTERN.test(crewId) ? crewId : '(invalid id)',
      reader: who,
    });
    throw new BookbagAccessError(crewId, who);
  }
  const dir = root === undefined ? layout.bookbag(crewId) : join(root, crewId);
  const incomplete = (detail: string) => new BookbagIncompleteError(crewId, detail);
  // Each file as data: a plain file within its bound, never through a link (an imported bookbag
  // is another job's output).
  const bytes = (k: keyof typeof BOOKBAG_FILES) => {
    const f = BOOKBAG_FILES[k];
    const r = readUntrusted(join(dir, f), { maxBytes: BOOKBAG_FILE_BOUNDS[k], name: f });
    if (r.ok) return r.bytes;
    if (r.missing) return undefined;
    throw incomplete(r.why);
  };
  const flagBytes = bytes('done');
  if (!flagBytes) throw incomplete(`no ${BOOKBAG_FILES.done} (still being written, or never finished)`);
  const flag = doneFlagSchema.safeParse(parseJson(flagBytes));
  if (!flag.success) throw incomplete(`${BOOKBAG_FILES.done} is malformed`);
  if (flag.data.crewId !== crewId) throw incomplete(`${BOOKBAG_FILES.done} names crew ${flag.data.crewId}`);
  const recordBytes = bytes('record');
  if (!recordBytes) throw incomplete(`${BOOKBAG_FILES.record} is missing`);
  if (sha256(recordBytes) !== flag.data.recordSha) {
    throw incomplete(`${BOOKBAG_FILES.record} does not match the digest in ${BOOKBAG_FILES.done}`);
  }
  const record = bookbagSchema.safeParse(parseJson(recordBytes));
  if (!record.success) {
    const first = record.error.issues[0];
    throw incomplete(
      `${BOOKBAG_FILES.record} is invalid (${first ? `${first.path.join('.') || 'record'}: ${first.message}` : 'not JSON'})`,
    );
  }
  if (record.data.crewId !== crewId)
    throw incomplete(`${BOOKBAG_FILES.record} names crew ${record.data.crewId}`);
  const diffBytes = bytes('diff') ?? Buffer.alloc(0);
  const diffSha = sha256(diffBytes);
  if (flag.data.diffSha !== record.data.diffSha) {
    throw incomplete(`${BOOKBAG_FILES.record} and ${BOOKBAG_FILES.done} name different patches`);
  }
  if (diffSha !== record.data.diffSha) {
    throw new PatchIntegrityError(
      crewId,
      `in its bookbag does not match the digest recorded at collection (${BOOKBAG_FILES.diff} has sha256 ${diffSha.slice(0, 12)}…, ${BOOKBAG_FILES.done} names ${record.data.diffSha.slice(0, 12)}…)`,
    );
  }
  const optional = (k: keyof typeof BOOKBAG_FILES) => bytes(k)?.toString('utf8');
  return {
    record: record.data,
    diff: diffBytes.toString('utf8'),
    patch: diffBytes,
    report: optional('report'),
    verificationLog: optional('verificationLog'),
    brief: optional('brief'),
  };
}

const MiB = 1024 * 1024;
/**
 * The largest each bookbag file may be when it arrives from another job (a handoff, a downloaded
 * `bookbags-path`): the record and flag are small, the diff and the verification log bounded as
 * the events files are, the session store by what a crew keeps.
 */
export const BOOKBAG_FILE_BOUNDS: Record<keyof typeof BOOKBAG_FILES, number> = {
  record: 1 * MiB,
  diff: 32 * MiB,
  report: 8 * MiB,
  verificationLog: 32 * MiB,
  brief: 8 * MiB,
  sessionStore: SESSION_STORE_MAX_BYTES,
  done: 64 * 1024,
};

/**
 * Why a bookbag directory that came from another job may not be taken: a name that is not a
 * bookbag file, something that is not a plain file (a link, a directory), or a file over its bound.
 * Undefined when every entry is a known, plain, bounded file.
 */
export function bookbagFilesProblem(dir: string): string | undefined {
  const bounds = new Map(
    (Object.keys(BOOKBAG_FILES) as Array<keyof typeof BOOKBAG_FILES>).map((k) => [
      BOOKBAG_FILES[k] as string,
      BOOKBAG_FILE_BOUNDS[k],
    ]),
  );
  for (const name of readdirSync(dir).sort()) {
    const bound = bounds.get(name);
    if (bound === undefined) return `${name.slice(0, 80)} is not a bookbag file`;
    const st = lstatSync(join(dir, name));
    if (!st.isFile()) return `${name} is not a plain file`;
    if (st.size > bound) return `${name} is ${st.size} bytes, over its ${bound}-byte bound`;
  }
  return undefined;
}

function parseJson(b: Buffer): unknown {
  try {
    return JSON.parse(b.toString('utf8'));
  } catch {
    return undefined;
  }
}
