import { appendJsonl } from './jsonl.js';
import { withLock } from './lock.js';
import type { StateLayout } from './layout.js';

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

/** Appends to the audit log (redacted at the write seam). */
export async function audit(
  layout: StateLayout,
  type: string,
  fields: Record<string, unknown> = {},
): Promise<void> {
  const path = layout.file('audit');
  const record: AuditRecord = { at: new Date().toISOString(), type, actor: actor(), ...fields };
  await withLock(path, () => appendJsonl(path, [record]));
}
