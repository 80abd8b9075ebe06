import type { SchoolConfig } from '../config/schema.js';
import type { GradingJob } from '../schemas/grading.js';
import type { ScoreApplied } from './ledger.js';
import { commentMarker, type OutboxEntry, type OutboxState } from '../outbox/outbox.js';
import { inlineCode, plainText } from '../security/markdown.js';
import { redactText } from '../security/redact.js';
import type { QueueState } from './queue.js';
import type { Verdict } from './verdict.js';

/**
 * What a verdict leaves behind besides its graded mark: the score the ledger applies and the
 * outbox entries (labels, the result comment, the delivery of accepted work). Derived from the job
 * and the verdict alone, so a drain can rebuild from a graded mark what a crash left unrecorded
 * (wave.ts).
 */

/** What of a drain's configuration decides its outbox entries. */
export interface OutboxPolicy {
  labels: { accepted: string; rejected: string };
  comment: boolean;
  /** Also the per-grade result comment (no configuration sets it any more: the status comment replaces it). */
  resultComment?: boolean;
  /** Accepted work is delivered (a Deliverer is configured). */
  deliver: boolean;
}

export function outboxPolicy(config: SchoolConfig, deliver: boolean): OutboxPolicy {
  const { accepted, rejected } = config.grading.labels;
  return { labels: { accepted, rejected }, comment: config.grading.comment, deliver };
}

export function outboxEntries(policy: OutboxPolicy, job: GradingJob, verdict: Verdict): OutboxEntry[] {
  const labels = [verdict.accepted ? policy.labels.accepted : policy.labels.rejected];
  const entries: OutboxEntry[] = [
    {
      id: `outbox:${job.jobKey}:labels`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'labels',
      labels,
    },
  ];
  // The per-grade result comment of earlier versions: the status comment (src/feedback/) took its
  // place, so `comment` only keeps entries recorded before that deliverable.
  if (policy.comment && policy.resultComment) {
    entries.push({
      id: `outbox:${job.jobKey}:comment`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'comment',
      body: resultComment(job.jobKey, job.crewId, verdict),
    });
  }
  if (policy.deliver && verdict.accepted) {
    const { decidedBy, code, score, reasons, proof } = verdict;
    entries.push({
      id: `outbox:${job.jobKey}:delivery`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'delivery',
      crewId: job.crewId,
      verdict: { decidedBy, code, score, reasons, ...(proof ? { proof } : {}) },
    });
  }
  return entries;
}

/**
 * The per-grade result comment (hidden marker first: its redelivery is found, not posted twice).
 * A verdict's reasons carry reviewer text, test output and paths a student chose: each is quoted as
 * text (src/security/markdown.ts), never markup, a mention, a reference or a closing keyword.
 */
export function resultComment(jobKey: string, crewId: string, verdict: Verdict): string {
  const lines = [
    commentMarker(jobKey),
    `**school-core grade: ${verdict.accepted ? 'accepted' : 'rejected'}** (crew ${inlineCode(crewId)}, score ${verdict.score.toFixed(2)})`,
    '',
    `Decided by the ${verdict.decidedBy} judge: ${inlineCode(verdict.code)}`,
    ...(verdict.proof ? [`Proved by: ${plainText(verdict.proof, 300)}`] : []),
    ...verdict.reasons.map((r) => `- ${plainText(r, 500)}`),
  ];
  return redactText(lines.join('\n'));
}

/**
 * Graded jobs whose outbox entries were never recorded (a crash between the two appends). A job
 * graded before the outbox log's `watermark` is not looked at: its entries were recorded in
 * history the log has compacted (and may have pruned), and recording them again would deliver
 * them again.
 */
export function missingOutboxEntries(
  policy: OutboxPolicy,
  queue: QueueState,
  outbox: OutboxState,
  watermark = '',
): OutboxEntry[] {
  const missing: OutboxEntry[] = [];
  for (const j of Object.values(queue.jobs)) {
    if (j.status !== 'graded' || !j.verdict) continue;
    if (watermark !== '' && j.updatedAt < watermark) continue;
    for (const e of outboxEntries(policy, j.job, j.verdict)) if (!outbox.items[e.id]) missing.push(e);
  }
  return missing;
}

/**
 * Whether a verdict moves its agent's score: not `refresh_merged`, a clean refresh's verdict on the
 * school's merge of the base, which no agent turn made (src/grading/judges.ts).
 */
export function movesScore(verdict: Pick<Verdict, 'code'>): boolean {
  return verdict.code !== 'refresh_merged';
}

export function scoreOf(job: GradingJob, verdict: Verdict, alpha: number): ScoreApplied {
  return {
    crewId: job.crewId,
    jobKey: job.jobKey,
    agent: job.agent,
    domain: job.domain,
    difficulty: job.difficulty,
    accepted: verdict.accepted,
    score: verdict.score,
    alpha,
  };
}
