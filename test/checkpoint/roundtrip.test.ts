import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BranchSource, resolveRemote } from '../../src/checkpoint/branch-source.js';
import { restoreCheckpoint } from '../../src/checkpoint/restore.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { EventLog } from '../../src/state/event-log.js';
import { foldLog } from '../../src/state/fold.js';
import { queueFold, type QueueEvent, type QueueState } from '../../src/grading/queue.js';
import { appendJsonl } from '../../src/state/jsonl.js';
import { memoryLogger } from '../../src/log.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { cloneWorkspace, writeGradingState } from './helpers.js';

const tmp = tempDir('school-ckpt-rt-');
afterAll(() => tmp.cleanup());

async function branchOf(workspace: string) {
  return new BranchSource({ remote: await resolveRemote(workspace), branch: 'school-state', backoffMs: 5 });
}

describe('state branch round trip (seed 000 §3.2 fresh-checkout guarantee)', () => {
  it('pending and dead-letter jobs written in one clone survive save → new clone → restore, byte for byte', async () => {
    const { bare } = initBareRemote(join(tmp.path, 'rt'));
    const a = cloneWorkspace(bare, join(tmp.path, 'rt', 'a'));
    const planted = await writeGradingState(a.stateDir);
    appendJsonl(join(a.stateDir, 'events.jsonl'), [
      { at: new Date().toISOString(), type: 'run.started', actor: 'test' },
    ]);

    const saved = await saveCheckpoint({
      stateDir: a.stateDir,
      sources: [await branchOf(a.workspace)],
      compactAfterDays: 14,
    });
    expect(saved.generation).toBe(1);
    expect(saved.saved).toEqual(['branch']);

    // The branch is an orphan: one root commit that shares no history with main.
    const head = git(bare, 'rev-parse', 'refs/heads/school-state');
    expect(git(bare, 'rev-list', '--count', 'refs/heads/school-state')).toBe('1');
    expect(() => git(bare, 'merge-base', 'refs/heads/main', 'refs/heads/school-state')).toThrow();
    expect(git(bare, 'ls-tree', '-r', '--name-only', head).split('\n')).toEqual(
      expect.arrayContaining([
        'manifest.json',
        'grading.jsonl',
        'events.jsonl',
        'bookbags/crew-102-a1/bookbag.json',
      ]),
    );

    const b = cloneWorkspace(bare, join(tmp.path, 'rt', 'b'));
    const log = memoryLogger();
    const restored = await restoreCheckpoint({
      stateDir: b.stateDir,
      sources: [await branchOf(b.workspace)],
      logger: log,
    });
    expect(restored).toMatchObject({ source: 'branch', generation: 1, rejected: [], mergedLocal: false });

    // Every line of the queue is identical: identity, retry and dead-letter fields untouched.
    const before = readFileSync(join(a.stateDir, 'grading.jsonl'), 'utf8');
    const after = readFileSync(join(b.stateDir, 'grading.jsonl'), 'utf8');
    expect(after).toBe(before);
    const events = new EventLog(join(b.stateDir, 'grading.jsonl')).read().events;
    const keys = events.map((e) => e.key);
    expect(keys).toContain(planted.pending);
    expect(keys).toContain(`dead:${planted.deadLetter}:0`);
    const dead = events.find((e) => e.type === 'job.dead_lettered')!;
    expect(dead.data).toEqual({
      jobKey: planted.deadLetter,
      attempts: 3,
      lastError: 'reviewer exited 1 (try 3)',
    });
    expect(readFileSync(join(b.stateDir, 'bookbags/crew-101-a1/report.md'), 'utf8')).toContain('#101');
    expect(JSON.parse(readFileSync(join(b.stateDir, 'manifest.json'), 'utf8')).generation).toBe(1);

    // The next save builds on the restored generation, as a child of the first commit. (Something
    // must have changed: a save of an unchanged state writes nothing, see unchanged.test.ts.)
    appendJsonl(join(b.stateDir, 'events.jsonl'), [
      { at: new Date().toISOString(), type: 'run.started', actor: 'test-b' },
    ]);
    const again = await saveCheckpoint({
      stateDir: b.stateDir,
      sources: [await branchOf(b.workspace)],
      compactAfterDays: 14,
    });
    expect(again.generation).toBe(2);
    expect(git(bare, 'rev-parse', 'refs/heads/school-state^')).toBe(head);
  });

  it('with the real grading fold, compaction keeps pending and dead-letter jobs and every key across a fresh clone', async () => {
    const { bare } = initBareRemote(join(tmp.path, 'old'));
    const a = cloneWorkspace(bare, join(tmp.path, 'old', 'a'));
    const planted = await writeGradingState(a.stateDir, new Date(Date.now() - 40 * 86_400_000));
    const full = foldLog(
      queueFold,
      new EventLog<QueueEvent, QueueState>(join(a.stateDir, 'grading.jsonl')).read(),
    );
    const saved = await saveCheckpoint({
      stateDir: a.stateDir,
      sources: [await branchOf(a.workspace)],
      compactAfterDays: 14,
    });
    expect(saved.snapshot.manifest.compacted['grading.jsonl']?.folded).toBe(12);
    // The graded crew's old bookbag is history; the live jobs keep theirs.
    expect(
      [...saved.snapshot.files.keys()].filter((p) => p.startsWith('bookbags/')).map((p) => p.split('/')[1]),
    ).toEqual(expect.not.arrayContaining(['crew-103-a2']));
    expect(saved.snapshot.files.has('bookbags/crew-102-a1/bookbag.json')).toBe(true);

    const b = cloneWorkspace(bare, join(tmp.path, 'old', 'b'));
    await restoreCheckpoint({ stateDir: b.stateDir, sources: [await branchOf(b.workspace)] });
    const log = new EventLog<QueueEvent, QueueState>(join(b.stateDir, 'grading.jsonl'));
    const contents = log.read();
    expect(contents.events).toEqual([]);
    const state = foldLog(queueFold, contents);
    expect(state.jobs[planted.pending]).toEqual(full.jobs[planted.pending]);
    expect(state.jobs[planted.deadLetter]).toEqual(full.jobs[planted.deadLetter]);
    expect(state.jobs[planted.deadLetter]).toMatchObject({
      status: 'dead_letter',
      attempts: 3,
      job: { issueNumber: 102, crewId: 'crew-102-a1' },
    });
    expect(state.jobs[planted.graded]).toBeUndefined();
    // Dedup memory is a watermark, not every key: the graded job's events are all before it, so a
    // replay of any of them (a stale copy) is a no-op without its key being stored.
    expect(contents.watermark).not.toBe('');
    expect(contents.keys.has(planted.graded)).toBe(false);
    const history = new EventLog<QueueEvent, QueueState>(join(a.stateDir, 'grading.jsonl')).read().events;
    expect(history.length).toBeGreaterThan(10);
    expect(await log.append(history)).toEqual([]);
    expect(foldLog(queueFold, log.read())).toEqual(state);
  });

  it('restoring when no source holds state starts empty and says so', async () => {
    const { bare } = initBareRemote(join(tmp.path, 'empty'));
    const a = cloneWorkspace(bare, join(tmp.path, 'empty', 'a'));
    const log = memoryLogger();
    const r = await restoreCheckpoint({
      stateDir: a.stateDir,
      sources: [await branchOf(a.workspace)],
      logger: log,
    });
    expect(r).toMatchObject({ source: 'none', generation: 0 });
    expect(log.lines.map((l) => l.message).join('\n')).toMatch(
      /no checkpoint in branch; starting with an empty state/,
    );
  });

  it('restore merges events already in the state directory instead of discarding them', async () => {
    const { bare } = initBareRemote(join(tmp.path, 'merge'));
    const a = cloneWorkspace(bare, join(tmp.path, 'merge', 'a'));
    await writeGradingState(a.stateDir);
    await saveCheckpoint({
      stateDir: a.stateDir,
      sources: [await branchOf(a.workspace)],
      compactAfterDays: 14,
    });
    const b = cloneWorkspace(bare, join(tmp.path, 'merge', 'b'));
    const local = new EventLog(join(b.stateDir, 'grading.jsonl'));
    await local.append([
      {
        key: 'grade:900:crew-900',
        type: 'job.enqueued',
        at: new Date().toISOString(),
        data: { jobKey: 'grade:900:crew-900' },
      },
    ]);
    const r = await restoreCheckpoint({ stateDir: b.stateDir, sources: [await branchOf(b.workspace)] });
    expect(r.mergedLocal).toBe(true);
    const keys = local.read().events.map((e) => e.key);
    expect(keys).toContain('grade:900:crew-900');
    expect(keys).toContain('grade:101:crew-101-a1');
  });
});
