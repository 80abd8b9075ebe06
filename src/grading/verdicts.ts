import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { message, SchoolError } from '../errors.js';
import type { Logger } from '../log.js';
import { jobKey as keyOf, type GradingJob } from '../schemas/grading.js';
import { redactText } from '../security/redact.js';
import { readUntrusted } from '../security/untrusted-file.js';
import { audit } from '../state/audit.js';
import { EventLog } from '../state/event-log.js';
import { recordSpend, type SpendEvent } from '../dispatch/gates/spend.js';
import type { StateLayout } from '../state/layout.js';
import { readScopedBookbag, verificationFinding, type GradeFn } from './judges.js';
import { pendingKeys, type QueueState } from './queue.js';
import { combine, type Verdict } from './verdict.js';
import {
  MAX_VERDICTS_BYTES,
  VERDICTS_FILE,
  spendSchema,
  verdictsDigest,
  verdictsFileSchema,
  type VerdictEntry,
  type VerdictsFile,
} from './verdicts-file.js';

export {
  MAX_VERDICTS,
  MAX_VERDICTS_BYTES,
  VERDICTS_FILE,
  verdictsDigest,
  verdictsFileSchema,
  writeVerdicts,
  type VerdictEntry,
  type VerdictsFile,
} from './verdicts-file.js';

/**
 * Verdicts as an artifact (docs/grading.md, "Where each judge runs"). On GitHub the judges run in
 * the `judge` job, which holds no write token; the `grade` job, which does, runs no judge: it reads
 * the judge job's `verdicts.json` as data — strict schema, bounded sizes — and applies a verdict
 * only when it is bound to a job the queue holds (its key, issue and crew) and to that job's bookbag
 * as the grade job itself imported it from the crew's handoff (base commit and the digest of the
 * frozen patch). Anything else is refused with an alert and never applied. A job without a usable
 * verdict is not claimed: it stays queued for the next cycle, its attempts untouched.
 *
 * A judge that could not do its work (a reviewer crash) hands on an `error` instead of a verdict:
 * applied as a failed drain, so a job whose judges always fail still becomes a dead letter.
 */

type Spend = NonNullable<VerdictEntry['spend']>[number];

/** The reviewer spend the judges recorded in `layout` for `jobKey` (keys `spend:review:<job>:…`). */
function reviewSpendOf(layout: StateLayout, jobKey: string): Spend[] {
  const prefix = `spend:review:${jobKey}:`;
  const out: Spend[] = [];
  if (!existsSync(layout.file('spend'))) return out;
  for (const e of new EventLog<SpendEvent>(layout.file('spend')).read().events) {
    if (e.type !== 'spend.recorded' || !e.key.startsWith(prefix)) continue;
    const d = e.data;
    const item = spendSchema.safeParse({
      key: e.key.slice('spend:'.length),
      agent: d.agent,
      costUsd: d.costUsd,
      tokens: d.tokens,
    });
    if (item.success) out.push(item.data);
  }
  return out;
}

/** Wraps the judges so that every job they judge (or fail to) is recorded, bound to its bookbag. */
export function recordingGrader(layout: StateLayout, grade: GradeFn, sink: VerdictEntry[]): GradeFn {
  const spent = (jobKey: string) => {
    const s = reviewSpendOf(layout, jobKey);
    return s.length ? { spend: s } : {};
  };
  return async (job) => {
    const read = await readScopedBookbag(layout, job);
    const bound = read.ok
      ? {
          jobKey: job.jobKey,
          issueNumber: job.issueNumber,
          crewId: job.crewId,
          baseSha: read.bookbag.baseSha,
          diffSha: read.bookbag.diffSha,
        }
      : undefined;
    try {
      const verdict = await grade(job);
      // Without a bookbag there is nothing to bind to: the grade job decides that one itself.
      if (bound) sink.push({ ...bound, verdict, ...spent(job.jobKey) });
      return verdict;
    } catch (e) {
      if (bound) sink.push({ ...bound, error: redactText(message(e)).slice(0, 2000), ...spent(job.jobKey) });
      throw e;
    }
  };
}

export interface Refusal {
  jobKey: string;
  reason: string;
}

