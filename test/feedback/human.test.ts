import { afterAll, describe, expect, it } from 'vitest';
import { createGitHubClient } from '../../src/github/client.js';
import { buildView } from '../../src/board/view.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { leaderboardMarkdown } from '../../src/board/summary.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';
import { readFeedback } from '../../src/feedback/log.js';
import { watchDeliveries } from '../../src/feedback/watch.js';
import { ledgerScores } from '../../src/grading/feedback.js';
import { humanScoreOf, ScoreLedger, scoreOf } from '../../src/grading/ledger.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { recordDelivered } from '../support/deliveries.js';
import { GitHubFake } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';
import { config, enqueueMany, fastGrade, job } from '../grading/helpers.js';
import { drain } from '../../src/grading/drain.js';

const tmp = tempDir('school-human-judge-');
afterAll(() => tmp.cleanup());

describe('merged and closed-unmerged pull requests are the last judge (item 5)', () => {
  it('a merged PR moves the human-acceptance EMA of its agent × domain × difficulty, once; a close moves it down', async () => {
    const fake = new GitHubFake({ owner: 'o', repo: 'r' });
    const layout = new StateLayout(`${tmp.path}/merge`);
    const cfg = config({ repository: 'o/r' });
    const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
    const logger = memoryLogger();

    const a = fake.addIssue({ title: 'a' });
    const b = fake.addIssue({ title: 'b' });
    const prA = fake.openPull({ head: `school/issue-${a.number}`, headSha: 'a'.repeat(40) });
    const prB = fake.openPull({ head: `school/issue-${b.number}`, headSha: 'b'.repeat(40) });
    await enqueueMany(layout, [
      job(a.number, 'crew-a', { agent: 'alpha', domain: 'backend', difficulty: 2 }),
      job(b.number, 'crew-b', { agent: 'alpha', domain: 'backend', difficulty: 2 }),
    ]);
    await drain({ config: cfg, layout, logger, judging: { grade: fastGrade } });
    await recordDelivered(layout, { issue: a.number, crewId: 'crew-a', pr: prA, sha: 'a'.repeat(40) });
    await recordDelivered(layout, { issue: b.number, crewId: 'crew-b', pr: prB, sha: 'b'.repeat(40) });
    const gradersBefore = scoreOf(new ScoreLedger(layout).state(), 'alpha', 'backend', 2);

    const watch = () =>
      watchDeliveries({ config: cfg, layout, logger, port: octokitFeedback(client, 'o/r') });
    expect((await watch()).settled).toEqual([]);
    expect(humanScoreOf(new ScoreLedger(layout).state(), 'alpha')).toBeUndefined();

    fake.settlePull(prA, 'merged');
    const first = await watch();
    expect(first.settled.map((s) => [s.pr, s.merged])).toEqual([[prA, true]]);
    let ledger = new ScoreLedger(layout).state();
    expect(humanScoreOf(ledger, 'alpha', 'backend', 2)).toEqual({ ema: 1, count: 1 });
    // The graders' score is its own: not moved by people.
    expect(scoreOf(ledger, 'alpha', 'backend', 2)).toEqual(gradersBefore);

    // Seen again (a lost record, a second state copy): the ledger's key keeps it single.
    await new ScoreLedger(layout).applyHuman(
      [
        {
          pr: prA,
          issue: a.number,
          crewId: 'crew-a',
          agent: 'alpha',
          domain: 'backend',
          difficulty: 2,
          merged: true,
          alpha: 0.3,
        },
      ],
      new Date(),
    );
    expect(humanScoreOf(new ScoreLedger(layout).state(), 'alpha', 'backend', 2)?.count).toBe(1);

    fake.settlePull(prB, 'closed');
    await watch();
    ledger = new ScoreLedger(layout).state();
    expect(humanScoreOf(ledger, 'alpha', 'backend', 2)!.count).toBe(2);
    expect(humanScoreOf(ledger, 'alpha', 'backend', 2)!.ema).toBeCloseTo(0.7, 9);
    expect(Object.keys(readFeedback(layout).settled).map(Number).sort()).toEqual([prA, prB].sort());

    // Dispatch weighs it: the score it chooses by is the mean of the graders' and the humans'.
    const lookup = ledgerScores(layout, logger)!;
    expect(lookup('alpha', { role: 'coding', domain: 'backend', difficulty: 2 })).toBeCloseTo(
      (gradersBefore!.ema + 0.7) / 2,
      9,
    );

    // The board shows it beside the graders' score, and the figures of what people did.
    const view = buildView(layout, cfg, new Date());
    const row = view.leaderboard.overall.find((r) => r.agent === 'alpha')!;
    expect(row.human).toBeCloseTo(0.7, 4);
    expect(row.humanCount).toBe(2);
    expect(view.humans).toMatchObject({ settled: 2, merged: 1, acceptance: 0.5, revisionsPerMerged: 0 });
    expect(view.humans!.costPerMergedUsd).toBe(0);
    const md = leaderboardMarkdown(view);
    expect(md).toContain('By humans');
    expect(md).toContain('50% acceptance by humans');
    const text = renderTerminal(view);
    expect(text).toContain('by humans');
    expect(text).toContain('1 of 2 delivered pull request(s) merged (50% acceptance by humans)');

    // Settled pull requests are no longer asked about.
    fake.resetLog();
    await watch();
    expect(fake.requestsTo('/pulls/')).toHaveLength(0);
  });
});
