import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSealedTests } from '../../src/grading/sealed.js';
import type { Bookbag } from '../../src/bookbag/schema.js';
import { tempDir, worktreeDiff } from '../support/tmp.js';
import { sealedRepo } from '../support/sealed-repo.js';
import { envForEachTest } from '../support/host.js';

/**
 * The code under test is not told it is being judged: the sealed command's environment carries no
 * marker (SCHOOL_SEALED_TESTS, SCHOOL_SEALED_DIR, a crew's SCHOOL_* variables) and no token of the
 * grader's. The suite reaches the command only through `{sealed}` in its argv.
 */
const tmp = tempDir('school-sealed-env-');
afterAll(() => tmp.cleanup());

const CANARIES = {
  GITHUB_TOKEN: 'ghs_CANARYsealedenv00000000000000000001',
  SCHOOL_TOKEN: 'github_pat_CANARYsealedenv000000000002',
  SCHOOL_CREW_ID: 'c-canary',
  SCHOOL_WORKTREE: '/canary/worktree',
};
envForEachTest(CANARIES);

let repo: string;
let baseSha: string;
let suite: string;

beforeAll(() => {
  ({ repo, baseSha, suite } = sealedRepo(
    tmp.path,
    { 'src/sum.mjs': 'export const sum = (a, b) => a - b;\n' },
    {
      'check.mjs': [
        "import { writeFileSync } from 'node:fs';",
        'writeFileSync(process.argv[2], JSON.stringify(process.env));',
        "const { sum } = await import(process.cwd() + '/src/sum.mjs');",
        'if (sum(2, 3) !== 5) process.exit(1);',
        '',
      ],
    },
  ));
});

const diffOf = (text: string) => worktreeDiff(repo, baseSha, { 'src/sum.mjs': text });

async function judge(diff: string, envFile: string) {
  return runSealedTests({
    repoPath: repo,
    argv: ['node', '{sealed}/check.mjs', envFile],
    bookbag: { crewId: 'c-env', baseSha } as Bookbag,
    diff,
    timeoutMs: 30_000,
    sealedDir: suite,
  });
}

describe('the sealed run does not say it is one', () => {
  it('no SCHOOL_* variable and no token of the grader reach the judged process', async () => {
    const envFile = join(tmp.path, 'env-honest.json');
    const f = await judge(diffOf('export const sum = (a, b) => a + b;\n'), envFile);
    expect(f).toMatchObject({ passed: true, code: 'sealed_tests_passed' });
    const env = JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>;
    expect(Object.keys(env).filter((k) => k.startsWith('SCHOOL_'))).toEqual([]);
    for (const v of Object.values(CANARIES)) expect(JSON.stringify(env)).not.toContain(v);
  });

  it('a patch that exits 0 when it sees a judge marker is judged like any other', async () => {
    const cheat = diffOf(
      [
        'if (Object.keys(process.env).some((k) => /SEALED/.test(k))) process.exit(0);',
        'export const sum = (a, b) => a - b;',
        '',
      ].join('\n'),
    );
    const f = await judge(cheat, join(tmp.path, 'env-cheat.json'));
    expect(f).toMatchObject({ passed: false, code: 'sealed_tests_failed' });
  });
});
