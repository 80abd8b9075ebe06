import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commitPatch, pushBranch, updateRef } from '../../src/delivery/branch.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { gitOut, newFilePatch } from './helpers.js';

/**
 * The fast-forward rule of revisions (docs/delivery.md, "Revisions"): a delivered branch moves when
 * its head is an ancestor of the new commit, or (as before) over an older delivery commit; never over
 * a commit someone pushed that the new commit does not build on. Real git, a bare repository as origin.
 */
const tmp = tempDir('school-revision-branch-');
afterAll(() => tmp.cleanup());

const author = { name: 'School Bot', email: 'bot@school.test' };
const BRANCH = 'school/issue-1';

function world(name: string) {
  const root = join(tmp.path, name);
  const { bare } = initBareRemote(root, { 'README.md': '# project\n' });
  const work = join(root, 'work');
  git(root, 'clone', '-q', bare, work);
  const person = join(root, 'person');
  git(root, 'clone', '-q', bare, person);
  git(person, 'config', 'user.name', 'A Person');
  git(person, 'config', 'user.email', 'person@example.invalid');
  const base = git(work, 'rev-parse', 'HEAD');
  const remoteHead = () => gitOut(bare, 'rev-parse', `refs/heads/${BRANCH}`).out;
  /** Someone pushes a commit on top of the branch as origin has it. */
  const personPushes = (file: string) => {
    git(person, 'fetch', '-q', 'origin');
    git(person, 'checkout', '-q', '-B', BRANCH, `origin/${BRANCH}`);
    writeFileSync(join(person, file), `${file}\n`);
    git(person, 'add', file);
    git(person, 'commit', '-q', '-m', `person: ${file}`);
    git(person, 'push', '-q', 'origin', `HEAD:refs/heads/${BRANCH}`);
    return git(person, 'rev-parse', 'HEAD');
  };
  const deliver = async (baseSha: string, file: string, date: string, crew = file) => {
    // The crew's commit is made in the delivering checkout, which has fetched what it starts from.
    git(work, 'fetch', '-q', 'origin', `+refs/heads/*:refs/remotes/origin/*`);
    const sha = await commitPatch({
      repoPath: work,
      baseSha,
      diff: newFilePatch(file, `${file}\n`),
      message: `deliver ${file}\n\nSchool-Crew: ${crew}\n`,
      author,
      date,
    });
    return { sha, pushed: await pushBranch({ repoPath: work, branch: BRANCH, sha, date }) };
  };
  return { bare, work, base, remoteHead, personPushes, deliver };
}

describe('delivering a revision on the same branch', () => {
  it('builds on a commit someone pushed (a fast-forward), and never overwrites one pushed while the revision ran', async () => {
    const w = world('foreign');
    const d = await w.deliver(w.base, 'a.txt', '2026-03-01T12:00:00Z');
    expect(d.pushed).toBe(true);
    // Someone pushes a fix on the delivered branch; the revision starts from their commit.
    const theirs = w.personPushes('theirs.txt');
    const r = await w.deliver(theirs, 'b.txt', '2026-03-01T12:10:00Z');
    expect(r.pushed).toBe(true);
    expect(w.remoteHead()).toBe(r.sha);
    expect(gitOut(w.bare, 'rev-parse', `${r.sha}^`).out).toBe(theirs);
    // The same crew again: the same commit, nothing moves.
    expect((await w.deliver(theirs, 'b.txt', '2026-03-01T12:10:00Z')).sha).toBe(r.sha);
    // The next revision starts from the head, but someone pushes while it runs: their commit stays.
    const later = w.personPushes('later.txt');
    const r2 = await w.deliver(r.sha, 'c.txt', '2026-03-01T12:20:00Z');
    expect(r2.pushed).toBe(false);
    expect(w.remoteHead()).toBe(later);
  });

  it('still replaces an older delivery commit (a later repair), and a local branch follows the same rule', async () => {
    const w = world('replace');
    const first = await w.deliver(w.base, 'a.txt', '2026-03-01T12:00:00Z');
    const repair = await w.deliver(w.base, 'a2.txt', '2026-03-01T13:00:00Z');
    expect(repair.pushed).toBe(true);
    expect(w.remoteHead()).toBe(repair.sha);
    // An older crew retried does not move it back.
    expect((await w.deliver(w.base, 'a.txt', '2026-03-01T12:00:00Z')).pushed).toBe(false);
    expect(w.remoteHead()).toBe(repair.sha);
    expect(first.sha).not.toBe(repair.sha);

    // Local branch delivery: a fast-forward over a foreign commit, never over one it does not build on.
    const ref = 'refs/heads/local-delivery';
    git(w.work, 'update-ref', ref, w.base);
    const foreign = git(w.work, 'commit-tree', `${w.base}^{tree}`, '-p', w.base, '-m', 'someone');
    git(w.work, 'update-ref', ref, foreign);
    const onTop = await commitPatch({
      repoPath: w.work,
      baseSha: foreign,
      diff: newFilePatch('d.txt', 'd\n'),
      message: 'School-Crew: x\n',
      author,
      date: '2026-03-01T14:00:00Z',
    });
    expect(await updateRef(w.work, ref, onTop, '2026-03-01T14:00:00Z')).toBe(true);
    expect(await updateRef(w.work, ref, first.sha, '2026-03-01T12:00:00Z')).toBe(false);
    expect(git(w.work, 'rev-parse', ref)).toBe(onTop);
  });
});
