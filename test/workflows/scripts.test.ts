import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript } from './run-script.js';
import { tempDir } from '../support/tmp.js';

/** The small scripts the workflows run, executed as the runner does: plain node, env in, GITHUB_OUTPUT out. */

const tmp = tempDir('school-workflow-scripts-');
afterAll(() => tmp.cleanup());

const run = (script: string, env: Record<string, string>, args: string[] = []) =>
  runScript(tmp.path, script, env, args);

describe('daemon-matrix.mjs', () => {
  it('turns the plan matrix into daemon ids and writes the id-only matrix file', () => {
    const file = join(tmp.path, 'plan', 'matrix.json');
    const matrix = [
      { daemon: 'beta', labels: ['school-beta'], assignments: ['c7-0a1b2c3d'] },
      { daemon: 'alpha', labels: [], assignments: ['c1-11111111', 'c2-22222222'] },
      { daemon: 'idle', labels: [], assignments: [] },
    ];
    const fleet = JSON.stringify(['idle', 'beta', 'alpha', 'gamma']);
    const r = run('daemon-matrix.mjs', { SCHOOL_MATRIX: JSON.stringify(matrix), SCHOOL_FLEET: fleet }, [
      file,
    ]);
    expect(r.status, r.stderr).toBe(0);
    // The crews' matrix holds daemons with work; the roster's holds every configured daemon.
    expect(r.outputs).toEqual({
      daemons: '["alpha","beta"]',
      crews: '3',
      'has-work': 'true',
      fleet: '["alpha","beta","gamma","idle"]',
      attempt: '1',
      revisions: 'false',
      runners: JSON.stringify(
        Object.fromEntries(
          ['alpha', 'beta', 'gamma', 'idle'].map((d) => [d, ['self-hosted', `school-${d}`]]),
        ),
      ),
    });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([
      { daemon: 'beta', assignments: ['c7-0a1b2c3d'] },
      { daemon: 'alpha', assignments: ['c1-11111111', 'c2-22222222'] },
    ]);
  });

  it('accepts {include: [...]} and object assignments, and reports no work for an empty plan', () => {
    const r = run('daemon-matrix.mjs', {
      SCHOOL_MATRIX: JSON.stringify({
        include: [{ daemon: 'a1', assignments: [{ crewId: 'c3-33333333' }] }],
      }),
    });
    expect(r.outputs).toEqual({
      daemons: '["a1"]',
      crews: '1',
      'has-work': 'true',
      fleet: '[]',
      attempt: '1',
      revisions: 'false',
      runners: '{"a1":["self-hosted","school-a1"]}',
    });
    // A fresh school plans nothing, but its roster still names every daemon to beat.
    expect(run('daemon-matrix.mjs', { SCHOOL_MATRIX: '[]', SCHOOL_FLEET: '["a1","b2"]' }).outputs).toEqual({
      daemons: '[]',
      crews: '0',
      'has-work': 'false',
      fleet: '["a1","b2"]',
      attempt: '1',
      revisions: 'false',
      runners: '{"a1":["self-hosted","school-a1"],"b2":["self-hosted","school-b2"]}',
    });
    // The plan job's attempt names the artifacts every later job takes, re-run or not.
    const rerun = run('daemon-matrix.mjs', { SCHOOL_MATRIX: '[]', SCHOOL_RUN_ATTEMPT: '3' });
    expect(rerun.outputs.attempt).toBe('3');
    for (const bad of ['0', '2; rm -rf ~', '1\nhas-work=true', '-1']) {
      const r = run('daemon-matrix.mjs', { SCHOOL_MATRIX: '[]', SCHOOL_RUN_ATTEMPT: bad });
      expect(r.status, bad).toBe(1);
      expect(r.stderr).toMatch(/SCHOOL_RUN_ATTEMPT/);
      expect(r.outputs).toEqual({});
    }
    expect(run('daemon-matrix.mjs', {}).outputs['has-work']).toBe('false');
  });

  it('runs a self-hosted daemon on the labels it declares (fleet.daemons[].labels), the others on <prefix>-<id>', () => {
    const r = run('daemon-matrix.mjs', {
      SCHOOL_MATRIX: JSON.stringify([{ daemon: 'gpu', assignments: ['c1-11111111'] }]),
      SCHOOL_FLEET: JSON.stringify(['gpu', 'plain', 'cloud']),
      SCHOOL_RUNNERS: JSON.stringify({ gpu: ['linux', 'gpu-a100'], cloud: 'ubuntu-latest' }),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.outputs.runners!)).toEqual({
      gpu: ['self-hosted', 'linux', 'gpu-a100'],
      plain: ['self-hosted', 'school-plain'],
      cloud: 'ubuntu-latest',
    });
    // A label is what runs-on takes, nothing an expression or a list could be made of.
    for (const bad of [[], ['ok', 'two words'], ['${{ secrets.X }}'], [7]]) {
      const refused = run('daemon-matrix.mjs', { SCHOOL_RUNNERS: JSON.stringify({ gpu: bad }) });
      expect(refused.status, JSON.stringify(bad)).toBe(1);
      expect(refused.stderr).toMatch(/the labels of gpu must be 1 to 10 runner labels/);
      expect(refused.outputs).toEqual({});
    }
  });

  it("passes revisions on as true or false only (the crew job's checkout depth depends on it)", () => {
    expect(run('daemon-matrix.mjs', { SCHOOL_REVISIONS: 'true' }).outputs.revisions).toBe('true');
    expect(run('daemon-matrix.mjs', { SCHOOL_REVISIONS: '' }).outputs.revisions).toBe('false');
    for (const bad of ['yes', 'true\nhas-work=true', '1']) {
      const r = run('daemon-matrix.mjs', { SCHOOL_REVISIONS: bad });
      expect(r.status, bad).toBe(1);
      expect(r.stderr).toMatch(/SCHOOL_REVISIONS/);
      expect(r.outputs).toEqual({});
    }
  });

  it('fails, writing no output, when anything but identifiers would reach the job outputs', () => {
    const hostile = [
      [{ daemon: 'Show user names like ; rm -rf ~ $(id)', assignments: ['c1-1'] }],
      [{ daemon: 'alpha', assignments: ['c1-1\nhas-work=true'] }],
      [{ daemon: 'alpha\u202e', assignments: ['c1-1'] }],
      { daemon: 'alpha' },
    ];
    for (const m of hostile) {
      const r = run('daemon-matrix.mjs', { SCHOOL_MATRIX: JSON.stringify(m) });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/daemon-matrix: /);
      expect(r.outputs).toEqual({});
    }
    expect(run('daemon-matrix.mjs', { SCHOOL_MATRIX: '{not json' }).stderr).toMatch(/not valid JSON/);
    for (const fleet of [
      '["alpha","Drop; rm -rf ~"]',
      '["beta\\nhas-work=true"]',
      '{"id":"alpha"}',
      '[not json',
    ]) {
      const r = run('daemon-matrix.mjs', { SCHOOL_MATRIX: '[]', SCHOOL_FLEET: fleet });
      expect(r.status, fleet).toBe(1);
      expect(r.stderr).toMatch(/daemon-matrix: .*(fleet|SCHOOL_FLEET)/);
      expect(r.outputs).toEqual({});
    }
  });
});

