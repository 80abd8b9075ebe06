import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';
import { CORPUS, corpusTask, runnerSource, taskRepository, type CorpusTask } from '../support/corpus.js';

/**
 * The corpus itself, without the school: each task's repository rebuilt from the committed patches
 * and its test command run directly, as SWE-bench validates a task. The base passes (a red-base task
 * fails there, that is its point); with the fix's tests alone it fails (the tests show the bug);
 * with the fix as well it passes. A task for which this does not hold would grade the school on
 * nothing.
 */

const tmp = tempDir('school-corpus-fixtures-');
afterAll(() => tmp.cleanup(), 300_000);

const PYTHON = '/usr/bin/python3';
const noPytest = spawnSync(PYTHON, ['-m', 'pytest', '--version']).status === 0 ? undefined : 'no pytest';

const tasks = (
  JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8')) as {
    repositories: Array<{ tasks: Array<{ id: string }> }>;
  }
).repositories.flatMap((r) => r.tasks.map((t) => corpusTask(t.id)));

function run(repo: string, task: CorpusTask): { code: number | null; out: string } {
  const r = spawnSync(task.testCommand[0]!, task.testCommand.slice(1), {
    cwd: repo,
    encoding: 'utf8',
    timeout: 300_000,
    env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: tmp.path, PYTHONDONTWRITEBYTECODE: '1' },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}`.slice(-4000) };
}

function apply(repo: string, patch: string, name: string, reverse = false): void {
  const file = join(repo, '..', `${name}.patch`);
  writeFileSync(file, patch);
  const args = ['apply', '--whitespace=nowarn', ...(reverse ? ['--reverse'] : []), file];
  const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

describe('the corpus: each task shows its bug and its fix', () => {
  it('has at least three repositories, in two ecosystems, with two JavaScript test runners', () => {
    const runners = new Set(tasks.map((t) => t.runner));
    expect(new Set(tasks.map((t) => t.repository)).size).toBeGreaterThanOrEqual(3);
    expect([...runners].sort()).toEqual(['mocha', 'pytest', 'tape']);
    for (const t of tasks) {
      expect(t.fix).toMatch(/^[0-9a-f]{40}$/);
      expect(t.base).toMatch(/^[0-9a-f]{40}$/);
    }
  });

  for (const task of tasks) {
    it.skipIf(task.runner === 'pytest' && !!noPytest)(
      `${task.id}: ${task.redBase ? 'red at the base' : 'green at the base'}, red with the fix's tests, green with the fix`,
      () => {
        const repo = join(tmp.path, task.id, 'repo');
        taskRepository(repo, task);
        if (task.runner !== 'pytest')
          cpSync(
            join(runnerSource(join(tmp.path, 'runners'), task.runner), 'node_modules'),
            join(repo, 'node_modules'),
            {
              recursive: true,
              verbatimSymlinks: true,
            },
          );
        const base = run(repo, task);
        if (task.redBase) expect(base.code, base.out).not.toBe(0);
        else expect(base.code, base.out).toBe(0);
        apply(repo, task.test, 'test');
        const tests = run(repo, task);
        expect(tests.code, tests.out).not.toBe(0);
        if (task.half) {
          apply(repo, task.half, 'half');
          const half = run(repo, task);
          expect(half.code, half.out).not.toBe(0);
          apply(repo, task.half, 'half', true);
        }
        apply(repo, task.gold, 'gold');
        const fixed = run(repo, task);
        expect(fixed.code, fixed.out).toBe(0);
      },
      300_000,
    );
  }
});