export interface LoadedVerdicts {
  /** Usable entries, by job key: each bound to a pending job of the queue and to its bookbag. */
  entries: Map<string, VerdictEntry>;
  refused: Refusal[];
  /** Verdicts for jobs that are not pending here (another drain holds them, a dead letter). */
  skipped: Refusal[];
  /** Why no verdict file was read at all (absent: every pending job stays queued). */
  missing?: string;
}

function issuesOf(e: z.ZodError): string {
  return e.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`)
    .join('; ');
}

/** Reads and validates `dir/verdicts.json` as data against the grade job's own state. */
export async function loadVerdicts(
  layout: StateLayout,
  dir: string | undefined,
  queue: QueueState,
  now: Date,
  /** `sha256:<hex>` the judge job output for its file: any other file is refused whole. */
  expectedDigest?: string,
): Promise<LoadedVerdicts> {
  const out: LoadedVerdicts = { entries: new Map(), refused: [], skipped: [] };
  const read = readVerdictsFile(dir, expectedDigest);
  if ('missing' in read) {
    out.missing = read.missing;
    return out;
  }
  if ('refused' in read) {
    out.refused.push({ jobKey: '(file)', reason: read.refused });
    return out;
  }
  const pending = new Set(pendingKeys(queue, now));
  const seen = new Map<string, number>();
  for (const e of read.file.verdicts) seen.set(e.jobKey, (seen.get(e.jobKey) ?? 0) + 1);
  for (const e of read.file.verdicts) {
    const check =
      (seen.get(e.jobKey) ?? 0) > 1
        ? { refuse: 'more than one verdict for this job' }
        : await checkEntry(layout, queue, pending, e);
    if ('refuse' in check) out.refused.push({ jobKey: e.jobKey.slice(0, 120), reason: check.refuse });
    else if ('skip' in check) out.skipped.push({ jobKey: e.jobKey, reason: check.skip });
    else if (check.use) out.entries.set(e.jobKey, e);
  }
  return out;
}

/** The verdicts file, or why there is none to read, or why it is refused whole. */
function readVerdictsFile(
  dir: string | undefined,
  expectedDigest: string | undefined,
): { file: VerdictsFile } | { missing: string } | { refused: string } {
  const read = dir ? readUntrusted(join(dir, VERDICTS_FILE), { maxBytes: MAX_VERDICTS_BYTES }) : undefined;
  if (!read || (!read.ok && read.missing)) return { missing: `no ${VERDICTS_FILE} from the judge job` };
  if (!read.ok) return { refused: read.why };
  const raw = read.bytes;
  if (expectedDigest && verdictsDigest(raw) !== expectedDigest) {
    return {
      refused: `${VERDICTS_FILE} is not the file the judge job wrote (its digest is ${verdictsDigest(raw).slice(0, 19)}, the judge's ${expectedDigest.slice(0, 19)})`,
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    return { refused: `not JSON: ${message(e).slice(0, 200)}` };
  }
  const r = verdictsFileSchema.safeParse(parsed);
  return r.success ? { file: r.data } : { refused: `not a verdicts file: ${issuesOf(r.error)}` };
}

/**
 * Whether one entry may be applied: bound to a pending job of the queue (its key, issue and crew)
 * and to that job's bookbag, its verdict following from its findings, its spend its own. A job
 * graded already is neither used nor refused (a re-run grade job); one another drain holds, or a
 * dead letter, is skipped.
 */
