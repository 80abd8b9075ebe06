import { SESSION_STORES_COMPACTED } from '../../checkpoint/compact.js';
import { bytes, fileRows, type CheckpointReport } from '../../checkpoint/summary.js';
import type { SummaryBlock } from '../../schemas/summary.js';

/**
 * What checkpoint-state reports of a restore or a save, as pure functions of the report: the
 * step's outputs (names and numbers only, never state content or issue text, docs/architecture.md)
 * and its job summary as blocks.
 */
export function checkpointOutputs(report: CheckpointReport): Record<string, string> {
  return {
    source: report.sources.join(','),
    generation: String(report.generation),
    files: String(report.files.length),
  };
}

/** The job summary of a restore or a save, as blocks; `board` is appended below it. */
export function checkpointSummary(report: CheckpointReport, board?: string): SummaryBlock[] {
  const redacted = Object.entries(report.redacted);
  const compacted = Object.entries(report.compacted);
  const notes = [...report.warnings.map((w) => `⚠ ${w}`), ...report.notes];
  return [
    { heading: `checkpoint-state: ${report.mode}${report.dryRun ? ' (dry run)' : ''}`, level: 3 },
    {
      table: {
        header: [report.mode === 'save' ? 'Saved to' : 'Source', 'Generation', 'Files', 'Size'],
        rows: [
          [
            report.sources.join(', ') || 'none',
            String(report.generation),
            String(report.files.length),
            bytes(report.files.reduce((n, f) => n + f.size, 0)),
          ],
        ],
      },
    },
    { table: { header: ['File', 'Size'], rows: fileRows(report.files) } },
    ...(redacted.length
      ? [
          { heading: 'Redacted', level: 4 } as const,
          {
            table: {
              header: ['File', 'Records or texts changed'],
              rows: redacted.map(([p, n]) => [p, String(n)]),
            },
          },
        ]
      : []),
    ...(compacted.length
      ? [
          { heading: 'Compacted', level: 4 } as const,
          {
            table: {
              header: ['Log', 'Folded into snapshot', 'Dropped past window'],
              rows: compacted.map(([p, x]) => [
                p === SESSION_STORES_COMPACTED ? `${p} (no revision can resume them)` : p,
                String(x.folded),
                String(x.dropped),
              ]),
            },
          },
        ]
      : []),
    ...(notes.length ? [{ list: notes }] : []),
    ...(board ? [{ raw: board }] : []),
  ];
}
