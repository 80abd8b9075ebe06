import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureBaseline, restoreBaseline } from '../../src/crew/checkout/git-guard.js';
import { removeTreeSync } from '../../src/process/remove-tree.js';
import { git, initRepo } from '../support/tmp.js';

/**
 * A slot's admin directory is writable by its crew, and without the sandbox so is the common git
 * directory: a control file the student replaced by a tree deeper than PATH_MAX (rmSync stops there
 * with ENAMETOOLONG) is put back all the same.
 */
let root: string | undefined;
afterEach(() => {
  if (root) removeTreeSync(root);
  root = undefined;
});

/** A 600-level tree of 200-byte names at `path`, made by a process that walks down with chdir. */
function deepTreeAt(path: string): void {
  const script = `const fs=require('fs');fs.mkdirSync(${JSON.stringify(path)});process.chdir(${JSON.stringify(path)});for(let i=0;i<600;i++){fs.mkdirSync('${'d'.repeat(200)}');process.chdir('${'d'.repeat(200)}');fs.writeFileSync('f','x')}`;
  execFileSync(process.execPath, ['-e', script]);
}

describe('the git guard against deep trees in place of control files', () => {
  it("puts back config and removes a slot's config.worktree whatever their depth", async () => {
    root = mkdtempSync(join(tmpdir(), 'school-guard-'));
    const repo = initRepo(join(root, 'repo'));
    git(repo, 'worktree', 'add', '--detach', '-q', join(root, 'slot'), 'HEAD');
    const baseline = await captureBaseline(repo);
    const config = readFileSync(join(repo, '.git', 'config'), 'utf8');
    const admin = join(repo, '.git', 'worktrees', 'slot');
    execFileSync('mv', [join(repo, '.git', 'config'), join(root, 'config.saved')]);
    deepTreeAt(join(repo, '.git', 'config'));
    deepTreeAt(join(admin, 'config.worktree'));

    const changed = await restoreBaseline(baseline);
    expect(changed).toEqual(expect.arrayContaining(['config', 'worktrees/slot/config.worktree']));
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).toBe(config);
    expect(existsSync(join(admin, 'config.worktree'))).toBe(false);
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });
});
