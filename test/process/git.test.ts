import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, gitBytes } from '../../src/process/git.js';
import { initRepo, tempDir } from '../support/tmp.js';

/**
 * The hardened git wrapper on its own, without the crew's restore: every place a student can write
 * (hooks, common config, config.worktree, info/attributes, .gitattributes) names a program, and no
 * command the toolkit runs in a linked worktree starts it.
 */
let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function plant(common: string, admin: string, worktree: string, markers: string): void {
  const script = (what: string) => {
    const p = join(markers, '..', `${what}.sh`);
    writeFileSync(p, `#!/bin/sh\nenv > "${markers}/${what}-$$"\ncat\n`);
    chmodSync(p, 0o755);
    return p;
  };
  mkdirSync(join(common, 'hooks'), { recursive: true });
  for (const h of [
    'post-checkout',
    'reference-transaction',
    'post-index-change',
    'pre-commit',
    'post-commit',
    'pre-push',
    'pre-auto-gc',
  ]) {
    writeFileSync(join(common, 'hooks', h), `#!/bin/sh\ntouch "${markers}/hook-${h}"\n`);
    chmodSync(join(common, 'hooks', h), 0o755);
  }
  appendFileSync(
    join(common, 'config'),
    `[core]\n\tfsmonitor = ${script('fsmonitor')}\n\tpager = ${script('pager')}\n\thooksPath = ${join(common, 'hooks')}\n` +
      `[extensions]\n\tworktreeConfig = true\n` +
      `[filter "evil"]\n\tclean = ${script('clean')}\n\tsmudge = ${script('smudge')}\n\tprocess = ${script('process')}\n\trequired = true\n` +
      `[diff "evil"]\n\ttextconv = ${script('textconv')}\n\tcommand = ${script('diffcmd')}\n` +
      `[diff]\n\texternal = ${script('external')}\n`,
  );
  writeFileSync(join(admin, 'config.worktree'), `[core]\n\tfsmonitor = ${script('fsmonitor-wt')}\n`);
  mkdirSync(join(common, 'info'), { recursive: true });
  writeFileSync(join(common, 'info', 'attributes'), '* filter=evil diff=evil\n');
  writeFileSync(join(worktree, '.gitattributes'), '* filter=evil diff=evil\n');
}

describe('hardened git', () => {
  it('runs no hook, fsmonitor, filter, textconv, external diff or pager a student planted', async () => {
    const t = tempDir('school-git-');
    cleanup = t.cleanup;
    const repo = initRepo(join(t.path, 'repo'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const wt = join(t.path, 'wt');
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    await git(repo, 'worktree', 'add', '--detach', '--quiet', wt, base);
    const markers = join(t.path, 'markers');
    mkdirSync(markers);
    plant(join(repo, '.git'), join(repo, '.git', 'worktrees', 'wt'), wt, markers);
    appendFileSync(join(wt, 'a.txt'), 'changed\n');
    writeFileSync(join(wt, 'new.txt'), 'new\n');

    // What a crew's collection and teardown, the next crew's checkout and a delivery commit run.
    await git(wt, 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored');
    await git(wt, 'add', '--all', '--intent-to-add');
    const patch = await gitBytes(['diff', '--binary', '--no-color', '--no-ext-diff', '--no-textconv', base], {
      cwd: wt,
    });
    expect(patch.toString()).toContain('+changed');
    await git(wt, 'diff', '--name-only', '-z', base);
    await git(wt, 'add', '-A');
    await git(wt, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'x');
    await git(wt, 'checkout', '--quiet', '--force', '--detach', base);
    await git(wt, 'reset', '--quiet', '--hard', base);
    await git(wt, 'clean', '-ffdxq');
    await git(repo, 'worktree', 'add', '--detach', '--quiet', join(t.path, 'wt2'), base);
    await git(repo, 'log', '--oneline', '-1');

    expect(readdirSync(markers)).toEqual([]);
    expect(existsSync(join(t.path, 'wt2', 'a.txt'))).toBe(true);
  });

  it('gives git no token from our environment and no credential prompt', async () => {
    const t = tempDir('school-git-');
    cleanup = t.cleanup;
    const repo = initRepo(join(t.path, 'repo'), { 'a.txt': 'a\n' });
    process.env.GITHUB_TOKEN = 'ghs_canary_git_env';
    try {
      // `git var` prints GIT_ASKPASS-like settings; `config --list` shows what git was given.
      const listed = await git(repo, 'config', '--list', '--show-origin');
      expect(listed).not.toContain('ghs_canary_git_env');
      expect(listed).toMatch(/command line:.*core\.hookspath=/i);
      expect(listed).toMatch(/credential\.helper=$/m);
      const fetched = await gitBytes(['ls-remote', 'https://127.0.0.1:9/none.git'], { cwd: repo }).catch(
        (e: Error) => e,
      );
      expect(fetched).toBeInstanceOf(Error);
      expect(String(fetched)).not.toMatch(/Username for/);
    } finally {
      delete process.env.GITHUB_TOKEN;
    }
  });
});
