import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOKBAG_FILES } from '../bookbag/schema.js';
import { PAUSING_OUTCOMES, type CrewOutcome } from '../schemas/crew.js';
import { ConfigError } from '../errors.js';
import { foldLog } from '../state/fold.js';
import type { StateLayout } from '../state/layout.js';
import type { CrewRegistry } from './registry.js';
import {
  activePauses,
  event,
  nonce,
  requeueKey,
  pauseKey,
  readSchool,
  schoolFold,
  schoolLog,
  type ActivePause,
  type SchoolEvent,
} from './school-log.js';

/**
 * Launch pauses (seed 002). A usage/credit limit is not a failed run: it pauses new launches — until
 * the reset time when the tool named one, else until cleared. `clearPause()` lifts every pause recorded so far; a condition that persists pauses
 * again as soon as the next crew reports it (pauses are keyed by the crew that reported them).
 *
 * A student that knows when its limit resets says so in its report, on a line of its own:
 * `school-resets-at: 2026-11-02T15:00:00Z` (or Unix seconds). The pause then lifts itself at that
 * time; a reset more than a week away, in the past or unreadable is ignored, and the pause waits
 * for a clear.
 */

const RESETS_AT = /^\s*school-resets-at:\s*(\S+)\s*$/im;
const MAX_RESET_MS = 7 * 24 * 3600_000;

/** The reset time a report names, if it is a readable time within the next week after `at`. */
export function resetTimeIn(report: string | undefined, at: Date): Date | undefined {
  const m = report?.slice(0, 4096).match(RESETS_AT);
  if (!m) return undefined;
  const text = m[1]!;
  const ms = /^\d{9,11}$/.test(text) ? Number(text) * 1000 : Date.parse(text);
  if (!Number.isFinite(ms) || ms <= at.getTime() || ms - at.getTime() > MAX_RESET_MS) return undefined;
  return new Date(ms);
}

/** The reset time in a crew's bookbag report (the crew writes its bookbag before it pauses). */
function bookbagResetTime(layout: StateLayout, crewId: string, at: Date): Date | undefined {
  try {
    return resetTimeIn(readFileSync(join(layout.bookbag(crewId), BOOKBAG_FILES.report), 'utf8'), at);
  } catch {
    return undefined;
  }
}

/** Records an operator pause. */
export async function pauseSchool(layout: StateLayout, reason: string, at = new Date()): Promise<void> {
  const text = reason.trim();
  if (!text) throw new ConfigError('pause: --reason must say why the school is paused (it was empty).');
  await schoolLog(layout).append([
    event('school.paused', pauseKey({}), { reason: text, source: 'manual' }, at),
  ]);
}

/**
 * Records the pause a crew outcome causes; returns false when the outcome does not pause or the pause
 * was already recorded (idempotent per crew). The runtime calls it for `usage_limit`/`overloaded` and
 * for an unexplained crew exit (source `lost`).
 */
export async function pauseForOutcome(
  layout: StateLayout,
  crew: { crewId: string; issueNumber: number; outcome: CrewOutcome; reason: string; until?: Date },
  at = new Date(),
): Promise<boolean> {
  // The tool's own reset time (read by the agent adapter), else one the student wrote in its report.
  const until =
    crew.until && crew.until.getTime() > at.getTime()
      ? crew.until
      : crew.outcome === 'usage_limit'
        ? bookbagResetTime(layout, crew.crewId, at)
        : undefined;
  const e = outcomePause(crew, at, until);
  if (!e) return false;
  return (await schoolLog(layout).append([e])).length === 1;
}

function outcomePause(
  crew: { crewId: string; issueNumber: number; outcome: CrewOutcome; reason: string; until?: Date },
  at: Date,
  until?: Date,
): SchoolEvent | undefined {
  if (!pauses(crew.outcome)) return undefined;
  return event(
    'school.paused',
    pauseKey(crew),
    {
      reason: `crew ${crew.crewId} (issue #${crew.issueNumber}) ended with ${crew.outcome}: ${crew.reason}`,
      source: crew.outcome,
      crewId: crew.crewId,
      issueNumber: crew.issueNumber,
      ...(until ? { until: until.toISOString() } : {}),
    },
    at,
  );
}

/**
 * Seed 002: usage/credit limits pause launches, and so does an unexplained crew exit (`lost`) until
 * someone has looked at it. A rate limit or overload does not: it is an interruption.
 */
