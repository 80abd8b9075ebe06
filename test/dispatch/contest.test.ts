import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { issueStates, type VerdictLookup } from '../../src/dispatch/logs/history.js';
import { planDispatch } from '../../src/dispatch/plan.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { recordSpend } from '../../src/dispatch/gates/spend.js';
import { memoryLogger } from '../../src/log.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, finishCrew, item } from './helpers.js';

/** Issue 36, deliverable 5: a contest for hard issues, as the dispatch office plans and counts it. */
const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

const NOW = new Date('2026-03-01T12:00:00Z');
const AGENTS = [
  { id: 'ada', command: ['node', 'a.mjs'] },
  { id: 'bob', command: ['node', 'b.mjs'] },
  { id: 'cy', command: ['node', 'c.mjs'], roles: ['docs'] },
];

async function school(
  slots: number[],
  contest: Record<string, unknown> = { difficultyAtLeast: 4, agents: ['ada', 'bob'] },
  agents: ReadonlyArray<Record<string, unknown>> = AGENTS,
) {
  const d = tempDir('school-contest-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = parseConfig(
    {
      agents,
      fleet: { daemons: slots.map((k, i) => ({ id: `d${i + 1}`, worktrees: k })) },
      dispatch: { maxCrews: 10, choice: 'greedy', contest },
    },
    'test',
  );
  for (const dm of cfg.fleet.daemons)
    await recordHeartbeat(layout, cfg, {
      daemon: dm.id,
      observedClass: 'xl',
      freeDiskBytes: 50 * GiB,
      at: NOW,
    });
  const plan = (curriculum: CurriculumItem[], verdicts?: VerdictLookup) =>
    planDispatch({
      config: cfg,
      layout,
      curriculum,
      clock: { now: NOW },
      logger: memoryLogger(),
      ...(verdicts ? { record: { verdicts } } : {}),
    });
  return { layout, cfg, plan };
}

describe('dispatch.contest: configuration', () => {
  const parse = (contest: unknown) => parseConfig({ agents: AGENTS, dispatch: { contest } }, 'school.yml');

  it('names the field and the fix when an agent is unknown, listed twice, not a coder, or alone', () => {
    expect(() => parse({ difficultyAtLeast: 4, agents: ['ada', 'zed'] })).toThrow(
      /dispatch\.contest\.agents\.1.*names zed, which is not a configured agent \(agents\[\]\.id: ada, bob, cy\)/s,
    );
    expect(() => parse({ difficultyAtLeast: 4, agents: ['ada', 'ada'] })).toThrow(
      /dispatch\.contest\.agents\.1.*lists ada twice/s,
    );
    expect(() => parse({ difficultyAtLeast: 4, agents: ['ada', 'cy'] })).toThrow(
      /dispatch\.contest\.agents\.1.*cy, which does not take the coding role/s,
    );
    expect(() => parse({ difficultyAtLeast: 4, agents: ['ada'] })).toThrow(/list at least 2 agents/);
    expect(() => parse({ difficultyAtLeast: 9, agents: ['ada', 'bob'] })).toThrow(
      /dispatch\.contest\.difficultyAtLeast/,
    );
    expect(parse({ difficultyAtLeast: 4, agents: ['ada', 'bob'] }).dispatch.contest).toEqual({
      difficultyAtLeast: 4,
      agents: ['ada', 'bob'],
    });
    // Opt-in: absent by default.
    expect(parseConfig({ agents: AGENTS }, 'school.yml').dispatch.contest).toBeUndefined();
  });
});

describe('dispatch.contest: planning', () => {
  it('places one crew of each listed agent on a hard issue, in separate slots, recorded as one contest', async () => {
    const { plan, layout } = await school([2, 2]);
    const r = await plan([
      item(1, { difficulty: 4, fences: ['src/**'] }),
      item(2, { difficulty: 2 }),
      // Overlaps the contested issue's fence: fenced out by either of its crews.
      item(3, { difficulty: 2, fences: ['src/lib/x.ts'] }),
    ]);
    const hard = r.assignments.filter((a) => a.issueNumber === 1);
    expect(hard.map((a) => a.agent)).toEqual(['ada', 'bob']);
    const contest = hard[0]!.contest!;
    expect(contest.id).toMatch(/^k1-[0-9a-f]{8}$/);
    expect(contest.of).toEqual(hard.map((a) => a.crewId));
    expect(hard[1]!.contest).toEqual(contest);
    // The easy issue is an ordinary crew; the fenced one waits for the contest.
    expect(r.assignments.find((a) => a.issueNumber === 2)!.contest).toBeUndefined();
    expect(r.refused).toEqual([
      expect.objectContaining({
        issue: 3,
        code: 'fence-conflict',
        reason: expect.stringContaining('issue #1'),
      }),
    ]);
    // Recorded on crew.planned and folded into the registry; an issue with a live contest crew waits.
    const lines = readFileSync(layout.file('crews'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.data.contest).map((l) => l.data.contest)).toEqual([contest, contest]);
    expect(readRegistry(layout).crews[hard[0]!.crewId]!.contest).toEqual(contest);
    const again = await plan([item(1, { difficulty: 4, fences: ['src/**'] })]);
    expect(again.refused).toEqual([expect.objectContaining({ issue: 1, code: 'active-crew' })]);
  });

  it('below the difficulty, with a forced agent, or with one free slot there is no contest', async () => {
    const easy = await school([2]);
    const r = await easy.plan([item(1, { difficulty: 3 }), item(2, { difficulty: 5, forceAgent: 'bob' })]);
    expect(r.assignments.map((a) => [a.issueNumber, a.contest])).toEqual([
      [1, undefined],
      [2, undefined],
    ]);

    const tight = await school([1]);
    const t = await tight.plan([item(1, { difficulty: 5 })]);
    expect(t.assignments).toEqual([]);
    // One refusal for the issue, saying why: the contest needs two crews at once.
    expect(t.refused).toEqual([
      {
        issue: 1,
        code: 'no-free-slot',
        reason: expect.stringMatching(/^a contest of 2 crews, 1 placed \(it needs at least 2 at once\): /),
      },
    ]);
    expect(Object.keys(readRegistry(tight.layout).crews)).toEqual([]);
  });
});

