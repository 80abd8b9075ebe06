import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildView } from '../../src/board/view.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { gradingVerdicts } from '../../src/grading/feedback.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { gitOut } from '../delivery/helpers.js';
import { GitHubFake } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';
import { fakeClient, loopConfig, loopCycle, loopRepo } from '../support/loop-on-github.js';

/**
 * Issue 36, deliverable 5: a contest through the local loop (`school loop`), the way
 * src/cli/commands/loop.ts wires it: real git with a bare origin, the GitHub API in msw, two command
 * students as real processes, sealed tests with named results (`node --test`). One student fixes
 * the function, the other passes two of its three sealed tests: the sealed suite decides, the winner
 * is delivered as the one pull request, the loser is recorded as the contest's loser, and the issue
 * is done, not stopped.
 */
const tmp = tempDir('school-contest-loop-');
afterAll(() => tmp.cleanup());

const BUGGY = 'export const sum = (a, b) => a - b;\n';
const FIXED = 'export const sum = (a, b) => a + b;\n';
/** Right for non-negative numbers only: two of the three sealed tests pass. */
const PARTIAL = 'export const sum = (a, b) => Math.abs(a) + Math.abs(b);\n';

/** Writes the answer it is given into the worktree, and what it cost. */
const STUDENT = `
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [answer, cost] = process.argv.slice(2);
writeFileSync(join(process.env.SCHOOL_WORKTREE, 'src', 'sum.mjs'), answer);
writeFileSync(process.env.SCHOOL_USAGE_FILE, JSON.stringify({ inputTokens: 10, outputTokens: 5, costUsd: Number(cost) }));
`;

const SUITE = [
  "import { test } from 'node:test';",
  "import assert from 'node:assert/strict';",
  "const { sum } = await import(process.cwd() + '/src/sum.mjs');",
  "test('adds small numbers', () => assert.equal(sum(2, 3), 5));",
  "test('adds zero', () => assert.equal(sum(0, 7), 7));",
  "test('adds negatives', () => assert.equal(sum(-2, -3), -5));",
  '',
].join('\n');

/**
 * A repository with the buggy function, a bare origin, the sealed suite, the GitHub API in msw and
 * a school whose contest agents are `second` and `careful` (the full fix, the dearer one).
 */
function contestSchool(
  name: string,
  second: (student: string, root: string) => { id: string; command: string[] },
) {
  const root = join(tmp.path, name);
  const { bare, work, student } = loopRepo(root, {
    files: { 'README.md': '# project\n', 'src/sum.mjs': BUGGY },
    student: STUDENT,
  });
  const suite = join(root, 'sealed');
  mkdirSync(suite, { recursive: true });
  writeFileSync(join(suite, 'sum.test.mjs'), SUITE);
  const other = second(student, root);
  const config = loopConfig(root, work, {
    curriculum: { rules: [{ match: { labels: ['hard'] }, set: { difficulty: 5 } }] },
    fleet: { daemons: [{ id: 'd1', worktrees: 2 }] },
    agents: [{ id: 'careful', command: [process.execPath, student, FIXED, '0.30'] }, other],
    dispatch: {
      verify: [process.execPath, '-e', 'process.exit(0)'],
      crewTimeoutSeconds: 60,
      choice: 'greedy',
      maxCrews: 2,
      contest: { difficultyAtLeast: 4, agents: ['careful', other.id] },
    },
    grading: {
      sealedTests: [process.execPath, '--test', '{sealed}/sum.test.mjs'],
      sealedDir: suite,
      sealedResults: { format: 'node-test' },
    },
  });
  const layout = new StateLayout(config.stateDir);
  const fake = new GitHubFake({ now: () => new Date() });
  const issue = fake.addIssue({ title: 'sum subtracts', labels: ['hard'] });
  const client = fakeClient(fake);
  const logger = memoryLogger();
  const cycle = loopCycle({ config, layout, logger, client }, { feedback: false });
  return { bare, config, layout, fake, issue, n: issue.number, logger, cycle };
}

