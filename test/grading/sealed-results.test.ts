import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import type { SealedResultsConfig } from '../../src/config/schema.js';
import { drain } from '../../src/grading/drain.js';
import { runSealedTests } from '../../src/grading/sealed.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import type { Bookbag } from '../../src/bookbag/schema.js';
import { git, tempDir, worktreeDiff } from '../support/tmp.js';
import { sealedRepo } from '../support/sealed-repo.js';
import { config, enqueueMany, writeBookbag } from './helpers.js';

/**
 * Named results (grading.sealedResults): a judge's pass is the runner's report of named tests. A
 * patch that leaves the bug in and exits 0 as soon as it runs under a test file from outside its
 * checkout (how it can tell the sealed suite from its own tests) passes an exit-code judge, and is
 * rejected once the judge reads the report. Real git, real `node --test`.
 */
const tmp = tempDir('school-sealed-results-');
afterAll(() => tmp.cleanup());

const BUGGY = 'export const sum = (a, b) => a - b;\n';
const FIXED = 'export const sum = (a, b) => a + b;\n';
/** Exits 0 at import when the test file running it is not one of the checkout's own. */
const EXIT_AT_IMPORT = [
  'if (process.argv[1] && !process.argv[1].startsWith(process.cwd())) process.exit(0);',
  BUGGY,
].join('\n');
/** Exits 0 the first time the function is called from such a test file. */
const EXIT_WHEN_CALLED = [
  'export const sum = (a, b) => {',
  '  if (process.argv[1] && !process.argv[1].startsWith(process.cwd())) process.exit(0);',
  '  return a - b;',
  '};',
  '',
].join('\n');

let repo: string;
let baseSha: string;
let suite: string;
const diffs: Record<'fixed' | 'exitAtImport' | 'exitWhenCalled', string> = {
  fixed: '',
  exitAtImport: '',
  exitWhenCalled: '',
};

const diffOf = (text: string) => worktreeDiff(repo, baseSha, { 'src/sum.mjs': text });

beforeAll(() => {
  ({ repo, baseSha, suite } = sealedRepo(
    tmp.path,
    { 'src/sum.mjs': BUGGY, 'README.md': '# r\n' },
    {
      'sum.test.mjs': [
        "import { test, describe } from 'node:test';",
        "import assert from 'node:assert/strict';",
        "const { sum } = await import(process.cwd() + '/src/sum.mjs');",
        "test('module loads', () => assert.equal(typeof sum, 'function'));",
        "describe('sum', () => {",
        // A suite with a slow test: what came before it has reported by the time it calls sum().
        "  test('adds small numbers', async () => {",
        '    await new Promise((r) => setTimeout(r, 200));',
        '    assert.equal(sum(2, 3), 5);',
        '  });',
        "  test('adds negatives', () => assert.equal(sum(-2, -3), -5));",
        '});',
        '',
      ],
    },
  ));
  // A runner of its own that writes JUnit XML to the path it is given: the `junit` format.
  writeFileSync(
    join(suite, 'run.mjs'),
    [
      "import { writeFileSync } from 'node:fs';",
      "const { sum } = await import(process.cwd() + '/src/sum.mjs');",
      'const ok = sum(2, 3) === 5;',
      'writeFileSync(process.argv[2], `<?xml version="1.0"?><testsuites><testsuite name="sum">' +
        '<testcase classname="sum" name="adds"${ok ? "/>" : "><failure message=\\"sum(2,3) != 5\\"/></testcase>"}' +
        '</testsuite></testsuites>`);',
      'process.exit(ok ? 0 : 1);',
      '',
    ].join('\n'),
  );
  diffs.fixed = diffOf(FIXED);
  diffs.exitAtImport = diffOf(EXIT_AT_IMPORT);
  diffs.exitWhenCalled = diffOf(EXIT_WHEN_CALLED);
});

const NODE_TEST = ['node', '--test', '{sealed}/sum.test.mjs'];

