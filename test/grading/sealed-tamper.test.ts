import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runSealedTests } from '../../src/grading/sealed.js';
import type { Bookbag } from '../../src/bookbag/schema.js';
import { git, initRepo, tempDir, worktreeDiff } from '../support/tmp.js';

/**
 * What a patch touches is what git applies, not what a regex reads in its headers: quoted and
 * octal-escaped paths, renames whose `rename to` line disagrees with the header, symlinks out of
 * the checkout, submodules and attributes are all tampering with the sealed run (real git, real
 * processes; the sealed command itself always passes, so only the tampering check can reject).
 */
const tmp = tempDir('school-sealed-tamper-');
afterAll(() => tmp.cleanup());

let repo: string;
let baseSha: string;
const PROTECT = ['package.json', 'test/**'];
const PASS = ['node', '-e', 'process.exit(0)'];

beforeAll(() => {
  repo = initRepo(join(tmp.path, 'repo'), {
    'package.json': '{"scripts":{"test":"node --test"}}\n',
    'src/sum.mjs': 'export const sum = (a, b) => a - b;\n',
    'src/helper.mjs': 'export const one = 1;\n',
    'test/sum.test.mjs': 'ok\n',
    'README.md': '# r\n',
  });
  baseSha = git(repo, 'rev-parse', 'HEAD');
});

/** A diff made the way a crew makes it: edit a worktree, `git diff --binary --cached`. */
const crewDiff = (edit: (dir: string) => void) => worktreeDiff(repo, baseSha, edit);

function sealed(diff: string, protect: readonly string[] = PROTECT) {
  const bookbag = { crewId: 'c-tamper', baseSha } as Bookbag;
  return runSealedTests({ repoPath: repo, argv: PASS, bookbag, diff, timeoutMs: 30_000, protect });
}

function write(dir: string, path: string, text: string): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), text);
}

describe('sealed tests: what a patch touches, by git', () => {
  it('an honest patch still passes (an inside symlink included)', async () => {
    const diff = crewDiff((wt) => {
      write(wt, 'src/sum.mjs', 'export const sum = (a, b) => a + b;\n');
      symlinkSync('sum.mjs', join(wt, 'src/alias.mjs'));
    });
    // The command here always passes, at the base too: a pass, though not the evidence of a fix.
    expect(await sealed(diff)).toMatchObject({ passed: true, code: 'sealed_tests_green_at_base' });
  });

  it('an octal-escaped, quoted path is the path git applies it to', async () => {
    const diff = [
      'diff --git "a/package\\056json" "b/package\\056json"',
      '--- "a/package\\056json"',
      '+++ "b/package\\056json"',
      '@@ -1 +1 @@',
      '-{"scripts":{"test":"node --test"}}',
      '+{"scripts":{"test":"true"}}',
      '',
    ].join('\n');
    const f = await sealed(diff);
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(f.reasons.join(' ')).toContain('package.json');
  });

  it('a rename lands where its `rename to` line says, whatever the header names', async () => {
    const diff = [
      'diff --git a/src/helper.mjs b/src/helper2.mjs',
      'similarity index 100%',
      'rename from src/helper.mjs',
      'rename to test/helper.test.mjs',
      '',
    ].join('\n');
    const f = await sealed(diff);
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(f.reasons.join(' ')).toContain('test/helper.test.mjs');
  });

  it('a symlink leading out of the checkout is tampering (relative and absolute)', async () => {
    const up = crewDiff((wt) => symlinkSync('../../../../etc/passwd', join(wt, 'src/passwd')));
    const f = await sealed(up);
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(f.reasons.join(' ')).toContain('src/passwd -> ../../../../etc/passwd');
    const abs = crewDiff((wt) => symlinkSync('/etc', join(wt, 'etc')));
    const g = await sealed(abs);
    expect(g).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(g.reasons.join(' ')).toContain('etc -> /etc');
  });

  it('a submodule (gitlink) is tampering', async () => {
    const diff = [
      'diff --git a/vendor/lib b/vendor/lib',
      'new file mode 160000',
      'index 0000000..1234567',
      '--- /dev/null',
      '+++ b/vendor/lib',
      '@@ -0,0 +1 @@',
      `+Subproject commit ${'1234567'.padEnd(40, '0')}`,
      '',
    ].join('\n');
    const f = await sealed(diff);
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(f.reasons.join(' ')).toMatch(/gitlink.*vendor\/lib/);
  });

  it('any .gitattributes change is tampering, at any depth', async () => {
    const diff = crewDiff((wt) => {
      write(wt, 'src/sum.mjs', 'export const sum = (a, b) => a + b;\n');
      write(wt, 'src/.gitattributes', '*.mjs filter=evil\n');
    });
    const f = await sealed(diff, []);
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(f.reasons.join(' ')).toContain('src/.gitattributes');
  });

  it('a .gitmodules added or changed is tampering, without a gitlink and under a quoted name', async () => {
    const diff = crewDiff((wt) => {
      write(wt, 'src/sum.mjs', 'export const sum = (a, b) => a + b;\n');
      write(wt, '.gitmodules', '[submodule "x"]\n\tpath = x\n\turl = ../evil\n\tupdate = !sh -c id\n');
    });
    const f = await sealed(diff, []);
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(f.reasons.join(' ')).toMatch(/\.gitmodules \(it names submodules/);
    // The same file as git reads `"b/\056gitmodules"`: still the file git applies it to.
    const quoted = [
      'diff --git "a/\\056gitmodules" "b/\\056gitmodules"',
      'new file mode 100644',
      '--- /dev/null',
      '+++ "b/\\056gitmodules"',
      '@@ -0,0 +1,2 @@',
      '+[submodule "x"]',
      '+\turl = ../evil',
      '',
    ].join('\n');
    const g = await sealed(quoted, []);
    expect(g).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(g.reasons.join(' ')).toContain('.gitmodules');
  });

  it('a patch git refuses is patch_does_not_apply, and no worktree is left behind', async () => {
    const f = await sealed('diff --git a/nope b/nope\n--- a/nope\n+++ b/nope\n@@ -1 +1 @@\n-x\n+y\n');
    expect(f).toMatchObject({ passed: false, code: 'patch_does_not_apply' });
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  });
});
