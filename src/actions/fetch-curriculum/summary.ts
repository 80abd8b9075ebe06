import type { FetchResult } from '../../curriculum/fetch.js';
import { headline, SUMMARY_HEADER, summaryRows } from '../../curriculum/summary.js';
import type { SummaryBlock } from '../../schemas/summary.js';

/**
 * What fetch-curriculum reports of its job, as pure functions of the result: the step's outputs
 * (counts, the file's path, how it was fetched) and its job summary as blocks.
 */
export function fetchOutputs(r: FetchResult): Record<string, string> {
  return {
    count: String(r.count),
    added: String(r.added),
    changed: String(r.changed),
    removed: String(r.removed),
    'curriculum-path': r.path,
    mode: r.mode,
  };
}

/** The curriculum table (at most 200 rows: a summary has a 1 MiB ceiling); `board` below it. */
export function fetchSummary(r: FetchResult, board?: string): SummaryBlock[] {
  return [
    { heading: 'Curriculum', level: 2 },
    { raw: headline(r) },
    ...(r.items.length ? [{ table: { header: [...SUMMARY_HEADER], rows: summaryRows(r.items) } }] : []),
    ...(r.items.length > 200 ? [{ raw: `… and ${r.items.length - 200} more.` }] : []),
    ...(board ? [{ raw: board }] : []),
  ];
}
