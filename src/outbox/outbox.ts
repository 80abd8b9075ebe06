import { createHash } from 'node:crypto';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { redactText } from '../security/redact.js';
import { EventLog, event } from '../state/event-log.js';
import type { AppendOptions } from '../state/jsonl.js';
import { IncrementalFold, foldLog } from '../state/fold.js';
import { withLock } from '../state/lock.js';
import type { StateLayout } from '../state/layout.js';
import type { Deliverer, DeliveryResult } from '../delivery/deliver.js';
import { DeliveryRefusedError } from '../delivery/errors.js';
import { boundError } from '../security/bound.js';
import {
  deliveriesOf,
  latestStatuses,
  outboxFold,
  statusCommentIds,
  type IssuesPort,
  type OutboxEntry,
  type OutboxEvent,
  type OutboxItem,
  type OutboxState,
} from './entries.js';
import { deliveredLine, deliverWork, send, sendStatus } from './send.js';

export {
  deliveriesOf,
  outboxFold,
  type IssuesPort,
  type OutboxCounts,
  type OutboxEntry,
  type OutboxEvent,
  type OutboxItem,
  type OutboxState,
} from './entries.js';
export { commentMarker, deliveredLine, statusMarkerOf } from './send.js';

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
export interface DeliverOptions {
  logger: Logger;
  now: () => Date;
  tries?: number;
  delivery?: Deliverer;
  /** Only entries of these kinds (the loop sends status comments before its crews run). */
  kinds?: ReadonlyArray<OutboxEntry['kind']>;
}

export class Outbox {
  readonly log: EventLog<OutboxEvent, OutboxState>;
  private readonly folded = new IncrementalFold(outboxFold);
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
    return this.folded.of(this.log.readLatest());
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
    o: DeliverOptions,
  ): Promise<{ delivered: number; pending: number; refused: number }> {
    return withLock(`${this.log.path}.delivery`, async () => {
      const items = this.pending().filter(
        (i) =>
          (!o.kinds || o.kinds.includes(i.entry.kind)) && (i.entry.kind === 'delivery' ? o.delivery : port),
      );
      let delivered = 0;
      let refused = 0;
      for (const item of items) {
        // Only an issue's latest status goes out: an older one still pending is superseded.
        if (
          item.entry.kind === 'status' &&
          latestStatuses(this.state()).get(item.entry.issueNumber) !== item.entry.id
        ) {
          await this.appendOutcome(
            'outbox.delivered',
            `delivered:${item.entry.id}`,
            { id: item.entry.id, superseded: true },
            o,
          );
          continue;
        }
        const sent = await this.attempt(port, item.entry, o);
        if (sent.error instanceof DeliveryRefusedError) {
          await this.refuse(item.entry, sent.error, o);
          refused++;
        } else if (sent.error === undefined) {
          await this.appendOutcome(
            'outbox.delivered',
            `delivered:${item.entry.id}`,
            {
              id: item.entry.id,
              result: sent.result,
              commentId: sent.commentId,
            },
            o,
          );
          if (sent.result) o.logger.info(deliveredLine(item.entry.issueNumber, sent.result));
          delivered++;
        } else {
          await this.failed(item, sent.error, o);
        }
      }
      return { delivered, pending: this.pending().length, refused };
    });
  }

  /** Up to `o.tries` sends of one entry; a refusal is not tried again. `error` is the last one's. */
  private async attempt(
    port: IssuesPort | undefined,
    entry: OutboxEntry,
    o: DeliverOptions,
  ): Promise<{ error?: unknown; result?: DeliveryResult; commentId?: number }> {
    let error: unknown;
    for (let t = 0; t < (o.tries ?? 2); t++) {
      try {
        if (entry.kind === 'delivery') return { result: await deliverWork(o.delivery!, entry) };
        if (entry.kind === 'status') {
          const known = statusCommentIds(this.state()).get(entry.issueNumber);
          return { commentId: await sendStatus(port!, entry, known) };
        }
        await send(port!, entry);
        return {};
      } catch (e) {
        error = e;
        if (e instanceof DeliveryRefusedError) break;
      }
    }
    return { error };
  }

  /** A delivery that must never happen: recorded `refused`, never tried again. */
  private async refuse(entry: OutboxEntry, error: DeliveryRefusedError, o: DeliverOptions): Promise<void> {
    o.logger.error(
      `delivery for issue #${entry.issueNumber} refused: ${error.message}; nothing is pushed or opened for this crew`,
    );
    await this.appendOutcome(
      'outbox.refused',
      `refused:${entry.id}`,
      { id: entry.id, reason: boundError(error.message) },
      o,
    );
  }

  /** A failed send: the entry stays pending for the next drain, its attempt counted. */
  private async failed(item: OutboxItem, error: unknown, o: DeliverOptions): Promise<void> {
    const attempt = item.attempts + 1;
    const text = boundError(message(error));
    o.logger.warning(
      `GitHub ${item.entry.kind} for issue #${item.entry.issueNumber} not delivered (attempt ${attempt}): ${text}; kept in the outbox for the next drain`,
    );
    await this.appendOutcome(
      'outbox.failed',
      `outbox-failed:${item.entry.id}:${attempt}`,
      { id: item.entry.id, attempt, error: text },
      o,
    );
  }

  private async appendOutcome<T extends Exclude<OutboxEvent['type'], 'outbox.recorded'>>(
    type: T,
    key: string,
    data: Extract<OutboxEvent, { type: T }>['data'],
    o: DeliverOptions,
  ): Promise<void> {
    await this.log.append([event(type, key, data, o.now()) as OutboxEvent]);
  }
}

function digest(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}
