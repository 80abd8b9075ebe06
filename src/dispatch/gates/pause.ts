import { join } from 'node:path';
import { BOOKBAG_FILES } from '../../bookbag/schema.js';
import { PAUSING_OUTCOMES, type CrewOutcome } from '../../schemas/crew.js';
import { ConfigError } from '../../errors.js';
import { foldLog } from '../../state/fold.js';
import { finiteOr } from '../../security/sanitize.js';
import { readUntrusted } from '../../security/untrusted-file.js';
import type { StateLayout } from '../../state/layout.js';
import type { CrewRegistry } from '../logs/registry.js';
import type { UpstreamLimit } from '../../sandbox/index.js';
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
  type SchoolState,
} from '../logs/school-log.js';

/**
 * Launch pauses (seed 002). A usage/credit limit is not a failed run: it pauses new launches. Whose
 * launches depends on who said so. A student's word is evidence about its own issue, never about the
 * agent every other issue shares, nor about the school: a limit only the student reported (a command
 * agent's exit 75 or report marker, a limit line in a model's answer, a CLI's prose, a CLI's error
 * envelope: all of it arrives on output a process inside the sandbox can write) holds its issue
 * alone (`limit_unconfirmed`: recorded here as `issue.limit-unconfirmed`, the issue goes behind the
 * others, ./order.ts) unless the school confirms it (./limit-probe.ts: a crew of another issue
 * reported it within the window, or the school's own probe of the agent answered with the limit).
 * A confirmed claim pauses that agent alone, until the reset time named but never longer than
 * `dispatch.agentPauseMaxMinutes`. With `dispatch.limitProbe: false` every claim pauses its agent
 * (the rule before probes). The school pauses as a whole only on its own
 * signals: the API's own limit answer as the host side of the crew's key proxy saw it (`upstream`,
 * src/sandbox/upstream-record.ts), until the reset the API named (a week at most; none named: the
 * agent cap, and the next crew asks again), an operator pause, or an unexplained crew exit (`lost`),
 * until cleared.
 * `clearPause()` lifts every pause recorded so far; a condition that persists pauses again as soon as
 * the next crew reports it (pauses are keyed by the crew that reported them).
 *
 * A student that knows when its limit resets says so in its report, on a line of its own:
 * `school-resets-at: 2026-11-02T15:00:00Z` (or Unix seconds). Its agent's pause then lifts at that
 * time when that is sooner than the cap; a reset in the past or unreadable is ignored.
 */

const RESETS_AT = /^\s*school-resets-at:\s*(\S+)\s*$/im;
const MAX_RESET_MS = 7 * 24 * 3600_000;
/** `dispatch.agentPauseMaxMinutes`' default, for callers without the configuration (a clear). */
export const DEFAULT_AGENT_PAUSE_MAX_MS = 60 * 60_000;

/** The reset time a report names, if it is a readable time within `maxMs` (a week) after `at`. */
export function resetTimeIn(report: string | undefined, at: Date, maxMs = MAX_RESET_MS): Date | undefined {
  const m = report?.slice(0, 4096).match(RESETS_AT);
  if (!m) return undefined;
  const text = m[1]!;
  const ms = /^\d{9,11}$/.test(text) ? Number(text) * 1000 : Date.parse(text);
  if (!Number.isFinite(ms) || ms <= at.getTime() || ms - at.getTime() > maxMs) return undefined;
  return new Date(ms);
}

/** The reset time in a crew's bookbag report (the crew writes its bookbag before it pauses). */
function bookbagResetTime(layout: StateLayout, crewId: string, at: Date): Date | undefined {
  // The report is the student's: read as data, and only its start (resetTimeIn reads 4096 characters).
  const r = readUntrusted(join(layout.bookbag(crewId), BOOKBAG_FILES.report), {
    maxBytes: 16 * 1024,
    over: 'truncate',
  });
  return r.ok ? resetTimeIn(r.bytes.toString('utf8'), at) : undefined;
}

/**
 * When an agent's pause lifts: the reset time the student named when it is sooner than the cap,
 * else the cap. Never "until cleared": a student cannot stop its agent for longer than the cap.
 */
function agentPauseEnd(named: Date | undefined, at: Date, maxMs: number): Date {
  const cap = at.getTime() + Math.max(60_000, finiteOr(maxMs, DEFAULT_AGENT_PAUSE_MAX_MS));
  return named && named.getTime() > at.getTime() && named.getTime() < cap ? named : new Date(cap);
}

