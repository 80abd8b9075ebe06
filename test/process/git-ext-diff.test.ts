import { appendFileSync, chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, gitBytes, noExternalDiff } from '../../src/process/git.js';
import { initRepo, tempDir } from '../support/tmp.js';

/**
 * Issue 34 (e): the wrapper blanks `diff.external` (`-c diff.external=`), and git then fails any
 * patch-producing `git diff` that does not itself say `--no-ext-diff` ("cannot run"). The wrapper now
 * adds `--no-ext-diff --no-textconv` to every diff, log and show: a caller that forgets them gets a
 * patch, and an external diff or textconv a student named in the repository's config still never runs.
 */
let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

describe('git diff, log and show through the wrapper', () => {
  it('produce patches without --no-ext-diff from the caller, running nothing the config names', async () => {
    const t = tempDir('school-git-extdiff-');
    cleanup = t.cleanup;
    const repo = initRepo(join(t.path, 'repo'), { 'a.txt': 'a\n' });
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const markers = join(t.path, 'markers');
    mkdirSync(markers);
    const script = (what: string) => {
      const p = join(t.path, `${what}.sh`);
      writeFileSync(p, `#!/bin/sh\ntouch "${markers}/${what}-$$"\ncat\n`);
      chmodSync(p, 0o755);
      return p;
    };
    appendFileSync(
      join(repo, '.git', 'config'),
      `[diff]\n\texternal = ${script('external')}\n[diff "evil"]\n\ttextconv = ${script('textconv')}\n`,
    );
    writeFileSync(join(repo, '.gitattributes'), '*.txt diff=evil\n');
    appendFileSync(join(repo, 'a.txt'), 'changed\n');

    // The honest calls, as a caller that forgets the flags writes them.
    const patch = (await gitBytes(['diff', '--binary', base], { cwd: repo })).toString();
    expect(patch).toContain('+changed');
    expect(patch).toMatch(/^diff --git a\/a\.txt b\/a\.txt/m);
    // A path after `--` is a path, not an option: the flags go before it.
    expect(await git(repo, 'diff', base, '--', 'a.txt')).toContain('+changed');
    await git(repo, 'add', 'a.txt', '.gitattributes');
    await git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'change');
    expect(await git(repo, 'show', 'HEAD')).toContain('+changed');
    expect(await git(repo, 'log', '-p', '-1')).toContain('+changed');

    expect(readdirSync(markers)).toEqual([]);
  });

  it('adds the flags to diff, log and show only, once, and refuses a caller asking for the program', () => {
    expect(noExternalDiff(['diff', '--binary', 'abc'])).toEqual([
      'diff',
      '--no-ext-diff',
      '--no-textconv',
      '--binary',
      'abc',
    ]);
    expect(noExternalDiff(['-C', '/x', 'show', 'HEAD'])).toEqual([
      '-C',
      '/x',
      'show',
      '--no-ext-diff',
      '--no-textconv',
      'HEAD',
    ]);
    expect(noExternalDiff(['diff', '--no-ext-diff', 'abc'])).toEqual([
      'diff',
      '--no-textconv',
      '--no-ext-diff',
      'abc',
    ]);
    expect(noExternalDiff(['status', '--porcelain'])).toEqual(['status', '--porcelain']);
    expect(noExternalDiff(['diff', 'HEAD', '--', '--ext-diff'])).toEqual([
      'diff',
      '--no-ext-diff',
      '--no-textconv',
      'HEAD',
      '--',
      '--ext-diff',
    ]);
    expect(() => noExternalDiff(['diff', '--ext-diff'])).toThrow(/--ext-diff runs a program/);
    expect(() => noExternalDiff(['log', '--textconv'])).toThrow(/--textconv runs a program/);
  });
});
