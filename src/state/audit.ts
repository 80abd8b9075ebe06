import { appendJsonl } from './jsonl.js';
import { withLock } from './lock.js';
import type { StateLayout } from './layout.js';
import { boundStrings, MAX_REASON } from '../security/bound.js';

/**
 * One line in the append-only audit log `events.jsonl`: what happened, when, and by whom (the
 * layout's actor, from the run context).
 */
export interface AuditRecord {
  at: string;
  type: string;
  actor: string;
  [field: string]: unknown;
}

/**
 * Appends to the audit log (redacted at the write seam). Every string field is bounded: an audit line
 * names what a student did (a host, a path), and a line too long for the handoff import is lost.
 */
export async function audit(
  layout: StateLayout,
  type: string,
  fields: Record<string, unknown> = {},
): Promise<void> {
  const path = layout.file('audit');
  const record: AuditRecord = {
    at: new Date().toISOString(),
    type,
    actor: layout.actor,
    ...boundStrings(fields, MAX_REASON),
  };
  await withLock(path, () => appendJsonl(path, [record]));
}
