import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PatchIntegrityError, writeBookbag as writeCrewBookbag } from '../../src/bookbag/store.js';
import { parseConfig } from '../../src/config/load.js';
import { defaultGrader, type GradeFn } from '../../src/grading/judges.js';
import { drain } from '../../src/grading/drain.js';
import { insideFences, rubricFinding } from '../../src/grading/rubric.js';
import { patchFiles } from '../../src/process/patch-files.js';
import { parseReviewerOutput } from '../../src/grading/reviewer.js';
import { totalSpend } from '../../src/dispatch/gates/spend.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { git, initRepo, tempDir, worktreeDiff } from '../support/tmp.js';
import { claude, installFakes } from '../agents/fake.js';
import { config, enqueueMany, job, writeBookbag } from './helpers.js';

const tmp = tempDir('school-grading-j-');
afterAll(() => tmp.cleanup());

const SUM_BUGGY = 'export const sum = (a, b) => a - b;\n';
const SUM_FIXED = 'export const sum = (a, b) => a + b;\n';
let repo: string;
let baseSha: string;
let sealedCheck: string;

/** A crew's diff made the way dispatch-crew makes it: edit a worktree, `git diff --binary`. */
const crewDiff = (edit: (dir: string) => void) => worktreeDiff(repo, baseSha, edit);

beforeAll(() => {
  repo = initRepo(join(tmp.path, 'repo'), {
    'src/sum.mjs': SUM_BUGGY,
    'test/sum.test.mjs': 'ok\n',
    'README.md': '# r\n',
  });
  baseSha = git(repo, 'rev-parse', 'HEAD');
  // The sealed test lives outside the repository: the student never saw it.
  sealedCheck = join(tmp.path, 'sealed-check.mjs');
  writeFileSync(
    sealedCheck,
    "const { sum } = await import(process.cwd() + '/src/sum.mjs');\n" +
      "if (sum(2, 3) !== 5) { console.error('sum(2,3) = ' + sum(2, 3)); process.exit(1); }\nconsole.log('sealed ok');\n",
  );
});

