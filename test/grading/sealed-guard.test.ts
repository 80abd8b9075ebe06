import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { drain } from '../../src/grading/drain.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { reviewerReasons } from '../../src/crew/run/continuity.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { git, tempDir, worktreeDiff } from '../support/tmp.js';
import { sealedRepo } from '../support/sealed-repo.js';
import { config, enqueueMany, writeBookbag } from './helpers.js';

/**
 * Sealed suites out of the code's reach, and leaking nothing (docs/grading.md, "The guard" and "What
 * the sealed judge tells"). The suite is set up as the docs recommend (node --test, named results,
 * the default sandbox), the code is left wrong (`answer()` returns 41), and each student attacks
 * from inside the code under test: real git, real processes, real bubblewrap, the real drain.
 */
const tmp = tempDir('school-sealed-guard-');
afterAll(() => tmp.cleanup());

/** Only in the sealed suite's source: where it shows up, the hidden suite has leaked. */
const MARK = 'sealed-source-marker-5f1c9e';
const BUGGY = 'export const answer = () => 41;\n';
const STUDENTS = {
  honest: 'export const answer = () => 42;\n',
  // One builtin object per process: replaced here, every assertion of the suite passes.
  neuter: [
    "import assert from 'node:assert';",
    "import strict from 'node:assert/strict';",
    'for (const a of [assert, strict]) {',
    '  a.strictEqual = () => {};',
    '  a.equal = () => {};',
    '  a.deepStrictEqual = () => {};',
    '}',
    BUGGY,
  ].join('\n'),
  // The same, quietly: a failed assignment must not stop the import.
  quietNeuter: [
    "import assert from 'node:assert';",
    'try { assert.strictEqual = () => {}; } catch {}',
    "try { Object.defineProperty(assert, 'strictEqual', { value: () => {} }); } catch {}",
    BUGGY,
  ].join('\n'),
  // The judge's closing check unplugged: the process ends without it.
  unplug: ["process.removeAllListeners('beforeExit');", BUGGY].join('\n'),
  // The test file that imported it, returned as the answer: the assertion's message carries it.
  echo: [
    "import { readFileSync } from 'node:fs';",
    "export const answer = () => readFileSync(process.argv[1], 'utf8');",
    '',
  ].join('\n'),
};
type Student = keyof typeof STUDENTS;

let repo: string;
let baseSha: string;
let suite: string;
const diffs = {} as Record<Student, string>;

const diffOf = (text: string) => worktreeDiff(repo, baseSha, { 'src/bug.mjs': text });

beforeAll(() => {
  ({ repo, baseSha, suite } = sealedRepo(
    tmp.path,
    {
      'src/bug.mjs': BUGGY,
      'package.json': '{"type":"module"}\n',
      'README.md': '# r\n',
    },
    {
      'answer.test.mjs': [
        "import { test } from 'node:test';",
        "import assert from 'node:assert/strict';",
        "const { answer } = await import(process.cwd() + '/src/bug.mjs');",
        `// ${MARK}`,
        "test('answer is 42', () => assert.strictEqual(answer(), 42));",
        "test('answer is a number', () => assert.equal(typeof answer(), 'number'));",
        '',
      ],
    },
    'sealed',
  ));
  for (const s of Object.keys(STUDENTS) as Student[]) diffs[s] = diffOf(STUDENTS[s]);
});

/** Every file under `dir`, relative, with its text. */
function files(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push([relative(dir, p), readFileSync(p, 'utf8')]);
    }
  };
  walk(dir);
  return out;
}

