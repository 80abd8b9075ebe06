import { join } from 'node:path';
import type { CurriculumItem } from '../../schemas/curriculum.js';
import { BOOKBAG_FILES, bookbagSchema } from '../../bookbag/schema.js';
import type { CrewRecord } from '../../dispatch/logs/registry.js';
import { FAILURE_OUTCOMES } from '../../dispatch/logs/history.js';
import { GradingQueue } from '../../grading/queue.js';
import type { Observation } from '../../grading/observations.js';
import { readJsonl } from '../../state/jsonl.js';
import type { StateLayout } from '../../state/layout.js';
import { runGit } from '../../process/git.js';
import { patchFiles } from '../../process/patch-files.js';
import { BOOKBAG_FILE_BOUNDS } from '../../bookbag/store.js';
import { readUntrusted, readUntrustedFile } from '../../security/untrusted-file.js';
import { sanitizeText } from '../../security/sanitize.js';
import type { Continuation, RepairEvidence } from '../../agents/brief.js';
import { tail } from '../../agents/ending.js';
import { readLogText } from '../../process/capped-log.js';

/**
 * What a crew learns from the crews before it (seed 002):
 *  - the change of an interrupted crew of the same issue (a limit, an overload or a timeout) is
 *    applied to the new worktree, so the work is continued, not redone;
 *  - a repair's brief carries the failed attempt's evidence: verification output tail, reviewer
 *    reasons, correction turns;
 *  - observations of earlier graded crews in the same domain or fences.
 * Everything here is read fail-soft: a missing or unreadable input means a shorter brief, never a
 * failed crew.
 */

/** Outcomes whose change is kept for the next attempt. */
export const KEEPS_WORK = ['usage_limit', 'overloaded', 'timed_out'] as const;

/** Earlier finished crews of this issue, newest first; skips runs that said nothing (N4.1, infra, N7.1). */
export function previousRuns(crews: Record<string, CrewRecord>, issue: number, self: string): CrewRecord[] {
  // A contest's crews each do their own work (src/dispatch/contest.ts): none continues another's.
  const contest = crews[self]?.contest?.id;
  return Object.values(crews)
    .filter((c) => c.issueNumber === issue && c.crewId !== self && c.status === 'finished')
    .filter((c) => contest === undefined || c.contest?.id !== contest)
    .filter((c) => !c.preVerify && !c.infra && !c.orphaned && c.outcome !== 'cancelled')
    .sort(
      (a, b) => (b.finishedAt ?? '').localeCompare(a.finishedAt ?? '') || b.crewId.localeCompare(a.crewId),
    );
}

/** Applies the latest interrupted crew's diff to the worktree, when the latest run was one. */
export async function continueInterrupted(
  layout: StateLayout,
  runs: CrewRecord[],
  worktree: string,
): Promise<Continuation | undefined> {
  const last = runs[0];
  if (!last?.outcome || !(KEEPS_WORK as readonly string[]).includes(last.outcome)) return undefined;
  const file = join(layout.bookbag(last.crewId), BOOKBAG_FILES.diff);
  const read = readUntrusted(file, { maxBytes: BOOKBAG_FILE_BOUNDS.diff });
  const patch = read.ok ? read.bytes : Buffer.alloc(0);
  if (patch.length === 0) return undefined;
  // The paths as git applies the patch (a quoted or renamed path is named as it lands).
  const touched = await patchFiles(worktree, 'HEAD', patch);
  const files = touched.ok ? [...new Set(touched.files.map((f) => f.path))] : [];
  // A collected change never holds a gitlink (host git never enters a nested repository).
  const links = touched.ok ? touched.files.filter((f) => f.gitlink).map((f) => f.path) : [];
  if (links.length)
    return {
      crewId: last.crewId,
      outcome: last.outcome,
      applied: false,
      files,
      detail: `the patch adds or changes submodule(s) (gitlink): ${links.slice(0, 5).join(', ')}; not applied`,
    };
  for (const mode of [[], ['--3way']]) {
    const r = await runGit(['apply', '--whitespace=nowarn', ...mode, '-'], { cwd: worktree, input: patch });
    if (r.exitCode === 0) return { crewId: last.crewId, outcome: last.outcome, applied: true, files };
  }
  return {
    crewId: last.crewId,
    outcome: last.outcome,
    applied: false,
    files,
    detail: 'git apply refused the patch',
  };
}

