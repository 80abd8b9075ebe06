import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { BranchSource } from '../../src/checkpoint/branch-source.js';
import { restoreCheckpoint } from '../../src/checkpoint/restore.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { StateLayout } from '../../src/state/layout.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { writeGradingState } from './helpers.js';

/**
 * A save of a state directory in which nothing was appended since the checkpoint it last matched
 * (restored from, or saved as) writes nothing: no fetch, no commit, no push. Anything else — a new
 * event, local events merged in by the restore, a branch another writer moved — is a full save.
 */
const tmp = tempDir('school-ckpt-same-');
afterAll(() => tmp.cleanup());

const head = (bare: string) => git(bare, 'rev-parse', 'refs/heads/school-state');
const save = (stateDir: string, bare: string) =>
  saveCheckpoint({ stateDir, sources: [new BranchSource({ remote: bare })], compactAfterDays: 14 });
const job = (n: number) => ({
  issueNumber: n,
  crewId: `crew-${n}`,
  agent: 'student',
  domain: 'general',
  difficulty: 2,
  fences: [],
  bookbag: `bookbags/crew-${n}`,
});

describe('saving an unchanged state', () => {
  it('writes nothing after a save or a restore, and saves in full once an event is appended', async () => {
    const { bare } = initBareRemote(join(tmp.path, 'a'));
    const stateDir = join(tmp.path, 'a', 'state');
    await writeGradingState(stateDir);
    const first = await save(stateDir, bare);
    expect(first.unchanged).toBe(false);
    expect(Object.keys(first.timings)).toEqual(
      expect.arrayContaining(['read', 'scrub', 'fetch', 'merge', 'compact', 'seal', 'write', 'push']),
    );
    const commit = head(bare);

    const again = await save(stateDir, bare);
    expect(again).toMatchObject({ unchanged: true, generation: first.generation, saved: ['branch'] });
    expect(Object.keys(again.timings)).toEqual(['read', 'check']);
    expect(head(bare)).toBe(commit);

    // A fresh directory restored from the branch is that checkpoint too.
    const other = join(tmp.path, 'a', 'other');
    await restoreCheckpoint({ stateDir: other, sources: [new BranchSource({ remote: bare })] });
    expect((await save(other, bare)).unchanged).toBe(true);
    expect(head(bare)).toBe(commit);

    await enqueueGradingJob(new StateLayout(other), job(900));
    const changed = await save(other, bare);
    expect(changed).toMatchObject({ unchanged: false, generation: first.generation + 1 });
    expect(head(bare)).not.toBe(commit);

    // The first directory is unchanged, but the branch moved on: a full save (a merge, not a skip).
    const behind = await save(stateDir, bare);
    expect(behind).toMatchObject({ unchanged: false, generation: first.generation + 2 });
    expect(behind.snapshot.files.get('grading.jsonl')!.toString()).toContain('grade:900:crew-900');
  });

  it('a restore that merged local events in is not "unchanged": the next save carries them', async () => {
    const { bare } = initBareRemote(join(tmp.path, 'b'));
    const a = join(tmp.path, 'b', 'a');
    await writeGradingState(a);
    await save(a, bare);
    const b = join(tmp.path, 'b', 'b');
    await enqueueGradingJob(new StateLayout(b), job(901));
    const r = await restoreCheckpoint({ stateDir: b, sources: [new BranchSource({ remote: bare })] });
    expect(r.mergedLocal).toBe(true);
    const next = await save(b, bare);
    expect(next.unchanged).toBe(false);
    expect(next.snapshot.files.get('grading.jsonl')!.toString()).toContain('grade:901:crew-901');
  });
});
