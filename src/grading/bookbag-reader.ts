import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOKBAG_FILES, bookbagSchema, doneFlagSchema, type Bookbag } from '../schemas/bookbag.js';
import { message } from '../errors.js';

/**
 * Reads a finished crew's bookbag for grading. Only a bookbag whose done flag exists (written last,
 * N2.2) and whose recorded hashes match the bytes on disk is read: anything else is reported as
 * unavailable, which the verification judge turns into FAIL `verification_unavailable` (N5.3).
 */
export type BookbagRead =
  | { ok: true; dir: string; bookbag: Bookbag; diff: string; brief?: string }
  | { ok: false; dir: string; reason: string };

/** Optional file a crew may leave beside the record: the brief the student received. */
export const BRIEF_FILE = 'brief.md';

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function readBytes(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

export function readBookbag(dir: string, crewId: string): BookbagRead {
  const no = (reason: string): BookbagRead => ({ ok: false, dir, reason });
  const flagBytes = readBytes(join(dir, BOOKBAG_FILES.done));
  if (!flagBytes)
    return no(`bookbag ${crewId} has no ${BOOKBAG_FILES.done}: the crew never finished writing it`);
  let flag;
  try {
    flag = doneFlagSchema.parse(JSON.parse(flagBytes.toString('utf8')));
  } catch (e) {
    return no(`bookbag ${crewId}: ${BOOKBAG_FILES.done} is unreadable (${message(e).slice(0, 200)})`);
  }
  if (flag.crewId !== crewId) return no(`bookbag ${crewId}: done flag names crew ${flag.crewId}`);
  const recordBytes = readBytes(join(dir, BOOKBAG_FILES.record));
  if (!recordBytes) return no(`bookbag ${crewId}: ${BOOKBAG_FILES.record} is missing`);
  if (sha256(recordBytes) !== flag.recordSha) {
    return no(`bookbag ${crewId}: ${BOOKBAG_FILES.record} does not match the hash in its done flag`);
  }
  let bookbag: Bookbag;
  try {
    bookbag = bookbagSchema.parse(JSON.parse(recordBytes.toString('utf8')));
  } catch (e) {
    return no(`bookbag ${crewId}: ${BOOKBAG_FILES.record} is invalid (${message(e).slice(0, 200)})`);
  }
  if (bookbag.crewId !== crewId) return no(`bookbag ${crewId}: record names crew ${bookbag.crewId}`);
  const diffBytes = readBytes(join(dir, BOOKBAG_FILES.diff)) ?? Buffer.alloc(0);
  const diffSha = sha256(diffBytes);
  if (diffSha !== flag.diffSha || diffSha !== bookbag.diffSha) {
    return no(`bookbag ${crewId}: ${BOOKBAG_FILES.diff} does not match the recorded diff hash`);
  }
  const brief = readBytes(join(dir, BRIEF_FILE))?.toString('utf8');
  return { ok: true, dir, bookbag, diff: diffBytes.toString('utf8'), brief };
}