describe('the sealed judge against code that attacks its suite (default sandbox)', () => {
  it('without the judge, the neutering import makes the unfixed code pass its suite', () => {
    // The attack is real: the same suite run by node directly, on the neutered code, exits 0.
    const wt = join(tmp.path, 'wt-direct');
    git(repo, 'worktree', 'add', '--detach', '-q', wt, baseSha);
    writeFileSync(join(wt, 'src/bug.mjs'), STUDENTS.neuter);
    const r = spawnSync(process.execPath, ['--test', join(suite, 'answer.test.mjs')], {
      cwd: wt,
      encoding: 'utf8',
    });
    git(repo, 'worktree', 'remove', '--force', wt);
    expect(r.status).toBe(0);
  });

  it('rejects the neutering import as tampering, the echo without a trace of the suite; accepts the honest fix', async () => {
    const layout = new StateLayout(join(tmp.path, 'state'));
    const cfg = config({
      repoPath: repo,
      stateDir: layout.root,
      grading: {
        sealedTests: ['node', '--test', '{sealed}/'],
        sealedDir: suite,
        sealedResults: { format: 'node-test' },
      },
    });
    const students = Object.keys(STUDENTS) as Student[];
    await enqueueMany(
      layout,
      students.map((s, i) =>
        writeBookbag(layout, {
          crewId: `c-${s}`,
          issueNumber: i + 1,
          diff: diffs[s],
          baseSha,
          verification: 'passed',
        }),
      ),
    );
    const r = await drain({ config: cfg, layout, logger: silentLogger, limits: { maxWorkers: 2 } });
    const by = Object.fromEntries(r.verdicts.map((v) => [v.crewId, v]));
    expect(by['c-honest']).toMatchObject({ accepted: true });
    expect(by['c-neuter']).toMatchObject({
      accepted: false,
      decidedBy: 'sealed',
      code: 'sealed_tests_tampered',
    });
    expect(by['c-neuter']!.reasons.join('\n')).toMatch(/tried to replace `strictEqual`/);
    expect(by['c-unplug']).toMatchObject({ accepted: false, code: 'sealed_tests_tampered' });
    expect(by['c-unplug']!.reasons.join('\n')).toMatch(
      /ended before the judge's closing check ran.*: answer\.test\.mjs$/m,
    );
    // The quiet one's assignments failed silently (frozen): the suite really ran, and failed.
    expect(by['c-quietNeuter']).toMatchObject({ accepted: false, code: 'sealed_tests_failed' });
    expect(by['c-echo']).toMatchObject({ accepted: false, decidedBy: 'sealed', code: 'sealed_tests_failed' });
    expect(by['c-echo']!.reasons).toContain(
      'sealed test(s) failed (2): answer.test.mjs > answer is 42; answer.test.mjs > answer is a number',
    );

    // Counts and declared names only: the suite's text is in none of the state's files but the
    // maintainers' copy of the output, and not in what a repair crew's brief quotes.
    const leaked = files(layout.root).filter(
      ([path, text]) => text.includes(MARK) && !path.startsWith('views/sealed-output/'),
    );
    expect(leaked.map(([p]) => p)).toEqual([]);
    expect(readFileSync(join(layout.root, 'views/sealed-output/c-echo.log'), 'utf8')).toContain(MARK);
    const brief = reviewerReasons(layout);
    expect(brief.get('c-echo')!.join('\n')).toMatch(/sealed test\(s\) failed \(2\)/);
    for (const [, reasons] of brief) expect(reasons.join('\n')).not.toContain(MARK);
    expect(JSON.stringify(r.verdicts)).not.toContain(MARK);
  });

  it('a suite that passes at the base proves nothing: the verdict says so and the maintainers are alerted', async () => {
    const green = join(tmp.path, 'sealed-green');
    mkdirSync(green, { recursive: true });
    writeFileSync(
      join(green, 'loads.test.mjs'),
      "import { test } from 'node:test';\ntest('module loads', async () => { await import(process.cwd() + '/src/bug.mjs'); });\n",
    );
    const layout = new StateLayout(join(tmp.path, 'state-green'));
    const cfg = config({
      repoPath: repo,
      stateDir: layout.root,
      dispatch: { verify: ['node', '--test'] },
      grading: {
        sealedTests: ['node', '--test', '{sealed}/'],
        sealedDir: green,
        sealedResults: { format: 'node-test' },
      },
    });
    await enqueueMany(layout, [
      writeBookbag(layout, {
        crewId: 'c-green',
        issueNumber: 9,
        diff: diffs.honest,
        baseSha,
        verification: 'passed',
      }),
    ]);
    const r = await drain({ config: cfg, layout, logger: silentLogger, judging: { verifyOnCleanCheckout } });
    // Not the evidence of a fix: the change adds no test of its own either, so it is not shown.
    expect(r.verdicts[0]).toMatchObject({ accepted: false, code: 'no_evidence' });
    const graded = Object.values(new GradingQueue(layout).state().jobs)[0]!;
    const sealed = graded.verdict!.findings.find((f) => f.judge === 'sealed');
    expect(sealed).toMatchObject({ passed: true, code: 'sealed_tests_green_at_base' });
    expect(sealed?.reasons.join('\n')).toMatch(
      /passes at the base commit too, without the change: it cannot show that a fix is real/,
    );
    const audit = readFileSync(layout.file('audit'), 'utf8');
    expect(audit).toMatch(/"kind":"sealed-green-at-base"/);
  });
});
