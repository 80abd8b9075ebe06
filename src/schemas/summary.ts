/**
 * A job summary as data: the core's `xSummary(result)` functions return these blocks, pure and
 * testable; `writeBlocks` (src/github/summary-blocks.ts) is the one place that hands them to the
 * runner.
 */
export type SummaryBlock =
  | { heading: string; level?: 1 | 2 | 3 | 4 }
  | { raw: string }
  | { list: string[] }
  | { table: { header: string[]; rows: string[][] } };
