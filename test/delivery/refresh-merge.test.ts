import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import { createDeliverer } from '../../src/delivery/deliver.js';
import { DeliveryRefusedError } from '../../src/delivery/errors.js';
import { cleanRefresh, isCleanMerge, makeRefreshBase } from '../../src/delivery/refresh-base.js';
import { StateLayout } from '../../src/state/layout.js';
import { git, initRepo, tempDir } from '../support/tmp.js';
import { bookbag, gitOut, newFilePatch } from './helpers.js';

/**
 * Delivering a clean refresh that needed no change (docs/delivery.md, "Refresh"): an empty change on
 * the school's clean merge of the base is delivered as that merge — parents [head, base], the
 * merge's tree — while an empty change anywhere else (a plain commit, a merge that left conflict
 * markers) is still refused as "changed nothing". Whether the base is a clean merge is asked of git.
 */
const tmp = tempDir('school-refresh-merge-');
afterAll(() => tmp.cleanup());

const VERDICT = { decidedBy: 'rubric', code: 'refresh_merged', score: 1, reasons: [] };
const AUTHOR = { name: 'School Bot', email: 'bot@school.test' };

function setup(name: string) {
  const root = join(tmp.path, name);
  const work = join(root, 'work');
  initRepo(work, { 'README.md': '# project\n', 'a.txt': 'one\n' });
  const main = git(work, 'rev-parse', '--abbrev-ref', 'HEAD');
  const start = git(work, 'rev-parse', 'HEAD');
  const commit = (file: string, text: string) => {
    writeFileSync(join(work, file), text);
    git(work, 'add', file);
    git(work, 'commit', '-q', '-m', `change ${file}`);
    return git(work, 'rev-parse', 'HEAD');
  };
  // The delivered head: a branch off the start; the base moves on the main line.
  git(work, 'checkout', '-q', '-b', 'school/issue-1');
  const head = commit('a.txt', 'one\nfrom the pull request\n');
  git(work, 'checkout', '-q', main);
  const config = configSchema.parse({
    repository: 'o/r',
    repoPath: work,
    stateDir: join(root, 'state'),
    delivery: { author: AUTHOR },
  });
  const layout = new StateLayout(config.stateDir);
  const deliverer = createDeliverer({ config, layout, mode: 'branch' });
  const deliver = (n: number, baseSha: string, diff: string) => {
    bookbag(layout, { crewId: `c${n}-0000000${n}`, issue: n, baseSha, diff });
    return deliverer.deliver({ crewId: `c${n}-0000000${n}`, issueNumber: n, verdict: VERDICT });
  };
  return { work, main, start, head, commit, deliver };
}

describe('a clean refresh needing no change is delivered as the merge', () => {
  it('an empty change on a clean merge: a commit [head, base] with the merge’s tree', async () => {
    const s = setup('clean');
    const base = s.commit('b.txt', 'from the base\n');
    const merge = await makeRefreshBase(s.work, { base: s.main, baseSha: base, head: s.head }, AUTHOR);
    expect(merge.conflicts).toEqual([]);
    expect(await isCleanMerge(s.work, merge.sha)).toBe(true);

    const r = await s.deliver(1, merge.sha, '');
    expect(gitOut(s.work, 'rev-parse', `${r.sha}^1`, `${r.sha}^2`).out.split('\n')).toEqual([s.head, base]);
    expect(gitOut(s.work, 'rev-parse', `${r.sha}^{tree}`).out).toBe(
      gitOut(s.work, 'rev-parse', `${merge.sha}^{tree}`).out,
    );
    expect(gitOut(s.work, 'show', `${r.sha}:b.txt`).out).toBe('from the base');
    expect(gitOut(s.work, 'show', `${r.sha}:a.txt`).out).toBe('one\nfrom the pull request');
    // The same crew delivered again makes the same commit.
    expect((await s.deliver(1, merge.sha, '')).sha).toBe(r.sha);
  });

  it('an empty change on a merge with conflict markers, or on a plain commit, is refused', async () => {
    const s = setup('conflict');
    const base = s.commit('a.txt', 'one\nfrom the base\n');
    const merge = await makeRefreshBase(s.work, { base: s.main, baseSha: base, head: s.head }, AUTHOR);
    expect(merge.conflicts).toEqual(['a.txt']);
    expect(await isCleanMerge(s.work, merge.sha)).toBe(false);
    await expect(s.deliver(2, merge.sha, '')).rejects.toBeInstanceOf(DeliveryRefusedError);
    await expect(s.deliver(3, s.head, '')).rejects.toThrow(/changed nothing/);
    expect(await isCleanMerge(s.work, s.head)).toBe(false);
    // A change on the conflicted merge (its resolution) is delivered as before, as the merge.
    const resolved = await s.deliver(4, merge.sha, newFilePatch('c.txt', 'resolved\n'));
    expect(gitOut(s.work, 'rev-parse', `${resolved.sha}^1`, `${resolved.sha}^2`).out.split('\n')).toEqual([
      s.head,
      base,
    ]);
  });

  it('only a round whose every feedback is base drift, with no conflict, is a clean refresh', () => {
    const refresh = { base: 'main', baseSha: 'b'.repeat(40), head: 'a'.repeat(40), conflicts: [] };
    const drift = `drift:7:${'b'.repeat(40)}:${'c'.repeat(40)}`;
    expect(cleanRefresh({ feedback: [drift], refresh })).toBe(true);
    expect(cleanRefresh({ feedback: [drift, 'review:12'], refresh })).toBe(false);
    expect(cleanRefresh({ feedback: [drift], refresh: { ...refresh, conflicts: ['a.txt'] } })).toBe(false);
    expect(cleanRefresh({ feedback: ['review:12'] })).toBe(false);
    expect(cleanRefresh(undefined)).toBe(false);
  });
});
