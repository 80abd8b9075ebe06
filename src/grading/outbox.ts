import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { redactText } from '../security/redact.js';
import { EventLog, event, type StateEvent } from '../state/event-log.js';
import { foldLog, registerFold, type LogFold } from '../state/fold.js';
import { withLock } from '../state/lock.js';
import type { StateLayout } from '../state/layout.js';
import { boundError } from './queue.js';
import type { Verdict } from './verdict.js';

/**
 * The GitHub outbox (N7.2): a label or comment is first recorded as an event in `outbox.jsonl`,
 * after the grade is durable, and delivered afterwards with retry. A GitHub failure leaves the entry
 * pending for the next drain and never fails the grade. Redelivery is idempotent: labels are a set,
 * and a comment carries a hidden marker that delivery looks for before posting.
 */
export interface GitHubPort {
  addLabels(issue: number, labels: string[]): Promise<void>;
  listComments(issue: number): Promise<Array<{ body?: string | null }>>;
  createComment(issue: number, body: string): Promise<void>;
}

export interface OutboxEntry {
  id: string;
  jobKey: string;
  issueNumber: number;
  kind: 'labels' | 'comment';
  labels?: string[];
  body?: string;
}
export type OutboxEvent =
  | StateEvent<'outbox.recorded', OutboxEntry>
  | StateEvent<'outbox.delivered', { id: string }>
  | StateEvent<'outbox.failed', { id: string; attempt: number; error: string }>;

export interface OutboxItem {
  entry: OutboxEntry;
  status: 'pending' | 'delivered';
  attempts: number;
  lastError?: string;
}
export interface OutboxState {
  items: Record<string, OutboxItem>;
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
    if (e.type === 'outbox.delivered') item.status = 'delivered';
    else if (e.type === 'outbox.failed' && item.status === 'pending') {
      item.attempts = Math.max(item.attempts, e.data.attempt);
      item.lastError = e.data.error;
    }
    return state;
  },
  prune(state) {
    const items: Record<string, OutboxItem> = {};
    for (const [k, v] of Object.entries(state.items)) if (v.status === 'pending') items[k] = v;
    return { items };
  },
});

export function commentMarker(jobKey: string): string {
  return `<!-- school-core:${jobKey} -->`;
}

export function resultComment(jobKey: string, crewId: string, verdict: Verdict): string {
  const lines = [
    commentMarker(jobKey),
    `**school-core grade: ${verdict.accepted ? 'accepted' : 'rejected'}** (crew \`${crewId}\`, score ${verdict.score.toFixed(2)})`,
    '',
    `Decided by the ${verdict.decidedBy} judge: \`${verdict.code}\``,
    ...verdict.reasons.map((r) => `- ${r.replace(/\s+/g, ' ').slice(0, 500)}`),
  ];
  return redactText(lines.join('\n'));
}

export class Outbox {
  readonly log: EventLog<OutboxEvent, OutboxState>;
  constructor(readonly layout: StateLayout) {
    this.log = new EventLog<OutboxEvent, OutboxState>(layout.file('outbox'));
  }

  state(): OutboxState {
    return foldLog(outboxFold, this.log.read());
  }

  pending(): OutboxItem[] {
    return Object.values(this.state().items).filter((i) => i.status === 'pending');
  }

  /** Records entries (deduplicated by id). */
  async record(entries: readonly OutboxEntry[], now: Date): Promise<void> {
    if (entries.length === 0) return;
    await this.log.append(entries.map((e) => event('outbox.recorded', e.id, e, now)));
  }

  /**
   * Delivers pending entries. One deliverer at a time (a lock beside the log), so two drains cannot
   * both miss the marker and post the comment twice. Never throws for a GitHub failure.
   */
  async deliver(
    port: GitHubPort,
    o: { logger: Logger; now: () => Date; tries?: number },
  ): Promise<{ delivered: number; pending: number }> {
    return withLock(`${this.log.path}.delivery`, async () => {
      const items = this.pending();
      let delivered = 0;
      for (const item of items) {
        const tries = o.tries ?? 2;
        let error: unknown;
        for (let t = 0; t < tries; t++) {
          try {
            await send(port, item.entry);
            error = undefined;
            break;
          } catch (e) {
            error = e;
          }
        }
        if (error === undefined) {
          await this.log.append([
            event('outbox.delivered', `delivered:${item.entry.id}`, { id: item.entry.id }, o.now()),
          ]);
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
      return { delivered, pending: items.length - delivered };
    });
  }
}

async function send(port: GitHubPort, entry: OutboxEntry): Promise<void> {
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
