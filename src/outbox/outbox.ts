import { createHash } from 'node:crypto';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { redactText } from '../security/redact.js';
import { EventLog, event, type LogContents, type StateEvent } from '../state/event-log.js';
import type { AppendOptions } from '../state/jsonl.js';
import { foldLog, registerFold, type LogFold } from '../state/fold.js';
import { withLock } from '../state/lock.js';
import type { StateLayout } from '../state/layout.js';
import type { Deliverer, DeliveryResult } from '../delivery/deliver.js';
import type { DeliveryVerdict } from '../delivery/body.js';
import { DeliveryRefusedError } from '../delivery/errors.js';
import { boundError } from '../security/bound.js';

/**
 * The GitHub outbox (N7.2): a label or comment is first recorded as an event in `outbox.jsonl`,
 * after the grade is durable (src/grading/wave.ts records a wave's entries), and delivered
 * afterwards with retry, by the loop's step after grading (src/loop/after-grading.ts). A GitHub failure leaves the entry
 * pending for the next drain and never fails the grade. Redelivery is idempotent: labels are a set,
 * and a comment carries a hidden marker that delivery looks for before posting.
 * An accepted crew's work is delivered the same way (`kind: 'delivery'`, src/delivery/): a branch
 * and, on GitHub, a pull request, idempotent on its own terms. A delivery that must never happen (a
 * bookbag whose diff fails its digest) is recorded `refused` and not retried.
 * `IssuesPort` is what the outbox asks of GitHub's issues API; src/github/issues-port.ts answers it.
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
          entry: { id: entryId, jobKey, issueNumber, kind, ...(crewId !== undefined ? { crewId } : {}) },
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

export function commentMarker(jobKey: string): string {
  return `<!-- school-core:${jobKey} -->`;
}

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
function shownDeliveries(state: OutboxState): Map<number, [string, OutboxItem]> {
  const out = new Map<number, [string, OutboxItem]>();
  for (const [id, i] of Object.entries(state.items)) {
    if (i.entry.kind !== 'delivery' || i.status !== 'delivered' || !i.result) continue;
    const prev = out.get(i.entry.issueNumber)?.[1].result;
    if (!prev || (i.result.updated && prev.sha !== i.result.sha)) out.set(i.entry.issueNumber, [id, i]);
  }
  return out;
}

/** Per issue, the id of its latest recorded status entry (record order), whatever its delivery. */
function latestStatuses(state: OutboxState): Map<number, string> {
  const out = new Map<number, string>();
  for (const [id, i] of Object.entries(state.items))
    if (i.entry.kind === 'status') out.set(i.entry.issueNumber, id);
  return out;
}

/** Per issue, the comment id the last delivered status wrote or edited. */
function statusCommentIds(state: OutboxState): Map<number, number> {
  const out = new Map<number, number>();
  for (const i of Object.values(state.items))
    if (i.entry.kind === 'status' && i.status === 'delivered' && i.commentId !== undefined)
      out.set(i.entry.issueNumber, i.commentId);
  return out;
}

export class Outbox {
  readonly log: EventLog<OutboxEvent, OutboxState>;
  private folded?: { contents: LogContents<OutboxEvent, OutboxState>; applied: number; state: OutboxState };
  constructor(readonly layout: StateLayout) {
    // Incremental: the fold keeps event data as it is, so transactions may share what was read.
    this.log = new EventLog<OutboxEvent, OutboxState>(layout.file('outbox'), undefined, {
      incremental: true,
    });
  }

  state(): OutboxState {
    return foldLog(outboxFold, this.log.read());
  }

  /** The log's compaction watermark ('' when none): entries before it are compacted history. */
  watermark(): string {
    return this.log.readLatest().watermark;
  }

  /**
   * The current state, folding only the events appended since the last call. Read it, never
   * change it.
   */
  current(): OutboxState {
    const contents = this.log.readLatest();
    const f = this.folded;
    if (f && f.contents === contents && f.applied <= contents.events.length) {
      for (let i = f.applied; i < contents.events.length; i++)
        f.state = outboxFold.apply(f.state, contents.events[i]!);
      f.applied = contents.events.length;
      return f.state;
    }
    const state = foldLog(outboxFold, contents);
    this.folded = { contents, applied: contents.events.length, state };
    return state;
  }

