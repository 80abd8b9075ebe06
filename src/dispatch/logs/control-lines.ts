import { existsSync } from 'node:fs';
import { readControl, type ControlEntry } from './control-log.js';
import { boundText } from '../../security/bound.js';
import type { StateLayout } from '../../state/layout.js';

/**
 * Who stopped or steered which crew, when, and what came of it (control.jsonl, ./control-log.ts;
 * docs/crews.md, "Steering and stopping a crew"), newest first: the one reading the board
 * (src/board/view.ts) and the status comment (src/feedback/refresh.ts) show. Read like the alerts:
 * beside the folded sources, never throwing (an unreadable log shows nothing).
 */
export interface ControlLine {
  at: string;
  issue: number;
  verb: 'stop' | 'steer';
  /** `@login` on GitHub, `login (locally)` from the school's machine. */
  by: string;
  crewId?: string;
  /** The steer's words or the stop's reason, cut for the board. */
  text: string;
  /** `requested`, `delivered to turn N`, `not delivered: …`, `refused: …`, `pending`. */
  status: string;
}

/** At most this many commands are shown. */
export const CONTROLS_SHOWN = 20;
const TEXT_SHOWN = 200;

/** The newest commands, at most `shown` (the board's CONTROLS_SHOWN; the status comment takes all). */
export function controlLines(layout: StateLayout, shown = CONTROLS_SHOWN): ControlLine[] {
  try {
    if (!existsSync(layout.file('control'))) return [];
    return Object.values(readControl(layout).entries)
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
      .slice(0, shown)
      .map(lineOf);
  } catch {
    return [];
  }
}

function lineOf(e: ControlEntry): ControlLine {
  const status = e.refused
    ? `refused: ${e.refused}`
    : e.verb === 'stop'
      ? 'requested'
      : e.delivered
        ? `delivered to turn ${e.delivered.turn}`
        : e.undelivered
          ? `not delivered: ${e.undelivered}`
          : 'pending';
  return {
    at: e.at,
    issue: e.issueNumber,
    verb: e.verb,
    by: e.by.source === 'local' ? `${e.by.login} (locally)` : `@${e.by.login}`,
    ...(e.crewId ? { crewId: e.crewId } : {}),
    text: boundText(e.text, TEXT_SHOWN),
    status,
  };
}

/** One command in one line: "2026-…Z #12 stop by @ann (crew c12-…): "wrong approach" — requested". */
export function controlLine(c: ControlLine): string {
  const crew = c.crewId ? ` (crew ${c.crewId})` : '';
  const text = c.text ? `: "${c.text.replace(/\s+/g, ' ')}"` : '';
  return `${c.at} #${c.issue} ${c.verb} by ${c.by}${crew}${text} — ${c.status}`;
}
