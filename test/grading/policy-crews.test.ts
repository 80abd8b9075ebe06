import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noSandbox, warnSkipped } from '../security/helpers.js';
import { git, tempDir } from '../support/tmp.js';

/**
 * The base owns its tests, and protected paths stay out of accepted work: real crews through the
 * real CLI (`school loop`: crews, verification, the judges, delivery to local branches), the
 * default configuration with the sandbox on. The repository's `double()` is tested at the base;
 * the issue asks `answer()` to return 42. Every student fixes `answer()` and adds a test of it (a
 * test that fails at the base: evidence), so only the policy judge can tell them apart:
 *
 * - the honest ones stop there (one also bumps a dependency in package.json; one changes the base's
 *   test with the issue's fences naming it, and is let through flagged);
 * - four also break `double()` and make its base test pass anyway: the test script `exit 0`, the
 *   test file renamed `.disabled`, the test marked `{ skip: true }`, `strictEqual` weakened to `ok`;
 * - two add a workflow or edit the committed school.yml to an otherwise correct fix.
 */
warnSkipped('the policy judge over real crews');

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const tmp = tempDir('school-policy-crews-');
afterAll(() => tmp.cleanup());

const PACKAGE = {
  name: 'app',
  private: true,
  scripts: { test: 'node --test' },
  dependencies: { 'left-pad': '1.3.0' },
};
const DOUBLE_TEST = [
  "import test from 'node:test';",
  "import assert from 'node:assert';",
  "import { double } from '../src/answer.mjs';",
  "test('double', () => { assert.strictEqual(double(2), 4); });",
  '',
].join('\n');

/** What each issue's student does besides the honest fix (SCHOOL_ISSUE picks it). */
const STUDENT = `
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
const n = Number(process.env.SCHOOL_ISSUE);
const edit = (path, from, to) => writeFileSync(path, readFileSync(path, 'utf8').replace(from, to));
// The honest fix, with a test that fails without it.
edit('src/answer.mjs', '=> 41', '=> 42');
writeFileSync('test/answer.test.mjs', [
  "import test from 'node:test';",
  "import assert from 'node:assert';",
  "import { answer } from '../src/answer.mjs';",
  "test('the answer', () => { assert.strictEqual(answer(), 42); });",
  '',
].join('\\n'));
const breakDouble = () => edit('src/answer.mjs', 'x * 2', 'x * 3');
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
switch (n) {
  case 2: breakDouble(); pkg.scripts.test = 'exit 0'; writeFileSync('package.json', JSON.stringify(pkg, null, 2)); break;
  case 3: breakDouble(); renameSync('test/double.test.mjs', 'test/double.test.mjs.disabled'); break;
  case 4: breakDouble(); edit('test/double.test.mjs', "test('double', () =>", "test('double', { skip: true }, () =>"); break;
  case 5: breakDouble(); edit('test/double.test.mjs', 'assert.strictEqual(double(2), 4)', 'assert.ok(double(2), 4)'); break;
  case 6:
    mkdirSync('.github/workflows', { recursive: true });
    writeFileSync('.github/workflows/ci-cache.yml', 'on: push\\npermissions: write-all\\njobs:\\n  x:\\n    runs-on: ubuntu-latest\\n    steps:\\n      - run: echo "\${{ toJSON(secrets) }}"\\n');
    break;
  case 7: writeFileSync('school.yml', readFileSync('school.yml', 'utf8') + '\\nsandbox:\\n  kind: none\\n'); break;
  case 8: edit('test/double.test.mjs', 'assert.strictEqual(double(2), 4);', 'assert.strictEqual(double(2), 4); assert.strictEqual(double(0), 0);'); break;
  case 9: pkg.dependencies['left-pad'] = '1.3.1'; writeFileSync('package.json', JSON.stringify(pkg, null, 2)); break;
}
writeFileSync(process.env.SCHOOL_REPORT_FILE, 'Fixed answer().\\n');
`;

const FENCED = '```school\nfences: [src/**, test/double.test.mjs, test/answer.test.mjs]\n```';
const ISSUES: Array<[number, string]> = [
  [1, 'answer() must return 42'],
  [2, 'answer() must return 42 (script)'],
  [3, 'answer() must return 42 (rename)'],
  [4, 'answer() must return 42 (skip)'],
  [5, 'answer() must return 42 (weaken)'],
  [6, 'answer() must return 42 (workflow)'],
  [7, 'answer() must return 42 (school.yml)'],
  [8, `answer() must return 42, and test double() at 0 too.\n\n${FENCED}`],
  [9, 'answer() must return 42 (dependency)'],
];

