import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { costTable } from '../../src/board/costs.js';
import { renderHtml } from '../../src/board/html.js';
import type { BoardSources } from '../../src/board/model.js';
import { actionSummaryMarkdown, costsMarkdown } from '../../src/board/summary.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { viewOf } from '../../src/board/view.js';
import type { CrewRecord, CrewRegistry } from '../../src/dispatch/logs/registry.js';
import { spendFold, type SpendEvent, type SpendState } from '../../src/dispatch/gates/spend.js';
import type { FeedbackState } from '../../src/feedback/log.js';
import type { JobState, QueueState } from '../../src/grading/queue.js';

/**
 * Issue 36 item 1 on the board: per agent and domain, crews, accepted crews, merged pull requests,
 * spend, spend per accepted crew and per merged pull request, and the trend (crews finished in
 * the last 7 days against the 7 before), over a hand-made state; and item 4: what each budget has left.
 */
const NOW = new Date('2026-03-15T12:00:00.000Z');
const ago = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString();
const HOSTILE = 'docs<img src=x onerror=alert(1)>|x';

function crew(
  crewId: string,
  agent: string,
  issueNumber: number,
  finishedDaysAgo: number | undefined,
  choice?: { domain: string; difficulty: number },
): CrewRecord {
  return {
    crewId,
    issueNumber,
    agent,
    daemon: 'd1',
    weight: 'standard',
    fences: [],
    repair: false,
    attempt: 1,
    plannedAt: ago((finishedDaysAgo ?? 0) + 0.1),
    startedAt: ago((finishedDaysAgo ?? 0) + 0.05),
    status: finishedDaysAgo === undefined ? 'running' : 'finished',
    ...(finishedDaysAgo !== undefined ? { finishedAt: ago(finishedDaysAgo) } : {}),
    ...(choice ? { choice: { rule: 'learning', generation: 0, ...choice } } : {}),
  } as CrewRecord;
}

function graded(
  crewId: string,
  agent: string,
  issueNumber: number,
  domain: string,
  accepted: boolean,
): JobState {
  return {
    job: {
      jobKey: `grade:${issueNumber}:${crewId}`,
      issueNumber,
      crewId,
      agent,
      domain,
      difficulty: 2,
      fences: [],
      bookbag: '',
    },
    status: 'graded',
    attempts: 0,
    claims: 1,
    cycle: 0,
    verdict: { accepted, decidedBy: 'reviewer', code: accepted ? 'ok' : 'rejected', reasons: [] },
    enqueuedAt: NOW.toISOString(),
    updatedAt: NOW.toISOString(),
  } as unknown as JobState;
}

function handMade(): BoardSources {
  const web = { domain: 'web', difficulty: 2 };
  const crews = [
    crew('c1', 'ada', 1, 2, web), // accepted, merged
    crew('c2', 'ada', 2, 3), // cell from its grading job; rejected
    crew('c3', 'ada', 3, 10, web), // accepted, closed unmerged: the week before
    crew('c4', 'bob', 4, 0.125), // cell from the curriculum; never graded (failed)
    crew('c5', 'bob', 5, 9, { domain: 'cli', difficulty: 1 }), // accepted, merged
    crew('c7', 'ada', 7, 1), // a domain someone wrote: escaped wherever it is shown
    crew('c8', 'bob', 8, 30, { domain: 'cli', difficulty: 1 }), // older than two weeks: in the totals only
    crew('c6', 'bob', 6, undefined), // running: a crew budget, no cost row
  ];
  const registry: CrewRegistry = { crews: Object.fromEntries(crews.map((c) => [c.crewId, c])), leases: {} };
  const grading: QueueState = {
    jobs: Object.fromEntries(
      [
        graded('c1', 'ada', 1, 'web', true),
        graded('c2', 'ada', 2, 'web', false),
        graded('c3', 'ada', 3, 'web', true),
        graded('c5', 'bob', 5, 'cli', true),
        graded('c8', 'bob', 8, 'cli', true),
      ].map((j) => [j.job.jobKey, j]),
    ),
  } as QueueState;
  const feedback = {
    cursor: {},
    watched: {},
    received: {},
    ignored: {},
    settled: {
      101: { pr: 101, issue: 1, crewId: 'c1', merged: true, at: ago(1) },
      103: { pr: 103, issue: 3, crewId: 'c3', merged: false, at: ago(8) },
      105: { pr: 105, issue: 5, crewId: 'c5', merged: true, at: ago(8) },
    },
  } as FeedbackState;
  // Spend through the dispatch office's own fold: the crew's turns and its review count for it.
  const rows: Array<[string, string, number, string]> = [
    ['c1', 'ada', 3, ago(2)],
    ['c1', 'reviewer (command)', 1, ago(2)],
    ['c2', 'ada', 2, ago(3)],
    ['c3', 'ada', 9, ago(10)],
    ['c4', 'bob', 1, ago(0.125)],
    ['c5', 'bob', 3, ago(9)],
    ['c7', 'ada', 2, ago(1)],
    ['c8', 'bob', 5, ago(30)],
    ['c6', 'bob', 0.5, ago(0.1)],
  ];
  let spend: SpendState = spendFold.empty();
  rows.forEach(([crewId, agent, costUsd, at], i) => {
    const e: SpendEvent = { type: 'spend.recorded', key: `spend:${i}`, at, data: { costUsd, crewId, agent } };
    spend = spendFold.apply(spend, e);
  });
  const curriculum = [
    { number: 4, title: 'four', labels: [], domain: 'cli', difficulty: 1 },
    { number: 7, title: 'seven', labels: [], domain: HOSTILE, difficulty: 1 },
  ];
  return {
    registry,
    grading: { state: grading, series: [] },
    feedback,
    spend,
    curriculum,
    deliveries: new Map(),
    problems: [],
  };
}