describe('a contest in the local loop (docs/dispatch.md, "Contests")', () => {
  it(
    'the sealed suite decides: the winner is delivered, the loser recorded as not chosen, the issue done',
    { timeout: 300_000 },
    async () => {
      // The partial answer is the cheaper one: cost alone would pick it.
      const { bare, config, layout, fake, issue, n, logger, cycle } = contestSchool('loop', (student) => ({
        id: 'hasty',
        command: [process.execPath, student, PARTIAL, '0.05'],
      }));

      const first = await cycle();
      // Two crews of the same issue, one per listed agent, recorded as one contest.
      expect(first.plan.assignments.map((a) => [a.issueNumber, a.agent])).toEqual([
        [n, 'careful'],
        [n, 'hasty'],
      ]);
      const contest = first.plan.assignments[0]!.contest!;
      expect(first.plan.assignments[1]!.contest).toEqual(contest);
      const [careful, hasty] = contest.of as [string, string];
      expect(first.drain).toMatchObject({ accepted: 1, rejected: 1 });

      // The decision, in the ledger: the full fix won, the partial one lost (not a rejection of it
      // by the contest: the sealed judge's own verdict, with its counts).
      const ledger = new ScoreLedger(layout).state();
      const decided = ledger.contests!.decided[contest.id]!;
      expect(decided.winner).toMatchObject({ crewId: careful, agent: 'careful' });
      expect(decided.why).toBe(`${careful} (careful) was the only crew of 2 the judges accepted`);
      expect(decided.losers).toEqual([
        expect.objectContaining({
          crewId: hasty,
          agent: 'hasty',
          reason:
            'rejected by the sealed judge (sealed_tests_failed); 2 named sealed test(s) passed, 1 failed',
        }),
      ]);
      expect(Object.values(ledger.contests!.cells)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ agent: 'careful', won: 1, lost: 0 }),
          expect.objectContaining({ agent: 'hasty', won: 0, lost: 1 }),
        ]),
      );

      // Only the winner is delivered: one pull request, the full fix on its branch.
      expect(fake.pulls).toHaveLength(1);
      expect(gitOut(bare, 'show', `refs/heads/school/issue-${n}:src/sum.mjs`).out).toBe(FIXED.trim());
      expect(issue.labels).toContain(config.grading.labels.accepted);
      expect(issue.labels).not.toContain(config.grading.labels.rejected);

      // The issue is done by the winner; the loss is no failed run.
      const states = issueStates(readRegistry(layout), gradingVerdicts(layout, logger));
      expect(states.get(n)).toEqual({ kind: 'done', crewId: careful });

      // The status comment and the board say it was a contest, who won and why.
      expect(issue.comments).toHaveLength(1);
      const body = issue.comments[0]!.body;
      expect(body).toContain('a contest of 2 crews: accepted — pull request');
      expect(body).toContain(`Crew \`${careful}\` (agent \`careful\`)`);
      expect(body).toContain(`Contest: ${careful} (careful) was the only crew of 2 the judges accepted.`);
      const board = renderTerminal(buildView(layout, config, new Date()));
      expect(board).toContain('Contests');
      expect(board).toMatch(new RegExp(`#${n}.*careful.*${careful}`));

      // The next cycle sends nobody: the issue is done.
      const second = await cycle();
      expect(second.plan.assignments).toEqual([]);
      expect(second.plan.refused).toEqual([expect.objectContaining({ issue: n, code: 'done' })]);
      expect(fake.pulls).toHaveLength(1);
    },
  );

  it(
    'one crew aborts (its agent could not start) and the other is graded, wins and is delivered; the abort is no failure',
    { timeout: 300_000 },
    async () => {
      const { bare, config, layout, fake, issue, n, logger, cycle } = contestSchool('aborted', (_, root) => ({
        id: 'absent',
        command: [join(root, 'no-such-student')],
      }));

      const first = await cycle();
      expect(first.plan.assignments.map((a) => [a.issueNumber, a.agent])).toEqual([
        [n, 'careful'],
        [n, 'absent'],
      ]);
      const contest = first.plan.assignments[0]!.contest!;
      const [careful, absent] = contest.of as [string, string];
      // The absent agent's crew ended before its student ran: aborted, infra, nothing to grade.
      const crews = readRegistry(layout).crews;
      expect(crews[absent]).toMatchObject({ status: 'finished', outcome: 'aborted', infra: true });
      expect(first.drain).toMatchObject({ accepted: 1, rejected: 0 });
      expect(first.drain.verdicts.map((v) => v.crewId)).toEqual([careful]);

      // The one graded crew decides the contest in the same drain; the aborted one is its loser.
      const decided = new ScoreLedger(layout).state().contests!.decided[contest.id]!;
      expect(decided.winner).toMatchObject({ crewId: careful, agent: 'careful' });
      expect(decided.why).toBe(`${careful} (careful) was the only crew of 2 the judges accepted`);
      expect(decided.losers).toEqual([
        expect.objectContaining({
          crewId: absent,
          agent: 'absent',
          accepted: false,
          reason: 'ended without a grade: aborted (infra)',
        }),
      ]);

      // The winner is delivered: one pull request, the full fix on its branch, the accepted label.
      expect(fake.pulls).toHaveLength(1);
      expect(gitOut(bare, 'show', `refs/heads/school/issue-${n}:src/sum.mjs`).out).toBe(FIXED.trim());
      expect(issue.labels).toContain(config.grading.labels.accepted);
      expect(issue.labels).not.toContain(config.grading.labels.rejected);
      const states = issueStates(readRegistry(layout), gradingVerdicts(layout, logger));
      expect(states.get(n)).toEqual({ kind: 'done', crewId: careful });

      const second = await cycle();
      expect(second.plan.assignments).toEqual([]);
      expect(fake.pulls).toHaveLength(1);
    },
  );
});