describe('verification judge (N5.3)', () => {
  const layout = new StateLayout(join(tmp.path, 'state-v'));
  // The rubric asks git for the patch's paths at its base, in the repository under test. These
  // bookbags change README.md: the verification judge is under test here, and the evidence judge,
  // which refuses a README-only fix of a coding issue, has its own tests (evidence.test.ts).
  const grade: GradeFn = (j) =>
    defaultGrader({ config: config({ repoPath: repo, grading: { evidence: 'optional' } }), layout })(j);
  const diff =
    'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# r\n+# r2\n';

  it('fails verification_unavailable when the bookbag has no verification record', async () => {
    const j = writeBookbag(layout, { crewId: 'c-null', issueNumber: 1, diff, verification: null });
    const v = await grade(j);
    expect(v).toMatchObject({
      accepted: false,
      decidedBy: 'verification',
      code: 'verification_unavailable',
      score: 0,
    });
  });

  it("fails verification_unavailable when the bookbag is absent or unfinished; a tampered patch is the school's error", async () => {
    expect((await grade(job(2, 'c-absent'))).code).toBe('verification_unavailable');
    writeBookbag(layout, { crewId: 'c-real', issueNumber: 2, diff, verification: 'passed' });
    const outside = await grade(job(2, 'c-real', { bookbag: '../../etc' }));
    expect(outside.code).toBe('verification_unavailable');
    expect(outside.reasons[0]).toContain('outside the state'); // N4.2
    const unfinished = writeBookbag(layout, {
      crewId: 'c-noflag',
      issueNumber: 3,
      diff,
      verification: 'passed',
      noDoneFlag: true,
    });
    const v1 = await grade(unfinished);
    expect(v1.code).toBe('verification_unavailable');
    expect(v1.reasons[0]).toContain('done.flag');
    const tampered = writeBookbag(layout, {
      crewId: 'c-tamper',
      issueNumber: 4,
      diff,
      verification: 'passed',
    });
    // Bytes changed after collection: no verdict against the student — the attempt fails, an alert.
    writeFileSync(join(layout.bookbag('c-tamper'), 'diff.patch'), diff + '+sneaky\n');
    await expect(grade(tampered)).rejects.toThrow(PatchIntegrityError);
    await expect(grade(tampered)).rejects.toThrow(/does not match the digest recorded at collection/);
  });

  it('grading reads through the scoped bookbag reader as the grader (N4.2): a bad crew id is refused and audited', async () => {
    writeBookbag(layout, { crewId: 'c-good', issueNumber: 7, diff, verification: 'passed' });
    // The path resolves to a real, passing bookbag, but the job's crew id is not a crew id.
    const sneaky = await grade(job(7, 'c-x/../c-good', { bookbag: 'bookbags/c-good' }));
    expect(sneaky.code).toBe('verification_unavailable');
    expect(sneaky.reasons[0]).toMatch(/refused to grader/);
    const audit = readFileSync(layout.file('audit'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(audit.filter((a) => a.type === 'bookbag.refused').map((a) => a.reader)).toEqual(['grader']);
    // Another crew's bookbag is not this job's bookbag, even when it is complete.
    const borrowed = await grade(job(7, 'c-mine', { bookbag: 'bookbags/c-good' }));
    expect(borrowed.code).toBe('verification_unavailable');
    expect(borrowed.reasons[0]).toContain('not the bookbag of crew c-mine');
  });

  it('non-coding crews (research, triage, docs): verification is not applicable, the rubric decides on the report', async () => {
    const research = writeBookbag(layout, {
      crewId: 'c-research',
      issueNumber: 20,
      diff: '',
      verification: null,
      role: 'research',
      report: '# Findings\n\nThe flaky test comes from a shared temp dir.\n',
    });
    const v = await grade(research);
    expect(v).toMatchObject({ accepted: true, decidedBy: 'rubric', code: 'rubric_passed', score: 1 });
    expect(v.findings.map((f) => [f.judge, f.code])).toEqual([
      ['verification', 'verification_not_applicable'],
      ['policy', 'policy_passed'],
      ['evidence', 'evidence_not_needed'],
      ['rubric', 'rubric_passed'],
    ]);
    // No report: the rubric rejects, and says it decided.
    const silent = writeBookbag(layout, {
      crewId: 'c-triage',
      issueNumber: 21,
      diff: '',
      verification: null,
      role: 'triage',
    });
    expect(await grade(silent)).toMatchObject({
      accepted: false,
      decidedBy: 'rubric',
      code: 'report_missing',
    });
    // A coding crew without a verification record still fails N5.3, report or not.
    const coding = writeBookbag(layout, {
      crewId: 'c-coding',
      issueNumber: 22,
      diff,
      verification: null,
      report: 'done',
    });
    expect(await grade(coding)).toMatchObject({
      accepted: false,
      decidedBy: 'verification',
      code: 'verification_unavailable',
    });
  });

  it('rejects a failed verification and accepts a passed one through the rubric', async () => {
    const failed = writeBookbag(layout, { crewId: 'c-fail', issueNumber: 5, diff, verification: 'failed' });
    expect((await grade(failed)).code).toBe('verification_failed');
    const ok = writeBookbag(layout, {
      crewId: 'c-ok',
      issueNumber: 6,
      diff,
      baseSha,
      verification: 'passed',
    });
    const v = await grade(ok);
    expect(v).toMatchObject({ accepted: true, decidedBy: 'rubric', code: 'rubric_passed', score: 1 });
    expect(v.findings.map((f) => f.judge)).toEqual(['verification', 'policy', 'evidence', 'rubric']);
  });
});

describe('sealed tests (real git)', () => {
  it('a fake "passed" in the bookbag and the worktree cannot fool them; a real fix passes', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-s'));
    const cfg = config({ repoPath: repo, grading: { sealedTests: ['node', sealedCheck] } });
    // The cheat: claims success everywhere it can write, but does not fix the code.
    const cheatDiff = crewDiff((wt) => {
      writeFileSync(join(wt, 'PASSED'), 'all tests passed\n');
      writeFileSync(join(wt, 'verification.log'), 'passed\n');
    });
    const cheat = writeBookbag(layout, {
      crewId: 'c-cheat',
      issueNumber: 10,
      diff: cheatDiff,
      baseSha,
      verification: 'passed',
    });
    const fixDiff = crewDiff((wt) => writeFileSync(join(wt, 'src/sum.mjs'), SUM_FIXED));
    const fix = writeBookbag(layout, {
      crewId: 'c-fix',
      issueNumber: 11,
      diff: fixDiff,
      baseSha,
      verification: 'passed',
    });
    await enqueueMany(layout, [cheat, fix]);

    const r = await drain({ config: cfg, layout, logger: silentLogger, limits: { maxWorkers: 2 } });
    expect(r.fatal).toBeUndefined();
    const byCrew = Object.fromEntries(r.verdicts.map((v) => [v.crewId, v]));
    expect(byCrew['c-cheat']).toMatchObject({
      accepted: false,
      decidedBy: 'sealed',
      code: 'sealed_tests_failed',
    });
    // What the suite printed is the maintainers' (views/sealed-output), never a reason: the code
    // under test writes it.
    expect(byCrew['c-cheat']!.reasons).toEqual(['sealed tests exited with 1']);
    expect(readFileSync(join(layout.root, 'views/sealed-output/c-cheat.log'), 'utf8')).toContain(
      'sum(2,3) = -1',
    );
    expect(byCrew['c-fix']).toMatchObject({ accepted: true, decidedBy: 'rubric' });
    // The grader's worktrees are gone.
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(readdirSync(repo)).not.toContain('PASSED');
  });

  it('a base commit the repository lacks is a grader failure (retried), not a verdict', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-s2'));
    const cfg = config({ repoPath: repo, grading: { sealedTests: ['node', sealedCheck] } });
    const j = writeBookbag(layout, {
      crewId: 'c-gone',
      issueNumber: 12,
      diff: 'x',
      baseSha: 'f'.repeat(40),
      verification: 'passed',
    });
    await enqueueMany(layout, [j]);
    const r = await drain({ config: cfg, layout, logger: silentLogger });
    expect(r.failed).toBe(1);
    // The policy judge, which runs first, is the one that finds it missing.
    expect(r.errors[0]!.error).toMatch(/could not read base f{40} .*lacks that commit/);
  });
});

