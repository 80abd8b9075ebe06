import { appendJsonl } from './jsonl.js';
import { withLock } from './lock.js';
import type { StateLayout } from './layout.js';
import { boundStrings, MAX_REASON } from '../security/bound.js';

/** One line in the append-only audit log `events.jsonl`: what happened, when, and by whom. */
export interface AuditRecord {
  at: string;
  type: string;
  actor: string;
  [field: string]: unknown;
}

export function actor(): string {
  return process.env.GITHUB_RUN_ID
    ? `actions:${process.env.GITHUB_RUN_ID}/${process.env.GITHUB_RUN_ATTEMPT ?? '1'}:${process.env.GITHUB_JOB ?? ''}`
    : `local:${process.pid}`;
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
    actor: actor(),
    ...boundStrings(fields, MAX_REASON),
  };
  await withLock(path, () => appendJsonl(path, [record]));
}
