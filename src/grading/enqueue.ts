import { EventLog, event } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import { jobKey, type GradingJob, type GradingEvent } from '../schemas/grading.js';

/**
 * N2.1: enqueue is deduplicated by (issue_number, crew_id) before it reaches the queue: a second
 * enqueue of the same job is a no-op. Returns true when the job was new.
 */
export async function enqueueGradingJob(
  layout: StateLayout,
  job: Omit<GradingJob, 'jobKey'>,
): Promise<boolean> {
  const key = jobKey(job.issueNumber, job.crewId);
  const log = new EventLog<GradingEvent>(layout.file('grading'));
  const appended = await log.append([event('job.enqueued', key, { ...job, jobKey: key })]);
  return appended.length === 1;
}