  pending(): OutboxItem[] {
    return Object.values(this.state().items).filter((i) => i.status === 'pending');
  }

  /**
   * Records entries (deduplicated by id). Fsynced unless `sync: false`: a drain skips it, because
   * an entry lost with the page cache is recorded again from its graded mark by the next drain
   * (`missingOutboxEntries`, wave.ts).
   */
  async record(entries: readonly OutboxEntry[], now: Date, options: AppendOptions = {}): Promise<void> {
    if (entries.length === 0) return;
    await this.log.transact(
      () => ({ append: entries.map((e) => event('outbox.recorded', e.id, e, now)), result: undefined }),
      options,
    );
  }

  /**
   * Records each issue's status comment body when it differs from the issue's latest recorded one
   * (a refresh that changes nothing records nothing). One transaction under the outbox lock, so two
   * refreshes cannot both record the same change. Returns the issues recorded now.
   */
  async recordStatuses(bodies: ReadonlyMap<number, string>, now: Date): Promise<number[]> {
    if (bodies.size === 0) return [];
    const { result } = await this.log.transact((contents) => {
      const state = foldLog(outboxFold, contents);
      const latest = latestStatuses(state);
      const at = now.toISOString();
      const append: OutboxEvent[] = [];
      const issues: number[] = [];
      for (const [issue, raw] of bodies) {
        const body = redactText(raw);
        const prev = latest.get(issue);
        if (prev !== undefined && state.items[prev]?.entry.body === body) continue;
        const id = `outbox:status:${issue}:${at}:${digest(body)}`;
        append.push(
          event(
            'outbox.recorded',
            id,
            { id, jobKey: `status:${issue}`, issueNumber: issue, kind: 'status', body },
            now,
          ),
        );
        issues.push(issue);
      }
      return { append, result: issues };
    });
    return result;
  }

  /** Delivery results by issue number (the latest delivered crew of each issue). */
  deliveries(): Map<number, DeliveryResult & { crewId: string }> {
    return deliveriesOf(this.state());
  }

  /**
   * Delivers pending entries: labels and comments through `port`, accepted work through
   * `o.delivery`; an entry whose port is absent waits for a drain that has one. One deliverer at a
   * time (a lock beside the log), so two drains cannot both miss the marker and post the comment
   * twice. Never throws for a GitHub or git failure.
   */
  async deliver(
    port: IssuesPort | undefined,
    o: {
      logger: Logger;
      now: () => Date;
      tries?: number;
      delivery?: Deliverer;
      /** Only entries of these kinds (the loop sends status comments before its crews run). */
      kinds?: ReadonlyArray<OutboxEntry['kind']>;
    },
  ): Promise<{ delivered: number; pending: number; refused: number }> {
    return withLock(`${this.log.path}.delivery`, async () => {
      const items = this.pending().filter(
        (i) =>
          (!o.kinds || o.kinds.includes(i.entry.kind)) && (i.entry.kind === 'delivery' ? o.delivery : port),
      );
      let delivered = 0;
      let refused = 0;
      for (const item of items) {
        const tries = o.tries ?? 2;
        let error: unknown;
        let result: DeliveryResult | undefined;
        let commentId: number | undefined;
        if (item.entry.kind === 'status') {
          // Only an issue's latest status goes out: an older one still pending is superseded.
          const state = this.state();
          if (latestStatuses(state).get(item.entry.issueNumber) !== item.entry.id) {
            await this.log.append([
              event(
                'outbox.delivered',
                `delivered:${item.entry.id}`,
                { id: item.entry.id, superseded: true },
                o.now(),
              ),
            ]);
            continue;
          }
        }
        for (let t = 0; t < tries; t++) {
          try {
            if (item.entry.kind === 'delivery') result = await deliverWork(o.delivery!, item.entry);
            else if (item.entry.kind === 'status')
              commentId = await sendStatus(
                port!,
                item.entry,
                statusCommentIds(this.state()).get(item.entry.issueNumber),
              );
            else await send(port!, item.entry);
            error = undefined;
            break;
          } catch (e) {
            error = e;
            if (e instanceof DeliveryRefusedError) break;
          }
        }
        if (error instanceof DeliveryRefusedError) {
          o.logger.error(
            `delivery for issue #${item.entry.issueNumber} refused: ${error.message}; nothing is pushed or opened for this crew`,
          );
          await this.log.append([
            event(
              'outbox.refused',
              `refused:${item.entry.id}`,
              { id: item.entry.id, reason: boundError(error.message) },
              o.now(),
            ),
          ]);
          refused++;
        } else if (error === undefined) {
          await this.log.append([
            event(
              'outbox.delivered',
              `delivered:${item.entry.id}`,
              {
                id: item.entry.id,
                ...(result ? { result } : {}),
                ...(commentId !== undefined ? { commentId } : {}),
              },
              o.now(),
            ),
          ]);
          if (result) o.logger.info(deliveredLine(item.entry.issueNumber, result));
          delivered++;
        } else {
          const attempt = item.attempts + 1;
          const text = boundError(message(error));
          o.logger.warning(
            `GitHub ${item.entry.kind} for issue #${item.entry.issueNumber} not delivered (attempt ${attempt}): ${text}; kept in the outbox for the next drain`,
          );
          await this.log.append([
            event(
              'outbox.failed',
              `outbox-failed:${item.entry.id}:${attempt}`,
              { id: item.entry.id, attempt, error: text },
              o.now(),
            ),
          ]);
        }
      }
      return { delivered, pending: this.pending().length, refused };
    });
  }
}

