import type { SchoolConfig } from '../config/schema.js';
import type { GradingJob } from '../schemas/grading.js';
import type { ScoreApplied } from './ledger.js';
import { resultComment, type OutboxEntry, type OutboxState } from './outbox.js';
import type { QueueState } from './queue.js';
import type { Verdict } from './verdict.js';

/**
 * What a verdict leaves behind besides its graded mark: the score the ledger applies and the
 * outbox entries (labels, the result comment, the delivery of accepted work). Derived from the job
 * and the verdict alone, so a writer can rebuild the entries a crash left unrecorded.
 */
export function outboxEntries(
  config: SchoolConfig,
  job: GradingJob,
  verdict: Verdict,
  deliver: boolean,
): OutboxEntry[] {
  const labels = [verdict.accepted ? config.grading.labels.accepted : config.grading.labels.rejected];
  const entries: OutboxEntry[] = [
    {
      id: `outbox:${job.jobKey}:labels`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'labels',
      labels,
    },
  ];
  if (config.grading.comment) {
    entries.push({
      id: `outbox:${job.jobKey}:comment`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'comment',
      body: resultComment(job.jobKey, job.crewId, verdict),
    });
  }
  if (deliver && verdict.accepted) {
    const { decidedBy, code, score, reasons } = verdict;
    entries.push({
      id: `outbox:${job.jobKey}:delivery`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: 'delivery',
      crewId: job.crewId,
      verdict: { decidedBy, code, score, reasons },
    });
  }
  return entries;
}

/**
 * Graded jobs whose outbox entries were never recorded (a crash between the two appends). A job
 * graded before the outbox log's `watermark` is not looked at: its entries were recorded in
 * history the log has compacted (and may have pruned), and recording them again would deliver
 * them again.
 */
export function missingOutboxEntries(
  config: SchoolConfig,
  queue: QueueState,
  outbox: OutboxState,
  deliver: boolean,
  watermark = '',
): OutboxEntry[] {
  const missing: OutboxEntry[] = [];
  for (const j of Object.values(queue.jobs)) {
    if (j.status !== 'graded' || !j.verdict) continue;
    if (watermark !== '' && j.updatedAt < watermark) continue;
    for (const e of outboxEntries(config, j.job, j.verdict, deliver))
      if (!outbox.items[e.id]) missing.push(e);
  }
  return missing;
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
