import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureRevisionBase } from '../../src/crew/run/revision.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';

/**
 * A revision starts from its pull request's head. A shallow checkout (a crew job's on GitHub Actions)
 * fetches exactly that commit, without a token; when it cannot, the crew is aborted with a reason
 * that says what to do.
 */
const tmp = tempDir('school-revision-base-');
afterAll(() => tmp.cleanup());

describe('the revision head in a shallow checkout', () => {
  it('is fetched when missing; a commit origin does not have aborts with what to do', async () => {
    const root = tmp.path;
    const { bare, seed } = initBareRemote(root, { 'README.md': '# project\n' });
    // Someone pushed to the delivered branch: a commit the shallow checkout of main lacks.
    git(seed, 'checkout', '-q', '-b', 'school/issue-1');
    writeFileSync(join(seed, 'theirs.txt'), 'theirs\n');
    git(seed, 'add', 'theirs.txt');
    git(seed, 'commit', '-q', '-m', 'theirs');
    git(seed, 'push', '-q', bare, 'school/issue-1');
    const head = git(seed, 'rev-parse', 'HEAD');
    const shallow = join(root, 'shallow');
    git(root, 'clone', '-q', '--depth=1', '--branch', 'main', `file://${bare}`, shallow);
    expect(() => git(shallow, 'cat-file', '-e', `${head}^{commit}`)).toThrow();

    expect(await ensureRevisionBase(shallow, head)).toBeUndefined();
    git(shallow, 'cat-file', '-e', `${head}^{commit}`);

    const why = await ensureRevisionBase(shallow, 'f'.repeat(40));
    expect(why).toContain('could not be fetched from origin');
    expect(why).toContain('fetch-depth: 0');
    expect(await ensureRevisionBase(shallow, 'not-a-sha')).toContain('is not a commit id');
  });
});
