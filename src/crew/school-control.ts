import { EventLog, event, type StateEvent } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';

/**
 * Pauses in `school.jsonl` (seed 002): a usage or credit limit, a service overload, or an
 * unexplained crew exit pauses new launches until an operator clears it (`school pause --clear`).
 * Events: `school.paused {reason, crewId?, source}` and `school.pause-cleared {reason?}`; the
 * latest of the two decides.
 */
export interface PauseData {
  reason: string;
  crewId?: string;
  source: string;
}
type SchoolEvent = StateEvent<'school.paused', PauseData> | StateEvent<string, Record<string, unknown>>;

export function schoolLog(layout: StateLayout): EventLog<SchoolEvent> {
  return new EventLog<SchoolEvent>(layout.file('school'));
}

export async function pauseSchool(layout: StateLayout, data: PauseData): Promise<void> {
  const key = `paused:${data.crewId ?? data.source}:${data.reason.slice(0, 60)}`;
  await schoolLog(layout).append([event('school.paused', key, data)]);
}

/** The reason new launches are paused, or undefined. Throws CorruptStateError (fail closed). */
export function pausedReason(layout: StateLayout): string | undefined {
  let reason: string | undefined;
  for (const e of schoolLog(layout).read().events) {
    if (e.type === 'school.paused') reason = String((e.data as PauseData).reason ?? 'paused');
    else if (e.type === 'school.pause-cleared') reason = undefined;
  }
  return reason;
}
