import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { defaultGrader } from '../../src/grading/judges.js';
import { judgeGrader } from '../../src/grading/judge-verify.js';
import { withJudgeSandbox } from '../../src/grading/judge-sandbox.js';
import { silentLogger } from '../../src/log.js';
import { childEnv } from '../../src/process/env.js';
import { StateLayout } from '../../src/state/layout.js';
import { crewAlerts } from '../security/helpers.js';
import { testHost } from '../support/host.js';
import { git, initRepo, tempDir, worktreeDiff } from '../support/tmp.js';
import { writeBookbag } from '../grading/helpers.js';
import { item, plan, registry, spec, writeCurriculum, type School, schoolAround } from './helpers.js';

/**
 * Verification that knows its base (docs/grading.md, "Verification"): the unchanged base is verified
 * once, a crew is graded on the difference from it, and what is the school's failure — an install
 * that cannot fetch, a red base nothing tells apart from the crew's run — is an environment outcome:
 * no score, no repair, no correction turn, an alert that says what to fix. The verification's
 * checkout and dependencies are writable for the run and thrown away after; a patch that does not
 * apply is named as such. Real git, real npm, the default sandbox.
 */
let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
});

/** A command agent: a node script that writes `files` (null deletes) in its worktree. */
function student(dir: string, name: string, files: Record<string, string | null>): string[] {
  const path = join(dir, `${name}.cjs`);
  writeFileSync(
    path,
    `const fs = require('fs'); const path = require('path');\n` +
      `for (const [f, text] of Object.entries(${JSON.stringify(files)})) {\n` +
      `  if (text === null) { fs.rmSync(f, { force: true }); continue; }\n` +
      `  fs.mkdirSync(path.dirname(f), { recursive: true }); fs.writeFileSync(f, text);\n}\n`,
  );
  return ['node', path, '{brief}'];
}

function makeSchool(
  files: Record<string, string>,
  dispatch: Record<string, unknown>,
  agents: Record<string, Record<string, string | null>>,
  worktrees = 1,
): School {
  const t = tempDir('school-verify-base-');
  const repo = initRepo(join(t.path, 'repo'), { '.gitignore': 'node_modules/\n', ...files });
  const bin = join(t.path, 'students');
  mkdirSync(bin);
  const config = parseConfig({
    stateDir: join(t.path, 'state'),
    repoPath: repo,
    fleet: { daemons: [{ id: 'd1', worktrees }] },
    agents: Object.entries(agents).map(([id, f]) => ({ id, command: student(bin, id, f) })),
    dispatch: { crewTimeoutSeconds: 90, leaseSeconds: 90, correctionTurns: 1, choice: 'greedy', ...dispatch },
  });
  return schoolAround(t, repo, config);
}

async function runOne(s: School, crewId: string, issue: number, agent: string) {
  const result = await runCrew(await spec(s, crewId), { logger: silentLogger });
  const dir = s.layout.bookbag(crewId);
  return {
    result,
    record: JSON.parse(readFileSync(join(dir, 'bookbag.json'), 'utf8')),
    log: readFileSync(join(dir, 'verification.log'), 'utf8'),
    crew: registry(s).crews[crewId]!,
    issue,
    agent,
  };
}

const queued = (s: School) => Object.values(new GradingQueue(s.layout).state().jobs);

/** lib.js with three bugs its committed tests catch, and two tests that pass at the base. */
const RED_BASE = {
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', scripts: { test: 'node --test' } }),
  'lib.js':
    'exports.add = (a, b) => a - b;\nexports.mul = (a, b) => a * b + 1;\nexports.neg = (a) => a;\nexports.one = () => 1;\nexports.two = () => 2;\n',
  'test/lib.test.js': [
    "const { test } = require('node:test');",
    "const assert = require('node:assert');",
    "const lib = require('../lib.js');",
    "test('add', () => assert.strictEqual(lib.add(2, 3), 5));",
    "test('mul', () => assert.strictEqual(lib.mul(2, 3), 6));",
    "test('neg', () => assert.strictEqual(lib.neg(2), -2));",
    "test('one', () => assert.strictEqual(lib.one(), 1));",
    "test('two', () => assert.strictEqual(lib.two(), 2));",
    '',
  ].join('\n'),
};
const FIXED =
  'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\nexports.neg = (a) => -a;\nexports.one = () => 1;\nexports.two = () => 2;\n';

