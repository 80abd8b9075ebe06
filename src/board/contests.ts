import type { LedgerState } from '../grading/ledger.js';

/**
 * Contests on the board (docs/dispatch.md, "Contests"): the latest decided, newest first, each with
 * its issue, the winner (or none) and the judges' reason. Plain text: each renderer escapes it.
 */
export interface ContestLine {
  issue: number;
  contestId: string;
  winner?: { crewId: string; agent: string };
  why: string;
  losers: number;
  decidedAt?: string;
}

/** How many decided contests the board lists. */
export const CONTESTS_SHOWN = 10;

export function contestLines(ledger: LedgerState | undefined): ContestLine[] {
  return Object.values(ledger?.contests?.decided ?? {})
    .map((d) => ({
      issue: d.issueNumber,
      contestId: d.contestId,
      ...(d.winner ? { winner: { crewId: d.winner.crewId, agent: d.winner.agent } } : {}),
      why: d.why.replace(/\s+/g, ' ').slice(0, 300),
      losers: d.losers.length,
      decidedAt: d.decidedAt,
    }))
    .sort((a, b) => (b.decidedAt ?? '').localeCompare(a.decidedAt ?? '') || b.issue - a.issue)
    .slice(0, CONTESTS_SHOWN);
}

/** One contest as a line: `#12 won by careful (c12-…): <why>; 1 loser`. */
export function contestLine(c: ContestLine): string {
  const who = c.winner ? `won by ${c.winner.agent} (${c.winner.crewId})` : 'no winner';
  return `#${c.issue} ${who}: ${c.why}; ${c.losers} not chosen`;
}