describe('dispatch.contest: an agent over its daily budget takes no part', () => {
  /** Spent today (UTC) by an agent's earlier crews, an hour before the plan. */
  const spent = (layout: StateLayout, agent: string, usd: number) =>
    recordSpend(
      layout,
      `earlier-${agent}`,
      { costUsd: usd, agent, crewId: `c90-${agent}`, issueNumber: 90 },
      new Date(NOW.getTime() - 3_600_000),
    );

  it('two listed agents, one spent today: an ordinary crew of the other, no contest and no refusal', async () => {
    const { plan, layout } = await school([2], undefined, [
      { id: 'ada', command: ['node', 'a.mjs'] },
      { id: 'bob', command: ['node', 'b.mjs'], dailyBudgetUsd: 5 },
    ]);
    await spent(layout, 'bob', 5);
    const r = await plan([item(1, { difficulty: 5 })]);
    expect(r.assignments.map((a) => [a.issueNumber, a.agent, a.contest])).toEqual([[1, 'ada', undefined]]);
    expect(r.refused).toEqual([]);
    expect(readRegistry(layout).crews[r.assignments[0]!.crewId]!.contest).toBeUndefined();
  });

  it('three listed agents, one spent today: a contest of the other two', async () => {
    const { plan, layout } = await school([3], { difficultyAtLeast: 4, agents: ['ada', 'bob', 'dee'] }, [
      { id: 'ada', command: ['node', 'a.mjs'] },
      { id: 'bob', command: ['node', 'b.mjs'] },
      { id: 'dee', command: ['node', 'd.mjs'], dailyBudgetUsd: 2 },
    ]);
    await spent(layout, 'dee', 2.5);
    const r = await plan([item(1, { difficulty: 4 })]);
    expect(r.assignments.map((a) => a.agent)).toEqual(['ada', 'bob']);
    expect(r.assignments[0]!.contest!.of).toEqual(r.assignments.map((a) => a.crewId));
    expect(r.refused).toEqual([]);
  });

  it('every agent that takes the issue spent today: refused with agent-daily-budget and the budget named', async () => {
    const { plan, layout } = await school([2], undefined, [
      { id: 'ada', command: ['node', 'a.mjs'], dailyBudgetUsd: 5 },
      { id: 'bob', command: ['node', 'b.mjs'], dailyBudgetUsd: 5 },
    ]);
    await spent(layout, 'ada', 6);
    await spent(layout, 'bob', 5);
    const r = await plan([item(1, { difficulty: 5 })]);
    expect(r.assignments).toEqual([]);
    expect(r.refused).toEqual([
      {
        issue: 1,
        code: 'agent-daily-budget',
        reason: expect.stringMatching(
          /^daily budget of agent (ada|bob) \(agents\[\]\.dailyBudgetUsd\) reached: /,
        ),
      },
    ]);
  });
});

describe('dispatch.contest: the two-failure stop counts a contest once', () => {
  it('a loser is no failure; a contest nobody won is one failed run; two such contests stop the issue', async () => {
    const { plan, layout } = await school([2]);
    const hard = () => [item(1, { difficulty: 5 })];
    const first = await plan(hard());
    const [a, b] = first.assignments.map((x) => x.crewId) as [string, string];
    await finishCrew(layout, a, 1, 'succeeded', new Date(NOW.getTime() + 1000));
    await finishCrew(layout, b, 1, 'failed', new Date(NOW.getTime() + 2000));
    // b failed and a was accepted: the issue is done by a; b's loss is not a failed run.
    const accepted = (id: string) => (id === a ? ('accepted' as const) : undefined);
    expect(issueStates(readRegistry(layout), accepted).get(1)).toEqual({ kind: 'done', crewId: a });
    // Neither accepted: one failed run (a repair), not two (a stop).
    const rejected = (id: string) => (id === a ? ('rejected' as const) : undefined);
    const once = issueStates(readRegistry(layout), rejected).get(1)!;
    expect(once.kind).toBe('repair');

    const repair = await plan(hard(), rejected);
    expect(repair.assignments.map((x) => [x.attempt, x.repair, x.contest?.of.length])).toEqual([
      [2, true, 2],
      [2, true, 2],
    ]);
    const [c, d] = repair.assignments.map((x) => x.crewId) as [string, string];
    await finishCrew(layout, c, 1, 'failed', new Date(NOW.getTime() + 3000));
    await finishCrew(layout, d, 1, 'timed_out', new Date(NOW.getTime() + 4000));
    const stopped = issueStates(readRegistry(layout), rejected).get(1)!;
    expect(stopped.kind).toBe('stopped');
  });

  it('a contest whose crews were all interrupted counts nothing', async () => {
    const { plan, layout } = await school([2]);
    const first = await plan([item(1, { difficulty: 5 })]);
    for (const [i, x] of first.assignments.entries())
      await finishCrew(
        layout,
        x.crewId,
        1,
        i === 0 ? 'overloaded' : 'usage_limit',
        new Date(NOW.getTime() + 1000 * (i + 1)),
      );
    expect(issueStates(readRegistry(layout)).get(1)).toEqual({ kind: 'ready', attempt: 1 });
  });
});
