import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import { installedDependencies } from '../../src/crew/checkout/clean-checkout.js';
import { withJudgeSandbox } from '../../src/grading/judge-sandbox.js';
import { runSealedTests } from '../../src/grading/sealed.js';
import { dependenciesOf } from '../../src/grading/sealed-run.js';
import { hostEnvOf } from '../../src/process/env.js';
import type { Bookbag } from '../../src/bookbag/schema.js';
import { runnerSource } from '../support/corpus.js';
import { git, initRepo, tempDir, worktreeDiff, writeFiles as write } from '../support/tmp.js';

/**
 * A repository's own tests as the sealed suite (docs/grading.md, "A repository's own tests"): the
 * files are laid into a fresh checkout at their own paths, with the base's installed dependencies,
 * so an unmodified mocha file (`require('..')`, `require('mocha')`) and an unmodified pytest module
 * run as they do upstream. Named results through each runner's JUnit reporter, tests named by their
 * full id. Real git, real mocha (this project's devDependency, installed into the checkout by a real
 * `dispatch.install`), Debian's pytest, the default sandbox.
 */
const tmp = tempDir('school-sealed-into-');
afterAll(() => tmp.cleanup());

const PYTHON = '/usr/bin/python3';
const noPytest =
  spawnSync(PYTHON, ['-m', 'pytest', '--version'], { encoding: 'utf8' }).status === 0
    ? undefined
    : `${PYTHON} -m pytest does not run here; install Debian's python3-pytest`;
if (noPytest) console.warn(`SKIPPED (pytest as the sealed suite): ${noPytest}`);

/** A diff made the way a crew makes it: edit a worktree, `git diff --binary --cached`. */
const crewDiff = (repo: string, base: string, files: Record<string, string>) =>
  worktreeDiff(repo, base, files);

/** The sealed judge as `defaultGrader` calls it: its own sandbox, the installed dependencies. */
async function judge(cfg: SchoolConfig, base: string, crewId: string, diff: string) {
  const { value } = await withJudgeSandbox(cfg, hostEnvOf(undefined), (sandbox) =>
    runSealedTests({
      repoPath: cfg.repoPath,
      argv: cfg.grading.sealedTests!,
      bookbag: { crewId, baseSha: base } as Bookbag,
      diff,
      timeoutMs: 120_000,
      sealedDir: cfg.grading.sealedDir,
      protect: cfg.grading.sealedProtect,
      ...(cfg.grading.sealedResults ? { results: cfg.grading.sealedResults } : {}),
      ...(cfg.dispatch.install
        ? {
            dependencies: dependenciesOf(installedDependencies, {
              config: cfg,
              baseSha: base,
              sandbox,
              depsRoot: join(tmp.path, 'deps'),
              timeoutMs: 120_000,
            }),
          }
        : {}),
      confine: (argv, env, view) =>
        sandbox.confine(argv, env, { ...view, home: sandbox.freshHome('sealed'), allow: [] }),
    }),
  );
  return value;
}