describe('an install that cannot fetch is the school’s failure', () => {
  it('two concurrent crews of one base: one install attempt, both aborted as environment, no score, no repair, an alert naming the install', async () => {
    const s = (school = makeSchool(
      {
        ...RED_BASE,
        'lib.js': FIXED,
        // An older base's git devDependency over ssh: the sandbox's registry-only network cannot fetch it.
        'package.json': JSON.stringify({
          name: 'fx',
          version: '1.0.0',
          scripts: { test: 'node --test' },
          devDependencies: { 'private-dep': 'git+ssh://git@github.invalid/owner/private-dep.git' },
        }),
      },
      { verify: ['npm', 'test'], install: { command: ['npm', 'install', '--no-audit', '--no-fund'] } },
      { honest: { 'lib.js': FIXED.replace('=> 1;', '=> 1; // checked') } },
      2,
    ));
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-honest', issue: 1, agent: 'honest' },
      { crewId: 'c2-honest', issue: 2, agent: 'honest' },
    ]);
    const [a, b] = await Promise.all([
      spec(s, 'c1-honest').then((sp) => runCrew(sp, { logger: silentLogger })),
      spec(s, 'c2-honest').then((sp) => runCrew(sp, { logger: silentLogger })),
    ]);
    const logs = ['c1-honest', 'c2-honest'].map((id) =>
      readFileSync(join(s.layout.bookbag(id), 'verification.log'), 'utf8'),
    );
    // One install for the base: the crew that waited took the failure it left.
    expect(logs.join('\n').match(/installing dependencies at the base/g)).toHaveLength(1);
    expect(logs.join('\n')).toMatch(/the dependency install failed for this base/);
    for (const [r, id] of [
      [a!, 'c1-honest'],
      [b!, 'c2-honest'],
    ] as const) {
      expect(r.outcome, r.reason).toBe('aborted');
      expect(r.reason).toMatch(/dispatch\.install `npm install --no-audit --no-fund` exited with \d+/);
      const record = JSON.parse(readFileSync(join(s.layout.bookbag(id), 'bookbag.json'), 'utf8'));
      expect(record.verification).toMatchObject({ passed: false, environment: { kind: 'install_failed' } });
      // Never "exited on a signal"; no correction turn spent on what the student cannot fix.
      expect(record.verification.environment.reason).not.toMatch(/signal/);
      expect(record.correctionTurns).toBe(0);
      const alerts = crewAlerts(s, id).filter((x) => x.kind === 'environment-failed');
      expect(alerts).toHaveLength(1);
      expect(alerts[0]!.detail).toMatch(/npm install/);
      expect(alerts[0]!.detail).toMatch(/private-dep|git|ssh/i);
      expect(registry(s).crews[id]!.infra).toBe(true);
    }
    // Not graded (never scored), and no repair is planned for either issue.
    expect(queued(s)).toEqual([]);
    for (const n of [1, 2]) expect(issueStates(registry(s)).get(n)).toMatchObject({ kind: 'ready' });
  }, 240_000);
});

