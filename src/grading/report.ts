import type { DrainResult } from './drain.js';
import type { LeaderboardRow } from './ledger.js';
import type { JobState } from './queue.js';
import type { OutboxCounts } from '../outbox/outbox.js';
import { bound } from '../security/markdown.js';

/**
 * Tables shared by the job summary and the CLI: the leaderboard, this drain's verdicts with their
 * reasons, and the dead letters. Rows are plain strings, one line each; the callers format them
 * (a job summary quotes every cell as text: src/github/summary-blocks.ts). A reason or an error
 * carries what a test printed or a reviewer wrote, several lines of it at times.
 */
const line = (text: string, max: number) => bound(text.replace(/\s+/g, ' ').trim(), max);

export type Table = string[][];

export function leaderboardTable(rows: readonly LeaderboardRow[]): Table {
  return [
    ['#', 'agent', 'EMA', 'graded', 'accepted'],
    ...rows.map((r) => [String(r.rank), r.agent, r.ema.toFixed(3), String(r.count), String(r.accepted)]),
  ];
}

export function verdictTable(result: DrainResult): Table {
  return [
    ['issue', 'crew', 'agent', 'result', 'judge', 'reason'],
    ...result.verdicts.map((v) => [
      `#${v.issueNumber}`,
      v.crewId,
      v.agent,
      v.accepted ? `accepted (${v.score.toFixed(2)})` : 'rejected',
      v.decidedBy,
      line(`${v.code}: ${v.reasons.join('; ')}`, 300),
    ]),
  ];
}

export function deadLetterTable(jobs: readonly JobState[]): Table {
  return [
    ['key', 'attempts', 'last error', 'previous failure'],
    ...jobs.map((j) => [
      j.job.jobKey,
      String(j.attempts),
      line(j.lastError ?? '', 300),
      line(j.previousFailure ?? '', 300),
    ]),
  ];
}

export function countsLine(r: DrainResult & OutboxCounts): string {
  return (
    `accepted ${r.accepted}, rejected ${r.rejected}, failed ${r.failed}, dead-lettered ${r.deadLettered}, ` +
    `outbox delivered ${r.outboxDelivered}, outbox pending ${r.outboxPending} ` +
    `(snapshot ${r.snapshot} job(s), ${r.workers} worker(s))`
  );
}

/** Plain-text table for a terminal. */
export function renderText(table: Table): string {
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => (row[c] ?? '').length)));
  return (
    table
      .map((row) =>
        row
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}
