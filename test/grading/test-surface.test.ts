import { describe, expect, it } from 'vitest';
import { testSurface } from '../../src/grading/test-surface.js';

/** Which paths are a repository's tests and which define how its tests run, per ecosystem. */
const surface = testSurface();
const kinds = (paths: string[]) => Object.fromEntries(paths.map((p) => [p, surface.kind(p)]));

describe('test surface: test files per ecosystem', () => {
  it('JS/TS: *.test.*, *.spec.*, test/, tests/, __tests__/, spec/ at any depth', () => {
    for (const p of [
      'src/answer.test.mjs',
      'packages/a/src/x.spec.tsx',
      'test/answer.mjs',
      'tests/helpers/setup.js',
      'src/__tests__/a.js',
      'spec/a.js',
      'test/answer.test.mjs.disabled',
      'src/__snapshots__/a.test.ts.snap',
    ])
      expect(surface.kind(p), p).toBe('test');
    for (const p of ['src/answer.mjs', 'src/latest.js', 'src/contest.ts', 'src/testing.ts', 'docs/test.md'])
      expect(surface.kind(p), p).toBeUndefined();
  });

  it('Python: test_*.py, *_test.py, tests/, conftest.py', () => {
    expect(
      kinds(['pkg/test_parse.py', 'pkg/parse_test.py', 'tests/data.json', 'conftest.py', 'a/conftest.py']),
    ).toEqual({
      'pkg/test_parse.py': 'test',
      'pkg/parse_test.py': 'test',
      'tests/data.json': 'test',
      'conftest.py': 'test',
      'a/conftest.py': 'test',
    });
    expect(surface.kind('pkg/parse.py')).toBeUndefined();
    expect(surface.kind('pkg/contest.py')).toBeUndefined();
  });

  it('Go: *_test.go and testdata/', () => {
    expect(surface.kind('pkg/x/parse_test.go')).toBe('test');
    expect(surface.kind('pkg/x/testdata/in.txt')).toBe('test');
    expect(surface.kind('pkg/x/parse.go')).toBeUndefined();
  });

  it('Rust: tests/ and benches/ (unit tests inside src/ files are not paths: not recognised)', () => {
    expect(surface.kind('tests/integration.rs')).toBe('test');
    expect(surface.kind('crates/a/benches/b.rs')).toBe('test');
    expect(surface.kind('src/lib.rs')).toBeUndefined();
  });

  it('Ruby: spec/, test/, *_spec.rb, *_test.rb', () => {
    expect(surface.kind('spec/models/user_spec.rb')).toBe('test');
    expect(surface.kind('lib/user_spec.rb')).toBe('test');
    expect(surface.kind('lib/user_test.rb')).toBe('test');
    expect(surface.kind('lib/user.rb')).toBeUndefined();
  });

  it('school.yml adds test patterns and definitions', () => {
    const s = testSurface({ tests: ['checks/**'], definitions: ['scripts/run-tests.sh'] });
    expect(s.kind('checks/a.mjs')).toBe('test');
    expect(s.kind('scripts/run-tests.sh')).toBe('definition');
    expect(s.definitionChanged('scripts/run-tests.sh', 'a', 'b')).toBe(true);
    expect(surface.kind('checks/a.mjs')).toBeUndefined();
  });
});

