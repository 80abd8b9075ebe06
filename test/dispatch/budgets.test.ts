import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { budgetLine, budgetStandings } from '../../src/dispatch/gates/budgets.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { planDispatch } from '../../src/dispatch/plan.js';
import { readSpend, recordSpend, spendFold } from '../../src/dispatch/gates/spend.js';
import { memoryLogger } from '../../src/log.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { runAssignments } from '../../src/crew/driver/driver.js';
import { launcher, makeSchool, plan as planCrews, registry, type School } from '../crew/helpers.js';
import { GiB, item } from './helpers.js';

/**
 * Issue 36 item 4: a daily budget per school and per agent, counted over the UTC day from the
 * spend ledger, beside the crew budget and the school-wide cap; a plan refuses with the budget's
 * name, and an agent over its own daily budget is passed over for another eligible one.
 */
const dirs: Array<{ cleanup(): void }> = [];
let crewSchool: School | undefined;
afterEach(() => {
  dirs.splice(0).forEach((d) => d.cleanup());
  crewSchool?.cleanup();
  crewSchool = undefined;
});

const NOW = new Date('2026-03-01T00:30:00Z');
const TODAY = new Date('2026-03-01T00:10:00Z');
const YESTERDAY = new Date('2026-02-28T23:50:00Z');

const agent = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  command: ['node', 'examples/student.mjs'],
  ...over,
});

