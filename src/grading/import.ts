import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { BOOKBAG_FILES, CREW_ID_PATTERN, type Bookbag } from '../bookbag/schema.js';
import type { StateLayout } from '../state/layout.js';
import { bookbagFilesProblem, readBookbag } from '../bookbag/store.js';
import { checkSessionStore } from '../bookbag/session-store.js';
import { message } from '../errors.js';
import { EventLog } from '../state/event-log.js';
import { enqueueGradingJob } from './enqueue.js';

/**
 * Imports bookbags downloaded from other jobs (the action's `bookbags-path`) into the state
 * directory, then enqueues their grading jobs (deduplicated, so a job dispatch already enqueued is
 * a no-op). Only complete bookbags are taken — done flag present, hashes matching, nothing but
 * known, plain files within their bounds — and the done flag is copied last, so an interrupted import
 * is never read as a finished bookbag (N2.2). A session store (student-written data, kept for a
 * revision to resume) is checked against the record's digest and its schema, never read further;
 * one that fails is left out and the bookbag is taken without it.
 */
export interface ImportResult {
  imported: number;
  enqueued: number;
  skipped: Array<{ crewId: string; reason: string }>;
  /** Files left out of a bookbag that was taken (a session store that failed its checks). */
  dropped: Array<{ crewId: string; file: string; reason: string }>;
}

export async function importBookbags(
  layout: StateLayout,
  from: string,
  logger: Logger,
  /** Why a bookbag may not be imported (it belongs to no crew the caller knows), or undefined. */
  refuse?: (record: Bookbag) => string | undefined,
): Promise<ImportResult> {
  const r: ImportResult = { imported: 0, enqueued: 0, skipped: [], dropped: [] };
  if (!existsSync(from)) {
    logger.warning(`bookbags-path ${from} does not exist; nothing imported`);
    return r;
  }
  // History before the grading log's watermark is folded away with its keys: a crew that finished
  // before it was graded then (or was never imported), and a second job for it would grade it twice.
  const watermark = new EventLog(layout.file('grading')).read().watermark;
  for (const crewId of readdirSync(from).sort()) {
    const src = join(from, crewId);
    if (!statSync(src).isDirectory()) continue;
    if (!CREW_ID_PATTERN.test(crewId)) {
      r.skipped.push({ crewId, reason: 'not a crew id (letters, digits, dot, dash, underscore)' });
      continue;
    }
    const problem = bookbagFilesProblem(src);
    if (problem) {
      r.skipped.push({ crewId, reason: problem });
      continue;
    }
    // The one scoped reader, as the grader, over the downloaded directory: the same checks as grading.
    let bookbag;
    try {
      bookbag = (await readBookbag(layout, crewId, { role: 'grader' }, from)).record;
    } catch (e) {
      r.skipped.push({ crewId, reason: message(e) });
      continue;
    }
    const refused = refuse?.(bookbag);
    if (refused) {
      r.skipped.push({ crewId, reason: refused });
      continue;
    }
    const finishedAt = bookbag.timings?.finishedAt;
    if (watermark !== '' && typeof finishedAt === 'string' && finishedAt < watermark) {
      r.skipped.push({
        crewId,
        reason: `finished at ${finishedAt}, before the grading log's watermark ${watermark}: history already folded, not graded again`,
      });
      continue;
    }
    const dest = layout.bookbag(crewId);
    if (!existsSync(join(dest, BOOKBAG_FILES.done))) {
      mkdirSync(dest, { recursive: true });
      const leaveOut = new Set<string>([BOOKBAG_FILES.done]);
      if (existsSync(join(src, BOOKBAG_FILES.sessionStore)) || bookbag.sessionStore?.kept) {
        const store = checkSessionStore(src, bookbag.sessionStore);
        if ('why' in store) {
          leaveOut.add(BOOKBAG_FILES.sessionStore);
          r.dropped.push({ crewId, file: BOOKBAG_FILES.sessionStore, reason: store.why });
        }
      }
      const files = readdirSync(src).filter((f) => !leaveOut.has(f) && statSync(join(src, f)).isFile());
      for (const f of files) copyFileSync(join(src, f), join(dest, f));
      copyFileSync(join(src, BOOKBAG_FILES.done), join(dest, BOOKBAG_FILES.done));
      r.imported++;
    }
    const b = bookbag;
    const fresh = await enqueueGradingJob(layout, {
      issueNumber: b.issueNumber,
      crewId: b.crewId,
      agent: b.agent,
      domain: b.domain,
      difficulty: b.difficulty,
      fences: b.fences,
      bookbag: `bookbags/${crewId}`,
    });
    if (fresh) r.enqueued++;
  }
  for (const s of r.skipped) logger.warning(`bookbag ${s.crewId} not imported: ${s.reason}`);
  for (const d of r.dropped) logger.warning(`bookbag ${d.crewId}: ${d.file} left out: ${d.reason}`);
  return r;
}