describe('a red base', () => {
  it('with named results: an honest fix is accepted with its FAIL_TO_PASS; a no-op is not blamed but not accepted; a regression is the crew’s', async () => {
    const s = (school = makeSchool(
      RED_BASE,
      { verify: ['node', '--test'], verifyResults: { format: 'node-test' } },
      {
        honest: { 'lib.js': FIXED },
        noop: {},
        // Fixes one bug and breaks a test that passed at the base.
        breaker: { 'lib.js': FIXED.replace('a * b', 'a * b + 1').replace('() => 2', '() => 3') },
      },
    ));
    writeCurriculum(s, [item(1), item(2), item(3)]);
    await plan(s, [
      { crewId: 'c1-honest', issue: 1, agent: 'honest' },
      { crewId: 'c2-noop', issue: 2, agent: 'noop' },
      { crewId: 'c3-breaker', issue: 3, agent: 'breaker' },
    ]);
    const honest = await runOne(s, 'c1-honest', 1, 'honest');
    expect(honest.result.outcome, honest.result.reason).toBe('succeeded');
    expect(honest.record.verification).toMatchObject({
      passed: true,
      base: { passed: false, named: true, failingCount: 3, passingCount: 2 },
      passToPassCount: 2,
    });
    expect([...honest.record.verification.failToPass].sort()).toEqual(['add', 'mul', 'neg']);
    expect(honest.log).toMatch(/verifying the unchanged base/);
    // The red base is said once, by the crew that first met it, naming the failing tests.
    const red = crewAlerts(s).filter((x) => x.kind === 'base-red');
    expect(red).toHaveLength(1);
    expect(red[0]!.detail).toMatch(/3 test\(s\) fail before any change \(add; mul; neg\)/);

    const noop = await runOne(s, 'c2-noop', 2, 'noop');
    // Not blamed for the base's three failures: its verification passes on the difference …
    expect(noop.record.verification).toMatchObject({ passed: true, failToPass: [], passToPassCount: 2 });
    expect(noop.log).not.toMatch(/verifying the unchanged base/); // the base's record is reused
    const breaker = await runOne(s, 'c3-breaker', 3, 'breaker');
    expect(breaker.result.outcome).toBe('failed');
    expect(breaker.record.verification).toMatchObject({ passed: false, broken: ['two'] });
    expect(breaker.record.verification.broken).not.toContain('mul'); // failing at the base too
    expect(breaker.record.correctionTurns).toBe(1);
    expect(crewAlerts(s).filter((x) => x.kind === 'base-red')).toHaveLength(1);

    // … and graded: the fix accepted, the no-op (it changed nothing) not.
    const grade = defaultGrader({ config: s.config, layout: s.layout, host: testHost() });
    const jobs = Object.fromEntries(queued(s).map((j) => [j.job.crewId, j.job]));
    const fix = await grade(jobs['c1-honest']!);
    expect(fix.accepted, JSON.stringify(fix)).toBe(true);
    const verification = fix.findings.find((f) => f.judge === 'verification')!;
    expect(verification.reasons.join('\n')).toMatch(/3 test\(s\) failing at the base now pass/);
    const none = await grade(jobs['c2-noop']!);
    expect(none.accepted).toBe(false);
    expect(none.findings.find((f) => f.judge === 'verification')).toMatchObject({ passed: true });
    const broke = await grade(jobs['c3-breaker']!);
    expect(broke).toMatchObject({ accepted: false, code: 'verification_failed' });
  }, 240_000);

  it('without named results: a crew still failing after its correction turns is an environment outcome `base_red`, said once as an alert, no score', async () => {
    const s = (school = makeSchool(
      RED_BASE,
      { verify: ['npm', 'test'] },
      { partial: { 'lib.js': FIXED.replace('a + b', 'a - b') }, honest: { 'lib.js': FIXED } },
    ));
    writeCurriculum(s, [item(1), item(2), item(3)]);
    await plan(s, [
      { crewId: 'c1-partial', issue: 1, agent: 'partial' },
      { crewId: 'c2-partial', issue: 2, agent: 'partial' },
      { crewId: 'c3-honest', issue: 3, agent: 'honest' },
    ]);
    for (const [id, n] of [
      ['c1-partial', 1],
      ['c2-partial', 2],
    ] as const) {
      const r = await runOne(s, id, n, 'partial');
      expect(r.result.outcome).toBe('aborted');
      expect(r.crew.infra).toBe(true);
      expect(r.record.verification).toMatchObject({
        passed: false,
        exitCode: 1,
        environment: { kind: 'base_red' },
        base: { exitCode: 1, passed: false, named: false },
      });
      expect(r.record.verification.environment.reason).toMatch(/the base itself fails/);
      expect(r.record.verification.environment.reason).toMatch(/dispatch\.verifyResults/);
      // What fails on a red base may be what the issue asks to fix: the crew gets its turns (told
      // the base fails too), and what is still red after them is the base's, not the crew's.
      expect(r.record.correctionTurns).toBe(s.config.dispatch.correctionTurns);
      expect(issueStates(registry(s)).get(n)).toMatchObject({ kind: 'ready' });
    }
    expect(
      crewAlerts(s)
        .filter((x) => x.kind === 'base-red')
        .map((x) => x.crewId),
    ).toEqual(['c1-partial']);
    expect(queued(s)).toEqual([]);
    // A crew that makes the suite pass is told apart from the base: it passes.
    const honest = await runOne(s, 'c3-honest', 3, 'honest');
    expect(honest.result.outcome).toBe('succeeded');
    expect(honest.record.verification).toMatchObject({ passed: true, exitCode: 0 });
  }, 240_000);
});

