import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commitPatch } from '../../src/delivery/branch.js';
import { DeliveredTreeError, DeliveryRefusedError } from '../../src/delivery/errors.js';
import { git, initRepo, tempDir } from '../support/tmp.js';
// @ts-expect-error -- a plain ES module (the corpus student), typed by its use here
import { BASE, CHANGED } from '../fixtures/corpus-student.mjs';

/**
 * The delivery commit holds the student's files byte for byte: every post-image blob the collected
 * patch names (`git diff --binary` writes full ids, hashed from the worktree) must be in the tree
 * delivery made. A patch whose text was altered after git wrote it — as the redactor once rewrote
 * `const secret = process.env.X` into `const secret = [REDACTED]` — applies, but is not delivered.
 */

const tmp = tempDir('school-delivered-tree-');
afterAll(() => tmp.cleanup());

function world() {
  const repo = initRepo(join(tmp.path, `repo-${Math.random().toString(36).slice(2)}`), BASE);
  const baseSha = git(repo, 'rev-parse', 'HEAD');
  for (const [path, text] of Object.entries(CHANGED as Record<string, string>))
    writeFileSync(join(repo, path), text);
  git(repo, 'add', '--all', '--intent-to-add');
  const patch = git(repo, 'diff', '--binary', '--no-color', baseSha) + '\n';
  git(repo, 'add', '-A');
  const tree = git(repo, 'write-tree');
  git(repo, 'reset', '-q', '--hard', baseSha);
  git(repo, 'clean', '-qfd');
  const input = {
    repoPath: repo,
    baseSha,
    message: 'deliver\n\nSchool-Crew: c1\n',
    author: { name: 'School', email: 'school@example.com' },
    date: '2026-01-01T00:00:00Z',
  };
  return { repo, patch, tree, input };
}

describe('the delivered tree', () => {
  it('is the student’s worktree: the collected bytes are applied and every blob checked', async () => {
    const w = world();
    const sha = await commitPatch({ ...w.input, diff: Buffer.from(w.patch) });
    expect(git(w.repo, 'rev-parse', `${sha}^{tree}`)).toBe(w.tree);
  });

  it('refuses a patch altered after it was collected, even when it still applies', async () => {
    const w = world();
    const altered = w.patch.replace(
      '+  const secret = process.env.APP_SECRET;',
      '+  const secret = [REDACTED];',
    );
    expect(altered).not.toBe(w.patch);
    const made = commitPatch({ ...w.input, diff: altered });
    await expect(made).rejects.toBeInstanceOf(DeliveredTreeError);
    await expect(made).rejects.toBeInstanceOf(DeliveryRefusedError);
    await expect(made).rejects.toThrow(
      /does not hold the student's change byte for byte: 1 file\(s\) of the patch/,
    );
  });
});
