import { PAUSING_OUTCOMES, type CrewOutcome } from '../schemas/crew.js';
import { ConfigError } from '../errors.js';
import { foldLog } from '../state/fold.js';
import type { StateLayout } from '../state/layout.js';
import type { CrewRegistry } from './registry.js';
import {
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
 */

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
  const e = outcomePause(crew, at);
  if (!e) return false;
  return (await schoolLog(layout).append([e])).length === 1;
}

function outcomePause(
  crew: { crewId: string; issueNumber: number; outcome: CrewOutcome; reason: string; until?: Date },
  at: Date,
): SchoolEvent | undefined {
  if (!pauses(crew.outcome)) return undefined;
  const until = crew.until && crew.until.getTime() > at.getTime() ? crew.until.toISOString() : undefined;
  return event(
    'school.paused',
    pauseKey(crew),
    {
      reason: `crew ${crew.crewId} (issue #${crew.issueNumber}) ended with ${crew.outcome}: ${crew.reason}`,
      source: crew.outcome,
      crewId: crew.crewId,
      issueNumber: crew.issueNumber,
      ...(until ? { until } : {}),
    },
    at,
  );
}

/**
 * The pauses still in force at `now`: a pause with `until` (the tool said when its limit resets)
 * lifts by itself after that time; every other pause holds until it is cleared.
 */
export function activePauses<P extends { until?: string }>(pauses: readonly P[], now = new Date()): P[] {
  return pauses.filter((p) => !p.until || Date.parse(p.until) > now.getTime());
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
  schoolKeys: ReadonlySet<string>,
  at: Date,
): SchoolEvent[] {
  const out: SchoolEvent[] = [];
  for (const c of Object.values(registry.crews)) {
    if (c.status !== 'finished' || !c.outcome || !pauses(c.outcome)) continue;
    if (schoolKeys.has(pauseKey(c))) continue;
    const e = outcomePause(
      { crewId: c.crewId, issueNumber: c.issueNumber, outcome: c.outcome, reason: c.reason ?? '' },
      at,
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
    const pending = registry ? pendingPauses(registry, current.keys, at) : [];
    const state = foldLog(schoolFold, current);
    const cleared = [...state.pauses, ...pending.map((e) => asPause(e))];
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
  const until = first.until ? `; lifts by itself at ${first.until}` : '';
  return `school paused since ${first.at}: ${first.reason}${more}${until}; lift with \`school pause --clear\` once resolved`;
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