const config = parseConfig(
  {
    agents: [
      { id: 'ada', command: ['node', 'ada.mjs'], dailyBudgetUsd: 5 },
      { id: 'bob', command: ['node', 'bob.mjs'] },
    ],
    dispatch: { dailyBudgetUsd: 20, spendCap: 100, crewBudgetUsd: 3 },
  },
  'test',
);

describe('cost per agent and domain', () => {
  it('counts crews, accepted, merged and spend of the same crews, divides them, and compares the last 7 days with the 7 before', () => {
    const s = handMade();
    const table = costTable({
      registry: s.registry!,
      grading: s.grading!.state,
      feedback: s.feedback!,
      spend: s.spend!,
      curriculum: s.curriculum!,
      now: NOW,
    });
    expect(table.trendDays).toBe(7);
    expect(table.since).toBe(ago(30));
    const rows = Object.fromEntries(table.rows.map((r) => [`${r.agent}/${r.domain}`, r]));
    expect(Object.keys(rows)).toEqual(['ada/docs<img src=x onerror=alert(1)>|x', 'ada/web', 'bob/cli']);
    expect(rows['ada/web']).toEqual({
      agent: 'ada',
      domain: 'web',
      crews: 3,
      accepted: 2,
      merged: 1,
      spendUsd: 15,
      costPerAcceptedUsd: 7.5,
      costPerMergedUsd: 15,
      trend: {
        recent: { crews: 2, accepted: 1, merged: 1, spendUsd: 6, costPerAcceptedUsd: 6, costPerMergedUsd: 6 },
        before: { crews: 1, accepted: 1, merged: 0, spendUsd: 9, costPerAcceptedUsd: 9 },
      },
    });
    expect(rows['bob/cli']).toMatchObject({
      crews: 3,
      accepted: 2,
      merged: 1,
      spendUsd: 9,
      costPerAcceptedUsd: 4.5,
      costPerMergedUsd: 9,
      trend: {
        recent: { crews: 1, accepted: 0, merged: 0, spendUsd: 1 },
        before: { crews: 1, accepted: 1, merged: 1, spendUsd: 3, costPerAcceptedUsd: 3 },
      },
    });
    expect(rows['ada/docs<img src=x onerror=alert(1)>|x']).toMatchObject({
      crews: 1,
      accepted: 0,
      spendUsd: 2,
    });
    expect(rows['ada/docs<img src=x onerror=alert(1)>|x']!.costPerAcceptedUsd).toBeUndefined();
  });

  it('shows the table in the job summary, the terminal board and the report, untrusted text escaped', () => {
    const view = viewOf(handMade(), '/state', config, NOW);
    const md = costsMarkdown(view);
    const lines = md.split('\n');
    expect(lines).toContain(
      '| Agent | Domain | Crews | Accepted | Merged | Spend | $/accepted | $/merged | $/accepted: last 7 d vs 7 d before |',
    );
    expect(lines).toContain(
      '| ada | web | 3 | 2 | 1 | $15.00 | $7.50 | $15.00 | $6.00 vs $9.00 &#40;−33%&#41; |',
    );
    expect(lines).toContain(
      '| bob | cli | 3 | 2 | 1 | $9.00 | $4.50 | $9.00 | none of 1 accepted vs $3.00 |',
    );
    // The hostile domain opens no tag and no extra cell.
    expect(lines).toContain(
      '| ada | docs&lt;img src=x onerror=alert&#40;1&#41;&gt;&#124;x | 1 | 0 | 0 | $2.00 | — | — | none of 1 accepted vs no crews |',
    );
    expect(actionSummaryMarkdown('drain-grading', view)).toContain(md);
    expect(actionSummaryMarkdown('dispatch-crew', view)).toContain(md);

    const terminal = renderTerminal(view);
    expect(terminal).toMatch(
      /ada\s+web\s+3\s+2\s+1\s+\$15\.00\s+\$7\.50\s+\$15\.00\s+\$6\.00 vs \$9\.00 \(−33%\)/,
    );
    const html = renderHtml(view);
    expect(html).toContain('data-testid="cost-row" data-agent="ada" data-domain="web"');
    expect(html).not.toContain('<img src=x');
  });

  it('shows what each budget has left: the running crew, the day (UTC) of the school and of each agent, the cap', () => {
    const view = viewOf(handMade(), '/state', config, NOW);
    expect(view.budgets.map((b) => [b.kind, b.agent ?? b.crewId, b.spentUsd, b.leftUsd])).toEqual([
      ['crew', 'c6', 0.5, 2.5],
      ['school-daily', undefined, 1.5, 18.5],
      ['agent-daily', 'ada', 0, 5],
      ['school-cap', undefined, 26.5, 73.5],
    ]);
    // As GitHub shows it: the escaper writes every character Markdown could act on as an entity.
    const summary = actionSummaryMarkdown('dispatch-crew', view).replace(/&#(\d+);/g, (_, n: string) =>
      String.fromCharCode(Number(n)),
    );
    expect(summary).toContain(
      'Budget: daily budget of agent ada (agents[].dailyBudgetUsd): 0.00 of 5 USD spent today (UTC), 5.00 left',
    );
    expect(summary).toContain(
      'Budget: school-wide cap (dispatch.spendCap): 26.50 of 100 USD spent, 73.50 left',
    );
    expect(renderTerminal(view)).toContain(
      '  budget of crew c6 (dispatch.crewBudgetUsd): 0.50 of 3 USD spent by the crew, 2.50 left',
    );
  });
});
