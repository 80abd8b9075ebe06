import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bookbag } from '../../src/bookbag/schema.js';
import { judgeGrader } from '../../src/grading/judge-verify.js';
import { runSealedTests } from '../../src/grading/sealed.js';
import { StateLayout } from '../../src/state/layout.js';
import { removeTreeSync } from '../../src/process/remove-tree.js';
import { git, initRepo } from '../support/tmp.js';
import { config, writeBookbag } from './helpers.js';

/**
 * What code from a crew's patch leaves in a judge's own directories — a tree deeper than PATH_MAX,
 * a directory made 0000 — neither makes the judge throw nor stays on the machine: the sealed
 * tests' checkout and the judge job's `school-judge-verify-*` scratch directory are removed with a
 * walk depth and modes do not stop (rmSync stops at ENAMETOOLONG).
 */
const LEVELS = 600;
const NAME = 'd'.repeat(200);

/** Node code that leaves a 600-level tree and a 0000 directory under the directory `at` names. */
const leaveTrees = (at: string) =>
  `const fs=require('fs');process.chdir(${at});fs.mkdirSync('locked/in',{recursive:true});fs.writeFileSync('locked/in/f','x');fs.chmodSync('locked',0);fs.mkdirSync('deep');process.chdir('deep');for(let i=0;i<${LEVELS};i++){fs.mkdirSync('${NAME}');process.chdir('${NAME}');fs.writeFileSync('f.txt',String(i))}`;

let root: string;
let savedTmp: string | undefined;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'school-leftovers-'));
  // The judges' temporary directories go here, where nothing else of the machine writes.
  savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = join(root, 'tmp');
  mkdirSync(process.env.TMPDIR);
});
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  removeTreeSync(root);
});

const leftInTmp = () => readdirSync(join(root, 'tmp'));

describe('sealed tests whose code leaves a PATH_MAX-deep tree and a 0000 directory', () => {
  it('are judged and their checkout removed; the honest patch beside them passes', async () => {
    const repo = initRepo(join(root, 'repo'), { 'src/value.txt': 'base\n' });
    const baseSha = git(repo, 'rev-parse', 'HEAD');
    const wt = join(root, 'wt');
    git(repo, 'worktree', 'add', '--detach', '-q', wt, baseSha);
    writeFileSync(join(wt, 'src/value.txt'), 'solved\n');
    git(wt, 'add', '-A');
    const diff = git(wt, 'diff', '--binary', '--cached', baseSha) + '\n';
    git(repo, 'worktree', 'remove', '--force', wt);
    const suite = join(root, 'suite');
    mkdirSync(suite);
    // The suite runs the patched code; here that code leaves its trees in the checkout.
    writeFileSync(
      join(suite, 'check.cjs'),
      [
        "const fs = require('fs');",
        'const checkout = process.cwd();',
        `if (process.argv[2] === 'hostile') { ${leaveTrees('checkout')} }`,
        "process.exit(fs.readFileSync(checkout + '/src/value.txt', 'utf8') === 'solved\\n' ? 0 : 1);",
        '',
      ].join('\n'),
    );
    const judge = (mode: string, crewId: string) =>
      runSealedTests({
        repoPath: repo,
        argv: ['node', '{sealed}/check.cjs', mode],
        bookbag: { crewId, baseSha } as Bookbag,
        diff,
        timeoutMs: 120_000,
        sealedDir: suite,
      });

    const hostile = await judge('hostile', 'c-hostile');
    expect(hostile, hostile.reasons.join('\n')).toMatchObject({ judge: 'sealed', passed: true });
    expect(leftInTmp()).toEqual([]);
    // The repository keeps no worktree entry of the judge's checkout.
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);

    const honest = await judge('honest', 'c-honest');
    expect(honest).toMatchObject({ judge: 'sealed', passed: true });
    expect(leftInTmp()).toEqual([]);
  });
});

describe("the judge job's scratch directory", () => {
  function judgeOf(verify: Parameters<typeof judgeGrader>[0]['verifyOnCleanCheckout']) {
    const layout = new StateLayout(join(root, 'state'));
    const cfg = config({
      repoPath: join(root, 'repo'),
      stateDir: layout.root,
      dispatch: { verify: ['true'] },
    });
    const grader = judgeGrader({ config: cfg, layout, verifyOnCleanCheckout: verify });
    const job = (n: number) =>
      writeBookbag(layout, { crewId: `c${n}-0000000${n}`, issueNumber: n, diff: '', verification: 'passed' });
    return { grader, job };
  }

  it('is removed when the judge ends, whatever a verification left in it', async () => {
    const seen: string[] = [];
    const { grader, job } = judgeOf(async (o) => {
      // What a verification can leave beside its checkout (a patch's code ran there).
      mkdirSync(o.scratch, { recursive: true });
      seen.push(dirname(o.scratch));
      const mine = mkdtempSync(join(o.scratch, 'checkout-'));
      execFileSync(process.execPath, ['-e', leaveTrees(JSON.stringify(mine))]);
      return { exitCode: 1, timedOut: false };
    });
    const first = await grader(job(1));
    expect(first).toMatchObject({ accepted: false, code: 'verification_failed' });
    await grader(job(2));
    // One scratch directory for the judge's jobs, there while it judges.
    expect(new Set(seen).size).toBe(1);
    expect(leftInTmp()).toEqual([seen[0]!.split('/').pop()]);
    expect(seen[0]!.split('/').pop()).toMatch(/^school-judge-verify-/);
    grader.close();
    expect(existsSync(seen[0]!)).toBe(false);
    expect(leftInTmp()).toEqual([]);
  });

  it('is removed when a verification threw', async () => {
    let scratch = '';
    const { grader, job } = judgeOf(async (o) => {
      mkdirSync(o.scratch, { recursive: true });
      scratch = dirname(o.scratch);
      execFileSync(process.execPath, ['-e', leaveTrees(JSON.stringify(o.scratch))]);
      throw new Error('the checkout could not be made');
    });
    await expect(grader(job(1))).rejects.toThrow(/could not be made/);
    expect(existsSync(scratch)).toBe(true);
    grader.close();
    expect(existsSync(scratch)).toBe(false);
    expect(leftInTmp()).toEqual([]);
  });
});
