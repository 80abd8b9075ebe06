import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { checkParity } from '../../src/doctor/parity.js';
import { pythonUses } from '../../src/doctor/python.js';
import { childEnv } from '../../src/process/env.js';
import { runProcess } from '../../src/process/run.js';
import { which } from '../../src/process/which.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { testHost, testPath } from '../support/host.js';
import { tempDir } from '../support/tmp.js';
import { noSandbox, warnSkipped } from './helpers.js';
import { policyFrom } from '../../src/config/sandbox-policy.js';

/**
 * The crew's sandbox finds Python the way the host does, on this machine's own PATH: where a version
 * manager's shim is first (pyenv here: /root/.pyenv/shims/python3 before /usr/bin/python3), a
 * sandboxed `python3` is the manager's interpreter, with the same pytest; a project's virtualenv
 * named by a relative path (`.venv/bin/python`) is the checkout's; and `school doctor` says which
 * python3 and pytest a crew runs, inside and outside.
 */
warnSkipped('python as the host finds it');

const tmp = tempDir('school-python-');
afterAll(() => tmp.cleanup());

const python = which('python3', testPath());
const pytestOutside = python
  ? spawnSync(python, ['-m', 'pytest', '--version'], { encoding: 'utf8' }).status === 0
  : false;
if (!python || !pytestOutside)
  console.warn(
    `SKIPPED (python in the sandbox): ${python ? 'pytest is not installed for python3' : 'no python3 on PATH'}`,
  );

const SAYS =
  'import os, sys; print(os.path.realpath(sys.executable), sys.version.split()[0], sys.prefix, sys.base_prefix)';

function sandbox(name: string): { sb: Sandbox; work: string } {
  const work = join(tmp.path, name, 'work');
  mkdirSync(work, { recursive: true });
  const sb = new Sandbox({
    policy: policyFrom(parseConfig({ sandbox: { network: 'none' } }).sandbox),
    root: join(tmp.path, name, 'sandbox'),
    host: testHost(),
  });
  return { sb, work };
}

async function both(sb: Sandbox, work: string, argv: string[], path = testPath()) {
  const env = childEnv({ set: { PATH: path } });
  const c = await sb.confine(argv, env, { cwd: work, writable: [work], home: sb.freshHome('py'), allow: [] });
  const inside = await runProcess(c.argv, { cwd: work, env: c.env, timeoutMs: 60_000 });
  const outside = await runProcess(argv, { cwd: work, env, timeoutMs: 60_000 });
  const text = (r: typeof inside) => `${r.exitCode} ${r.stdout.toString('utf8').trim()}`;
  return { inside: text(inside), outside: text(outside) };
}

describe.skipIf(!!noSandbox || !python || !pytestOutside)(
  'python3 and pytest in the sandbox, as on the host',
  () => {
    it('`python3 -c` and `python3 -m pytest --version` say the same inside as outside (a pyenv shim first on PATH here)', async () => {
      const { sb, work } = sandbox('host');
      try {
        const said = await both(sb, work, ['python3', '-c', SAYS]);
        expect(said.inside).toBe(said.outside);
        expect(said.inside).toMatch(/^0 \//);
        // Where pyenv's shim comes first, the interpreter is pyenv's, not the distribution's.
        if (/\/\.pyenv\/shims$/.test(dirname(python!))) expect(said.inside).toContain('/.pyenv/versions/');
        const pytest = await both(sb, work, ['python3', '-m', 'pytest', '--version']);
        expect(pytest.inside).toBe(pytest.outside);
        expect(pytest.inside).toMatch(/^0 pytest \d+\.\d+/);
      } finally {
        await sb.close();
      }
    }, 120_000);

    it("a project's virtualenv named by its relative path is the checkout's, its interpreter found as outside", async () => {
      const { sb, work } = sandbox('venv');
      try {
        expect(spawnSync(python!, ['-m', 'venv', '--without-pip', '.venv'], { cwd: work }).status).toBe(0);
        // Only the system on PATH: the venv's link into the version manager's directory is what leads there.
        const said = await both(sb, work, ['.venv/bin/python', '-c', SAYS], '/usr/bin:/bin');
        expect(said.inside).toBe(said.outside);
        expect(said.inside).toContain(` ${join(realpathSync(work), '.venv')} `);
      } finally {
        await sb.close();
      }
    }, 120_000);

    it('school doctor says which python3 and pytest a crew runs, inside and outside', async () => {
      const config = parseConfig({ dispatch: { verify: ['python3', '-m', 'pytest', '-q'] } });
      const findings = await checkParity(config, { cwd: tmp.path, env: testHost() });
      const row = findings.find((f) => f.check === 'python:dispatch.verify');
      expect(row, JSON.stringify(findings, null, 2)).toMatchObject({ status: 'ok' });
      expect(row!.detail).toMatch(
        /^dispatch\.verify: `python3` and its pytest inside the sandbox as outside: \/\S+ \d+\.\d+\.\d+ \| pytest \d+\.\d+/,
      );
      // Nothing about Python where no command runs it: the table stays short.
      const none = await checkParity(parseConfig({ dispatch: { verify: ['npm', 'test'] } }), {
        cwd: tmp.path,
        env: testHost(),
      });
      expect(none.filter((f) => f.check.startsWith('python:'))).toEqual([]);
    }, 180_000);
  },
);

describe('which commands name Python or pytest', () => {
  it('python3 -m pytest, pytest, a virtualenv, an install; never npm', () => {
    const uses = pythonUses(
      parseConfig({
        dispatch: {
          verify: ['.venv/bin/python', '-m', 'pytest', '-q'],
          install: { command: ['python3', '-m', 'venv', '.venv'], paths: ['.venv'] },
        },
        grading: {
          sealedTests: ['pytest', '--junitxml={results}'],
          sealedDir: '/s',
          sealedResults: { format: 'junit' },
        },
      }),
    );
    expect(uses).toEqual([
      { label: 'dispatch.verify', program: '.venv/bin/python', kind: 'python', pytest: true },
      { label: 'dispatch.install', program: 'python3', kind: 'python', pytest: false },
      { label: 'grading.sealedTests', program: 'pytest', kind: 'pytest', pytest: true },
    ]);
    expect(pythonUses(parseConfig({ dispatch: { verify: ['npm', 'test'] } }))).toEqual([]);
  });
});
