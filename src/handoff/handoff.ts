import { createHash } from 'node:crypto';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { BOOKBAG_FILES, CREW_ID_PATTERN } from '../bookbag/schema.js';
import { DAEMON_ID_PATTERN } from '../config/schema.js';
import { writeJsonAtomic } from '../state/atomic.js';
import { STATE_FILES, type StateFile, type StateLayout } from '../state/layout.js';
import { writeFileAtomic } from '../state/atomic.js';

/**
 * Safe outputs. The job that runs student code holds no write token, so it cannot save the state:
 * it hands on what it appended — only the lines added to the event logs during the job, plus the
 * finished bookbags — as a directory that the workflow uploads as an artifact. A later job that runs
 * no untrusted code validates and imports it (./import.ts).
 *
 * `<out>/handoff.json` names the daemon and the digest of each events file; `<out>/events/<log>`
 * holds the appended lines; `<out>/bookbags/<crewId>/` the bookbags.
 */
export const HANDOFF_LOGS = [
  'crews',
  'grading',
  'spend',
  'school',
  // After `crews`: `/school stop|steer` the job read for its crews, and what became of each steer.
  'control',
  'audit',
] as const satisfies readonly StateFile[];
export type HandoffLog = (typeof HANDOFF_LOGS)[number];

export const handoffManifestSchema = z.strictObject({
  schema: z.literal(1),
  daemon: z.string().regex(DAEMON_ID_PATTERN),
  files: z.partialRecord(
    z.enum(HANDOFF_LOGS.map((l) => STATE_FILES[l]) as [string, ...string[]]),
    z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.number().int().min(0) }),
  ),
});
export type HandoffManifest = z.infer<typeof handoffManifestSchema>;

/** Byte length of each handed-off log when the job began. */
export type HandoffMarks = Record<HandoffLog, number>;

export function markHandoff(layout: StateLayout): HandoffMarks {
  const marks = {} as HandoffMarks;
  for (const l of HANDOFF_LOGS) marks[l] = existsSync(layout.file(l)) ? statSync(layout.file(l)).size : 0;
  return marks;
}

function tail(path: string, from: number): Buffer {
  if (!existsSync(path)) return Buffer.alloc(0);
  const size = statSync(path).size;
  // A log that shrank was rewritten (compacted) during the job: hand on all of it; the importer
  // skips keys the state already holds.
  const start = size >= from ? from : 0;
  const buf = Buffer.alloc(size - start);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, buf.length, start);
  } finally {
    closeSync(fd);
  }
  // Only whole lines: a torn last line is not a fact yet.
  const end = buf.lastIndexOf(0x0a);
  return end === -1 ? Buffer.alloc(0) : buf.subarray(0, end + 1);
}

/** Writes the handoff of everything appended since `marks`. Bookbags are copied by the caller. */
export function writeHandoff(
  layout: StateLayout,
  marks: HandoffMarks,
  out: string,
  daemon: string,
): HandoffManifest {
  mkdirSync(join(out, 'events'), { recursive: true });
  const manifest: HandoffManifest = { schema: 1, daemon, files: {} };
  for (const l of HANDOFF_LOGS) {
    const bytes = tail(layout.file(l), marks[l]);
    if (!bytes.length) continue;
    const name = STATE_FILES[l];
    writeFileAtomic(join(out, 'events', name), bytes);
    manifest.files[name] = { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
    if (l === 'crews') copyFinishedBookbags(layout, bytes, join(out, 'bookbags'));
  }
  writeJsonAtomic(join(out, 'handoff.json'), manifest);
  return manifest;
}

/** Bookbags of the crews that finished during the job, unless the run already copied them. */
function copyFinishedBookbags(layout: StateLayout, crewEvents: Buffer, to: string): void {
  for (const line of crewEvents.toString('utf8').split('\n')) {
    let e: { type?: unknown; data?: { crewId?: unknown } };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      continue;
    }
    const id = e?.data?.crewId;
    if (e?.type !== 'crew.finished' || typeof id !== 'string' || !CREW_ID_PATTERN.test(id)) continue;
    const from = layout.bookbag(id);
    if (!existsSync(join(from, BOOKBAG_FILES.done)) || existsSync(join(to, id, BOOKBAG_FILES.done))) continue;
    cpSync(from, join(to, id), { recursive: true });
  }
}

/** Handoff directories under `root`: `root` itself when it holds a handoff.json, else its children. */
export function handoffDirs(root: string): string[] {
  if (!existsSync(root)) return [];
  if (existsSync(join(root, 'handoff.json'))) return [root];
  return readdirSync(root)
    .map((d) => join(root, d))
    .filter((d) => existsSync(join(d, 'handoff.json')))
    .sort();
}
