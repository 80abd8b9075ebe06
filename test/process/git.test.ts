import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  writeFileSync,
  appendFileSync,
  utimesSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commitPatch } from '../../src/delivery/branch.js';
import { git, gitBytes, ignoringSubmodules } from '../../src/process/git.js';
import { patchFiles } from '../../src/process/patch-files.js';
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
    await git(wt, 'diff', '--name-only', '--no-ext-diff', '-z', base);
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

describe('the host environment', () => {
  it('no GIT_* variable of ours reaches git: another repository, index, config or exec path is never used', async () => {
    const t = tempDir('school-git-env-');
    cleanup = t.cleanup;
    const repo = initRepo(join(t.path, 'repo'), { 'a.txt': 'a\n' });
    const other = initRepo(join(t.path, 'other'), { 'o.txt': 'o\n' });
    const wt = join(t.path, 'wt');
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    await git(repo, 'worktree', 'add', '--detach', '--quiet', wt, base);
    const marker = join(t.path, 'env-config-ran');
    writeFileSync(join(wt, '.gitattributes'), '* filter=evil\n');
    appendFileSync(join(wt, 'a.txt'), 'changed\n');
    const set: Record<string, string> = {
      GIT_DIR: join(other, '.git'),
      GIT_WORK_TREE: other,
      GIT_INDEX_FILE: join(t.path, 'foreign-index'),
      GIT_OBJECT_DIRECTORY: join(other, '.git', 'objects'),
      GIT_CONFIG_PARAMETERS: `'filter.evil.clean'='touch ${marker}; cat' 'filter.evil.required'='true'`,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.fsmonitor',
      GIT_CONFIG_VALUE_0: `touch ${marker}-fsmonitor; false`,
      GIT_EXEC_PATH: join(t.path, 'no-such-exec-path'),
      GIT_EXTERNAL_DIFF: `touch ${marker}-external`,
      GIT_SSH_COMMAND: `touch ${marker}-ssh`,
    };
    const saved = Object.fromEntries(Object.keys(set).map((k) => [k, process.env[k]]));
    Object.assign(process.env, set);
    try {
      await git(wt, 'add', '--all', '--intent-to-add');
      const patch = (await gitBytes(['diff', '--binary', '--no-ext-diff', base], { cwd: wt })).toString();
      expect(patch).toContain('+changed');
      expect(patch).not.toContain('o.txt');
      expect(await git(wt, 'status', '--porcelain=v1')).toContain('a.txt');
      await git(wt, 'checkout', '--quiet', '--force', '--detach', base);
      await git(wt, 'clean', '-ffdxq');
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    expect(readdirSync(t.path).filter((n) => n.startsWith('env-config-ran'))).toEqual([]);
    expect(existsSync(join(t.path, 'foreign-index'))).toBe(false);
    expect(existsSync(join(wt, 'a.txt'))).toBe(true);
  });
});

/**
 * A repository the student made inside its worktree (`vendor/.git`), whose own config names a
 * filter its attributes select, with a tracked file left stat-dirty: a host git that entered it (a
 * child `git status` for a gitlink) would run that filter. The wrapper alone must never enter it.
 */
function nestedRepo(wt: string, marker: string): void {
  const dir = join(wt, 'vendor');
  mkdirSync(dir);
  const g = (...a: string[]) =>
    spawnSync('git', ['-c', 'user.name=s', '-c', 'user.email=s@s', ...a], { cwd: dir });
  g('init', '-q');
  writeFileSync(join(dir, 'lib.txt'), 'lib\n');
  g('add', 'lib.txt');
  g('commit', '-q', '-m', 'lib');
  g('config', 'filter.nested.clean', `touch ${marker}; cat`);
  g('config', 'core.fsmonitor', `touch ${marker}-fsmonitor; false`);
  writeFileSync(join(dir, '.gitattributes'), '* filter=nested\n');
  const later = new Date(Date.now() + 5_000);
  utimesSync(join(dir, 'lib.txt'), later, later);
}

describe('nested repositories and gitlinks', () => {
  it('no command of a collection, a reset or a delivery enters a nested repository, even made a gitlink', async () => {
    const t = tempDir('school-git-nested-');
    cleanup = t.cleanup;
    const repo = initRepo(join(t.path, 'repo'), { 'a.txt': 'a\n' });
    const wt = join(t.path, 'wt');
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    await git(repo, 'worktree', 'add', '--detach', '--quiet', wt, base);
    const marker = join(t.path, 'nested-filter-ran');
    nestedRepo(wt, marker);
    // Even a `.gitmodules` asking for the submodule's dirtiness (`ignore = none`) is not obeyed.
    writeFileSync(
      join(wt, '.gitmodules'),
      '[submodule "vendor"]\n\tpath = vendor\n\turl = ./vendor\n\tignore = none\n',
    );
    // `add --all` of a directory holding a `.git` makes a gitlink: the case git would recurse into.
    await git(wt, 'add', '--all', '--intent-to-add');
    expect(await git(wt, 'ls-files', '-s', 'vendor')).toMatch(/^160000 /);
    await gitBytes(['diff', '--binary', '--no-color', '--no-ext-diff', base], { cwd: wt });
    await git(wt, 'diff', '--name-only', '--no-ext-diff', '-z', base);
    await git(wt, 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored');
    await git(wt, 'status');
    await git(wt, 'diff-files');
    await git(wt, 'diff-index', base);
    await git(wt, 'checkout', '--quiet', '--force', '--detach', base);
    await git(wt, 'reset', '--quiet', '--hard', base);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(`${marker}-fsmonitor`)).toBe(false);
  });

  it('refuses a caller asking a work-tree diff to look into submodules', () => {
    expect(() => ignoringSubmodules(['diff', '--ignore-submodules=none', 'HEAD'])).toThrow(/refused/);
    expect(ignoringSubmodules(['diff', '--cached', '--ignore-submodules=none', 'HEAD'])).toContain(
      '--ignore-submodules=none',
    );
    expect(ignoringSubmodules(['-c', 'x=y', 'status', '-z'])).toEqual([
      '-c',
      'x=y',
      'status',
      '--ignore-submodules=all',
      '-z',
    ]);
  });

  it('a patch that adds a gitlink is found by git and refused by delivery', async () => {
    const t = tempDir('school-git-link-');
    cleanup = t.cleanup;
    const repo = initRepo(join(t.path, 'repo'), { 'a.txt': 'a\n' });
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const sha = 'a'.repeat(40);
    const patch =
      `diff --git a/vendor b/vendor\nnew file mode 160000\nindex 0000000..${sha.slice(0, 7)}\n--- /dev/null\n+++ b/vendor\n@@ -0,0 +1 @@\n+Subproject commit ${sha}\n` +
      `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n`;
    const gitlinks = async (p: string) => {
      const r = await patchFiles(repo, base, p);
      return r.ok ? r.files.filter((f) => f.gitlink).map((f) => f.path) : r.output;
    };
    expect(await gitlinks(patch)).toEqual(['vendor']);
    const honest = `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n`;
    expect(await gitlinks(honest)).toEqual([]);
    const input = {
      repoPath: repo,
      baseSha: base,
      message: 'm',
      author: { name: 'School', email: 'school@example.com' },
      date: '2026-01-01T00:00:00Z',
    };
    await expect(commitPatch({ ...input, diff: patch })).rejects.toThrow(/gitlink/);
    expect(await commitPatch({ ...input, diff: honest })).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe('temporary files', () => {
  it('leaves no school-git-* directory in the temp directory', () => {
    const t = tempDir('school-tmp-probe-');
    cleanup = t.cleanup;
    const repo = initRepo(join(t.path, 'repo'), { 'a.txt': 'a\n' });
    const tmp = join(t.path, 'tmp');
    mkdirSync(tmp);
    const script = `import { git } from ${JSON.stringify(resolve(__dirname, '../../src/process/git.ts'))};
      for (let i = 0; i < 3; i++) await git(${JSON.stringify(repo)}, 'status', '--porcelain');
      await git(${JSON.stringify(repo)}, 'log', '-1');`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: resolve(__dirname, '../..'),
      env: { ...process.env, TMPDIR: tmp },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('school-git-'))).toEqual([]);
  });
});
