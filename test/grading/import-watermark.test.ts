import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importBookbags } from '../../src/grading/import.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { writeBookbag } from './helpers.js';

/**
 * After compaction the grading log remembers a watermark instead of every key: a job folded away
 * is known by its time, not its key. Importing a bookbag that finished before the watermark would
 * queue (and grade) a crew a second time, so the import refuses it; a newer one is imported.
 */
const tmp = tempDir('school-import-wm-');
afterAll(() => tmp.cleanup());

function compactedGradingLog(layout: StateLayout, watermark: string): void {
  mkdirSync(layout.root, { recursive: true });
  const snapshot = {
    key: '$snapshot',
    type: '$snapshot',
    at: watermark,
    data: { keys: [], state: { jobs: {} }, events: 40, watermark },
  };
  writeFileSync(layout.file('grading'), JSON.stringify(snapshot) + '\n');
}

describe('importing bookbags below the grading watermark', () => {
  it.each([
    ['2026-02-01T00:00:00.000Z', 0],
    ['2025-12-01T00:00:00.000Z', 1],
  ])('watermark %s: %i job(s) enqueued for a crew that finished 2026-01-01', async (watermark, enqueued) => {
    const root = join(tmp.path, watermark.slice(0, 7));
    const downloaded = new StateLayout(join(root, 'download'));
    writeBookbag(downloaded, { crewId: 'crew-old', issueNumber: 7, diff: '+x\n' });
    const layout = new StateLayout(join(root, 'state'));
    compactedGradingLog(layout, watermark);
    const log = memoryLogger();
    const r = await importBookbags(layout, join(downloaded.root, 'bookbags'), log);
    expect(r.enqueued).toBe(enqueued);
    expect(Object.keys(new GradingQueue(layout).state().jobs)).toHaveLength(enqueued);
    if (enqueued === 0) {
      expect(r.skipped).toEqual([
        { crewId: 'crew-old', reason: expect.stringContaining("before the grading log's watermark") },
      ]);
    }
  });
});