describe('sealed tests stay sealed', () => {
  it('take their suite from sealedDir (named by {sealed}), and a patch touching sealedProtect is tampering', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-sealed-dir'));
    const suite = join(tmp.path, 'sealed-suite');
    mkdirSync(suite, { recursive: true });
    writeFileSync(
      join(suite, 'check.mjs'),
      "const { sum } = await import(process.cwd() + '/src/sum.mjs');\n" +
        "if (sum(2, 3) !== 5) process.exit(1);\nconsole.log('sealed ok');\n",
    );
    const cfg = config({
      repoPath: repo,
      grading: {
        sealedTests: ['node', '{sealed}/check.mjs'],
        sealedDir: suite,
        sealedProtect: ['test/**', 'package.json'],
        // The policy judge would refuse the test edit first (tests_changed): let it through, so the
        // sealed judge's own protection is what is tested here.
        allowTestChanges: true,
      },
    });
    const fix = writeBookbag(layout, {
      crewId: 'c-sealed-fix',
      issueNumber: 30,
      diff: crewDiff((wt) => writeFileSync(join(wt, 'src/sum.mjs'), SUM_FIXED)),
      baseSha,
      verification: 'passed',
    });
    // The fix plus an edit of the repository's own tests: the sealed command never runs.
    const tamper = writeBookbag(layout, {
      crewId: 'c-sealed-tamper',
      issueNumber: 31,
      diff: crewDiff((wt) => {
        writeFileSync(join(wt, 'src/sum.mjs'), SUM_FIXED);
        writeFileSync(join(wt, 'test/sum.test.mjs'), 'rewritten\n');
      }),
      baseSha,
      verification: 'passed',
    });
    await enqueueMany(layout, [fix, tamper]);
    const r = await drain({ config: cfg, layout, logger: silentLogger, limits: { maxWorkers: 2 } });
    const byCrew = Object.fromEntries(r.verdicts.map((v) => [v.crewId, v]));
    expect(byCrew['c-sealed-fix']).toMatchObject({ accepted: true });
    expect(byCrew['c-sealed-tamper']).toMatchObject({
      accepted: false,
      decidedBy: 'sealed',
      code: 'sealed_tests_tampered',
    });
    expect(byCrew['c-sealed-tamper']!.reasons.join(' ')).toContain('test/sum.test.mjs');
  });

  it('refuse a sealedDir inside the repository the patch can rewrite', () => {
    expect(() =>
      parseConfig(
        { repoPath: repo, grading: { sealedTests: ['node', 'x'], sealedDir: join(repo, 'test') } },
        'school.yml',
      ),
    ).toThrow(/grading\.sealedDir: must be outside the repository/);
  });
});

