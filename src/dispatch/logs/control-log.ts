import { randomBytes } from 'node:crypto';
import { sanitizeText } from '../../security/sanitize.js';
import { redactText } from '../../security/redact.js';
import { EventLog, event, type StateEvent } from '../../state/event-log.js';
import { foldLog, registerFold, type LogFold } from '../../state/fold.js';
import type { StateLayout } from '../../state/layout.js';
import type { CrewRecord, CrewRegistry } from './registry.js';

/**
 * `control.jsonl`: what people told a running crew (docs/crews.md, "Steering and stopping a crew").
 * A trusted person's `/school stop` or `/school steer <text>` (src/feedback/scan.ts), or the local
 * `school crew stop|steer` (src/cli/commands/crew.ts), is recorded here against the issue's active
 * crew; the crew's runner reads it (src/crew/run/control.ts): a stop ends the crew `cancelled` with the
 * reason "stopped by @login", a steer is handed to the crew's next turn as the person's words, and
 * each steer ends recorded as delivered (which turn) or not delivered (why). A command the school
 * will not act on is recorded as refused, with the reason. The board and the status comment show
 * the lot.
 *
 * Keys: `stop:<issue>:<ref>`, `steer:<issue>:<ref>` (`<ref>` the comment's id, or a fresh nonce for a
 * local command), `steer-delivered:<steer key>`, `steer-undelivered:<steer key>`,
 * `control-refused:<ref>`.
 */

/** Who asked, and where: a GitHub comment (its id) or the local command line. */
export interface ControlAuthor {
  login: string;
  source: 'github' | 'local';
  /** The comment's id (`comment:<id>`) on GitHub; absent locally. */
  ref?: string;
  /** The issue or pull request number the comment is on. */
  on?: number;
}

export interface StopRequested extends ControlAuthor {
  issueNumber: number;
  crewId: string;
  /** Sanitized and redacted; may be empty. */
  reason: string;
}

export interface Steered extends ControlAuthor {
  issueNumber: number;
  crewId: string;
  /** Sanitized and redacted: it becomes part of a prompt, quoted as the person's words. */
  text: string;
}

export interface SteerDelivered {
  steer: string;
  crewId: string;
  /** The turn it was handed to: 0 the first, n the n-th correction turn. */
  turn: number;
}

export interface SteerUndelivered {
  steer: string;
  crewId: string;
  reason: string;
}

export interface ControlRefused extends ControlAuthor {
  issueNumber: number;
  verb: 'stop' | 'steer';
  reason: string;
}

export type ControlEvent =
  | StateEvent<'crew.stop-requested', StopRequested>
  | StateEvent<'crew.steered', Steered>
  | StateEvent<'crew.steer-delivered', SteerDelivered>
  | StateEvent<'crew.steer-undelivered', SteerUndelivered>
  | StateEvent<'control.refused', ControlRefused>;

/** One command as the board and the runner read it. */
export interface ControlEntry {
  key: string;
  verb: 'stop' | 'steer';
  at: string;
  issueNumber: number;
  /** The crew it was for (absent on a refused command). */
  crewId?: string;
  by: ControlAuthor;
  /** The steer's text or the stop's reason. */
  text: string;
  /** A steer handed to a turn. */
  delivered?: { turn: number; at: string };
  /** A steer that reached no turn, or a refused command: why. */
  undelivered?: string;
  refused?: string;
}

export interface ControlState {
  entries: Record<string, ControlEntry>;
}

/** At most this many entries per issue survive a compaction (the newest). */
const KEEP_PER_ISSUE = 20;
/** What a steer or a stop reason may hold: a message, not a document. */
export const MAX_CONTROL_TEXT = 4_000;

export const controlFold: LogFold<ControlState, ControlEvent> = registerFold<ControlState, ControlEvent>({
  file: 'control',
  empty: () => ({ entries: {} }),
  apply(state, e) {
    switch (e.type) {
      case 'crew.stop-requested':
      case 'crew.steered': {
        const { issueNumber, crewId, login, source, ref, on } = e.data;
        const stop = e.type === 'crew.stop-requested';
        state.entries[e.key] = {
          key: e.key,
          verb: stop ? 'stop' : 'steer',
          at: e.at,
          issueNumber,
          crewId,
          by: { login, source, ...(ref ? { ref } : {}), ...(on ? { on } : {}) },
          text: stop ? (e.data as StopRequested).reason : (e.data as Steered).text,
        };
        break;
      }
      case 'crew.steer-delivered': {
        const s = state.entries[e.data.steer];
        if (s && !s.delivered && !s.undelivered) s.delivered = { turn: e.data.turn, at: e.at };
        break;
      }
      case 'crew.steer-undelivered': {
        const s = state.entries[e.data.steer];
        if (s && !s.delivered && !s.undelivered) s.undelivered = e.data.reason;
        break;
      }
      case 'control.refused': {
        const { issueNumber, verb, reason, login, source, ref, on } = e.data;
        state.entries[e.key] = {
          key: e.key,
          verb,
          at: e.at,
          issueNumber,
          by: { login, source, ...(ref ? { ref } : {}), ...(on ? { on } : {}) },
          text: '',
          refused: reason,
        };
        break;
      }
    }
    return state;
  },
  prune(state) {
    const byIssue = new Map<number, ControlEntry[]>();
    for (const c of Object.values(state.entries)) {
      const list = byIssue.get(c.issueNumber) ?? [];
      list.push(c);
      byIssue.set(c.issueNumber, list);
    }
    const entries: Record<string, ControlEntry> = {};
    for (const list of byIssue.values())
      for (const c of list.sort((a, b) => (a.at < b.at ? -1 : 1)).slice(-KEEP_PER_ISSUE)) entries[c.key] = c;
    return { entries };
  },
});