/** The failed attempt a repair follows: its outcome, verification tail, reviewer reasons. */
export function repairEvidence(
  layout: StateLayout,
  runs: CrewRecord[],
  verdictReasons = reviewerReasons(layout),
): RepairEvidence | undefined {
  const failed = runs.find(
    (c) =>
      (c.outcome && FAILURE_OUTCOMES.includes(c.outcome)) ||
      (c.outcome === 'succeeded' && verdictReasons.has(c.crewId)),
  );
  if (!failed) return undefined;
  const bag = layout.bookbag(failed.crewId);
  let correctionTurns: number | undefined;
  try {
    const text = readUntrustedFile(join(bag, BOOKBAG_FILES.record), BOOKBAG_FILE_BOUNDS.record) ?? '';
    const rec = bookbagSchema.safeParse(JSON.parse(text));
    if (rec.success) correctionTurns = rec.data.correctionTurns;
  } catch {
    /* no record: the crew never got that far */
  }
  // Only the log's end is read: a bookbag from another job may hold up to its bound (32 MiB).
  const verificationTail =
    tail(readLogText(join(bag, BOOKBAG_FILES.verificationLog), 16 * 1024), 3000) || undefined;
  const reasons = verdictReasons.get(failed.crewId);
  return {
    crewId: failed.crewId,
    outcome: failed.outcome ?? 'unknown',
    reason: failed.reason ?? '',
    ...(correctionTurns !== undefined ? { correctionTurns } : {}),
    ...(verificationTail ? { verificationTail } : {}),
    ...(reasons?.length ? { reviewerReasons: reasons } : {}),
  };
}

/** Reasons of rejecting verdicts, per crew. */
export function reviewerReasons(layout: StateLayout): Map<string, string[]> {
  const out = new Map<string, string[]>();
  try {
    for (const j of Object.values(new GradingQueue(layout).state().jobs)) {
      if (j.status !== 'graded' || !j.verdict || j.verdict.accepted) continue;
      const sealed = j.verdict.findings.find((f) => f.judge === 'sealed');
      const reasons = [
        ...(j.verdict.decidedBy === 'sealed' ? sealedReasons(j.verdict.reasons) : j.verdict.reasons),
        ...j.verdict.findings
          .filter((f) => !f.passed)
          .flatMap((f) => (f.judge === 'sealed' ? sealedReasons(f.reasons) : f.reasons)),
        ...(sealed?.tests && !sealed.passed
          ? [`sealed tests: ${sealed.tests.passed} named test(s) passed, ${sealed.tests.failed} failed`]
          : []),
      ];
      out.set(
        j.job.crewId,
        [...new Set(reasons)].slice(0, 10).map((r) => sanitizeText(r, 300).text),
      );
    }
  } catch {
    /* grading state unreadable: the repair brief goes without reviewer reasons */
  }
  return out;
}

/**
 * What a repair brief quotes of the sealed judge: its own lines of counts and declared test names
 * (they all start "sealed test"), never anything else a sealed finding holds. A finding recorded
 * before the sealed judge stopped quoting the runner's output (its tail, a failure's message: the
 * code under test writes both, and can make them carry the hidden suite's source) is left out.
 */
function sealedReasons(reasons: readonly string[]): string[] {
  return reasons.filter((r) => r.startsWith('sealed test') && !/\n/.test(r));
}

/** Up to `max` earlier observations in the item's domain or sharing a fence, newest first. */
export function relevantObservations(layout: StateLayout, item: CurriculumItem, max = 5): string[] {
  let records: Observation[];
  try {
    records = readJsonl<Observation>(layout.file('observations')).records;
  } catch {
    return [];
  }
  const fences = new Set(item.fences);
  const picked: string[] = [];
  for (let i = records.length - 1; i >= 0 && picked.length < max; i--) {
    const o = records[i]!;
    if (!o || typeof o !== 'object') continue;
    const near =
      o.issueNumber === item.number ||
      o.domain === item.domain ||
      (o.fences ?? []).some((f) => fences.has(f));
    if (!near) continue;
    const text = `issue #${Number(o.issueNumber)} (${o.domain}, difficulty ${Number(o.difficulty)}) by ${o.agent}: ${o.accepted ? 'accepted' : 'rejected'} — ${o.code}, score ${Number(o.score).toFixed(2)}`;
    picked.push(sanitizeText(text, 300).text.replace(/\s+/g, ' '));
  }
  return picked;
}
