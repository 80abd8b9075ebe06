import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BOOKBAG_FILES, bookbagSchema, doneFlagSchema, type Bookbag } from '../schemas/bookbag.js';
import { writeJsonAtomic, writeTextAtomic } from '../state/atomic.js';
import { audit } from '../state/audit.js';
import type { StateLayout } from '../state/layout.js';
import { BRIEF_FILE } from '../grading/bookbag-reader.js';
import { BookbagAccessError, BookbagIncompleteError } from './errors.js';

/**
 * Bookbags (`bookbags/<crew_id>/`, schema in src/schemas/bookbag.ts). N2.2: every file is written
 * atomically (temp + fsync + rename) and passes the redactor; `done.flag` is written last, holding
 * the SHA-256 of the record and of the diff, so a reader that sees the flag sees complete data and
 * can prove it.
 */

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface BookbagFiles {
  record: Omit<Bookbag, 'diffSha'>;
  diff: string;
  report?: string;
  verificationLog?: string;
  /** The brief the student received (`brief.md`), for reviewers. */
  brief?: string;
}

/** Writes the data, then the done flag. Returns the stored diff's SHA-256. */
export function writeBookbag(dir: string, files: BookbagFiles): { diffSha: string; recordSha: string } {
  // A flag left by an interrupted earlier write must not vouch for the data written now.
  rmSync(join(dir, BOOKBAG_FILES.done), { force: true });
  const diffPath = join(dir, BOOKBAG_FILES.diff);
  writeTextAtomic(diffPath, files.diff);
  const diffSha = sha256(readFileSync(diffPath));
  if (files.report !== undefined) writeTextAtomic(join(dir, BOOKBAG_FILES.report), files.report);
  if (files.verificationLog !== undefined) {
    writeTextAtomic(join(dir, BOOKBAG_FILES.verificationLog), files.verificationLog);
  }
  if (files.brief !== undefined) writeTextAtomic(join(dir, BRIEF_FILE), files.brief);
  const record = bookbagSchema.parse({ ...files.record, diffSha });
  const recordPath = join(dir, BOOKBAG_FILES.record);
  writeJsonAtomic(recordPath, record);
  const recordSha = sha256(readFileSync(recordPath));
  writeJsonAtomic(join(dir, BOOKBAG_FILES.done), { crewId: record.crewId, recordSha, diffSha });
  return { diffSha, recordSha };
}

export type BookbagReader = { role: 'grader' } | { role: 'crew'; crewId: string };

export interface ReadBookbag {
  record: Bookbag;
  diff: string;
  report?: string;
  verificationLog?: string;
}

const CREW_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * N4.2: a bookbag is readable by the graders and by the crew that wrote it; any other reader is
 * refused with BookbagAccessError and an audit line. The path is derived from a validated crew id
 * only (no separators, no `..`). A bookbag without a valid done flag is BookbagIncompleteError.
 */
export async function readBookbag(
  layout: StateLayout,
  crewId: string,
  reader: BookbagReader,
): Promise<ReadBookbag> {
  const who = reader.role === 'grader' ? 'grader' : `crew ${reader.crewId}`;
  if (!CREW_ID.test(crewId) || (reader.role !== 'grader' && reader.crewId !== crewId)) {
    await audit(layout, 'bookbag.refused', {
      crewId: CREW_ID.test(crewId) ? crewId : '(invalid id)',
      reader: who,
    });
    throw new BookbagAccessError(crewId, who);
  }
  const dir = layout.bookbag(crewId);
  const donePath = join(dir, BOOKBAG_FILES.done);
  if (!existsSync(donePath))
    throw new BookbagIncompleteError(crewId, 'no done.flag (still being written, or never finished)');
  const flag = doneFlagSchema.safeParse(JSON.parse(readFileSync(donePath, 'utf8')));
  if (!flag.success || flag.data.crewId !== crewId)
    throw new BookbagIncompleteError(crewId, 'done.flag is malformed');
  const recordBytes = readFileSync(join(dir, BOOKBAG_FILES.record));
  if (sha256(recordBytes) !== flag.data.recordSha) {
    throw new BookbagIncompleteError(crewId, 'bookbag.json does not match the digest in done.flag');
  }
  const diffBytes = readFileSync(join(dir, BOOKBAG_FILES.diff));
  if (sha256(diffBytes) !== flag.data.diffSha) {
    throw new BookbagIncompleteError(crewId, 'diff.patch does not match the digest in done.flag');
  }
  const optional = (f: string) => {
    const p = join(dir, f);
    return existsSync(p) ? readFileSync(p, 'utf8') : undefined;
  };
  return {
    record: bookbagSchema.parse(JSON.parse(recordBytes.toString('utf8'))),
    diff: diffBytes.toString('utf8'),
    report: optional(BOOKBAG_FILES.report),
    verificationLog: optional(BOOKBAG_FILES.verificationLog),
  };
}
