import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { noVerdict } from '../../src/cli/commands/loop.js';
import { deniedBy, EXIT, worstExit } from '../../src/cli/exit.js';
import { prepareExampleRepo } from '../../src/examples/prepare.js';
import { tempDir } from '../support/tmp.js';

/**
 * Every stop says why and exits with its class's code (docs/cli.md, "Exit codes"): a gate that
 * denied the work is 3, not a silent 0; a state directory the user cannot write is one sentence
 * naming the path and the fix, exit 1, and `school doctor` finds it first. The real CLI in a child
 * process.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const dir = tempDir('school-exit-');
afterAll(() => dir.cleanup());

function school(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/index.ts'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd },
    timeout: 170_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('exit codes', () => {
  it('the most serious ending wins: configuration, failure, denial, done', () => {
    expect(worstExit()).toBe(EXIT.done);
    expect(worstExit(EXIT.denied, EXIT.failed)).toBe(EXIT.failed);
    expect(worstExit(EXIT.done, EXIT.denied)).toBe(EXIT.denied);
    expect(worstExit(EXIT.failed, EXIT.config)).toBe(EXIT.config);
    // A plan that placed nothing because a gate held it is a denial; one with nothing to plan is not.
    expect(deniedBy({ assignments: [], refused: [] })).toBeUndefined();
    expect(deniedBy({ assignments: [], refused: [{ code: 'active-crew', reason: 'busy' }] })).toBeUndefined();
    expect(deniedBy({ assignments: [], refused: [{ code: 'spend-cap', reason: 'cap' }] })).toBe('cap');
    expect(deniedBy({ assignments: [{}], refused: [{ code: 'paused', reason: 'p' }] })).toBeUndefined();
  });

  it('a paused school: school loop says the dispatch was denied and why, and exits 3', () => {
    const cwd = join(dir.path, 'paused');
    mkdirSync(cwd);
    const config = join(ROOT, 'examples/school.yml');
    const pause = school(cwd, 'pause', '--reason', 'the holidays', '--config', config);
    expect(pause.code, pause.stderr).toBe(0);
    const r = school(cwd, 'loop', '--example');
    expect(r.stdout).toMatch(/Planned 0 crew\(s\)/);
    expect(r.stderr).toMatch(/school loop: dispatch was denied: .*the holidays/);
    expect(r.code).toBe(EXIT.denied);
    // Cleared, the same command does its work and exits 0.
    expect(school(cwd, 'pause', '--clear', '--config', config).code).toBe(0);
  }, 180_000);
});

describe('an agent whose program is missing', () => {
  it('is named with the fix, refill stops instead of aborting the backlog, and the loop exits 1', () => {
    const cwd = join(dir.path, 'missing-agent');
    mkdirSync(cwd);
    const example = readFileSync(join(ROOT, 'examples/school.yml'), 'utf8')
      .replace("command: [node, examples/student.mjs, '{brief}']", "command: [no-such-student, '{brief}']")
      .replace('issuesFile: examples/issues.json', `issuesFile: ${join(ROOT, 'examples/issues.json')}`);
    expect(example).toContain('no-such-student');
    writeFileSync(join(cwd, 'school.yml'), example);
    prepareExampleRepo(join(cwd, '.school/example-repo'));
    const r = school(cwd, 'loop', '--config', 'school.yml');
    expect(r.code, r.stderr).toBe(EXIT.failed);
    expect(r.stdout).toMatch(
      /finished \d+s aborted: agent student: `no-such-student` was not found on PATH; install it/,
    );
    // The crews the plan placed end; none is refilled after the runner proved it cannot run them.
    expect(r.stdout).not.toMatch(/refill: /);
    expect(r.stderr).toMatch(/school loop: this runner could not run crew .*no-such-student.*school doctor/);
  }, 180_000);
});

describe('school dispatch, with an agent whose program is missing', () => {
  it('names it with the fix and exits 1, not 0', () => {
    const cwd = join(dir.path, 'dispatch-missing-agent');
    mkdirSync(cwd);
    const example = readFileSync(join(ROOT, 'examples/school.yml'), 'utf8')
      .replace("command: [node, examples/student.mjs, '{brief}']", "command: [no-such-student, '{brief}']")
      .replace('issuesFile: examples/issues.json', `issuesFile: ${join(ROOT, 'examples/issues.json')}`);
    writeFileSync(join(cwd, 'school.yml'), example);
    prepareExampleRepo(join(cwd, '.school/example-repo'));
    const fetched = school(
      cwd,
      'fetch',
      '--issues-file',
      join(ROOT, 'examples/issues.json'),
      '--config',
      'school.yml',
    );
    expect(fetched.code, fetched.stderr).toBe(0);
    const r = school(cwd, 'dispatch', '--config', 'school.yml');
    expect(r.stdout).toMatch(/planned [1-9]\d* crew\(s\)/);
    expect(r.stderr).toMatch(
      /school dispatch: \w+: .*`no-such-student` was not found on PATH.*school doctor says what this runner lacks/,
    );
    expect(r.code).toBe(EXIT.failed);
  }, 180_000);
});

describe('a loop whose grading failed', () => {
  it('says what failed where the verdicts would be, never "nothing to grade"', () => {
    expect(noVerdict({ failed: 0, errors: [] })).toBe('nothing to grade this time');
    expect(noVerdict({ failed: 2, errors: [{ jobKey: 'grade:c1', error: 'the judge crashed' }] })).toBe(
      'no verdict: 2 grading job(s) failed, first grade:c1: the judge crashed',
    );
    expect(noVerdict({ fatal: 'scores.jsonl is corrupt', failed: 0, errors: [] })).toBe(
      'no verdict: grading stopped: scores.jsonl is corrupt',
    );
  });
});

/** Root ignores permissions: the permission cases run as `nobody` (setpriv). */
const noSetpriv = spawnSync('setpriv', ['--version']).status !== 0 || process.getuid?.() !== 0;