function pauses(outcome: CrewOutcome): boolean {
  return PAUSING_OUTCOMES.includes(outcome) || outcome === 'lost';
}

/**
 * Pauses the registry implies but `school.jsonl` does not hold yet: crews that finished with a
 * pausing outcome whose pause was never recorded (the runtime crashed between the two writes). The
 * planner treats these as active pauses and records them, so a lost write cannot unpause the school.
 */
export function pendingPauses(
  registry: CrewRegistry,
  school: { keys: ReadonlySet<string>; watermark: string },
  at: Date,
  layout?: StateLayout,
): SchoolEvent[] {
  const out: SchoolEvent[] = [];
  for (const c of Object.values(registry.crews)) {
    if (c.status !== 'finished' || !c.outcome || !pauses(c.outcome)) continue;
    if (school.keys.has(pauseKey(c))) continue;
    // A crew that finished before the school log's watermark had its pause recorded in history the
    // log has compacted (the registry keeps the last crews of an issue for longer): not again.
    if (school.watermark !== '' && (c.finishedAt ?? '') < school.watermark) continue;
    // The reset time counts from when the crew finished, not from now.
    const finishedAt = c.finishedAt ? new Date(c.finishedAt) : at;
    const until =
      layout && c.outcome === 'usage_limit' ? bookbagResetTime(layout, c.crewId, finishedAt) : undefined;
    const e = outcomePause(
      { crewId: c.crewId, issueNumber: c.issueNumber, outcome: c.outcome, reason: c.reason ?? '' },
      at,
      until,
    );
    if (e) out.push(e);
  }
  return out;
}

/**
 * Lifts the current pauses. The registry's pausing outcomes are recorded first (under the same lock),
 * so clearing also acknowledges them; only a *new* report pauses the school again.
 */
export async function clearPause(
  layout: StateLayout,
  reason: string,
  registry?: CrewRegistry,
  at = new Date(),
): Promise<{ cleared: ActivePause[] }> {
  const { result } = await schoolLog(layout).transact((current) => {
    const pending = registry ? pendingPauses(registry, current, at, layout) : [];
    const state = foldLog(schoolFold, current);
    const cleared = activePauses([...state.pauses, ...pending.map((e) => asPause(e))], at);
    const clear = event(
      'school.pause-cleared',
      `pause-cleared:${nonce()}`,
      { reason: reason.trim() || 'cleared by operator' },
      at,
    );
    return { append: [...pending, clear], result: cleared };
  });
  return { cleared: result };
}

function asPause(e: SchoolEvent): ActivePause {
  return { ...(e.data as ActivePause), at: e.at, key: e.key };
}

export interface PauseStatus {
  paused: boolean;
  pauses: ActivePause[];
  lastCleared?: { at: string; reason: string };
}

/** The pauses in force at `now` (a pause whose reset time passed has lifted itself). */
export function pauseStatus(layout: StateLayout, now = new Date()): PauseStatus {
  const s = readSchool(layout);
  const pauses = activePauses(s.pauses, now);
  return {
    paused: pauses.length > 0,
    pauses,
    ...(s.lastCleared ? { lastCleared: s.lastCleared } : {}),
  };
}

/** One line naming why launches are blocked, or undefined. */
export function describePauses(pauses: readonly ActivePause[]): string | undefined {
  if (pauses.length === 0) return undefined;
  const first = pauses[0]!;
  const more = pauses.length > 1 ? ` (+${pauses.length - 1} more)` : '';
  const lift = first.until
    ? `it lifts by itself at ${first.until}`
    : 'lift with `school pause --clear` (or the workflow input clear-pause) once resolved';
  return `school paused since ${first.at}: ${first.reason}${more}; ${lift}`;
}

/**
 * `school requeue ISSUE`: re-admits an issue stopped after two failed runs. The reason is recorded;
 * runs before the requeue no longer count toward the two-failure stop.
 */
export async function requeueIssue(
  layout: StateLayout,
  issueNumber: number,
  reason: string,
  at = new Date(),
): Promise<void> {
  const text = reason.trim();
  if (!text) throw new ConfigError('requeue: --reason must say why the issue is tried again (it was empty).');
  if (!Number.isSafeInteger(issueNumber) || issueNumber <= 0)
    throw new ConfigError(`requeue: ISSUE must be an issue number, found ${JSON.stringify(issueNumber)}.`);
  await schoolLog(layout).append([
    event('issue.requeued', requeueKey(issueNumber), { issueNumber, reason: text }, at),
  ]);
}