describe("a repository's own mocha files as the sealed suite", () => {
  let repo: string;
  let base: string;
  let cfg: SchoolConfig;
  const SAME = 'answer is right';
  beforeAll(() => {
    repo = initRepo(join(tmp.path, 'mocha-repo'), {
      'package.json': '{"name":"answer-lib","main":"index.js","scripts":{"test":"mocha"}}\n',
      'index.js': 'exports.answer = () => 41;\nexports.double = (x) => x * 2;\n',
      'README.md': '# answer-lib\n',
    });
    base = git(repo, 'rev-parse', 'HEAD');
    const sealed = join(tmp.path, 'mocha-sealed');
    // As upstream writes them: the package by `require('..')`, mocha's functions by `require('mocha')`,
    // one test name in two files.
    write(sealed, {
      'test/answer.test.js': [
        "const assert = require('assert');",
        "const { describe, it } = require('mocha');",
        "const { answer } = require('..');",
        `describe('answer', () => { it(${JSON.stringify(SAME)}, () => assert.strictEqual(answer(), 42)); });`,
        '',
      ].join('\n'),
      'test/double.test.js': [
        "const assert = require('assert');",
        "const { double } = require('..');",
        `describe('answer', () => { it(${JSON.stringify(SAME)}, () => assert.strictEqual(double(2), 4)); });`,
        '',
      ].join('\n'),
    });
    const source = runnerSource(join(tmp.path, 'runners'), 'mocha');
    cfg = parseConfig(
      {
        repoPath: repo,
        dispatch: {
          install: { command: ['cp', '-R', join(source, 'node_modules'), 'node_modules'] },
        },
        sandbox: { readOnly: [source] },
        grading: {
          sealedDir: sealed,
          sealedTests: [
            'node',
            'node_modules/.bin/mocha',
            '--reporter',
            'xunit',
            '--reporter-option',
            'output={results}',
            'test/answer.test.js',
            'test/double.test.js',
          ],
          sealedResults: { format: 'junit' },
        },
      },
      'school.yml',
    );
  });

  it('runs unmodified with the installed dependencies: the fix passes, the unchanged code fails by full name', async () => {
    const fixed = await judge(
      cfg,
      base,
      'c-fix',
      crewDiff(repo, base, { 'index.js': 'exports.answer = () => 42;\nexports.double = (x) => x * 2;\n' }),
    );
    expect(fixed).toMatchObject({
      passed: true,
      code: 'sealed_tests_passed',
      tests: { passed: 2, failed: 0 },
    });
    expect(fixed.reasons[0]).toMatch(/2 named test\(s\) reported passed \(all 2 the suite declares/);
    const noop = await judge(cfg, base, 'c-noop', '');
    expect(noop).toMatchObject({
      passed: false,
      code: 'sealed_tests_failed',
      tests: { passed: 1, failed: 1 },
    });
    // Two tests of one name, told apart by their files.
    expect(noop.reasons).toContain(`sealed test(s) failed (1): test/answer.test.js > answer > ${SAME}`);
    expect(noop.reasons.join('\n')).toContain(`test/answer.test.js > answer > ${SAME}`);
    expect(noop.reasons.join('\n')).not.toContain('41');
  });

  it('a patch that touches a laid path is tampering; one that neuters node:assert changes nothing', async () => {
    const rewritten = await judge(
      cfg,
      base,
      'c-rewrite',
      crewDiff(repo, base, { 'test/answer.test.js': "it('x', () => {});\n" }),
    );
    expect(rewritten).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(rewritten.reasons.join(' ')).toContain('test/answer.test.js');
    const neuter = await judge(
      cfg,
      base,
      'c-neuter',
      crewDiff(repo, base, {
        'index.js':
          "require('assert').strictEqual = () => {};\nexports.answer = () => 41;\nexports.double = (x) => x * 2;\n",
      }),
    );
    // Frozen by the judge's preload (NODE_OPTIONS, mocha's own process): the assignment of this
    // sloppy-mode module is a silent no-op, the suite runs on the real assert and fails.
    expect(neuter).toMatchObject({
      passed: false,
      code: 'sealed_tests_failed',
      tests: { passed: 1, failed: 1 },
    });
  });
});

describe.skipIf(noPytest)('pytest modules as the sealed suite, named by node id', () => {
  let repo: string;
  let base: string;
  let cfg: SchoolConfig;
  beforeAll(() => {
    repo = initRepo(join(tmp.path, 'py-repo'), {
      'splitter/__init__.py': '',
      'splitter/split.py': 'def split(s):\n    return s.split(",")[:-1]\n',
      'tests/__init__.py': '',
    });
    base = git(repo, 'rev-parse', 'HEAD');
    const sealed = join(tmp.path, 'py-sealed');
    write(sealed, {
      'tests/test_split.py': [
        'from splitter.split import split',
        '',
        'class TestSplit:',
        '    def test_begin_end(self):',
        '        assert split("a,b") == ["a", "b"]',
        '',
        'def test_same():',
        '    assert split("a") == ["a"]',
        '',
      ].join('\n'),
      'tests/test_other.py': ['def test_same():', '    assert 1 + 1 == 2', ''].join('\n'),
    });
    cfg = parseConfig(
      {
        repoPath: repo,
        grading: {
          sealedDir: sealed,
          sealedTests: [
            PYTHON,
            '-m',
            'pytest',
            '--junitxml={results}',
            'tests/test_split.py',
            'tests/test_other.py',
          ],
          sealedResults: { format: 'junit' },
        },
      },
      'school.yml',
    );
  });

  it('the fix passes; the unchanged code fails, each test named by its node id', async () => {
    const fixed = await judge(
      cfg,
      base,
      'c-fix',
      crewDiff(repo, base, { 'splitter/split.py': 'def split(s):\n    return s.split(",")\n' }),
    );
    expect(fixed).toMatchObject({ passed: true, tests: { passed: 3, failed: 0 } });
    const noop = await judge(cfg, base, 'c-noop', '');
    expect(noop).toMatchObject({ passed: false, code: 'sealed_tests_failed' });
    expect(noop.reasons).toContain(
      'sealed test(s) failed (2): tests/test_split.py::TestSplit::test_begin_end; tests/test_split.py::test_same',
    );
  });

  it('a conftest.py that turns failures into passes is caught by the canary', async () => {
    const conftest = [
      'import pytest',
      '',
      '@pytest.hookimpl(hookwrapper=True)',
      'def pytest_runtest_makereport(item, call):',
      '    outcome = yield',
      '    report = outcome.get_result()',
      '    if report.failed:',
      '        report.outcome = "passed"',
      '',
    ].join('\n');
    const cheat = await judge(cfg, base, 'c-conftest', crewDiff(repo, base, { 'conftest.py': conftest }));
    expect(cheat).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(cheat.reasons[0]).toMatch(/canary test, which must fail, was reported passed/);
  });
});

describe('grading.sealedLayout in school.yml', () => {
  it('into refuses a command that names {sealed}, with the fix in the message', () => {
    expect(() =>
      parseConfig(
        { grading: { sealedLayout: 'into', sealedTests: ['node', '--test', '{sealed}/'] } },
        'school.yml',
      ),
    ).toThrow(/grading\.sealedTests: names \{sealed\}, but grading\.sealedLayout is into/);
  });
});
