import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defaultTemplateDir,
  examplePaths,
  ExampleRepoError,
  prepareExampleRepo,
} from '../../src/examples/prepare.js';
import { git, tempDir } from '../support/tmp.js';

const tmp = tempDir('school-example-prepare-');
afterAll(() => tmp.cleanup());

function verify(cwd: string): number | null {
  return spawnSync(process.execPath, ['--test'], { cwd, encoding: 'utf8' }).status;
}

describe('prepareExampleRepo', () => {
  it('makes a real repository with one commit whose verification passes at the base', () => {
    const repo = prepareExampleRepo(join(tmp.path, 'a'));
    expect(repo.created).toBe(true);
    expect(git(repo.path, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(git(repo.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(git(repo.path, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(git(repo.path, 'rev-parse', 'HEAD')).toBe(repo.head);
    const files = git(repo.path, 'ls-files').split('\n');
    expect(files).toEqual(expect.arrayContaining(['package.json', 'src/math.mjs', 'test/math.test.mjs']));
    expect(verify(repo.path)).toBe(0);
    // Worktrees can be made from it: what the crews do.
    git(repo.path, 'worktree', 'add', '-q', '--detach', join(tmp.path, 'a-wt'), repo.head);
    expect(verify(join(tmp.path, 'a-wt'))).toBe(0);
  });

  it('is idempotent and reproducible: same template, same base sha everywhere', () => {
    const first = prepareExampleRepo(join(tmp.path, 'b'));
    const again = prepareExampleRepo(join(tmp.path, 'b'));
    expect(again).toEqual({ ...first, created: false });
    const elsewhere = prepareExampleRepo(join(tmp.path, 'c'));
    expect(elsewhere.head).toBe(first.head);
  });

  it('fills an existing empty directory', () => {
    mkdirSync(join(tmp.path, 'empty'));
    expect(prepareExampleRepo(join(tmp.path, 'empty')).created).toBe(true);
  });

  it('refuses, without touching it, a non-empty directory that is not a repository', () => {
    const dir = join(tmp.path, 'occupied');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    expect(() => prepareExampleRepo(dir)).toThrow(ExampleRepoError);
    expect(() => prepareExampleRepo(dir)).toThrow(/not a git repository\. Remove it/);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it('refuses a dirty repository and one whose HEAD differs from the template', () => {
    const dirty = prepareExampleRepo(join(tmp.path, 'dirty')).path;
    writeFileSync(join(dirty, 'src', 'math.mjs'), 'export const broken = true;\n');
    expect(() => prepareExampleRepo(dirty)).toThrow(/uncommitted changes/);

    const moved = prepareExampleRepo(join(tmp.path, 'moved')).path;
    writeFileSync(join(moved, 'extra.txt'), 'x\n');
    git(moved, 'add', 'extra.txt');
    git(moved, 'commit', '-q', '-m', 'extra');
    expect(() => prepareExampleRepo(moved)).toThrow(/HEAD does not match/);
  });

  it('names a missing template', () => {
    expect(() => prepareExampleRepo(join(tmp.path, 'x'), { templateDir: join(tmp.path, 'nope') })).toThrow(
      /template .*nope does not exist/,
    );
  });

  it('resolves the packaged example by absolute paths', () => {
    expect(readFileSync(join(defaultTemplateDir(), 'package.json'), 'utf8')).toContain('"type": "module"');
    const paths = examplePaths();
    for (const p of Object.values(paths)) expect(existsSync(p) && isAbsolute(p), p).toBe(true);
    expect(paths.student).toBe(resolve('examples/student.mjs'));
  });

  it('three processes preparing the same directory at once all end with the same repository', async () => {
    const target = join(tmp.path, 'race');
    const script = join(tmp.path, 'race.ts');
    writeFileSync(
      script,
      `import { prepareExampleRepo } from ${JSON.stringify(join(process.cwd(), 'src/examples/prepare.ts'))};\n` +
        `process.stdout.write(JSON.stringify(prepareExampleRepo(${JSON.stringify(target)})));\n`,
    );
    const run = () =>
      new Promise<{ head: string; created: boolean }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
      });
    const results = await Promise.all([run(), run(), run()]);
    expect(new Set(results.map((r) => r.head)).size).toBe(1);
    expect(results.filter((r) => r.created).length).toBeGreaterThanOrEqual(1);
    expect(git(target, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(verify(target)).toBe(0);
  });
});