function deliverWork(delivery: Deliverer, entry: OutboxEntry): Promise<DeliveryResult> {
  if (!entry.crewId || !entry.verdict) {
    return Promise.reject(new DeliveryRefusedError(`outbox entry ${entry.id} names no crew or verdict`));
  }
  return delivery.deliver({ crewId: entry.crewId, issueNumber: entry.issueNumber, verdict: entry.verdict });
}

export function deliveredLine(issueNumber: number, r: DeliveryResult): string {
  const where = r.pullRequest
    ? `pull request #${r.pullRequest.number} (${r.pullRequest.url})`
    : `branch ${r.branch}`;
  return `issue #${issueNumber} delivered: ${where} at ${r.sha.slice(0, 12)}${r.updated ? '' : ' (kept a later crew’s commit)'}`;
}

function digest(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

/** The hidden marker of an issue's status comment (the first line of every status body). */
export function statusMarkerOf(issueNumber: number): string {
  return `<!-- school-core:status:issue-${issueNumber} -->`;
}

function httpStatus(e: unknown): number | undefined {
  return (e as { status?: number })?.status;
}

/**
 * Writes an issue's status comment: edits the comment the last status wrote (by id: no listing),
 * else the one carrying the marker (an earlier attempt whose acknowledgement was lost, or a state
 * directory that lost the id), else creates it. A comment deleted by a person (404 on the edit) is
 * looked for again and, when gone, created anew. Returns the comment's id.
 */
async function sendStatus(
  port: IssuesPort,
  entry: OutboxEntry,
  knownId: number | undefined,
): Promise<number | undefined> {
  const body = entry.body ?? statusMarkerOf(entry.issueNumber);
  if (knownId !== undefined && port.updateComment) {
    try {
      await port.updateComment(knownId, body);
      return knownId;
    } catch (e) {
      if (httpStatus(e) !== 404) throw e;
    }
  }
  const marker = statusMarkerOf(entry.issueNumber);
  const found = (await port.listComments(entry.issueNumber)).find((c) => (c.body ?? '').includes(marker));
  if (found?.id !== undefined && port.updateComment) {
    if (found.body !== body) await port.updateComment(found.id, body);
    return found.id;
  }
  if (found) return undefined; // a port that cannot edit: the comment exists, leave it
  const created = await port.createComment(entry.issueNumber, body);
  return created?.id;
}

async function send(port: IssuesPort, entry: OutboxEntry): Promise<void> {
  if (entry.kind === 'labels') {
    await port.addLabels(entry.issueNumber, entry.labels ?? []);
    return;
  }
  const marker = commentMarker(entry.jobKey);
  // Idempotent redelivery: a comment posted by an earlier attempt whose acknowledgement was lost
  // is found by its marker, and not posted again.
  const existing = await port.listComments(entry.issueNumber);
  if (existing.some((c) => (c.body ?? '').includes(marker))) return;
  await port.createComment(entry.issueNumber, redactText(entry.body ?? marker));
}