describe('a green base', () => {
  it('without named results: a failing crew is its own failure, corrected with its own output, not the base’s', async () => {
    const s = (school = makeSchool(
      { ...RED_BASE, 'lib.js': FIXED },
      { verify: ['npm', 'test'] },
      { breaker: { 'lib.js': FIXED.replace('() => 2', '() => 3') } },
    ));
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-breaker', issue: 1, agent: 'breaker' }]);
    const r = await runOne(s, 'c1-breaker', 1, 'breaker');
    expect(r.result.outcome).toBe('failed');
    expect(r.crew.infra).toBeUndefined();
    expect(r.record.verification).toMatchObject({
      passed: false,
      exitCode: 1,
      base: { passed: true, exitCode: 0 },
    });
    expect(r.record.verification.environment).toBeUndefined();
    expect(r.record.correctionTurns).toBe(1);
    // The log a correction quotes ends with the crew's run and the verdict, not the base's output.
    expect(r.log).toMatch(/exited with 1; it passes at the base/);
    expect(r.log).toMatch(/# fail 1/);
    expect(r.log).not.toMatch(/# pass 5/);
    expect(issueStates(registry(s)).get(1)).toMatchObject({ kind: 'repair' });
  }, 240_000);
});

describe('verification where tools write', () => {
  it('a test command writing its cache under the tree and node_modules passes, and nothing reaches the dependency cache or the next crew', async () => {
    const install = [
      'node',
      '-e',
      "const fs=require('fs');fs.mkdirSync('node_modules/five',{recursive:true});fs.writeFileSync('node_modules/five/index.js','module.exports=5')",
    ];
    // Like `eslint --cache`: refuses to run over a cache an earlier run left.
    const lint = [
      "const fs = require('fs');",
      "for (const f of ['node_modules/.cache/lint/x', '.lintcache/y']) {",
      "  if (fs.existsSync(f)) { console.error('left by an earlier run: ' + f); process.exit(1); }",
      "  fs.mkdirSync(require('path').dirname(f), { recursive: true }); fs.writeFileSync(f, 'cache');",
      '}',
      // An in-place write to an installed file: a copy's (where the file system shares blocks) or
      // refused (the cache shown read-only); never the cache's.
      "try { fs.appendFileSync('node_modules/five/index.js', '\\n// touched'); } catch (e) { if (e.code !== 'EROFS') throw e; }",
      '',
    ].join('\n');
    const s = (school = makeSchool(
      {
        'package.json': JSON.stringify({
          name: 'fx',
          version: '1.0.0',
          scripts: { test: 'node lint.js && node --test' },
        }),
        'package-lock.json': '{"lockfileVersion":3}\n',
        'lint.js': lint,
        'five.js': 'module.exports = () => 4;\n',
        'test/five.test.js':
          "const { test } = require('node:test');\nconst assert = require('node:assert');\ntest('five', () => assert.strictEqual(require('../five.js')(), require('five')));\n",
      },
      { verify: ['npm', 'test'], install: { command: install } },
      { honest: { 'five.js': "module.exports = () => require('five');\n" } },
    ));
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-honest', issue: 1, agent: 'honest' },
      { crewId: 'c2-honest', issue: 2, agent: 'honest' },
    ]);
    for (const [id, n] of [
      ['c1-honest', 1],
      ['c2-honest', 2],
    ] as const) {
      const r = await runOne(s, id, n, 'honest');
      expect(r.result.outcome, `${r.result.reason}\n${r.log}`).toBe('succeeded');
      expect(r.record.verification).toMatchObject({ passed: true, exitCode: 0 });
      // What the run wrote is not in the patch.
      expect(readFileSync(join(s.layout.bookbag(id), 'diff.patch'), 'utf8')).not.toMatch(/lintcache|\.cache/);
    }
    const deps = join((await spec(s, 'c1-honest')).runtimeDir, 'deps');
    const caches = readdirSync(deps).filter((d) => /^[0-9a-f]{32}$/.test(d));
    expect(caches).toHaveLength(1);
    const modules = join(deps, caches[0]!, 'node_modules');
    // Only what the install made; the tool cache's mount point (ext4: the cache is shown read-only
    // with a writable node_modules/.cache of each run's own) stays empty.
    expect(readdirSync(modules).filter((f) => f !== '.cache')).toEqual(['five']);
    if (existsSync(join(modules, '.cache'))) expect(readdirSync(join(modules, '.cache'))).toEqual([]);
    expect(readFileSync(join(modules, 'five', 'index.js'), 'utf8')).toBe('module.exports=5');
  }, 240_000);
});

