import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { testId } from '../../src/grading/junit.js';
import { instrument, readReport } from '../../src/grading/sealed-results.js';
import { tempDir } from '../support/tmp.js';

/**
 * examples/pytest/school.yml, the configuration docs/grading.md gives a Python team, is what the
 * school accepts, and its verification recipe run with the distribution's pytest on a real pytest
 * layout gives a report the school reads: each test by its node id, two tests of one name in two
 * files told apart.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const tmp = tempDir('school-pytest-example-');
afterAll(() => tmp.cleanup());
const PYTHON = ['/usr/bin/python3', 'python3'].find(
  (p) => spawnSync(p, ['-m', 'pytest', '--version']).status === 0,
);

describe('the pytest example', () => {
  const config = loadConfig(join(ROOT, 'examples/pytest/school.yml'));

  it('loads, with named results, the suite laid into the checkout and pytest configuration protected', () => {
    expect(config.dispatch.verifyResults).toEqual({ format: 'junit' });
    expect(config.grading.sealedResults).toMatchObject({ format: 'junit' });
    expect(config.grading.sealedLayout).toBe('into');
    for (const f of ['conftest.py', 'pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini'])
      expect(config.grading.sealedProtect).toContain(f);
  });

  it.skipIf(!PYTHON)("its verification recipe names each test by pytest's node id", () => {
    const repo = join(tmp.path, 'repo');
    mkdirSync(join(repo, 'calc'), { recursive: true });
    mkdirSync(join(repo, 'tests'));
    writeFileSync(join(repo, 'calc/__init__.py'), 'def add(a, b):\n    return a + b\n');
    for (const name of ['test_add', 'test_more'])
      writeFileSync(
        join(repo, 'tests', `${name}.py`),
        'from calc import add\n\nclass TestAdd:\n    def test_sum(self):\n        assert add(2, 2) == 4\n\n' +
          `def test_${name === 'test_add' ? 'zero' : 'neg'}():\n    assert add(0, ${name === 'test_add' ? 0 : -1}) == ${name === 'test_add' ? 0 : 0}\n`,
      );
    const report = join(tmp.path, 'report.xml');
    const argv = instrument(config.dispatch.verify!, config.dispatch.verifyResults!, report);
    const r = spawnSync(PYTHON!, argv.slice(1), { cwd: repo, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(1); // test_neg fails: add(0, -1) is -1
    const cases = readReport(report, 'junit');
    expect(Array.isArray(cases), String(cases)).toBe(true);
    const ids = (cases as Exclude<typeof cases, string>).map((c) => [testId(c, { cwd: repo }), c.status]);
    expect(ids.sort()).toEqual([
      ['tests/test_add.py::TestAdd::test_sum', 'passed'],
      ['tests/test_add.py::test_zero', 'passed'],
      ['tests/test_more.py::TestAdd::test_sum', 'passed'],
      ['tests/test_more.py::test_neg', 'failed'],
    ]);
  });
});
