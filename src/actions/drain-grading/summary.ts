import type { DrainJobResult } from '../../loop/drain-job.js';
import { countsLine, deadLetterTable, verdictTable, type Table } from '../../grading/report.js';
import type { SummaryBlock } from '../../schemas/summary.js';
import { escapeHtml } from '../../security/html.js';
import { plainText } from '../../security/markdown.js';

/**
 * What drain-grading reports of its job, as pure functions of the result: the step's outputs
 * (counts only, never issue text) and its job summary as blocks.
 */
export function drainOutputs(r: DrainJobResult): Record<string, string> {
  const common = { 'dead-letters': String(r.dead.length), pending: String(r.pending) };
  if (r.mode === 'read-only') return common;
  const d = r.drained;
  return {
    accepted: String(d.accepted),
    rejected: String(d.rejected),
    failed: String(d.failed),
    'dead-lettered': String(d.deadLettered),
    'outbox-delivered': String(d.outboxDelivered),
    'outbox-pending': String(d.outboxPending),
    ...(r.mode === 'judge' ? { 'verdicts-digest': r.digest } : {}),
    ...common,
  };
}

const table = (t: Table): SummaryBlock => ({ table: { header: t[0]!, rows: t.slice(1) } });

/** The job summary as blocks; `board` (leaderboard, lanes, pauses) comes from the board's view model. */
export function drainSummary(r: DrainJobResult, board?: string): SummaryBlock[] {
  // A `raw` block is written as it is (src/github/summary-blocks.ts quotes only headings, lists and
  // cells): why grading stopped or no verdicts were read can name a student's path or a reviewer's
  // words, so it is quoted here as text.
  const deadLetters: SummaryBlock[] = [
    { heading: 'Dead letters', level: 3 },
    r.dead.length > 0 ? table(deadLetterTable(r.dead)) : { raw: 'None.\n' },
  ];
  if (r.mode === 'read-only')
    return [
      { heading: 'Grading queue' },
      { raw: `${r.pending} job(s) pending (nothing graded: read-only run)\n\n` },
      ...deadLetters,
    ];
  const d = r.drained;
  const requeued: SummaryBlock[] = r.requeued?.length
    ? [
        { heading: 'Dead letters requeued', level: 3 },
        table([
          ['Job', 'Issue', 'Previous failure'],
          ...r.requeued.map((j) => [
            escapeHtml(j.jobKey),
            `#${j.issueNumber}`,
            escapeHtml(plainText(j.previousFailure, 300)),
          ]),
        ]),
      ]
    : [];
  if (r.mode === 'judge')
    return [
      { heading: 'Judging' },
      ...requeued,
      {
        raw: `${r.verdicts} verdict(s) handed on to the grade job (nothing applied or delivered here): ${countsLine(d)}\n\n`,
      },
      ...(d.fatal ? [{ raw: `**Judging stopped:** ${plainText(d.fatal, 1000)}\n\n` }] : []),
      { heading: 'Verdicts of the judges', level: 3 },
      d.verdicts.length > 0 ? table(verdictTable(d)) : { raw: 'None.\n' },
    ];
  const refused: SummaryBlock[] =
    r.refused && r.refused.length > 0
      ? [
          { heading: 'Verdicts refused (not applied)', level: 3 },
          table([['Job', 'Why'], ...r.refused.map((x) => [escapeHtml(x.jobKey), escapeHtml(x.reason)])]),
        ]
      : [];
  return [
    { heading: 'Grading' },
    { raw: `${countsLine(d)}\n\n` },
    ...(r.missing
      ? [{ raw: `${plainText(r.missing, 1000)}: the pending jobs stay queued for the next cycle.\n\n` }]
      : []),
    ...requeued,
    ...refused,
    ...(d.fatal ? [{ raw: `**Grading stopped:** ${plainText(d.fatal, 1000)}\n\n` }] : []),
    ...(board ? [{ raw: board }] : []),
    { heading: 'Verdicts of this drain', level: 3 },
    d.verdicts.length > 0 ? table(verdictTable(d)) : { raw: 'None.\n' },
    ...deadLetters,
  ];
}
