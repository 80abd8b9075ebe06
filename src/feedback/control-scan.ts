import {
  controlCommand,
  controlEvents,
  controlLog,
  readControl,
  type ControlCommand,
  type ControlEvent,
} from '../dispatch/logs/control-log.js';
import { readCrewState } from '../dispatch/leases/lease.js';
import type { CrewRecord, CrewRegistry } from '../dispatch/logs/registry.js';
import type { Logger } from '../log.js';
import { event } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import type { Author, Comment } from './port.js';

/**
 * `/school stop` and `/school steer <text>` in the feedback scan (src/feedback/scan.ts; docs/crews.md,
 * "Steering and stopping a crew"). They are read where revision feedback is — the comments of a
 * delivered pull request and of its issue — and on the issue of every crew that is planned or
 * running, delivered or not: the issues listing the scan already makes (`since` its cursor) says
 * which of those issues changed, so an issue nobody commented on costs no request. A command counts
 * from a person with write access or more (`untrustedFeedback`, the revision feedback's rule); any
 * other is refused, with the reason. What a command does to the crew is decided where it is
 * recorded (src/feedback/watch.ts, src/dispatch/logs/control-log.ts).
 */

/** An issue whose crew is planned or running: its comments are read for commands. */
export interface RunningIssue {
  issue: number;
  /** When its crew was planned (ISO): a command older than that was not for it. */
  since: string;
}

/** A trusted `/school stop|steer`, to be recorded against the issue's active crew. */
export interface ControlItem {
  issue: number;
  /** The issue or pull request the comment is on. */
  on: number;
  /** `comment:<id>`. */
  id: string;
  author: string;
  command: ControlCommand;
}

/** A `/school stop|steer` the school will not act on, and why. */
export interface ControlRefusal {
  issue: number;
  on: number;
  id: string;
  author: string;
  verb: ControlCommand['verb'];
  reason: string;
}

export interface ControlFound {
  control: ControlItem[];
  refused: ControlRefusal[];
}

/** A minute of slack: the crew's planned time is our clock, the comment's GitHub's. */
const SLACK_MS = 60_000;

/**
 * Reads one `/school` instruction as a command: true when it was a stop or a steer (kept or refused
 * in `found`), false when it is any other instruction (revision feedback, as before).
 */
export async function controlComment(
  found: ControlFound,
  where: { issue: number; on: number },
  c: Pick<Comment, 'id' | 'author'>,
  instruction: string,
  untrusted: (a: Author) => Promise<string | undefined>,
): Promise<boolean> {
  const command = controlCommand(instruction);
  if (!command) return false;
  const id = `comment:${c.id}`;
  const base = { ...where, id, author: c.author.login };
  const why = await untrusted(c.author);
  if (why) found.refused.push({ ...base, verb: command.verb, reason: why });
  else found.control.push({ ...base, command });
  return true;
}

/**
 * The commands on the issue of a running crew that nothing was delivered for yet: its comments
 * since the last read (and since the crew was planned). Any other `/school` instruction there is
 * not read: with nothing delivered there is nothing to revise. `on`: the issue or pull request the
 * comments are on (the issue itself by default; a revision crew's pull request in a crew job,
 * src/feedback/crew-job-control.ts).
 */
export async function runningIssueComments(
  found: ControlFound,
  run: RunningIssue,
  comments: readonly Comment[],
  seenAt: string | undefined,
  schoolCommand: (body: string) => string | undefined,
  untrusted: (a: Author) => Promise<string | undefined>,
  on: number = run.issue,
): Promise<void> {
  const from = new Date(Date.parse(run.since) - SLACK_MS).toISOString();
  for (const c of comments) {
    // Same second as the last read: read again (GitHub's times have whole seconds); a command is
    // recorded once per comment id.
    if (seenAt && c.updatedAt < seenAt) continue;
    if (c.updatedAt < from) continue;
    const instruction = schoolCommand(c.body);
    if (instruction === undefined) continue;
    await controlComment(found, { issue: run.issue, on }, c, instruction, untrusted);
  }
}

/** The issues whose crews are planned or running (delivered or not), each with its crew's planned time. */
export function runningIssues(registry: CrewRegistry): RunningIssue[] {
  const by = new Map<number, string>();
  for (const c of Object.values(registry.crews)) {
    if (c.status === 'finished') continue;
    const was = by.get(c.issueNumber);
    if (was === undefined || c.plannedAt < was) by.set(c.issueNumber, c.plannedAt);
  }
  return [...by].map(([issue, since]) => ({ issue, since }));
}

/**
 * Records what the scan found: each trusted command against the issue's active crews (or refused
 * when none is), each untrusted one refused with the reason. Keyed by the comment: a comment read
 * again records nothing new, and neither does a comment the control log already holds under any
 * key — a crew job that read it first (src/feedback/crew-job-control.ts, imported from its
 * handoff) acted on it; the plan, reading it later when that crew has ended, must not refuse it
 * as "no crew is running". `crews`: only these crews may be stopped or steered (a crew job's own);
 * every active crew of the state by default. Returns the events recorded.
 */
export async function recordControl(
  layout: StateLayout,
  logger: Logger,
  found: ControlFound,
  now: Date,
  crews?: (c: CrewRecord) => boolean,
): Promise<ControlEvent[]> {
  const state = readCrewState(layout).registry;
  const registry: CrewRegistry = crews
    ? { ...state, crews: Object.fromEntries(Object.entries(state.crews).filter(([, c]) => crews(c))) }
    : state;
  const known = new Set(
    Object.values(readControl(layout).entries).flatMap((e) => (e.by.ref ? [e.by.ref] : [])),
  );
  const fresh = <T extends { id: string }>(list: readonly T[]) => list.filter((f) => !known.has(f.id));
  const events: ControlEvent[] = [];
  for (const f of fresh(found.refused)) {
    logger.info(`/school ${f.verb} ${f.id} on #${f.on} (issue #${f.issue}) refused: ${f.reason}`);
    events.push(
      event(
        'control.refused',
        `control-refused:${f.id}`,
        {
          issueNumber: f.issue,
          verb: f.verb,
          reason: f.reason,
          login: f.author,
          source: 'github' as const,
          ref: f.id,
          on: f.on,
        },
        now,
      ),
    );
  }
  for (const f of fresh(found.control)) {
    const by = { login: f.author, source: 'github' as const, ref: f.id, on: f.on };
    const r = controlEvents(registry, f.issue, f.command, by, now);
    logger.info(
      r.refused
        ? `/school ${f.command.verb} ${f.id} by ${f.author} on #${f.on} not acted on: ${r.refused}`
        : `/school ${f.command.verb} ${f.id} by ${f.author} on #${f.on}: recorded for crew ${r.crews.join(', ')}`,
    );
    events.push(...r.events);
  }
  return events.length ? await controlLog(layout).append(events) : [];
}