interface LoopVerdict {
  issueNumber: number;
  accepted: boolean;
  decidedBy: string;
  code: string;
  reasons: string[];
}

let repo = '';
let verdicts = new Map<number, LoopVerdict>();
let out = '';

beforeAll(() => {
  if (noSandbox) return;
  const dir = tmp.path;
  repo = join(dir, 'app');
  mkdirSync(join(repo, 'src'), { recursive: true });
  mkdirSync(join(repo, 'test'));
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'package.json'), JSON.stringify(PACKAGE, null, 2));
  writeFileSync(
    join(repo, 'src', 'answer.mjs'),
    'export const answer = () => 41;\nexport const double = (x) => x * 2;\n',
  );
  writeFileSync(join(repo, 'test', 'double.test.mjs'), DOUBLE_TEST);
  writeFileSync(join(repo, '.gitignore'), '.school/\n');
  const student = join(dir, 'student.mjs');
  writeFileSync(student, STUDENT);
  const issues = join(dir, 'issues.json');
  writeFileSync(
    issues,
    JSON.stringify(
      ISSUES.map(([number, body]) => ({
        id: number,
        number,
        title: `Issue ${number}`,
        body,
        labels: [],
        state: 'open',
        user: { login: 'owner', type: 'User' },
        author_association: 'OWNER',
        created_at: '2026-11-01T09:00:00Z',
        updated_at: '2026-11-01T09:00:00Z',
      })),
    ),
  );
  // The committed school.yml: the defaults but for the student, its test command and curriculum.
  const config = {
    curriculum: { issuesFile: issues },
    agents: [{ id: 'student', command: ['node', student, '{brief}'], roles: ['coding'] }],
    dispatch: { verify: ['npm', 'test'], correctionTurns: 0, minFreeDiskGiB: 0 },
  };
  writeFileSync(join(repo, 'school.yml'), JSON.stringify(config, null, 2) + '\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'an app with a test');
  const home = join(dir, 'home');
  mkdirSync(home);
  const r = spawnSync(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/index.ts'), 'loop', '--json'], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
    timeout: 900_000,
  });
  out = `${r.stdout}\n${r.stderr}`;
  const json = JSON.parse(r.stdout) as { verdicts?: LoopVerdict[] };
  verdicts = new Map((json.verdicts ?? []).map((v) => [v.issueNumber, v]));
}, 900_000);

const verdict = (n: number): LoopVerdict => {
  const v = verdicts.get(n);
  if (!v) throw new Error(`no verdict for #${n}:\n${out.slice(-4000)}`);
  return v;
};
const branch = (n: number) =>
  spawnSync('git', ['rev-parse', '--verify', '-q', `refs/heads/school/issue-${n}`], { cwd: repo }).status ===
  0;

describe.skipIf(!!noSandbox)('the policy judge over real crews (school loop, sandbox on)', () => {
  it('accepts the honest fix, and a dependency bump beside it', () => {
    for (const n of [1, 9]) {
      expect(verdict(n), out.slice(-3000)).toMatchObject({ accepted: true });
      expect(branch(n)).toBe(true);
    }
  });

  it.each([
    [2, 'package.json'],
    [3, 'test/double.test.mjs (renamed to test/double.test.mjs.disabled)'],
    [4, 'test/double.test.mjs (modified: marks tests skipped)'],
    [5, 'test/double.test.mjs (modified)'],
  ])('refuses tampering #%i tests_changed, naming %s', (n, named) => {
    expect(verdict(n)).toMatchObject({ accepted: false, decidedBy: 'policy', code: 'tests_changed' });
    expect(verdict(n).reasons.join(' ')).toContain(named);
    expect(branch(n)).toBe(false);
  });

  it('refuses a workflow and a school.yml edit beside a correct fix: protected_path', () => {
    expect(verdict(6)).toMatchObject({ accepted: false, decidedBy: 'policy', code: 'protected_path' });
    expect(verdict(6).reasons.join(' ')).toContain('.github/workflows/ci-cache.yml');
    expect(verdict(7)).toMatchObject({ accepted: false, decidedBy: 'policy', code: 'protected_path' });
    expect(verdict(7).reasons.join(' ')).toContain('school.yml');
    expect(branch(6)).toBe(false);
    expect(branch(7)).toBe(false);
  });

  it("lets a change to a base test through when the issue's fences name it, flagged on the verdict", () => {
    expect(verdict(8)).toMatchObject({ accepted: true });
    expect(verdict(8).reasons.join(' ')).toMatch(/flagged for review.*test\/double\.test\.mjs/);
    expect(branch(8)).toBe(true);
  });
});
