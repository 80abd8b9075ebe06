import * as core from '@actions/core';
import type { Logger } from '../log.js';
import type { SummaryBlock } from '../schemas/summary.js';
import { writeSummary } from './runtime.js';

/** Writes a summary given as blocks (src/schemas/summary.ts). */
export async function writeBlocks(blocks: readonly SummaryBlock[], logger?: Logger): Promise<void> {
  await writeSummary((s: typeof core.summary) => {
    for (const b of blocks) {
      if ('heading' in b) s.addHeading(b.heading, b.level ?? 2);
      else if ('raw' in b) s.addRaw(b.raw, true);
      else if ('list' in b) s.addList(b.list);
      else s.addTable([b.table.header.map((data) => ({ data, header: true })), ...b.table.rows]);
    }
  }, logger);
}
