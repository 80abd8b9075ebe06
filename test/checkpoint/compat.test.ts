import { afterAll, describe, expect, it } from 'vitest';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { DirectorySource } from '../../src/checkpoint/directory-source.js';
import { parseLog } from '../../src/checkpoint/logs.js';
import { restoreCheckpoint } from '../../src/checkpoint/restore.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { ledgerFold, type LedgerState, type ScoreEvent } from '../../src/grading/ledger.js';
import { queueFold, type QueueEvent, type QueueState } from '../../src/grading/queue.js';
import { memoryLogger } from '../../src/log.js';
import { EventLog } from '../../src/state/event-log.js';
import { foldLog } from '../../src/state/fold.js';
import { tempDir } from '../support/tmp.js';

/**
 * A checkpoint written before dedup watermarks existed (its snapshots keep every folded key) must
 * restore, fold and save with today's code. The fixture was written by that code: 12 grading jobs
 * over 33 days (one dead letter, one pending), their scores and outbox entries, saved once with
 * compactAfterDays 14 to a directory source; `stale-state/` is the uncompacted state directory it
 * was saved from, i.e. a stale copy of the same history.
 */
const FIXTURE = join(import.meta.dirname, 'fixtures', 'v1');
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const DAY = 86_400_000;
const tmp = tempDir('school-ckpt-compat-');
afterAll(() => tmp.cleanup());

function states(dir: string) {
  const queue = foldLog(queueFold, new EventLog<QueueEvent, QueueState>(join(dir, 'grading.jsonl')).read());
  const ledger = foldLog(ledgerFold, new EventLog<ScoreEvent, LedgerState>(join(dir, 'scores.jsonl')).read());
  return { queue: queueFold.prune(queue, new Date(0)), ledger };
}

function copyFixture(name: string) {
  const root = join(tmp.path, name);
  cpSync(join(FIXTURE, 'checkpoint'), join(root, 'checkpoint'), { recursive: true });
  return { root, source: new DirectorySource(join(root, 'checkpoint')) };
}

describe('a checkpoint written with every folded key (before watermarks)', () => {
  const expected = states(join(FIXTURE, 'stale-state'));

  it('restores and folds to the state of its full history', async () => {
    const { root, source } = copyFixture('plain');
    const r = await restoreCheckpoint({ stateDir: join(root, 'state'), sources: [source] });
    expect(r.generation).toBe(1);
    const got = states(join(root, 'state'));
    expect(got).toEqual(expected);
    expect(got.ledger.agents.ada!.count + got.ledger.agents.bob!.count).toBe(10);
    expect(
      Object.values(got.queue.jobs)
        .map((j) => j.status)
        .sort(),
    ).toEqual(['dead_letter', 'pending']);
  });

  it('merges the stale local copy on restore without applying anything twice', async () => {
    const { root, source } = copyFixture('merge');
    cpSync(join(FIXTURE, 'stale-state'), join(root, 'state'), { recursive: true });
    const r = await restoreCheckpoint({ stateDir: join(root, 'state'), sources: [source] });
    expect(r.mergedLocal).toBe(true);
    expect(states(join(root, 'state'))).toEqual(expected);
  });

  it('is rewritten with a watermark on the next save; stale copies of it are dropped and counted', async () => {
    const { root, source } = copyFixture('upgrade');
    const stateDir = join(root, 'state');
    await restoreCheckpoint({ stateDir, sources: [source] });
    const logger = memoryLogger();
    const saved = await saveCheckpoint({
      stateDir,
      sources: [source],
      compactAfterDays: 14,
      now: new Date(T0 + 60 * DAY),
      logger,
    });
    expect(saved.generation).toBe(2);
    for (const file of ['grading.jsonl', 'scores.jsonl']) {
      const log = parseLog(saved.snapshot.files.get(file)!, file);
      expect(log.snapshot!.data.watermark).toBe(new Date(T0 + 46 * DAY).toISOString());
      expect(log.snapshot!.data.keys).toEqual([]);
    }
    // A later restore over the stale, uncompacted copy of the same history.
    const again = join(root, 'again');
    cpSync(join(FIXTURE, 'stale-state'), again, { recursive: true });
    const log = memoryLogger();
    const r = await restoreCheckpoint({ stateDir: again, sources: [source], logger: log });
    expect(r.generation).toBe(2);
    expect(r.belowWatermark).toBeGreaterThan(30);
    expect(log.lines.map((l) => l.message).join('\n')).toMatch(/older than their log's watermark/);
    expect(states(again)).toEqual(expected);
    // Replaying the old events into the restored log is a no-op.
    const grading = new EventLog<QueueEvent, QueueState>(join(again, 'grading.jsonl'));
    const old = new EventLog<QueueEvent, QueueState>(join(FIXTURE, 'stale-state', 'grading.jsonl')).read();
    expect(await grading.append(old.events)).toEqual([]);
  });
});