/**
 * When a school-wide pause on the API's answer lifts: the reset the API named, but never more than a
 * week after the crew ended (`MAX_RESET_MS`; the longest window a usage limit resets in); when it
 * named none, after the agent cap, and the next crew asks the API again.
 */
function schoolPauseEnd(upstream: UpstreamLimit, at: Date, maxMs: number): Date {
  const named = upstream.resetAt ? Date.parse(upstream.resetAt) : NaN;
  if (!Number.isFinite(named))
    return new Date(at.getTime() + Math.max(60_000, finiteOr(maxMs, DEFAULT_AGENT_PAUSE_MAX_MS)));
  return new Date(Math.min(named, at.getTime() + MAX_RESET_MS));
}

/** Records an operator pause. */
export async function pauseSchool(layout: StateLayout, reason: string, at = new Date()): Promise<void> {
  const text = reason.trim();
  if (!text) throw new ConfigError('pause: --reason must say why the school is paused (it was empty).');
  await schoolLog(layout).append([
    event('school.paused', pauseKey({}), { reason: text, source: 'manual' }, at),
  ]);
}

/** A crew outcome as a pause sees it. */
export interface OutcomeOfCrew {
  crewId: string;
  issueNumber: number;
  outcome: CrewOutcome;
  reason: string;
  /** The reset time the agent adapter read. */
  until?: Date;
  /**
   * The crew's agent: a limit only its student reported pauses this agent alone. The crew runtime
   * and the planner always name it; without it the pause holds the school.
   */
  agent?: string;
  /**
   * The API's own limit answer, as the crew's key proxy saw it: the school's own signal, the school
   * pauses until the reset it names. Absent, a limit is the student's word.
   */
  upstream?: UpstreamLimit;
  /** A claim the school confirmed itself (./limit-probe.ts): by its probe or another issue's crew. */
  confirmed?: 'probe' | 'crews';
}

/**
 * Records the pause a crew outcome causes; returns false when the outcome does not pause or the pause
 * was already recorded (idempotent per crew). The runtime calls it for `usage_limit`/`overloaded` and
 * for an unexplained crew exit (source `lost`). `agentPauseMaxMs`: `dispatch.agentPauseMaxMinutes`.
 */
export async function pauseForOutcome(
  layout: StateLayout,
  crew: OutcomeOfCrew,
  at = new Date(),
  agentPauseMaxMs = DEFAULT_AGENT_PAUSE_MAX_MS,
): Promise<boolean> {
  // The tool's own reset time (read by the agent adapter), else one the student wrote in its report.
  const named =
    crew.until && crew.until.getTime() > at.getTime()
      ? crew.until
      : crew.outcome === 'usage_limit'
        ? bookbagResetTime(layout, crew.crewId, at)
        : undefined;
  if (crew.outcome === 'limit_unconfirmed') {
    // The issue's, not the agent's: recorded for the operator; the order holds the issue back.
    const held = event(
      'issue.limit-unconfirmed',
      `limit-unconfirmed:crew:${crew.crewId}`,
      {
        issueNumber: crew.issueNumber,
        crewId: crew.crewId,
        ...(crew.agent ? { agent: crew.agent } : {}),
        reason: `issue #${crew.issueNumber} waits behind the other issues: crew ${crew.crewId} ended with ${crew.outcome}: ${crew.reason}`,
      },
      at,
    );
    return (await schoolLog(layout).append([held])).length === 1;
  }
  const e = outcomePause(crew, at, named, agentPauseMaxMs);
  if (!e) return false;
  return (await schoolLog(layout).append([e])).length === 1;
}

/**
 * The pause event of a crew outcome. A usage limit the school did not see itself holds only the
 * crew's agent, until `agentPauseEnd`.
 */
