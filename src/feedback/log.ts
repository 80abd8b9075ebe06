import { EventLog, type StateEvent } from '../state/event-log.js';
import { foldLog, registerFold, type LogFold } from '../state/fold.js';
import type { StateLayout } from '../state/layout.js';
import type { FeedbackItem, IgnoredFeedback } from './scan.js';

/**
 * `feedback.jsonl`: what the feedback scan has seen on GitHub (src/feedback/scan.ts), so the next
 * scan asks only about what changed since — the listing's ETag and `since` cursor, per watched
 * number (a delivered pull request or its issue) the `updated_at` it was last read at, the reviews
 * already read, the commit whose checks were already read — and the last judge: a delivered pull
 * request merged or closed unmerged (`pr.settled`, once per pull request). Trusted feedback on a
 * delivered pull request is recorded as `feedback.received` (once per feedback id, with the pull
 * request's head when it was read: a revision starts there) and feedback the school will not act on
 * as `feedback.ignored` with the reason, which the board shows.
 */
export type Received = FeedbackItem & { at: string };
export type Ignored = IgnoredFeedback & { at: string };
export interface Settled {
  pr: number;
  issue: number;
  crewId: string;
  merged: boolean;
}
/**
 * Failed CI that is not the crew's (src/feedback/ci-checks.ts, docs/delivery.md "Failed CI"): the
 * rerun of a failed check's jobs, asked once per commit and check (`refused`: GitHub's answer when
 * it would not), and a failed check excused — green on its rerun (`flaky`) or red on the pull
 * request's base too (`base-broken`). Both are keyed `<sha>:<check name>`.
 */
export interface CiRerun {
  pr: number;
  issue: number;
  sha: string;
  check: string;
  /** The failed check run (an Actions job) whose rerun was asked: a newer run of the name answers. */
  jobId: number;
  refused?: string;
}
export interface CiExcused {
  pr: number;
  issue: number;
  crewId: string;
  sha: string;
  check: string;
  outcome: 'flaky' | 'base-broken';
  /** The base commit whose same check was red (`base-broken`). */
  baseSha?: string;
}
/**
 * A delivered pull request measured against its base after the base moved (src/feedback/drift.ts):
 * the base commit it was measured at, the head, GitHub's mergeability and how far behind it is,
 * and whether that drift plans a refresh crew.
 */
export interface Drift {
  pr: number;
  issue: number;
  base: string;
  baseSha: string;
  headSha: string;
  mergeable: boolean;
  behindBy: number;
  drifted: boolean;
}
/**
 * The head of a delivered pull request moved off the commit the school delivered and judged
 * (someone pushed): the verdict is void for the new head until a revision's commit is judged.
 * Who pushed is not known (the pull request does not say).
 */
export interface HeadMoved {
  pr: number;
  issue: number;
  /** The new head. */
  sha: string;
  /** The commit the judges accepted, which the school delivered. */
  judged: string;
}
/**
 * A guarded merge the school asked GitHub for (src/feedback/merge-gate.ts): merged, or refused
 * with GitHub's status and words. `fingerprint` is what the attempt was about (head, verdict,
 * checks, the pull request's last change): a refusal is tried again only once it differs.
 * `delivery.merge: queue` also records the judged commit handed to GitHub's auto-merge or merge
 * queue (`via`), and taken back when the verdict stopped holding.
 */
export interface MergeAttempt {
  pr: number;
  issue: number;
  sha: string;
  outcome: 'merged' | 'refused' | 'handed-over' | 'taken-back';
  /** A REST refusal's status (405, 409, 422). */
  status?: number;
  /** A GraphQL refusal's error type (`UNPROCESSABLE`). */
  type?: string;
  message?: string;
  via?: 'auto-merge' | 'merge-queue';
  /** The pull request's GraphQL id, to take a hand-over back. */
  nodeId?: string;
  fingerprint: string;
  /** The merge commit GitHub made. */
  mergeSha?: string;
}
export const ciKey = (sha: string, check: string) => `${sha}:${check}`;

export type FeedbackEvent =
  | StateEvent<'feedback.cursor', { since?: string; etag?: string }>
  | StateEvent<
      'feedback.seen',
      {
        number: number;
        updatedAt: string;
        state?: 'open' | 'closed';
        reviews?: number[];
        ciSha?: string;
        readAt?: string;
      }
    >
  | StateEvent<'feedback.received', FeedbackItem>
  | StateEvent<'feedback.ignored', IgnoredFeedback>
  | StateEvent<'pr.settled', Settled>
  | StateEvent<'pr.head-moved', HeadMoved>
  | StateEvent<'pr.merge', MergeAttempt>
  | StateEvent<'ci.rerun', CiRerun>
  | StateEvent<'ci.excused', CiExcused>
  | StateEvent<'feedback.drift', Drift>;

