import type { GradingJob } from '../schemas/grading.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { appendJsonl, type AppendOptions } from '../state/jsonl.js';
import type { StateLayout } from '../state/layout.js';
import type { Verdict } from './verdict.js';

/**
 * Outcome observations (seed 000 §3.2: the compound-learning feed): one line per graded job in
 * `observations.jsonl`, read back into the briefs of later crews in the same domain or fences
 * (src/crew/run/continuity.ts). Fail-soft: a failure here is a warning and never fails or undoes a grade.
 */
export interface Observation extends Pick<
  GradingJob,
  'jobKey' | 'issueNumber' | 'crewId' | 'agent' | 'domain' | 'difficulty'
> {
  at: string;
  /** The crew's fences: a later crew touching the same paths reads this observation. */
  fences?: string[];
  accepted: boolean;
  decidedBy: string;
  code: string;
  score: number;
}

/**
 * Appends observations, for a caller holding the grading lock (which guards `observations.jsonl`:
 * a drain appends a wave's observations in its transaction, wave.ts). Without an fsync when
 * `sync: false`. Fail-soft: false, with a warning, when it fails.
 */
export function appendObservationsHeld(
  layout: StateLayout,
  observations: readonly Observation[],
  logger: Pick<Logger, 'warning'>,
  options: AppendOptions = {},
): boolean {
  if (observations.length === 0) return true;
  try {
    appendJsonl(layout.file('observations'), observations, (m) => logger.warning(m), options);
    return true;
  } catch (e) {
    logger.warning(
      `could not record ${observations.length} outcome observation(s): ${message(e)}; grades are unaffected`,
    );
    return false;
  }
}

export function observationOf(
  job: Omit<Observation, 'at' | 'accepted' | 'decidedBy' | 'code' | 'score'>,
  verdict: Verdict,
  at: Date,
): Observation {
  return {
    at: at.toISOString(),
    jobKey: job.jobKey,
    issueNumber: job.issueNumber,
    crewId: job.crewId,
    agent: job.agent,
    domain: job.domain,
    difficulty: job.difficulty,
    ...(job.fences?.length ? { fences: [...job.fences] } : {}),
    accepted: verdict.accepted,
    decidedBy: verdict.decidedBy,
    code: verdict.code,
    score: verdict.score,
  };
}