function outcomePause(
  crew: OutcomeOfCrew,
  at: Date,
  named: Date | undefined,
  maxMs: number,
  /** When the crew ended: the cap counts from then. */
  ended = at,
): SchoolEvent | undefined {
  if (!pauses(crew.outcome)) return undefined;
  const said = `crew ${crew.crewId} (issue #${crew.issueNumber}) ended with ${crew.outcome}: ${crew.reason}`;
  // A limit its student reported holds its agent alone; the API's own answer, an unexplained exit
  // and a caller that names no agent (an operator's tool) hold the school.
  const upstream = crew.outcome === 'usage_limit' ? crew.upstream : undefined;
  const agent = crew.outcome !== 'lost' && !upstream && crew.agent ? crew.agent : undefined;
  const until = agent
    ? agentPauseEnd(named, ended, maxMs)
    : upstream
      ? schoolPauseEnd(upstream, ended, maxMs)
      : named && new Date(Math.min(named.getTime(), ended.getTime() + MAX_RESET_MS));
  const api = upstream
    ? ` (the API answered ${upstream.status} at ${upstream.at}${
        upstream.resetAt
          ? until && until.getTime() < Date.parse(upstream.resetAt)
            ? `; the reset it named, ${upstream.resetAt}, is more than a week away: the pause lifts after a week and the next crew asks again`
            : `; it resets ${upstream.resetAt}`
          : '; it named no reset: the pause lifts after dispatch.agentPauseMaxMinutes and the next crew asks again'
      })`
    : '';
  return event(
    'school.paused',
    pauseKey(crew),
    {
      reason: agent
        ? `agent ${agent}: ${said} (${
            crew.confirmed === 'probe'
              ? "the school's probe of the agent answered with the limit too"
              : crew.confirmed === 'crews'
                ? 'crews of two different issues reported it'
                : 'reported by the student only, the API did not say so'
          }: this agent alone waits)`
        : `${said}${api}`,
      source: crew.outcome,
      crewId: crew.crewId,
      issueNumber: crew.issueNumber,
      ...(until ? { until: until.toISOString() } : {}),
      ...(agent ? { agent } : {}),
      ...(upstream ? { upstream } : {}),
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
  agentPauseMaxMs = DEFAULT_AGENT_PAUSE_MAX_MS,
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
    // The API's own answer is recorded with the crew's end: without it, its agent alone waits.
    const e = outcomePause(
      {
        crewId: c.crewId,
        issueNumber: c.issueNumber,
        outcome: c.outcome,
        reason: c.reason ?? '',
        agent: c.agent,
        ...(c.upstream ? { upstream: c.upstream } : {}),
        ...(c.confirmed ? { confirmed: c.confirmed } : {}),
      },
      at,
      until,
      agentPauseMaxMs,
      finishedAt,
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
  /** The school is paused: no launch at all. */
  paused: boolean;
  /** The school-wide pauses in force. */
  pauses: ActivePause[];
  /** Pauses that hold one agent each (its crews wait; other agents are planned). */
  agentPauses: ActivePause[];
  lastCleared?: { at: string; reason: string };
}

/** The pauses in force at `now` (a pause whose reset time passed has lifted itself). */
export function pauseStatus(layout: StateLayout, now = new Date()): PauseStatus {
  return pauseStatusOf(readSchool(layout), now);
}

/**
 * The same over a folded `school.jsonl`: what `school pause --status`, `school status` and the board
 * all read (src/board/view.ts `pauseFacts`), so they never disagree on whether launches wait.
 */
export function pauseStatusOf(s: Pick<SchoolState, 'pauses' | 'lastCleared'>, now = new Date()): PauseStatus {
  const { school, agents } = splitPauses(activePauses(s.pauses, now));
  return {
    paused: school.length > 0,
    pauses: school,
    agentPauses: [...agents.values()].flat(),
    ...(s.lastCleared ? { lastCleared: s.lastCleared } : {}),
  };
}

/** Pauses that hold the school, and those that hold one agent, by agent. */
export function splitPauses(pauses: readonly ActivePause[]): {
  school: ActivePause[];
  agents: Map<string, ActivePause[]>;
} {
  const school: ActivePause[] = [];
  const agents = new Map<string, ActivePause[]>();
  for (const p of pauses) {
    if (typeof p.agent === 'string' && p.agent) agents.set(p.agent, [...(agents.get(p.agent) ?? []), p]);
    else school.push(p);
  }
  return { school, agents };
}

/** Why an agent's crews wait, one line per agent paused (admission refuses its crews with it). */
export function describeAgentPauses(
  agents: ReadonlyMap<string, readonly ActivePause[]>,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const [agent, list] of agents) {
    // The pause that lasts longest decides when the agent is planned again.
    const last = [...list].sort((a, b) => Date.parse(b.until ?? '') - Date.parse(a.until ?? ''))[0]!;
    out.set(
      agent,
      `agent ${agent} paused since ${last.at} until ${last.until ?? 'cleared'}: ${last.reason}; other agents are still planned`,
    );
  }
  return out;
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

/**
 * Why a crew of `agent` waits (an agent pause in force at `now`), or undefined: a driver does not
 * launch a planned crew of a paused agent, as admission plans none.
 */
export function agentPausedReason(layout: StateLayout, agent: string, now = new Date()): string | undefined {
  const held = pauseStatus(layout, now).agentPauses.filter((p) => p.agent === agent);
  return held.length ? describeAgentPauses(new Map([[agent, held]])).get(agent) : undefined;
}
