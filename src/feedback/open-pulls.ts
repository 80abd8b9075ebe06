import { openPullRequests, type OpenPullRequest } from '../dispatch/gates/back-pressure.js';
import { Outbox } from '../outbox/outbox.js';
import type { StateLayout } from '../state/layout.js';
import { readFeedback, type FeedbackState } from './log.js';

/**
 * The school's pull requests waiting for review, for back-pressure (src/dispatch/gates/back-pressure.ts):
 * the outbox's deliveries that opened a pull request, less those the feedback scan saw merged or
 * closed (`pr.settled`). Throws when either log cannot be read; the caller decides what that means.
 */
export function openPullRequestsOf(layout: StateLayout, feedback?: FeedbackState): OpenPullRequest[] {
  const settled = (feedback ?? readFeedback(layout)).settled;
  return openPullRequests(new Outbox(layout).deliveries(), (pr) => settled[pr] !== undefined);
}
