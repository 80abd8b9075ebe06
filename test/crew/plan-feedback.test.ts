import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import { planStep } from '../../src/loop/steps.js';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { drain } from '../../src/grading/drain.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import type { Verdict } from '../../src/grading/verdict.js';
import { silentLogger } from '../../src/log.js';
import { event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { item } from './helpers.js';

/**
 * Grading feeds planning through `planStep` (the step the action, `school dispatch` and `school
 * loop` run): verdicts from the grading queue, scores from the ledger. Real state files only.
 */
let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function school(): { layout: StateLayout; config: SchoolConfig } {
  const t = tempDir('school-feedback-');
  cleanup = t.cleanup;
  const config = parseConfig(
    {
      stateDir: `${t.path}/state`,
      repoPath: t.path,
      fleet: { daemons: [{ id: 'd1', worktrees: 4 }] },
      agents: [
        { id: 'alpha', command: ['node', 'a.mjs'], roles: ['coding'] },
        { id: 'beta', command: ['node', 'b.mjs'], roles: ['coding'] },
      ],
      // The greedy rule (top score) is what these tests pin; the learning choice has its own
      // (test/dispatch/learning-plan.test.ts).
      dispatch: { maxCrews: 10, minFreeDiskGiB: 0, choice: 'greedy' },
    },
    'test',
  );
  const layout = new StateLayout(config.stateDir);
  mkdirSync(layout.root, { recursive: true });
  return { layout, config };
}

function curriculum(layout: StateLayout, numbers: number[]): void {
  const items = numbers.map((n) => item(n, { domain: 'api', difficulty: 3 }));
  writeFileSync(layout.file('curriculum'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
}

const plan = (s: { layout: StateLayout; config: SchoolConfig }) =>
  planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });

/** The crew ran to `succeeded` (the crew runtime's events), then was enqueued for grading. */
async function succeed(layout: StateLayout, crewId: string, issueNumber: number): Promise<void> {
  await crewLog(layout).append([
    event('crew.finished', `finished:${crewId}`, {
      crewId,
      issueNumber,
      outcome: 'succeeded' as const,
      reason: 'student finished; verification passed',
    }),
  ]);
  await enqueueGradingJob(layout, {
    issueNumber,
    crewId,
    agent: 'alpha',
    domain: 'api',
    difficulty: 3,
    fences: [],
    bookbag: `bookbags/${crewId}`,
  });
}

const rejected: Verdict = {
  accepted: false,
  decidedBy: 'rubric',
  code: 'outside_fences',
  reasons: ['touched a file outside the fences'],
  score: 0,
  findings: [],
};

describe('planStep: grading verdicts and ledger scores feed planning', () => {
  it('a succeeded crew that grading rejected is a failed run: repair, then stopped after two', async () => {
    const s = school();
    curriculum(s.layout, [5]);
    const first = await plan(s);
    expect(first.assignments.map((a) => [a.issueNumber, a.attempt])).toEqual([[5, 1]]);
    const c1 = first.assignments[0]!.crewId;
    await succeed(s.layout, c1, 5);

    // Not graded yet: the success stands (nothing is re-dispatched on a guess).
    const waiting = await plan(s);
    expect(waiting.assignments).toEqual([]);
    expect(waiting.refused).toEqual([expect.objectContaining({ issue: 5, code: 'done' })]);

    const grade = async () => rejected;
    const d1 = await drain({ config: s.config, layout: s.layout, logger: silentLogger, judging: { grade } });
    expect(d1.rejected).toBe(1);
    const repair = await plan(s);
    expect(repair.assignments.map((a) => [a.issueNumber, a.attempt, a.repair])).toEqual([[5, 2, true]]);

    const c2 = repair.assignments[0]!.crewId;
    await succeed(s.layout, c2, 5);
    await drain({ config: s.config, layout: s.layout, logger: silentLogger, judging: { grade } });
    const stopped = await plan(s);
    expect(stopped.assignments).toEqual([]);
    expect(stopped.refused).toEqual([
      expect.objectContaining({ issue: 5, code: 'repair-stopped-after-two-failures' }),
    ]);
    expect(stopped.refused[0]!.reason).toContain(c1);
    expect(stopped.refused[0]!.reason).toContain(c2);
  });

  it('an accepted verdict keeps the issue done', async () => {
    const s = school();
    curriculum(s.layout, [6]);
    const c = (await plan(s)).assignments[0]!.crewId;
    await succeed(s.layout, c, 6);
    await drain({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      judging: { grade: async () => ({ ...rejected, accepted: true, code: 'rubric_passed', score: 1 }) },
    });
    const next = await plan(s);
    expect(next.assignments).toEqual([]);
    expect(next.refused).toEqual([expect.objectContaining({ issue: 6, code: 'done' })]);
  });

  it('agent choice follows the score ledger: the better-scored agent for the cell is chosen', async () => {
    const s = school();
    curriculum(s.layout, [1]);
    // With no scores the first configured agent wins the tie.
    const dry = await planStep({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      beat: ['d1'],
      dryRun: true,
    });
    expect(dry.assignments.map((a) => a.agent)).toEqual(['alpha']);

    const score = (crewId: string, agent: string, value: number, domain = 'api', difficulty = 3) => ({
      crewId,
      jobKey: `grade:0:${crewId}`,
      agent,
      domain,
      difficulty,
      accepted: value > 0.5,
      score: value,
      alpha: 0.3,
    });
    await new ScoreLedger(s.layout).apply(
      [
        // alpha is the better agent overall, but beta is better in this (api, 3) cell.
        score('x1', 'alpha', 1, 'docs', 1),
        score('x2', 'alpha', 0.2),
        score('x3', 'beta', 0.9),
      ],
      new Date(),
    );
    const planned = await plan(s);
    expect(planned.assignments.map((a) => [a.issueNumber, a.agent])).toEqual([[1, 'beta']]);
  });
});