/** Search permission (o+x) on each ancestor of `path` that lacks it, put back by the returned function. */
function searchable(path: string): () => void {
  const opened: Array<[string, number]> = [];
  for (let d = path; ; d = dirname(d)) {
    const mode = statSync(d).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      chmodSync(d, mode | 0o001);
      opened.push([d, mode]);
    }
    if (d === dirname(d)) break;
  }
  return () => opened.forEach(([d, mode]) => chmodSync(d, mode));
}

function asNobody(args: string[]) {
  const close = searchable(ROOT);
  const closeTmp = searchable(dir.path);
  try {
    return spawnSync(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', TSX, ...args],
      { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/tmp' }, timeout: 120_000 },
    );
  } finally {
    closeTmp();
    close();
  }
}

describe.skipIf(noSetpriv)('a state directory another user made', () => {
  it('is one sentence naming the path and the fix (exit 1), and doctor reports it as a blocker', () => {
    const state = join(dir.path, 'root-owned-state');
    mkdirSync(state, { mode: 0o755 });
    writeFileSync(join(state, 'school.jsonl'), '');
    chmodSync(dir.path, 0o755);
    const r = asNobody([join(ROOT, 'src/cli/index.ts'), 'pause', '--reason', 'x', '--state-dir', state]);
    expect(r.status).toBe(EXIT.failed);
    expect(r.stderr).toMatch(
      new RegExp(
        `^school: cannot write ${state}.* \\((EACCES|EPERM)[^)]*\\): the user running school \\(uid 65534\\) needs write access`,
      ),
    );
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
    const check = asNobody([
      '-e',
      `import(${JSON.stringify(pathToFileURL(join(ROOT, 'src/doctor/state-dir.ts')).href)}).then((m) => console.log(JSON.stringify(m.checkStateDir(${JSON.stringify(state)}))))`,
    ]);
    expect(check.status, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ check: 'state-dir', status: 'blocker' });
  }, 150_000);
});