async function school(raw: Record<string, unknown>) {
  const d = tempDir('school-budgets-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const { dispatch, ...rest } = raw as { dispatch?: Record<string, unknown> };
  const cfg = parseConfig(
    {
      agents: [agent('codex', { dailyBudgetUsd: 20 }), agent('claude')],
      fleet: { daemons: [{ id: 'd1', worktrees: 4 }] },
      ...rest,
      dispatch: { maxCrews: 4, choice: 'greedy', ...dispatch },
    },
    'test',
  );
  await recordHeartbeat(layout, cfg, { daemon: 'd1', observedClass: 'xl', freeDiskBytes: 50 * GiB, at: NOW });
  const plan = (curriculum: CurriculumItem[]) =>
    planDispatch({ config: cfg, layout, curriculum, clock: { now: NOW }, logger: memoryLogger() });
  const spend = (key: string, agentId: string, costUsd: number, at: Date) =>
    recordSpend(layout, key, { costUsd, agent: agentId, crewId: `c9-${key}`, issueNumber: 9 }, at);
  return { layout, cfg, plan, spend };
}

describe('daily budgets in a plan', () => {
  it('passes over an agent whose daily budget is spent today (UTC) for another eligible agent', async () => {
    const { plan, spend } = await school({});
    // Before the spend: greedy takes codex, the first configured of two unscored agents.
    await spend('a', 'codex', 12, TODAY);
    const before = await plan([item(1)]);
    expect(before.assignments.map((a) => a.agent)).toEqual(['codex']);

    // Yesterday's spend (UTC) does not count; today's reaches the budget exactly.
    await spend('old', 'codex', 50, YESTERDAY);
    await spend('b', 'codex', 8, TODAY);
    const after = await plan([item(2)]);
    expect(after.assignments.map((a) => [a.issueNumber, a.agent])).toEqual([[2, 'claude']]);
    expect(after.refused.find((r) => r.issue === 2)).toBeUndefined();
  });

  it('refuses an issue only the spent agent takes with agent-daily-budget and the budget in the reason', async () => {
    const { plan, spend } = await school({
      agents: [
        agent('codex', { dailyBudgetUsd: 20, domains: ['web'] }),
        agent('claude', { domains: ['cli'] }),
      ],
    });
    await spend('a', 'codex', 20, TODAY);
    const r = await plan([item(1, { domain: 'web' }), item(2, { domain: 'cli' })]);
    expect(r.assignments.map((a) => [a.issueNumber, a.agent])).toEqual([[2, 'claude']]);
    expect(r.refused).toEqual([
      {
        issue: 1,
        code: 'agent-daily-budget',
        reason:
          'daily budget of agent codex (agents[].dailyBudgetUsd) reached: 20.00 of 20 USD spent today (UTC); next plan after 00:00 UTC',
      },
    ]);
  });

  it("places nothing once the school's daily budget is spent, reviewers' rows counted, and names it", async () => {
    const { plan, spend } = await school({ dispatch: { dailyBudgetUsd: 30 } });
    await spend('a', 'claude', 25, TODAY);
    await spend('old', 'claude', 100, YESTERDAY);
    expect((await plan([item(1)])).assignments).toHaveLength(1);
    await spend('review', 'reviewer (claude-code)', 5, TODAY);
    const r = await plan([item(2), item(3)]);
    expect(r.assignments).toEqual([]);
    expect(r.refused.map((x) => x.code)).toEqual(['daily-budget', 'daily-budget']);
    expect(r.refused[0]!.reason).toBe(
      'daily budget of the school (dispatch.dailyBudgetUsd) reached: 30.00 of 30 USD spent today (UTC); nothing is placed until 00:00 UTC',
    );
  });

  it('names the school-wide cap when the total spend reaches it, before any daily budget', async () => {
    const { plan, spend } = await school({ dispatch: { spendCap: 40, dailyBudgetUsd: 30 } });
    await spend('old', 'claude', 40, YESTERDAY);
    const r = await plan([item(1)]);
    expect(r.refused[0]!.code).toBe('spend-cap');
    expect(r.refused[0]!.reason).toContain('dispatch.spendCap');
    expect(r.loud).toBe('SPEND CAP REACHED (40.00 >= 40.00) — dispatch halted, 0/1 placed');
  });
});

describe('daily budgets in a crew job', () => {
  it(
    "starts no standby crew of an agent whose day is spent, and names the budget; the first wave and other agents' crews run",
    { timeout: 180_000 },
    async () => {
      const s = (crewSchool = makeSchool({ worktrees: 1 }));
      const config = {
        ...s.config,
        agents: s.config.agents.map((a) => (a.id === 'editor' ? { ...a, dailyBudgetUsd: 5 } : a)),
      };
      await planCrews(s, [
        { crewId: 'c1-00000001', issue: 1 },
        { crewId: 'c2-00000002', issue: 2, queued: true },
        { crewId: 'c3-00000003', issue: 3, agent: 'slow', queued: true },
      ]);
      // Spent today (UTC) by the agent's earlier crews, twenty minutes before the job judges its
      // standby crews: both times fixed, so the day is the same whenever the test runs. The crews
      // of this job record their own spend at the real time, on another day: not counted here.
      await recordSpend(
        layoutOf(s),
        'c0-earlier',
        { costUsd: 5, crewId: 'c0-earlier', agent: 'editor' },
        TODAY,
      );
      const r = await runAssignments({
        config,
        layout: layoutOf(s),
        clock: { now: () => NOW },
        daemon: 'd1',
        assignments: [{ crewId: 'c1-00000001' }, { crewId: 'c2-00000002' }, { crewId: 'c3-00000003' }],
        logger: memoryLogger(),
        launch: { launcher: await launcher() },
      });
      expect(r.launched).toEqual(['c1-00000001', 'c3-00000003']);
      expect(r.skipped.map((x) => [x.crewId, x.reason])).toEqual([
        [
          'c2-00000002',
          expect.stringMatching(
            /^daily budget of agent editor \(agents\[\]\.dailyBudgetUsd\) reached: \d+\.\d\d of 5 USD spent today \(UTC\); next plan after 00:00 UTC$/,
          ),
        ],
      ]);
      expect(registry(s).crews['c2-00000002']!.status).toBe('planned');
    },
  );
});

const layoutOf = (s: School) => s.layout;

describe('what each budget has left', () => {
  it('counts today by agent, each running crew against its budget, and the cap against all spend', async () => {
    const { layout, cfg, spend } = await school({
      dispatch: { dailyBudgetUsd: 30, spendCap: 100, crewBudgetUsd: 10 },
    });
    await spend('a', 'codex', 12.5, TODAY);
    await spend('b', 'claude', 3, TODAY);
    await spend('old', 'codex', 50, YESTERDAY);
    const state = readSpend(layout);
    const standings = budgetStandings(cfg, state, NOW, ['c9-a']);
    expect(standings.map((b) => [b.kind, b.agent ?? b.crewId, b.spentUsd, b.leftUsd, b.reached])).toEqual([
      ['crew', 'c9-a', 12.5, 0, true],
      ['school-daily', undefined, 15.5, 14.5, false],
      ['agent-daily', 'codex', 12.5, 7.5, false],
      ['school-cap', undefined, 65.5, 34.5, false],
    ]);
    expect(standings.map(budgetLine)).toEqual([
      'budget of crew c9-a (dispatch.crewBudgetUsd): 12.50 of 10 USD spent by the crew, REACHED',
      'daily budget of the school (dispatch.dailyBudgetUsd): 15.50 of 30 USD spent today (UTC), 14.50 left',
      'daily budget of agent codex (agents[].dailyBudgetUsd): 12.50 of 20 USD spent today (UTC), 7.50 left',
      'school-wide cap (dispatch.spendCap): 65.50 of 100 USD spent, 34.50 left',
    ]);
    // No crew running: the crew budget is shown as what each crew gets.
    expect(budgetLine(budgetStandings(cfg, state, NOW)[0]!)).toBe(
      'budget of each crew (dispatch.crewBudgetUsd): 10 USD, no crew running',
    );
  });

  it('keeps per-day figures through a compaction and drops days long before its horizon', () => {
    let s = spendFold.empty();
    const row = (key: string, at: string, costUsd: number) =>
      ({ type: 'spend.recorded', key, at, data: { costUsd, agent: 'codex', crewId: key } }) as const;
    s = spendFold.apply(s, row('k1', '2026-01-01T10:00:00.000Z', 4));
    s = spendFold.apply(s, row('k2', '2026-02-20T10:00:00.000Z', 6));
    const pruned = spendFold.prune(s, new Date('2026-02-25T00:00:00Z'));
    expect(pruned.totalUsd).toBe(10);
    expect(Object.keys(pruned.days ?? {})).toEqual(['2026-02-20']);
    expect(Object.keys(pruned.crews ?? {})).toEqual(['k2']);
  });
});

describe('daily budget settings', () => {
  it('name the field of a bad value', () => {
    expect(() => parseConfig({ dispatch: { dailyBudgetUsd: -5 } }, 'school.yml')).toThrow(
      /dispatch\.dailyBudgetUsd: .*found -5/,
    );
    expect(() =>
      parseConfig({ agents: [agent('codex', { dailyBudgetUsd: 'twenty' })] }, 'school.yml'),
    ).toThrow(/agents\.0\.dailyBudgetUsd: .*found "twenty"/);
  });
});
