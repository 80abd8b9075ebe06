import type { RevisionRequest } from '../dispatch/revision.js';
import { Outbox } from '../outbox/outbox.js';
import type { StateLayout } from '../state/layout.js';
import { readFeedback, type FeedbackState, type Ignored, type Received } from './log.js';

/**
 * From `feedback.jsonl` and the outbox's deliveries to what planning needs (src/dispatch/revision.ts):
 * per open delivered pull request, the trusted feedback recorded for it. Whether a revision crew
 * already answered it is the registry's to say, under the plan's lock.
 */
export function revisionRequests(layout: StateLayout, feedback?: FeedbackState): RevisionRequest[] {
  const state = feedback ?? readFeedback(layout);
  const received = Object.values(state.received ?? {});
  if (received.length === 0) return [];
  const out: RevisionRequest[] = [];
  for (const [issue, d] of new Outbox(layout).deliveries()) {
    const pr = d.pullRequest?.number;
    if (pr === undefined || state.settled[pr]) continue;
    const mine = received.filter((f) => f.pr === pr && f.issue === issue);
    if (mine.length === 0) continue;
    out.push({
      issue,
      pr,
      branch: d.branch,
      revises: d.crewId,
      deliveredSha: d.sha,
      feedback: mine.map((f) => ({
        id: f.id,
        at: f.at,
        headSha: f.headSha,
        ...(f.refresh ? { refresh: f.refresh } : {}),
      })),
    });
  }
  return out;
}

/** The feedback of one revision, in the order it was read (for the brief). */
export function feedbackFor(layout: StateLayout, ids: readonly string[]): Received[] {
  const state = readFeedback(layout);
  return ids
    .map((id) => state.received[id])
    .filter((f): f is Received => f !== undefined)
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

/** Feedback the school did not act on, with why, newest first (the board). */
export function ignoredFeedback(state: FeedbackState): Ignored[] {
  return Object.values(state.ignored ?? {}).sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}
