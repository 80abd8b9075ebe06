import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { policyFinding, type PolicyInput } from '../../src/grading/policy.js';
import { defaultGrader } from '../../src/grading/judges.js';
import { StateLayout } from '../../src/state/layout.js';
import { git, initRepo, tempDir, worktreeDiff } from '../support/tmp.js';
import { config, writeBookbag } from './helpers.js';

/**
 * The policy judge over patches as git applies them (real git): which changes to the base's tests,
 * its test definitions and protected paths are refused, which are let through flagged, and that it
 * decides with a reviewer configured too.
 */
const tmp = tempDir('school-policy-');
afterAll(() => tmp.cleanup());

let repo: string;
let baseSha: string;

beforeAll(() => {
  repo = initRepo(join(tmp.path, 'repo'), {
    'package.json': JSON.stringify(
      { scripts: { test: 'node --test' }, dependencies: { a: '1.0.0' } },
      null,
      2,
    ),
    'src/sum.mjs': 'export const sum = (a, b) => a - b;\n',
    'test/sum.test.mjs': "import test from 'node:test';\ntest('sum', () => {});\n",
    'tests/test_parse.py': 'def test_parse():\n    assert True\n',
    'pyproject.toml': '[project]\nname = "p"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
    'README.md': '# r\n',
  });
  baseSha = git(repo, 'rev-parse', 'HEAD');
});

const crewDiff = (edit: (dir: string) => void) => worktreeDiff(repo, baseSha, edit);

const write = (dir: string, path: string, text: string) => {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), text);
};
const fix = (wt: string) => write(wt, 'src/sum.mjs', 'export const sum = (a, b) => a + b;\n');

const GRADING = { testPatterns: [], testDefinitions: [], allowTestChanges: false, allowProtected: [] };
const policy = (diff: string, over: Partial<PolicyInput> = {}) =>
  policyFinding({ repoPath: repo, baseSha, diff, fences: [], grading: GRADING, ...over });