describe('test surface: files that define how tests run', () => {
  it('runner configs, task files and CI configs', () => {
    for (const p of [
      'package.json',
      'packages/a/package.json',
      'jest.config.js',
      'vitest.config.ts',
      '.mocharc.yml',
      'ava.config.mjs',
      'karma.conf.js',
      'playwright.config.ts',
      '.taprc',
      '.nycrc.json',
      '.c8rc',
      'pytest.ini',
      'tox.ini',
      'setup.cfg',
      'pyproject.toml',
      'noxfile.py',
      'Makefile',
      'justfile',
      'Rakefile',
      '.rspec',
      'Cargo.toml',
      '.github/workflows/ci.yml',
      '.gitlab-ci.yml',
      '.circleci/config.yml',
      '.travis.yml',
      'azure-pipelines.yml',
      'Jenkinsfile',
      '.buildkite/pipeline.yml',
      // A definition outranks a test: a config inside tests/ is read as a definition.
      'tests/pytest.ini',
    ])
      expect(surface.kind(p), p).toBe('definition');
  });

  it("package.json: only scripts and the test runners' keys count, a dependency change does not", () => {
    const base = {
      name: 'app',
      scripts: { test: 'node --test', build: 'tsc' },
      dependencies: { a: '1.0.0' },
    };
    const text = (v: unknown) => JSON.stringify(v, null, 2);
    const changed = (after: unknown) => surface.definitionChanged('package.json', text(base), text(after));
    expect(changed({ ...base, dependencies: { a: '1.0.1', b: '2.0.0' }, version: '2.0.0' })).toBe(false);
    // Key order is not a change.
    expect(
      changed({
        dependencies: base.dependencies,
        scripts: { build: 'tsc', test: 'node --test' },
        name: 'app',
      }),
    ).toBe(false);
    expect(changed({ ...base, scripts: { ...base.scripts, test: 'exit 0' } })).toBe(true);
    expect(changed({ ...base, scripts: { build: 'tsc' } })).toBe(true);
    expect(changed({ ...base, scripts: { ...base.scripts, pretest: 'true' } })).toBe(true);
    for (const key of ['jest', 'mocha', 'ava', 'tap', 'nyc', 'c8', 'vitest'])
      expect(changed({ ...base, [key]: { bail: true } }), key).toBe(true);
    // Unreadable JSON cannot be shown to keep the scripts: a change (fail closed).
    expect(surface.definitionChanged('package.json', text(base), '{"scripts":')).toBe(true);
    // A package.json the base lacks, with scripts: a change; without: none.
    expect(surface.definitionChanged('pkg/package.json', undefined, text({ scripts: { test: 'x' } }))).toBe(
      true,
    );
    expect(surface.definitionChanged('pkg/package.json', undefined, text({ name: 'x' }))).toBe(false);
  });

  it('pyproject.toml, setup.cfg, tox.ini: only their pytest, tox and coverage sections count', () => {
    const py = (deps: string, addopts: string) =>
      `[project]\nname = "p"\ndependencies = [${deps}]\n\n[tool.pytest.ini_options]\naddopts = "${addopts}"\n\n[tool.black]\nline-length = 88\n`;
    expect(surface.definitionChanged('pyproject.toml', py('"a"', '-q'), py('"a", "b>=2"', '-q'))).toBe(false);
    expect(surface.definitionChanged('pyproject.toml', py('"a"', '-q'), py('"a"', '-q -k "not slow"'))).toBe(
      true,
    );
    // The same section spelt with spaces and quotes is the same section.
    expect(
      surface.definitionChanged(
        'pyproject.toml',
        '[project]\nname = "p"\n',
        '[project]\nname = "p"\n[ tool . "pytest".ini_options ]\naddopts = "-x"\n',
      ),
    ).toBe(true);
    // Dotted keys under a bare [tool] could be pytest's: counted (fail closed).
    expect(
      surface.definitionChanged('pyproject.toml', '[tool]\n', '[tool]\npytest.ini_options.addopts = "-x"\n'),
    ).toBe(true);
    expect(
      surface.definitionChanged('pyproject.toml', py('"a"', '-q'), py('"a"', '-q').replace('88', '100')),
    ).toBe(false);
    const cfg = (ver: string, pytest: string) =>
      `[metadata]\nversion = ${ver}\n\n[tool:pytest]\n${pytest}\n\n[coverage:run]\nbranch = true\n`;
    expect(
      surface.definitionChanged('setup.cfg', cfg('1', 'testpaths = tests'), cfg('2', 'testpaths = tests')),
    ).toBe(false);
    expect(
      surface.definitionChanged('setup.cfg', cfg('1', 'testpaths = tests'), cfg('1', 'testpaths = nothing')),
    ).toBe(true);
    const tox = (flake: string, cmd: string) =>
      `[flake8]\nmax-line-length = ${flake}\n\n[testenv]\ncommands = ${cmd}\n`;
    expect(surface.definitionChanged('tox.ini', tox('88', 'pytest'), tox('100', 'pytest'))).toBe(false);
    expect(surface.definitionChanged('tox.ini', tox('88', 'pytest'), tox('88', 'true'))).toBe(true);
  });

  it('Cargo.toml: test targets and harnesses count, dependencies do not', () => {
    const cargo = (dep: string, extra = '') =>
      `[package]\nname = "c"\n\n[dependencies]\nserde = "${dep}"\n${extra}`;
    expect(surface.definitionChanged('Cargo.toml', cargo('1.0'), cargo('1.0.200'))).toBe(false);
    expect(
      surface.definitionChanged('Cargo.toml', cargo('1.0'), cargo('1.0', '\n[lib]\ntest = false\n')),
    ).toBe(true);
    expect(
      surface.definitionChanged(
        'Cargo.toml',
        cargo('1.0'),
        cargo('1.0', '\n[[test]]\nname = "it"\nharness = false\n'),
      ),
    ).toBe(true);
  });

  it('any change to a whole-file definition counts', () => {
    expect(
      surface.definitionChanged(
        'jest.config.js',
        'module.exports = {};\n',
        'module.exports = { testMatch: [] };\n',
      ),
    ).toBe(true);
    expect(surface.definitionChanged('Makefile', 'test:\n\tnode --test\n', undefined)).toBe(true);
    expect(surface.definitionChanged('Makefile', 'same', 'same')).toBe(false);
  });
});
