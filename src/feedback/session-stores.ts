import { deliveriesOf, type OutboxState } from '../outbox/outbox.js';
import type { QueueState } from '../grading/queue.js';
import type { FeedbackState } from './log.js';

/**
 * Which kept agent sessions (`session-store.json`, up to 8 MiB each) a revision may still resume
 * (docs/checkpoint.md, "Session stores"). A revision resumes the session of the crew its issue's
 * delivery shows while that pull request is open (src/feedback/revisions.ts), so a store is dead
 * weight once there is evidence that its crew can never be that crew again:
 *
 * - **not accepted**: its grading job was graded and rejected (or failed) — nothing delivers it;
 * - **superseded**: it was delivered, and a later crew of the same issue is the delivery now;
 * - **settled**: the pull request it delivered was merged or closed.
 *
 * A crew with work still ahead keeps its store: a grading job not graded yet (pending, claimed,
 * dead-lettered and perhaps requeued) or a delivery still in the outbox. Without evidence either
 * way (history the folds no longer hold) the store stays, and the bookbag rule drops the whole
 * bookbag once it is old and unreferenced. Only the file goes: the record's `sessionStore` note
 * stays, and a revision that finds the file gone starts a fresh session and says why.
 */
export interface StoreStates {
  grading?: QueueState;
  outbox?: OutboxState;
  feedback?: FeedbackState;
}

export type DropReason = 'not accepted' | 'superseded' | 'settled';

/** Of `crews` (bookbags holding a store), those whose store no revision can need, with why. */
export function sessionStoresToDrop(crews: Iterable<string>, s: StoreStates): Map<string, DropReason> {
  const busy = new Set<string>();
  const graded = new Map<string, boolean>();
  for (const j of Object.values(s.grading?.jobs ?? {})) {
    if (!j.job?.crewId) continue;
    if (j.status !== 'graded') busy.add(j.job.crewId);
    else if (j.verdict) graded.set(j.job.crewId, (graded.get(j.job.crewId) ?? false) || j.verdict.accepted);
  }
  const deliveredCrews = new Set<string>();
  for (const i of Object.values(s.outbox?.items ?? {})) {
    if (i.entry.kind !== 'delivery' || !i.entry.crewId) continue;
    if (i.status === 'pending') busy.add(i.entry.crewId);
    else if (i.status === 'delivered') deliveredCrews.add(i.entry.crewId);
  }
  const current = new Set<string>();
  for (const d of s.outbox ? deliveriesOf(s.outbox).values() : []) current.add(d.crewId);
  const settled = new Set<string>();
  for (const x of Object.values(s.feedback?.settled ?? {})) settled.add(x.crewId);
  const out = new Map<string, DropReason>();
  for (const crew of crews) {
    if (busy.has(crew)) continue;
    if (settled.has(crew)) out.set(crew, 'settled');
    else if (deliveredCrews.has(crew) && !current.has(crew)) out.set(crew, 'superseded');
    else if (graded.get(crew) === false) out.set(crew, 'not accepted');
  }
  return out;
}