function judge(diff: string, results?: SealedResultsConfig, argv: readonly string[] = NODE_TEST) {
  return runSealedTests({
    repoPath: repo,
    argv,
    bookbag: { crewId: 'c-named', baseSha } as Bookbag,
    diff,
    timeoutMs: 60_000,
    sealedDir: suite,
    ...(results ? { results } : {}),
  });
}

describe('sealed tests with named results (node --test)', () => {
  it('without them, an exit code is all the judge sees: the early exit passes', async () => {
    expect(await judge(diffs.exitAtImport)).toMatchObject({ passed: true, code: 'sealed_tests_passed' });
  });

  it("an exit at import is tampering (the judge's closing check never ran); an honest patch is accepted", async () => {
    const results: SealedResultsConfig = { format: 'node-test' };
    const cheat = await judge(diffs.exitAtImport, results);
    expect(cheat).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(cheat.reasons.join('\n')).toMatch(
      /ended before the judge's closing check ran.*: sum\.test\.mjs$/m,
    );
    const honest = await judge(diffs.fixed, results);
    expect(honest).toMatchObject({ passed: true, code: 'sealed_tests_passed' });
    expect(honest.reasons[0]).toMatch(/3 named test\(s\) reported passed \(all 3 the suite declares/);
  });

  it('an exit in the middle of the file is tampering too: its closing check never ran', async () => {
    const cheat = await judge(diffs.exitWhenCalled, { format: 'node-test' });
    expect(cheat).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(cheat.reasons.join('\n')).toMatch(
      /ended before the judge's closing check ran.*: sum\.test\.mjs$/m,
    );
  });

  it('with expect, every named test must be reported passed', async () => {
    const results: SealedResultsConfig = {
      format: 'node-test',
      expect: ['adds small numbers', 'sum > adds negatives'],
    };
    const unfixed = await judge('', results);
    expect(unfixed).toMatchObject({ passed: false, code: 'sealed_tests_failed' });
    expect(unfixed.reasons.join('\n')).toMatch(
      /expected that did not pass: adds small numbers; sum > adds negatives/,
    );
    expect(await judge(diffs.fixed, results)).toMatchObject({ passed: true });
    // The full id answers too, and a name the suite does not have is missing.
    const full: SealedResultsConfig = {
      format: 'node-test',
      expect: ['sum.test.mjs > sum > adds negatives'],
    };
    expect(await judge(diffs.fixed, full)).toMatchObject({ passed: true });
    const missing = await judge(diffs.fixed, { format: 'node-test', expect: ['adds zero'] });
    expect(missing).toMatchObject({ passed: false });
    expect(missing.reasons.join('\n')).toMatch(/expected but not reported: adds zero/);
  });

  it('a real failure is named', async () => {
    const f = await judge('', { format: 'node-test' });
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_failed' });
    // Named by file, suite and name; no assertion message (the code under test writes those).
    expect(f.reasons).toContain(
      'sealed test(s) failed (2): sum.test.mjs > sum > adds small numbers; sum.test.mjs > sum > adds negatives',
    );
    expect(f.reasons.join('\n')).not.toMatch(/Expected|!==|5/);
  });
});

describe('sealed tests with named results (any runner writing JUnit XML)', () => {
  const RUN = ['node', '{sealed}/run.mjs', '{results}'];
  it('passes on the report; an early exit leaves none and is rejected', async () => {
    expect(await judge(diffs.fixed, { format: 'junit' }, RUN)).toMatchObject({ passed: true });
    const cheat = await judge(diffs.exitAtImport, { format: 'junit' }, RUN);
    expect(cheat).toMatchObject({ passed: false, code: 'sealed_results_missing' });
    expect(cheat.reasons[0]).toMatch(/exited 0 but left no usable junit report/);
    const failed = await judge('', { format: 'junit', expect: ['sum.adds'] }, RUN);
    expect(failed).toMatchObject({ passed: false, code: 'sealed_tests_failed' });
    expect(failed.reasons).toContain('sealed test(s) failed (1): sum > adds');
    expect(failed.reasons.join('\n')).not.toContain('sum(2,3) != 5');
  });

  it('a report file inside the checkout is protected: a patch that ships one is tampering', async () => {
    const results: SealedResultsConfig = { format: 'junit', file: 'reports/junit.xml' };
    const argv = ['node', '{sealed}/run.mjs', 'reports/junit.xml'];
    const wt = join(tmp.path, 'wt-report');
    git(repo, 'worktree', 'add', '--detach', '-q', wt, baseSha);
    mkdirSync(join(wt, 'reports'));
    writeFileSync(join(wt, 'reports/junit.xml'), '<testsuites><testcase name="adds"/></testsuites>');
    git(wt, 'add', '-A');
    const shipped = git(wt, 'diff', '--binary', '--cached', baseSha) + '\n';
    git(repo, 'worktree', 'remove', '--force', wt);
    const f = await judge(shipped, results, argv);
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_tampered' });
    expect(f.reasons.join(' ')).toContain('reports/junit.xml');
  });
});

describe('grading.sealedResults in school.yml', () => {
  it('the drain judges with it (the recommended node-test setting)', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-drain'));
    const cfg = config({
      repoPath: repo,
      grading: { sealedTests: NODE_TEST, sealedDir: suite, sealedResults: { format: 'node-test' } },
    });
    const jobs = [
      writeBookbag(layout, {
        crewId: 'c-cheat',
        issueNumber: 1,
        diff: diffs.exitAtImport,
        baseSha,
        verification: 'passed',
      }),
      writeBookbag(layout, {
        crewId: 'c-fix',
        issueNumber: 2,
        diff: diffs.fixed,
        baseSha,
        verification: 'passed',
      }),
    ];
    await enqueueMany(layout, jobs);
    const r = await drain({ config: cfg, layout, logger: silentLogger, limits: { maxWorkers: 2 } });
    const byCrew = Object.fromEntries(r.verdicts.map((v) => [v.crewId, v]));
    expect(byCrew['c-cheat']).toMatchObject({
      accepted: false,
      decidedBy: 'sealed',
      code: 'sealed_tests_tampered',
    });
    expect(byCrew['c-fix']).toMatchObject({ accepted: true });
  });

  it('is checked against the command at load, with the fix in the message', () => {
    const load = (grading: Record<string, unknown>) => () => parseConfig({ grading }, 'school.yml');
    expect(load({ sealedResults: { format: 'node-test' } })).toThrow(
      /grading\.sealedResults: needs grading\.sealedTests/,
    );
    expect(load({ sealedTests: ['npm', 'test'], sealedResults: { format: 'node-test' } })).toThrow(
      /grading\.sealedTests: with sealedResults\.format node-test the command is node's test runner/,
    );
    expect(
      load({
        sealedTests: ['node', '--test', '--test-reporter=tap'],
        sealedResults: { format: 'node-test' },
      }),
    ).toThrow(/the judge sets the reporters; remove --test-reporter=tap/);
    expect(load({ sealedTests: ['pytest'], sealedResults: { format: 'junit' } })).toThrow(
      /writes its JUnit XML to \{results\}/,
    );
    expect(load({ sealedTests: ['pytest'], sealedResults: { format: 'junit', file: '../x.xml' } })).toThrow(
      /grading\.sealedResults\.file: is a path inside the checkout/,
    );
    expect(load({ sealedTests: ['pytest'], sealedResults: { format: 'junit', file: '/tmp/x.xml' } })).toThrow(
      /is a path inside the checkout/,
    );
    expect(load({ sealedTests: ['pytest'], sealedResults: { format: 'mocha' } })).toThrow(
      /grading\.sealedResults\.format/,
    );
    const ok = parseConfig(
      {
        grading: {
          sealedTests: ['pytest', '--junitxml={results}'],
          sealedResults: { format: 'junit', expect: ['a'] },
        },
      },
      'school.yml',
    );
    expect(ok.grading.sealedResults).toEqual({ format: 'junit', expect: ['a'] });
  });
});
