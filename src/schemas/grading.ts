import type { StateEvent } from '../state/event-log.js';

/**
 * The grading queue, as events in `grading.jsonl` (docs/architecture.md). A job's identity is
 * `(issue_number, crew_id)`; its key is `grade:<issue_number>:<crew_id>`.
 */
export function jobKey(issueNumber: number, crewId: string): string {
  return `grade:${issueNumber}:${crewId}`;
}

export interface GradingJob {
  jobKey: string;
  issueNumber: number;
  crewId: string;
  agent: string;
  domain: string;
  difficulty: number;
  fences: string[];
  /** Bookbag directory, relative to the state directory (`bookbags/<crew_id>`). */
  bookbag: string;
}

export type GradingEvent =
  StateEvent<'job.enqueued', GradingJob> | StateEvent<string, Record<string, unknown>>;
