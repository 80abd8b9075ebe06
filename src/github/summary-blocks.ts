import * as core from '@actions/core';
import type { Logger } from '../log.js';
import type { SummaryBlock } from '../schemas/summary.js';
import { htmlText } from '../security/markdown.js';
import { writeSummary } from './runtime.js';

/**
 * Writes a summary given as blocks (src/schemas/summary.ts). `core.summary` writes headings, list
 * items and table cells into HTML elements as given, and their text carries what students, reviewers
 * and tests wrote (a crew's reason, a judge's output tail): each is quoted as text here, the one
 * place every summary passes (`htmlText` keeps an entity a producer escaped already, so nothing is
 * escaped twice). A `raw` block is the producer's own markup and stays as it is.
 */
export async function writeBlocks(blocks: readonly SummaryBlock[], logger?: Logger): Promise<void> {
  const text = (s: string) => htmlText(s, Infinity);
  await writeSummary((s: typeof core.summary) => {
    for (const b of blocks) {
      if ('heading' in b) s.addHeading(text(b.heading), b.level ?? 2);
      else if ('raw' in b) s.addRaw(b.raw, true);
      else if ('list' in b) s.addList(b.list.map(text));
      else
        s.addTable([
          b.table.header.map((data) => ({ data: text(data), header: true })),
          ...b.table.rows.map((row) => row.map(text)),
        ]);
    }
  }, logger);
}