async function checkEntry(
  layout: StateLayout,
  queue: QueueState,
  pending: ReadonlySet<string>,
  e: VerdictEntry,
): Promise<{ use: boolean } | { refuse: string } | { skip: string }> {
  if (e.jobKey !== keyOf(e.issueNumber, e.crewId))
    return { refuse: `the key is not grade:${e.issueNumber}:${e.crewId}` };
  const j = queue.jobs[e.jobKey];
  if (!j) return { refuse: 'no such grading job in the queue' };
  // Already graded (a re-run grade job): nothing to apply, nothing to alert.
  if (j.status === 'graded') return { use: false };
  // Claimed by another drain right now, or a dead letter: not forged, just not this drain's to
  // apply. The job keeps its state; the next cycle's judge looks at it again.
  if (!pending.has(e.jobKey)) return { skip: j.status === 'claimed' ? 'claimed by another drain' : j.status };
  if (j.job.issueNumber !== e.issueNumber || j.job.crewId !== e.crewId)
    return { refuse: 'the issue or crew is not the queued job’s' };
  const read = await readScopedBookbag(layout, j.job);
  if (!read.ok) return { refuse: `the job's bookbag cannot be read here: ${read.reason}` };
  if (read.bookbag.diffSha !== e.diffSha || read.bookbag.baseSha !== e.baseSha) {
    return {
      refuse: `it judged another patch (digest ${e.diffSha.slice(0, 12)} at ${e.baseSha.slice(0, 12)}) than the crew handed on (${read.bookbag.diffSha.slice(0, 12)} at ${read.bookbag.baseSha.slice(0, 12)})`,
    };
  }
  if ('verdict' in e) {
    const again = combine(e.verdict.findings);
    if (
      again.accepted !== e.verdict.accepted ||
      again.decidedBy !== e.verdict.decidedBy ||
      again.code !== e.verdict.code ||
      again.score !== e.verdict.score ||
      again.proof !== e.verdict.proof
    )
      return { refuse: 'the verdict does not follow from its own findings' };
  }
  if (e.spend?.some((x) => !x.key.startsWith(`review:${e.jobKey}:`)))
    return { refuse: "its reviewer spend names another job's key" };
  return { use: true };
}

/**
 * Records the reviewer spend of the usable verdicts in this state's spend ledger (the one the cap
 * reads), under the judge's keys: a re-run of the grade job records nothing twice.
 */
export async function recordVerdictSpend(layout: StateLayout, loaded: LoadedVerdicts): Promise<number> {
  let n = 0;
  for (const e of loaded.entries.values())
    for (const x of e.spend ?? []) {
      const entry = {
        costUsd: x.costUsd,
        crewId: e.crewId,
        issueNumber: e.issueNumber,
        agent: x.agent,
        tokens: x.tokens,
      };
      if (await recordSpend(layout, x.key, entry)) n++;
    }
  return n;
}

/** Each refusal as an alert: a warning in the log and a line in the audit log. */
export async function alertRefusals(layout: StateLayout, refused: readonly Refusal[], logger: Logger) {
  for (const r of refused) {
    logger.warning(`verdict for ${r.jobKey} refused, not applied: ${r.reason}`);
    await audit(layout, 'grading.verdict_refused', { jobKey: r.jobKey, reason: r.reason });
  }
}

/**
 * What the grade job drains: the jobs with a usable verdict, and the pending jobs whose bookbag it
 * cannot read itself (verification_unavailable needs no judge, N5.3). Everything else stays queued.
 */
export async function applicableJobs(
  layout: StateLayout,
  queue: QueueState,
  loaded: LoadedVerdicts,
  now: Date,
): Promise<{ keys: Set<string>; unreadable: Map<string, Verdict | Error> }> {
  const keys = new Set(loaded.entries.keys());
  const unreadable = new Map<string, Verdict | Error>();
  for (const key of pendingKeys(queue, now)) {
    if (keys.has(key)) continue;
    const read = await readScopedBookbag(layout, queue.jobs[key]!.job);
    if (!read.ok) {
      // A patch changed after its collection is the school's error, never a verdict: the attempt
      // fails with it (a dead letter after grading.maxAttempts).
      unreadable.set(key, read.schoolError ?? combine([verificationFinding(read)]));
      keys.add(key);
    }
  }
  return { keys, unreadable };
}

/** The grade function of the grade job: applies a loaded verdict; runs nothing. */
export function appliedGrader(
  loaded: LoadedVerdicts,
  unreadable: ReadonlyMap<string, Verdict | Error>,
): GradeFn {
  return async (job: GradingJob) => {
    const own = unreadable.get(job.jobKey);
    if (own instanceof Error) throw own;
    if (own) return own;
    const e = loaded.entries.get(job.jobKey);
    if (!e)
      throw new SchoolError(`no verdict for ${job.jobKey} (not claimed: a bug)`, { code: 'grading-bug' });
    if ('error' in e)
      throw new SchoolError(`the judge could not grade it: ${e.error}`, { code: 'judge-failed' });
    return e.verdict;
  };
}