describe('policy judge', () => {
  it('passes a fix with a new test, a dependency bump and a pyproject change outside pytest', async () => {
    const diff = crewDiff((wt) => {
      fix(wt);
      write(wt, 'test/sum-fix.test.mjs', "import test from 'node:test';\ntest('fix', () => {});\n");
      write(wt, 'tests/test_new.py', 'def test_new():\n    pass\n');
      write(
        wt,
        'package.json',
        JSON.stringify({ dependencies: { a: '1.0.1' }, scripts: { test: 'node --test' } }, null, 2),
      );
      write(wt, 'pyproject.toml', '[project]\nname = "q"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n');
    });
    expect(await policy(diff)).toMatchObject({ judge: 'policy', passed: true, code: 'policy_passed' });
  });

  it('refuses changes to the base tests and definitions, naming each file and what was done', async () => {
    const diff = crewDiff((wt) => {
      fix(wt);
      renameSync(join(wt, 'test/sum.test.mjs'), join(wt, 'test/sum.test.mjs.disabled'));
      write(
        wt,
        'tests/test_parse.py',
        'import pytest\n\n@pytest.mark.skip\ndef test_parse():\n    assert True\n',
      );
      write(
        wt,
        'pyproject.toml',
        '[project]\nname = "p"\n\n[tool.pytest.ini_options]\naddopts = "-q -k nothing"\n',
      );
    });
    const f = await policy(diff);
    expect(f).toMatchObject({ passed: false, code: 'tests_changed' });
    const why = f.reasons.join(' ');
    expect(why).toContain('test/sum.test.mjs (renamed to test/sum.test.mjs.disabled)');
    expect(why).toContain('tests/test_parse.py (modified: marks tests skipped)');
    expect(why).toContain('pyproject.toml (changed)');
    expect(why).toContain('grading.allowTestChanges');
  });

  it('refuses a deleted base test, and a new test definition file', async () => {
    expect(await policy(crewDiff((wt) => rmSync(join(wt, 'tests/test_parse.py'))))).toMatchObject({
      code: 'tests_changed',
      reasons: [expect.stringContaining('tests/test_parse.py (deleted)')],
    });
    expect(
      await policy(crewDiff((wt) => write(wt, 'pytest.ini', '[pytest]\naddopts = -k nothing\n'))),
    ).toMatchObject({
      code: 'tests_changed',
      reasons: [expect.stringContaining('pytest.ini (added)')],
    });
  });

  it("lets the base's tests change when the fences name them or the setting allows it, flagged", async () => {
    const diff = crewDiff((wt) => {
      fix(wt);
      write(wt, 'test/sum.test.mjs', "import test from 'node:test';\ntest('sum', () => { /* more */ });\n");
    });
    // Fences that hold the file without naming test files (src/**, test's parent) are not enough.
    expect((await policy(diff, { fences: ['**'] })).code).toBe('tests_changed');
    const named = await policy(diff, { fences: ['src/**', 'test/sum.test.mjs'] });
    expect(named).toMatchObject({ passed: true, code: 'policy_flagged' });
    expect(named.reasons[0]).toMatch(
      /flagged for review.*the issue's fences.*test\/sum\.test\.mjs \(modified\)/,
    );
    expect(await policy(diff, { fences: ['src/**', 'test/**'] })).toMatchObject({ code: 'policy_flagged' });
    const allowed = await policy(diff, { grading: { ...GRADING, allowTestChanges: true } });
    expect(allowed).toMatchObject({ passed: true, code: 'policy_flagged' });
    expect(allowed.reasons[0]).toContain('grading.allowTestChanges');
  });

  it('refuses protected paths unless fences or grading.allowProtected name them', async () => {
    const diff = crewDiff((wt) => {
      fix(wt);
      write(wt, '.github/workflows/ci.yml', 'on: push\n');
    });
    const f = await policy(diff);
    expect(f).toMatchObject({ passed: false, code: 'protected_path' });
    expect(f.reasons[0]).toContain('.github/workflows/ci.yml');
    // Every path is inside `**`, but `**` names no protected path.
    expect((await policy(diff, { fences: ['**'] })).code).toBe('protected_path');
    expect(await policy(diff, { fences: ['src/**', '.github/workflows/ci.yml'] })).toMatchObject({
      code: 'policy_flagged',
    });
    expect(
      await policy(diff, { grading: { ...GRADING, allowProtected: ['.github/workflows/*.yml'] } }),
    ).toMatchObject({ code: 'policy_flagged' });
    // The school's config, wherever it was loaded from (and school.yml by name).
    const cfg = crewDiff((wt) => write(wt, 'ops/school.yaml', 'sandbox: {kind: none}\n'));
    expect((await policy(cfg)).code).toBe('policy_passed');
    expect((await policy(cfg, { configFile: join(repo, 'ops/school.yaml') })).code).toBe('protected_path');
    for (const path of [
      'school.yml',
      '.gitattributes',
      'sub/.gitmodules',
      '.npmrc',
      '.yarnrc.yml',
      '.travis.yml',
    ])
      expect((await policy(crewDiff((wt) => write(wt, path, 'x\n')))).code, path).toBe('protected_path');
  });

  it('decides with a reviewer configured too, before the reviewer runs', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-reviewer'));
    const ran = join(tmp.path, 'reviewer-ran');
    const reviewer = [
      'node',
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(ran)}, 'x'); console.log(JSON.stringify({ approve: true, score: 1, reasons: ['fine'] }))`,
    ];
    const job = writeBookbag(layout, {
      crewId: 'c-tamper-rv',
      issueNumber: 1,
      baseSha,
      verification: 'passed',
      diff: crewDiff((wt) => {
        fix(wt);
        write(wt, 'package.json', JSON.stringify({ scripts: { test: 'exit 0' } }, null, 2));
      }),
    });
    const grade = defaultGrader({ config: config({ repoPath: repo, grading: { reviewer } }), layout });
    const v = await grade(job);
    expect(v).toMatchObject({ accepted: false, decidedBy: 'policy', code: 'tests_changed' });
    expect(v.reasons[0]).toContain('package.json (its scripts or test-runner settings changed)');
    expect(existsSync(ran)).toBe(false);
  });

  it('tells a configured reviewer what it let through flagged, in the brief it judges against', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-reviewer-note'));
    const reviewer = [
      'node',
      '-e',
      "let t = ''; process.stdin.on('data', (d) => (t += d)).on('end', () => { const b = JSON.parse(t).brief; " +
        "console.log(JSON.stringify({ approve: true, score: 1, reasons: [/Flagged by the school's policy judge[\\s\\S]*test\\/sum\\.test\\.mjs/.test(b) ? 'saw the flag' : 'no flag'] })); });",
    ];
    const job = writeBookbag(layout, {
      crewId: 'c-flag-rv',
      issueNumber: 2,
      baseSha,
      verification: 'passed',
      fences: ['src/**', 'test/sum.test.mjs'],
      diff: crewDiff((wt) => {
        fix(wt);
        write(wt, 'test/sum.test.mjs', "import test from 'node:test';\ntest('sum', () => { /* more */ });\n");
      }),
    });
    const cfg = config({ repoPath: repo, grading: { reviewer, evidence: 'optional' } });
    const v = await defaultGrader({ config: cfg, layout })(job);
    expect(v).toMatchObject({ accepted: true, decidedBy: 'reviewer' });
    expect(v.reasons[0]).toMatch(/^flagged for review: .*test\/sum\.test\.mjs \(modified\)/);
    expect(v.reasons).toContain('saw the flag');
  });
});