describe('reviewer command', () => {
  it('receives brief, diff and verification and its zod-validated verdict decides', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-r'));
    const reviewer = join(tmp.path, 'reviewer.mjs');
    writeFileSync(
      reviewer,
      "import { readFileSync } from 'node:fs';\n" +
        "const input = JSON.parse(readFileSync(0, 'utf8'));\n" +
        "const diff = readFileSync(process.env.SCHOOL_REVIEW_DIFF, 'utf8');\n" +
        "const ok = diff === input.diff && input.verification.passed && input.brief.includes('Fix sum');\n" +
        "console.log('thinking…');\n" +
        "console.log(JSON.stringify({ approve: ok && input.diff.includes('a + b'), score: 0.8, reasons: ['looked at ' + input.crewId] }));\n",
    );
    const fixDiff = crewDiff((wt) => writeFileSync(join(wt, 'src/sum.mjs'), SUM_FIXED));
    const good = writeBookbag(layout, {
      crewId: 'c-r1',
      issueNumber: 20,
      diff: fixDiff,
      baseSha,
      verification: 'passed',
    });
    writeFileSync(join(layout.bookbag('c-r1'), 'brief.md'), '# Fix sum\n');
    // The reviewer protocol is under test, on a fix with no test of its own: evidence is not asked
    // here (the evidence judge has its own tests, evidence.test.ts).
    const cfg = config({ repoPath: repo, grading: { reviewer: ['node', reviewer], evidence: 'optional' } });
    const v = await defaultGrader({ config: cfg, layout })(good);
    expect(v).toMatchObject({ accepted: true, decidedBy: 'reviewer', code: 'reviewer_approved', score: 0.8 });
    expect(v.reasons).toEqual(['looked at c-r1']);

    const bad = join(tmp.path, 'bad-reviewer.mjs');
    writeFileSync(bad, "console.log(JSON.stringify({ approve: 'yes', score: 3 }));\n");
    const cfgBad = config({ repoPath: repo, grading: { reviewer: ['node', bad], evidence: 'optional' } });
    await expect(defaultGrader({ config: cfgBad, layout })(good)).rejects.toThrow(/no valid verdict/);
  });

  it('an AI reviewer’s cost goes to the spend ledger the cap reads, for a failed review too', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-ai'));
    const fixDiff = crewDiff((wt) => writeFileSync(join(wt, 'src/sum.mjs'), SUM_FIXED));
    const good = writeBookbag(layout, {
      crewId: 'c-ai1',
      issueNumber: 21,
      diff: fixDiff,
      baseSha,
      verification: 'passed',
    });
    const fakes = installFakes(join(tmp.path, 'ai-bin'), [
      {
        stdout: claude.result({
          session: 'rv1',
          cost: 0.37,
          text: '{"approve": true, "score": 0.9, "reasons": ["fixes sum"]}',
        }),
      },
      { stdout: claude.result({ session: 'rv2', cost: 0.05, text: 'I think it is fine.' }) },
    ]);
    const path = process.env.PATH;
    process.env.PATH = `${fakes.bin}:${path}`;
    try {
      // Unconfined: the fake CLI records its calls next to itself, which the sandbox refuses.
      const cfg = config({
        repoPath: repo,
        // The reviewer's spend is under test, not the evidence (evidence.test.ts).
        grading: { reviewer: { kind: 'claude-code', args: [], passEnv: [] }, evidence: 'optional' },
        sandbox: { kind: 'none' },
      });
      const grade = defaultGrader({ config: cfg, layout });
      expect(await grade(good)).toMatchObject({ accepted: true, code: 'reviewer_approved' });
      expect(totalSpend(layout)).toBeCloseTo(0.37, 6);
      await expect(grade(good)).rejects.toThrow(/no valid verdict/);
      expect(totalSpend(layout)).toBeCloseTo(0.42, 6);
    } finally {
      process.env.PATH = path;
    }
  });

  it('parses the last JSON line and rejects out-of-range scores', () => {
    expect(parseReviewerOutput('log\n{"approve":false,"score":0.1,"reasons":["no"]}\n')).toEqual({
      approve: false,
      score: 0.1,
      reasons: ['no'],
    });
    expect(() => parseReviewerOutput('{"approve":true,"score":1.5,"reasons":[]}')).toThrow(/score/);
  });
});

