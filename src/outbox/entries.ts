import type { DeliveryVerdict } from '../delivery/body.js';
import type { DeliveryResult } from '../delivery/deliver.js';
import type { StateEvent } from '../state/event-log.js';
import { registerFold, type LogFold } from '../state/fold.js';

/**
 * The outbox's entries and their fold (./outbox.ts): what is recorded, what became of it, and the
 * questions a delivery and the board ask of the folded state.
 */
export interface IssuesPort {
  addLabels(issue: number, labels: string[]): Promise<void>;
  listComments(issue: number): Promise<Array<{ id?: number; body?: string | null }>>;
  /** Returns the new comment's id when the API says it. */
  createComment(issue: number, body: string): Promise<{ id?: number } | void>;
  /** PATCH an issue comment (the status comment is edited in place); rejects with status 404 when gone. */
  updateComment?(commentId: number, body: string): Promise<void>;
}

export interface OutboxEntry {
  id: string;
  jobKey: string;
  issueNumber: number;
  /** `status`: the issue's one status comment, edited in place (src/feedback/status.ts). */
  kind: 'labels' | 'comment' | 'delivery' | 'status';
  labels?: string[];
  body?: string;
  /** For `delivery`: the accepted crew and its verdict. */
  crewId?: string;
  verdict?: DeliveryVerdict;
}
export type OutboxEvent =
  | StateEvent<'outbox.recorded', OutboxEntry>
  | StateEvent<
      'outbox.delivered',
      {
        id: string;
        result?: DeliveryResult;
        /** For `status`: the comment it wrote or edited (the next status edits it directly). */
        commentId?: number;
        /** For `status`: a newer status of the issue was recorded before this one went out. */
        superseded?: boolean;
      }
    >
  | StateEvent<'outbox.failed', { id: string; attempt: number; error: string }>
  | StateEvent<'outbox.refused', { id: string; reason: string }>;

export interface OutboxItem {
  entry: OutboxEntry;
  status: 'pending' | 'delivered' | 'refused';
  attempts: number;
  lastError?: string;
  /** What a delivery produced: the branch, the commit and the pull request. */
  result?: DeliveryResult;
  /** For `status`: the comment id on GitHub. */
  commentId?: number;
}
export interface OutboxState {
  items: Record<string, OutboxItem>;
}

/** What a run reports of its outbox: entries it delivered, and entries still pending after it. */
export interface OutboxCounts {
  outboxDelivered: number;
  outboxPending: number;
}

export const outboxFold: LogFold<OutboxState, OutboxEvent> = registerFold<OutboxState, OutboxEvent>({
  file: 'outbox',
  empty: () => ({ items: {} }),
  apply(state, e) {
    if (e.type === 'outbox.recorded') {
      state.items[e.data.id] ??= { entry: e.data, status: 'pending', attempts: 0 };
      return state;
    }
    const item = state.items[e.data.id];
    if (!item) return state;
    if (e.type === 'outbox.delivered') {
      item.status = 'delivered';
      if (e.data.result) item.result = e.data.result;
      if (e.data.commentId !== undefined) item.commentId = e.data.commentId;
    } else if (e.type === 'outbox.refused') {
      if (item.status === 'pending') {
        item.status = 'refused';
        item.lastError = e.data.reason;
      }
    } else if (e.type === 'outbox.failed' && item.status === 'pending') {
      item.attempts = Math.max(item.attempts, e.data.attempt);
      item.lastError = e.data.error;
    }
    return state;
  },
  prune(state, _horizon, scope) {
    // Pending entries are live. Of the rest only deliveries matter afterwards, for the board's link
    // from an accepted issue to its branch or PR: each issue keeps the one `deliveriesOf` shows,
    // without its verdict, so the outbox grows with the issues, not with every grade. Items keep
    // their order: a pending delivery delivered later must still come after the one it replaces.
    // A closed issue's link goes with it (when the compaction saw the curriculum).
    const shown = new Set(
      [...shownDeliveries(state)]
        .filter(([issue]) => !scope?.openIssues || scope.openIssues.has(issue))
        .map(([, [id]]) => id),
    );
    // Each open issue's latest status stays too (body and comment id): the next status compares
    // with it and edits that comment instead of looking for it (a reopened issue finds it by marker).
    for (const [issue, id] of latestStatuses(state))
      if (!scope?.openIssues || scope.openIssues.has(issue)) shown.add(id);
    const items: Record<string, OutboxItem> = {};
    for (const [id, v] of Object.entries(state.items)) {
      if (v.status === 'pending') items[id] = v;
      else if (v.entry.kind === 'status' && shown.has(id)) items[id] = v;
      else if (shown.has(id)) {
        const { id: entryId, jobKey, issueNumber, kind, crewId } = v.entry;
        items[id] = {
          ...v,
          entry: { id: entryId, jobKey, issueNumber, kind, crewId },
        };
      }
    }
    return { items };
  },
  // Entries are recorded by the drain that grades their job, at that time. The one producer that
  // derives entries from state (a drain recording what a crashed drain left out) never records
  // one for a job graded before this log's watermark (`missingOutboxEntries`), and outcomes of a
  // delivery are about an entry the fold keeps while it is pending. So an old event can only come
  // back as a stale copy: a watermark suffices.
  dedup: 'watermark',
});

/**
 * Delivery results by issue number (the latest delivered crew of each issue). Reads only the
 * `delivery` items' kind, issue, crew, status and result (the board's persisted fold keeps no more).
 */
export function deliveriesOf(state: OutboxState): Map<number, DeliveryResult & { crewId: string }> {
  const out = new Map<number, DeliveryResult & { crewId: string }>();
  for (const [issue, [, i]] of shownDeliveries(state))
    out.set(issue, { ...i.result!, crewId: i.entry.crewId ?? '' });
  return out;
}

/**
 * Per issue, the delivered item whose result the board shows (with its id): the first delivered,
 * then any later one that updated the branch to another commit.
 */
export function shownDeliveries(state: OutboxState): Map<number, [string, OutboxItem]> {
  const out = new Map<number, [string, OutboxItem]>();
  for (const [id, i] of Object.entries(state.items)) {
    if (i.entry.kind !== 'delivery' || i.status !== 'delivered' || !i.result) continue;
    const prev = out.get(i.entry.issueNumber)?.[1].result;
    if (!prev || (i.result.updated && prev.sha !== i.result.sha)) out.set(i.entry.issueNumber, [id, i]);
  }
  return out;
}

/** Per issue, the id of its latest recorded status entry (record order), whatever its delivery. */
export function latestStatuses(state: OutboxState): Map<number, string> {
  const out = new Map<number, string>();
  for (const [id, i] of Object.entries(state.items))
    if (i.entry.kind === 'status') out.set(i.entry.issueNumber, id);
  return out;
}

/** Per issue, the comment id the last delivered status wrote or edited. */
export function statusCommentIds(state: OutboxState): Map<number, number> {
  const out = new Map<number, number>();
  for (const i of Object.values(state.items))
    if (i.entry.kind === 'status' && i.status === 'delivered' && i.commentId !== undefined)
      out.set(i.entry.issueNumber, i.commentId);
  return out;
}