export function controlLog(layout: StateLayout): EventLog<ControlEvent> {
  return new EventLog<ControlEvent>(layout.file('control'));
}

/** Reads and folds `control.jsonl` (empty when absent). */
export function readControl(layout: StateLayout): ControlState {
  return foldLog(controlFold, controlLog(layout).read());
}

/** What a person wrote, made safe to keep and to quote in a prompt: sanitized, redacted, bounded. */
export function cleanControlText(text: string): string {
  return redactText(sanitizeText(text, MAX_CONTROL_TEXT).text).trim();
}

/**
 * The crew a command for `issue` is for: the issue's crew that is planned or running (the newest,
 * should there be more, as in a contest's first). Undefined when none is.
 */
export function activeCrewOf(registry: CrewRegistry, issue: number): CrewRecord | undefined {
  return Object.values(registry.crews)
    .filter((c) => c.issueNumber === issue && c.status !== 'finished')
    .sort((a, b) => (a.plannedAt < b.plannedAt ? 1 : -1))[0];
}

/** Every crew of `issue` that is planned or running (a contest has several). */
export function activeCrewsOf(registry: CrewRegistry, issue: number): CrewRecord[] {
  return Object.values(registry.crews).filter((c) => c.issueNumber === issue && c.status !== 'finished');
}

/** A command as parsed from a `/school` instruction: stop (with an optional reason) or steer. */
export type ControlCommand = { verb: 'stop'; reason: string } | { verb: 'steer'; text: string };

/**
 * `stop [reason]` or `steer <text>` (the words after `/school`), or undefined for any other
 * instruction (which stays revision feedback). `steer` without text is a steer of nothing: its text
 * is empty and the caller refuses it.
 */
export function controlCommand(instruction: string): ControlCommand | undefined {
  const m = /^(stop|steer)(?:\s+([\s\S]*))?$/i.exec(instruction.trim());
  if (!m) return undefined;
  const rest = (m[2] ?? '').trim();
  return m[1]!.toLowerCase() === 'stop' ? { verb: 'stop', reason: rest } : { verb: 'steer', text: rest };
}

export function controlRef(): string {
  return `local-${randomBytes(6).toString('hex')}`;
}

/**
 * The events of one command for `issue`, by `by`: a stop or steer for each active crew of the issue,
 * or a refusal when none is (or a steer has no text). Idempotent by the command's ref: a comment read
 * twice records once.
 */
export function controlEvents(
  registry: CrewRegistry,
  issue: number,
  cmd: ControlCommand,
  by: ControlAuthor,
  now: Date,
): { events: ControlEvent[]; refused?: string; crews: string[] } {
  const ref = by.ref ?? controlRef();
  const author = { ...by, ref };
  const refuse = (reason: string) => ({
    events: [
      event(
        'control.refused',
        `control-refused:${ref}`,
        { issueNumber: issue, verb: cmd.verb, reason, ...author },
        now,
      ),
    ] as ControlEvent[],
    refused: reason,
    crews: [],
  });
  if (cmd.verb === 'steer' && !cleanControlText(cmd.text))
    return refuse('`/school steer` without a message: nothing to hand to the crew');
  const crews = activeCrewsOf(registry, issue);
  if (!crews.length) return refuse(`no crew is planned or running for issue #${issue}`);
  const events: ControlEvent[] = crews.map((c) =>
    cmd.verb === 'stop'
      ? event(
          'crew.stop-requested',
          `stop:${issue}:${ref}:${c.crewId}`,
          { issueNumber: issue, crewId: c.crewId, reason: cleanControlText(cmd.reason), ...author },
          now,
        )
      : event(
          'crew.steered',
          `steer:${issue}:${ref}:${c.crewId}`,
          { issueNumber: issue, crewId: c.crewId, text: cleanControlText(cmd.text), ...author },
          now,
        ),
  );
  return { events, crews: crews.map((c) => c.crewId) };
}

/** The stop recorded for `crewId`, if any (the first). */
export function stopFor(state: ControlState, crewId: string): ControlEntry | undefined {
  return Object.values(state.entries)
    .filter((e) => e.verb === 'stop' && e.crewId === crewId && !e.refused)
    .sort((a, b) => (a.at < b.at ? -1 : 1))[0];
}

/** Steers for `crewId` neither delivered nor given up on, oldest first. */
export function pendingSteers(state: ControlState, crewId: string): ControlEntry[] {
  return Object.values(state.entries)
    .filter((e) => e.verb === 'steer' && e.crewId === crewId && !e.refused && !e.delivered && !e.undelivered)
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.key < b.key ? -1 : 1));
}

/** How a stop reads in the crew's end: "stopped by @login: reason". */
export function stoppedBy(e: ControlEntry): string {
  const who = e.by.source === 'local' ? `${e.by.login} (locally)` : `@${e.by.login}`;
  return `stopped by ${who}${e.text ? `: ${e.text}` : ''}`;
}
