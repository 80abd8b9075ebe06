import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import {
  ScoreLedger,
  leaderboard,
  ledgerFold,
  scoreOf,
  type ScoreApplied,
} from '../../src/grading/ledger.js';
import { queueFold, GradingQueue } from '../../src/grading/queue.js';
import { drain } from '../../src/grading/drain.js';
import { registeredFolds, foldLog } from '../../src/state/fold.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { config, enqueueMany, fastGrade, job } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let layout: StateLayout;
beforeEach(() => {
  tmp = tempDir('school-grading-l-');
  layout = new StateLayout(tmp.path);
});
afterEach(() => tmp.cleanup());

const s = (crewId: string, agent: string, score: number, domain = 'web', difficulty = 2): ScoreApplied => ({
  crewId,
  jobKey: `grade:1:${crewId}`,
  agent,
  domain,
  difficulty,
  accepted: score > 0,
  score,
  alpha: 0.5,
});

describe('score ledger', () => {
  it('keeps an EMA per agent and per (agent, domain, difficulty), once per crew', async () => {
    const ledger = new ScoreLedger(layout);
    const r1 = await ledger.apply(
      [s('c1', 'ann', 1), s('c2', 'ann', 0), s('c3', 'bob', 0.5, 'cli', 3)],
      new Date(),
    );
    expect(r1.applied).toEqual(['c1', 'c2', 'c3']);
    const r2 = await ledger.apply([s('c2', 'ann', 1), s('c4', 'ann', 1, 'cli', 3)], new Date());
    expect(r2.applied).toEqual(['c4']); // c2 is a replay: no second EMA step
    const state = ledger.state();
    // ann: 1 → 0.5·0 + 0.5·1 = 0.5 → 0.5·1 + 0.5·0.5 = 0.75
    expect(state.agents.ann).toEqual({ ema: 0.75, count: 3, accepted: 2 });
    expect(scoreOf(state, 'ann', 'web', 2)).toEqual({ ema: 0.5, count: 2 });
    expect(scoreOf(state, 'ann', 'cli', 3)).toEqual({ ema: 1, count: 1 });
    expect(scoreOf(state, 'ann', 'web')).toEqual({ ema: 0.5, count: 2 });
    expect(scoreOf(state, 'ann')).toEqual({ ema: 0.75, count: 3 });
    expect(scoreOf(state, 'ann', 'docs', 1)).toBeUndefined();
    expect(scoreOf(state, 'nobody')).toBeUndefined();
    expect(leaderboard(state).map((r) => [r.rank, r.agent])).toEqual([
      [1, 'ann'],
      [2, 'bob'],
    ]);
  });

  it('writes views/scores.json after a drain and registers its folds for compaction', async () => {
    await enqueueMany(layout, [job(1, 'c1'), job(2, 'c2', { agent: 'beta' })]);
    await drain({ config: config(), layout, logger: silentLogger, judging: { grade: fastGrade } });
    expect(existsSync(layout.view('scores.json'))).toBe(true);
    expect(registeredFolds().get('scores')).toBe(ledgerFold);
    expect(registeredFolds().get('grading')).toBe(queueFold);
    // prune keeps live and dead jobs, drops graded ones.
    await enqueueMany(layout, [job(3, 'c3')]);
    const q = new GradingQueue(layout);
    const pruned = queueFold.prune(q.state(), new Date());
    expect(Object.keys(pruned.jobs)).toEqual(['grade:3:c3']);
    const contents = q.log.read();
    expect(foldLog(queueFold, contents).jobs['grade:1:c1']!.status).toBe('graded');
  });
});
