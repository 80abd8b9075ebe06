import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { drain } from '../../src/grading/drain.js';
import { silentLogger } from '../../src/log.js';
import { runContextFrom } from '../../src/process/run-context.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir, worktreeDiff } from '../support/tmp.js';
import { sealedRepo } from '../support/sealed-repo.js';
import { config, enqueueMany, writeBookbag } from './helpers.js';

/**
 * A drain given `worker: { context }` judges with that run's host environment, not this process's:
 * the judges' sandbox looks bubblewrap up on the context's PATH. The same drain over the same two
 * crews (one fixes the bug, one leaves it), in the same process (whose own PATH has bubblewrap): a
 * context whose PATH lacks it fails both jobs with the sandbox's message; one whose PATH holds it
 * (there alone) runs the sealed command, which accepts the fix and rejects the other. Real git, real
 * bubblewrap, a real sealed command.
 */
const tmp = tempDir('school-drain-context-');
afterAll(() => tmp.cleanup());

const BUGGY = 'export const sum = (a, b) => a - b;\n';
const FIXED = 'export const sum = (a, b) => a + b;\n';

let repo: string;
let baseSha: string;
let suite: string;
/** Fixes the bug: the sealed command passes. */
let fixed: string;
/** Leaves the bug in: the sealed command fails. */
let unfixed: string;
/** A directory holding only a link to this machine's bubblewrap. */
let bwrapOnly: string;
/** A directory with no program in it. */
let empty: string;

const diffOf = (file: string, text: string) => worktreeDiff(repo, baseSha, { [file]: text });

beforeAll(() => {
  ({ repo, baseSha, suite } = sealedRepo(
    tmp.path,
    { 'src/sum.mjs': BUGGY, 'README.md': '# r\n' },
    {
      'check.mjs': [
        "const { sum } = await import(process.cwd() + '/src/sum.mjs');",
        'process.exit(sum(2, 3) === 5 ? 0 : 1);',
        '',
      ],
    },
  ));
  fixed = diffOf('src/sum.mjs', FIXED);
  unfixed = diffOf('README.md', '# r\n\nSums two numbers.\n');

  const bwrap = (process.env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, 'bwrap'))
    .find((f) => existsSync(f));
  if (!bwrap) throw new Error('these tests need bubblewrap (bwrap) on PATH');
  bwrapOnly = join(tmp.path, 'bin-bwrap');
  mkdirSync(bwrapOnly);
  symlinkSync(bwrap, join(bwrapOnly, 'bwrap'));
  empty = join(tmp.path, 'bin-empty');
  mkdirSync(empty);
});

/**
 * Two crews judged by the default judges (sealed tests under bubblewrap) in a fresh state; with
 * `hostPath`, through a run context whose host PATH is that alone.
 */
async function drainWith(name: string, hostPath?: string) {
  const layout = new StateLayout(join(tmp.path, `state-${name}`));
  const cfg = config({
    repoPath: repo,
    grading: { sealedTests: ['node', '{sealed}/check.mjs'], sealedDir: suite },
  });
  await enqueueMany(layout, [
    writeBookbag(layout, { crewId: 'c-fix', issueNumber: 1, diff: fixed, baseSha, verification: 'passed' }),
    writeBookbag(layout, { crewId: 'c-bug', issueNumber: 2, diff: unfixed, baseSha, verification: 'passed' }),
  ]);
  const context = hostPath === undefined ? undefined : runContextFrom({ ...process.env, PATH: hostPath });
  const r = await drain({
    config: cfg,
    layout,
    logger: silentLogger,
    ...(context ? { worker: { context } } : {}),
  });
  expect(r.fatal).toBeUndefined();
  return { ...r, byCrew: Object.fromEntries(r.verdicts.map((v) => [v.crewId, v])) };
}

describe('a drain with a run context: its judges take that host environment', () => {
  it("without bubblewrap on the context's PATH every job fails with the sandbox's message", async () => {
    const r = await drainWith('no-bwrap', empty);
    expect(r.verdicts).toEqual([]);
    expect(r.failed).toBe(2);
    expect(r.errors).toHaveLength(2);
    for (const e of r.errors) expect(e.error).toMatch(/bubblewrap \(`bwrap`\) was not found on PATH/);
  });

  it("with bubblewrap on the context's PATH (there alone) the sealed command judges both crews", async () => {
    const r = await drainWith('bwrap', bwrapOnly);
    expect(r.errors).toEqual([]);
    expect(r.byCrew['c-fix']).toMatchObject({ accepted: true });
    expect(r.byCrew['c-bug']).toMatchObject({
      accepted: false,
      decidedBy: 'sealed',
      code: 'sealed_tests_failed',
    });
  });

  it("without a context the judges take this process's environment, which has bubblewrap", async () => {
    const r = await drainWith('default');
    expect(r.errors).toEqual([]);
    expect(r.byCrew['c-fix']).toMatchObject({ accepted: true });
    expect(r.byCrew['c-bug']).toMatchObject({
      accepted: false,
      decidedBy: 'sealed',
      code: 'sealed_tests_failed',
    });
  });
});