describe('rubric', () => {
  const limits = { maxChangedLines: 5, maxChangedFiles: 2 };
  /** The rubric over a crew diff, its paths listed by git at the base (as the grader does). */
  const rubric = async (diff: string, fences: string[]) =>
    rubricFinding(await patchFiles(repo, baseSha, diff), fences, limits);
  const write =
    (path: string, lines = 1) =>
    (wt: string) => {
      mkdirSync(dirname(join(wt, path)), { recursive: true });
      writeFileSync(join(wt, path), 'x\n'.repeat(lines));
    };
  it('checks emptiness, fences and size (deleted tests are for the policy judge)', async () => {
    expect((await rubric('', [])).code).toBe('empty_diff');
    expect(await rubric(crewDiff(write('docs/a.md')), ['src/**'])).toMatchObject({
      passed: false,
      code: 'outside_fences',
    });
    expect((await rubric(crewDiff(write('src/deep/a.ts')), ['src/**'])).passed).toBe(true);
    const del = crewDiff((wt) => rmSync(join(wt, 'test/sum.test.mjs')));
    // The base's tests are the policy judge's (src/grading/policy.ts), which runs before the rubric.
    expect((await rubric(del, [])).passed).toBe(true);
    expect((await rubric(crewDiff(write('a', 6)), [])).code).toBe('too_many_lines');
    const three = crewDiff((wt) => ['a', 'b', 'c'].forEach((f) => write(f)(wt)));
    expect((await rubric(three, [])).code).toBe('too_many_files');
  });
  it('counts a moved test file as one file moved, not a test deleted', async () => {
    const moved = crewDiff((wt) => git(wt, 'mv', 'test/sum.test.mjs', 'test/total.test.mjs'));
    expect(moved).toMatch(/^rename to test\/total\.test\.mjs$/m);
    expect(await rubric(moved, [])).toMatchObject({
      passed: true,
      reasons: ['1 file(s), 0 line(s), inside fences'],
    });
  });
  it('sees a path git quotes and the source of a rename whatever the header says', async () => {
    // A file name with a tab and a non-ASCII byte: git writes `diff --git "a/docs/\303\251\tx.md" …`.
    const quoted = crewDiff((wt) => {
      write('src/ok.mjs')(wt);
      write('docs/\u00e9\tx.md')(wt);
    });
    expect(quoted).toContain('"b/docs/\\303\\251\\tx.md"');
    expect(await rubric(quoted, ['src/**'])).toMatchObject({
      passed: false,
      code: 'outside_fences',
      reasons: [expect.stringContaining('docs/\u00e9\tx.md')],
    });
    // A rename out of README.md (outside the fences) into src/, its header naming src/ only.
    const renamed = crewDiff((wt) => git(wt, 'mv', 'README.md', 'src/readme.md')).replace(
      'diff --git a/README.md b/src/readme.md',
      'diff --git a/src/readme.md b/src/readme.md',
    );
    expect(renamed).toMatch(/^rename from README\.md$/m);
    expect(await rubric(renamed, ['src/**'])).toMatchObject({
      passed: false,
      code: 'outside_fences',
      reasons: [expect.stringContaining('README.md')],
    });
  });
  it('fails a patch git cannot apply at its base, naming why', async () => {
    const foreign = 'diff --git a/nope.txt b/nope.txt\n--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n';
    expect(await rubric(foreign, [])).toMatchObject({
      passed: false,
      code: 'patch_does_not_apply',
      reasons: [expect.stringMatching(/nope\.txt/)],
    });
  });
  it('matches fences as globs and directories', () => {
    expect(insideFences('src/a.ts', ['src'])).toBe(true);
    expect(insideFences('src2/a.ts', ['src'])).toBe(false);
    expect(insideFences('lib/x.test.ts', ['**/*.test.ts'])).toBe(true);
    expect(insideFences('a.ts', ['*.ts'])).toBe(true);
    // A wildcard without a slash is a file name at any depth (src/curriculum/glob.ts).
    expect(insideFences('a/b.ts', ['*.ts'])).toBe(true);
    expect(insideFences('a/b.ts', ['a/*.tsx'])).toBe(false);
  });
});

afterAll(() => {
  if (existsSync(tmp.path)) rmSync(tmp.path, { recursive: true, force: true });
});

describe('contract with dispatch-crew', () => {
  it('reads a bookbag written by the crew writer (done flag and hashes agree)', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-contract'));
    const diff =
      'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# r\n+# r2\n';
    const written = writeBookbag(layout, {
      crewId: 'c-shape',
      issueNumber: 30,
      diff,
      baseSha,
      verification: 'passed',
    });
    const record = JSON.parse(
      readFileSync(join(layout.bookbag('c-shape'), 'bookbag.json'), 'utf8'),
    ) as Record<string, unknown>;
    rmSync(layout.bookbag('c-shape'), { recursive: true });
    const { diffSha: _omit, ...rest } = record;
    writeCrewBookbag(layout.bookbag('c-shape'), {
      record: rest as never,
      diff,
      brief: '# brief\n',
    });
    // The bookbag's shape is under test; its README change would be no_evidence for a coding issue.
    const v = await defaultGrader({
      config: config({ repoPath: repo, grading: { evidence: 'optional' } }),
      layout,
    })(written);
    expect(v).toMatchObject({ accepted: true, decidedBy: 'rubric' });
  });
});