/** A patch made by git in a scratch worktree of `base`. */
function patchOf(repo: string, base: string, dir: string, files: Record<string, string | null>): string {
  const wt = join(dir, `wt-${Math.random().toString(36).slice(2)}`);
  return worktreeDiff(
    repo,
    base,
    (wt) => {
      for (const [f, text] of Object.entries(files)) {
        if (text === null) rmSync(join(wt, f));
        else {
          mkdirSync(join(wt, f, '..'), { recursive: true });
          writeFileSync(join(wt, f), text);
        }
      }
    },
    wt,
  );
}

describe('the clean checkout', () => {
  function direct(s: School, patch: string, base: string) {
    const scratch = join(s.root, 'scratch');
    return withJudgeSandbox(s.config, testHost(), (sandbox) =>
      verifyOnCleanCheckout(
        {
          config: s.config,
          baseSha: base,
          patch,
          scratch: join(scratch, 'checkouts'),
          depsRoot: join(scratch, 'deps'),
          sandbox,
          logFile: join(scratch, 'verify.log'),
          timeoutMs: 90_000,
        },
        s.config.dispatch.verify!,
        childEnv(),
      ),
    ).then((r) => ({ ...r.value, log: readFileSync(join(scratch, 'verify.log'), 'utf8') }));
  }

  it('puts the base’s tests and test definitions back over the patch; tests the patch adds run as well', async () => {
    const s = (school = makeSchool(
      RED_BASE,
      { verify: ['node', '--test'], verifyResults: { format: 'node-test' } },
      {},
    ));
    const base = git(s.repo, 'rev-parse', 'HEAD');
    const weakened = RED_BASE['test/lib.test.js'].replaceAll('assert.strictEqual', 'assert.ok');
    const patch = patchOf(s.repo, base, s.root, {
      'test/lib.test.js': weakened,
      'package.json': JSON.stringify({ name: 'fx', version: '1.0.1', scripts: { test: 'exit 0' } }),
      'test/extra.test.js':
        "const { test } = require('node:test');\nconst assert = require('node:assert');\ntest('extra', () => assert.strictEqual(1, 2));\n",
    });
    const r = await direct(s, patch, base);
    expect(r.reset).toEqual(expect.arrayContaining(['test/lib.test.js', 'package.json']));
    expect(r.log).toMatch(/put back over the patch/);
    // The base's tests ran as the base wrote them: still failing, not the crew's to carry, none
    // turned; the test the patch added ran and fails — that is the crew's.
    expect(r).toMatchObject({ passed: false, failToPass: [], broken: ['extra'] });
    expect(r.environment).toBeUndefined();
  }, 180_000);

  it('a patch that does not apply is `patch_does_not_apply` with git’s words, in the crew’s record and in the judge', async () => {
    const s = (school = makeSchool(RED_BASE, { verify: ['node', '--test'] }, {}));
    const base = git(s.repo, 'rev-parse', 'HEAD');
    const good = patchOf(s.repo, base, s.root, { 'lib.js': FIXED });
    // The same change against a context line the base does not have.
    const bad = good.replace('-exports.add = (a, b) => a - b;', '-exports.add = (a, b) => a / b;');
    const r = await direct(s, bad, base);
    expect(r).toMatchObject({ passed: false, exitCode: null });
    expect(r.notApplied).toMatch(/patch failed: lib\.js|does not apply/);
    expect(r.log).toMatch(/does not apply at the base/);
    expect(r.log).not.toMatch(/exited with null|on a signal/);

    const layout = new StateLayout(join(s.root, 'judge-state'));
    const grader = judgeGrader({
      config: { ...s.config, stateDir: layout.root },
      layout,
      host: testHost(),
      verifyOnCleanCheckout,
    });
    try {
      const job = writeBookbag(layout, {
        crewId: 'c9-00000009',
        issueNumber: 9,
        diff: bad,
        baseSha: base,
        verification: 'passed',
      });
      const v = await grader(job);
      expect(v).toMatchObject({ accepted: false, code: 'patch_does_not_apply' });
      expect(v.findings[0]!.reasons.join('\n')).toMatch(/does not apply at base/);
      expect(v.findings[0]!.reasons.join('\n')).not.toMatch(/exited with null/);
    } finally {
      grader.close();
    }
  }, 180_000);

  it('the judge job meets a failed install as the school’s error, never a verdict', async () => {
    const s = (school = makeSchool(
      { ...RED_BASE, 'lib.js': FIXED },
      {
        verify: ['node', '--test'],
        install: {
          command: ['node', '-e', "console.error('E404 cannot fetch private-dep'); process.exit(1)"],
        },
      },
      {},
    ));
    const base = git(s.repo, 'rev-parse', 'HEAD');
    const layout = new StateLayout(join(s.root, 'judge-state'));
    const grader = judgeGrader({
      config: { ...s.config, stateDir: layout.root },
      layout,
      host: testHost(),
      verifyOnCleanCheckout,
    });
    try {
      const diff = patchOf(s.repo, base, s.root, { 'README.md': 'x\n' });
      const job = writeBookbag(layout, {
        crewId: 'c8-00000008',
        issueNumber: 8,
        diff,
        baseSha: base,
        verification: 'passed',
      });
      await expect(grader(job)).rejects.toMatchObject({
        name: 'VerificationInfraError',
        message: expect.stringMatching(/dispatch\.install .* exited with 1 .*E404 cannot fetch private-dep/s),
      });
    } finally {
      grader.close();
    }
    expect(existsSync(s.repo)).toBe(true);
  }, 180_000);
});
