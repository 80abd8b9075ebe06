import type { DeliveryResult, Deliverer } from '../delivery/deliver.js';
import { DeliveryRefusedError } from '../delivery/errors.js';
import { redactText } from '../security/redact.js';
import type { IssuesPort, OutboxEntry } from './entries.js';

/**
 * What an outbox entry does on GitHub (./outbox.ts): labels, a comment found by its hidden marker
 * before it is posted, an issue's status comment edited in place, accepted work delivered.
 */

export function commentMarker(jobKey: string): string {
  return `<!-- school-core:${jobKey} -->`;
}

/** The hidden marker of an issue's status comment (the first line of every status body). */
export function statusMarkerOf(issueNumber: number): string {
  return `<!-- school-core:status:issue-${issueNumber} -->`;
}

export function deliveredLine(issueNumber: number, r: DeliveryResult): string {
  const where = r.pullRequest
    ? `pull request #${r.pullRequest.number} (${r.pullRequest.url})`
    : `branch ${r.branch}`;
  return `issue #${issueNumber} delivered: ${where} at ${r.sha.slice(0, 12)}${r.updated ? '' : ' (kept a later crew’s commit)'}`;
}

export function deliverWork(delivery: Deliverer, entry: OutboxEntry): Promise<DeliveryResult> {
  if (!entry.crewId || !entry.verdict) {
    return Promise.reject(new DeliveryRefusedError(`outbox entry ${entry.id} names no crew or verdict`));
  }
  return delivery.deliver({ crewId: entry.crewId, issueNumber: entry.issueNumber, verdict: entry.verdict });
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
export async function sendStatus(
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

export async function send(port: IssuesPort, entry: OutboxEntry): Promise<void> {
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