export interface Watched {
  updatedAt: string;
  /** The state the listing showed at that read. */
  state?: 'open' | 'closed';
  reviews: number[];
  ciSha?: string;
  /** GitHub's time of the read that saw `updatedAt` (a change in that same second may be unseen). */
  readAt?: string;
}
export interface FeedbackState {
  cursor: { since?: string; etag?: string };
  watched: Record<string, Watched>;
  settled: Record<string, Settled & { at: string }>;
  /** Trusted feedback by id, while its pull request is open. */
  received: Record<string, Received>;
  /** Feedback not acted on, by id, with the reason, while its pull request is open. */
  ignored: Record<string, Ignored>;
  /** Per pull request, the latest head seen that is not the commit the school judged. */
  heads?: Record<string, HeadMoved & { at: string }>;
  /** Per pull request, the latest guarded merge attempt. */
  merges?: Record<string, MergeAttempt & { at: string }>;
  /** Reruns of failed checks asked, by `ciKey`, while their pull request is open. */
  reruns?: Record<string, CiRerun & { at: string }>;
  /** Failed checks not charged to the crew, by `ciKey`, while their pull request is open. */
  excused?: Record<string, CiExcused & { at: string }>;
  /** The last base-drift measure of each open delivered pull request, by number. */
  drift?: Record<string, Drift & { at: string }>;
}

export const feedbackFold: LogFold<FeedbackState, FeedbackEvent> = registerFold<FeedbackState, FeedbackEvent>(
  {
    file: 'feedback',
    empty: () => ({ cursor: {}, watched: {}, settled: {}, received: {}, ignored: {} }),
    apply(state, e) {
      if (e.type === 'feedback.cursor') state.cursor = { ...e.data };
      else if (e.type === 'feedback.seen') {
        const prev = state.watched[e.data.number];
        const reviews = [...new Set([...(prev?.reviews ?? []), ...(e.data.reviews ?? [])])];
        state.watched[e.data.number] = {
          updatedAt: prev && prev.updatedAt > e.data.updatedAt ? prev.updatedAt : e.data.updatedAt,
          reviews,
          ...((e.data.ciSha ?? prev?.ciSha) ? { ciSha: e.data.ciSha ?? prev?.ciSha } : {}),
          // The latest read's time: the read that saw the newest time saw everything before it.
          ...((e.data.readAt ?? prev?.readAt) ? { readAt: maxOf(e.data.readAt, prev?.readAt) } : {}),
        };
      } else if (e.type === 'feedback.received') {
        // A snapshot written before these fields existed has neither map.
        (state.received ??= {})[e.data.id] ??= { ...e.data, at: e.at };
      } else if (e.type === 'feedback.ignored') (state.ignored ??= {})[e.data.id] ??= { ...e.data, at: e.at };
      else if (e.type === 'pr.settled') state.settled[e.data.pr] ??= { ...e.data, at: e.at };
      else if (e.type === 'pr.head-moved') (state.heads ??= {})[e.data.pr] = { ...e.data, at: e.at };
      else if (e.type === 'pr.merge') (state.merges ??= {})[e.data.pr] = { ...e.data, at: e.at };
      else if (e.type === 'ci.rerun')
        (state.reruns ??= {})[ciKey(e.data.sha, e.data.check)] ??= { ...e.data, at: e.at };
      else if (e.type === 'ci.excused')
        (state.excused ??= {})[ciKey(e.data.sha, e.data.check)] ??= { ...e.data, at: e.at };
      else if (e.type === 'feedback.drift') (state.drift ??= {})[e.data.pr] = { ...e.data, at: e.at };
      return state;
    },
    // A settled pull request's watch is over, and so is its feedback (nothing revises a merged or
    // closed pull request); its settlement stays (the board counts merges).
    prune(state) {
      const watched: Record<string, Watched> = {};
      for (const [n, w] of Object.entries(state.watched)) if (!state.settled[n]) watched[n] = w;
      const open = <T extends { pr: number }>(m: Record<string, T> | undefined) =>
        Object.fromEntries(Object.entries(m ?? {}).filter(([, v]) => !state.settled[v.pr]));
      return {
        ...state,
        watched,
        received: open(state.received),
        ignored: open(state.ignored),
        heads: open(state.heads),
        merges: open(state.merges),
        reruns: open(state.reruns),
        excused: open(state.excused),
        drift: open(state.drift),
      };
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
  const state = foldLog(feedbackFold, feedbackLog(layout).read());
  state.received ??= {};
  state.ignored ??= {};
  state.heads ??= {};
  state.merges ??= {};
  return state;
}

function maxOf(a: string | undefined, b: string | undefined): string {
  return !a ? b! : !b ? a : a > b ? a : b;
}
