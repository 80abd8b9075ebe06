import { EventLog, type StateEvent } from '../state/event-log.js';
import { foldLog, registerFold, type LogFold } from '../state/fold.js';
import type { StateLayout } from '../state/layout.js';

/**
 * `feedback.jsonl`: what the feedback scan has seen on GitHub (src/feedback/scan.ts), so the next
 * scan asks only about what changed since — the listing's ETag and `since` cursor, per watched
 * number (a delivered pull request or its issue) the `updated_at` it was last read at, the reviews
 * already read, the commit whose checks were already read — and the last judge: a delivered pull
 * request merged or closed unmerged (`pr.settled`, once per pull request).
 */
export interface Settled {
  pr: number;
  issue: number;
  crewId: string;
  merged: boolean;
}
export type FeedbackEvent =
  | StateEvent<'feedback.cursor', { since?: string; etag?: string }>
  | StateEvent<
      'feedback.seen',
      { number: number; updatedAt: string; state?: 'open' | 'closed'; reviews?: number[]; ciSha?: string }
    >
  | StateEvent<'pr.settled', Settled>;

export interface Watched {
  updatedAt: string;
  /** The state the listing showed at that read. */
  state?: 'open' | 'closed';
  reviews: number[];
  ciSha?: string;
}
export interface FeedbackState {
  cursor: { since?: string; etag?: string };
  watched: Record<string, Watched>;
  settled: Record<string, Settled & { at: string }>;
}

export const feedbackFold: LogFold<FeedbackState, FeedbackEvent> = registerFold<FeedbackState, FeedbackEvent>(
  {
    file: 'feedback',
    empty: () => ({ cursor: {}, watched: {}, settled: {} }),
    apply(state, e) {
      if (e.type === 'feedback.cursor') state.cursor = { ...e.data };
      else if (e.type === 'feedback.seen') {
        const prev = state.watched[e.data.number];
        const reviews = [...new Set([...(prev?.reviews ?? []), ...(e.data.reviews ?? [])])];
        state.watched[e.data.number] = {
          updatedAt: prev && prev.updatedAt > e.data.updatedAt ? prev.updatedAt : e.data.updatedAt,
          reviews,
          ...((e.data.ciSha ?? prev?.ciSha) ? { ciSha: e.data.ciSha ?? prev?.ciSha } : {}),
        };
      } else if (e.type === 'pr.settled') state.settled[e.data.pr] ??= { ...e.data, at: e.at };
      return state;
    },
    // A settled pull request's watch is over; its settlement stays (the board counts merges).
    prune(state) {
      const watched: Record<string, Watched> = {};
      for (const [n, w] of Object.entries(state.watched)) if (!state.settled[n]) watched[n] = w;
      return { ...state, watched };
    },
    // Every event is made at its own time from what GitHub said then; a settlement once per pull
    // request, and never again while the fold keeps it: an old event only comes back as a copy.
    dedup: 'watermark',
  },
);

export function feedbackLog(layout: StateLayout): EventLog<FeedbackEvent, FeedbackState> {
  return new EventLog<FeedbackEvent, FeedbackState>(layout.file('feedback'));
}

export function readFeedback(layout: StateLayout): FeedbackState {
  return foldLog(feedbackFold, feedbackLog(layout).read());
}