describe('check-dry-run.mjs', () => {
  const cwd = resolve('.');
  const check = (env: Record<string, string>) =>
    spawnSync(process.execPath, [resolve('.github/scripts/check-dry-run.mjs')], {
      cwd,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ...env },
    });

  it('accepts the example run and rejects a wrong count, too many crews or issue text in the matrix', () => {
    expect(existsSync('examples/issues.json')).toBe(true);
    const ok = check({
      FETCH_COUNT: '7',
      PLAN_MATRIX: JSON.stringify([{ daemon: 'alpha', assignments: ['c1-1'] }]),
    });
    expect(ok.status, ok.stderr).toBe(0);
    expect(check({ FETCH_COUNT: '8', PLAN_MATRIX: '[]' }).stderr).toMatch(/count is "8", expected 7/);
    const many = [
      { daemon: 'alpha', assignments: ['a', 'b', 'c'] },
      { daemon: 'beta', assignments: ['d', 'e'] },
    ];
    expect(check({ FETCH_COUNT: '7', PLAN_MATRIX: JSON.stringify(many) }).stderr).toMatch(
      /more than maxCrews/,
    );
    const leaky = [{ daemon: 'alpha', assignments: ['c1-1'], title: 'Add a greet(name) helper' }];
    expect(check({ FETCH_COUNT: '7', PLAN_MATRIX: JSON.stringify(leaky) }).stderr).toMatch(
      /title of issue 1/,
    );
  });
});
