import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { dispatchSummary } from '../../src/actions/dispatch-crew/summary.js';
import { buildView } from '../../src/board/view.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { renderHtml } from '../../src/board/html.js';
import { controlMarkdown } from '../../src/board/summary.js';
import { parseConfig } from '../../src/config/load.js';
import { describePlan } from '../../src/cli/commands/dispatch.js';
import type { PlanResult } from '../../src/dispatch/plan.js';
import { feedbackLog, type FeedbackEvent } from '../../src/feedback/log.js';
import { memoryLogger } from '../../src/log.js';
import { dispatchJob, type DispatchJobResult } from '../../src/loop/dispatch-job.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { item } from '../crew/helpers.js';
import { recordDelivered } from '../support/deliveries.js';
import { tempDir } from '../support/tmp.js';
import { finishCrew } from './helpers.js';

/**
 * Back-pressure on review (docs/delivery.md, "Back-pressure"), through dispatch-crew's plan job on a
 * real state directory: the outbox records deliveries as a real delivery does, the feedback log the
 * reviews and settlements the feedback scan records, the crews log what the crew runtime appends.
 * At `delivery.maxOpenPullRequests` new issues wait and a revision still runs; a merge frees a place;
 * an agent at its own limit takes no new issue while another agent does.
 */
const tmp = tempDir('school-back-pressure-');
afterAll(() => tmp.cleanup());
let n = 0;

const SHA = (c: string) => c.repeat(40);

async function school(raw: Record<string, unknown>, issues: number[]) {
  const root = join(tmp.path, `s${++n}`);
  mkdirSync(root, { recursive: true });
  const settings = {
    stateDir: join(root, 'state'),
    repoPath: root,
    fleet: { daemons: [{ id: 'd1', worktrees: 4 }] },
    agents: [
      { id: 'alpha', command: ['node', 'a.mjs'], roles: ['coding'] },
      { id: 'beta', command: ['node', 'b.mjs'], roles: ['coding'] },
    ],
    // Greedy: unscored agents tie and the first configured takes the work, so who is held shows.
    dispatch: { maxCrews: 10, minFreeDiskGiB: 0, choice: 'greedy' },
    ...raw,
  };
  const config = join(root, 'school.yml');
  writeFileSync(config, stringify(settings));
  const layout = new StateLayout(join(root, 'state'));
  mkdirSync(layout.root, { recursive: true });
  const curriculum = (items: CurriculumItem[]) =>
    writeFileSync(layout.file('curriculum'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
  curriculum(issues.map((i) => item(i)));
  const base = { config, dryRun: false } as const;
  await dispatchJob({ ...base, mode: 'heartbeat', daemon: 'd1' }, memoryLogger());
  const logger = memoryLogger();
  const plan = async (): Promise<{ r: DispatchJobResult; plan: PlanResult }> => {
    const r = (await dispatchJob({ ...base, mode: 'plan' }, logger)).result;
    if (r.mode !== 'plan') throw new Error(`expected a plan, got ${r.mode}`);
    return { r, plan: r.plan };
  };
  return { layout, plan, logger, curriculum, parsed: parseConfig(settings, 'test') };
}

const issuesOf = (p: PlanResult) => p.assignments.map((a) => a.issueNumber).sort((a, b) => a - b);
const refusal = (p: PlanResult, issue: number) => p.refused.find((r) => r.issue === issue);

function feedback(layout: StateLayout, events: FeedbackEvent[]) {
  return feedbackLog(layout).append(events);
}

const review = (issue: number, pr: number, id: string, at: string) =>
  event(
    'feedback.received',
    `received:${id}`,
    {
      issue,
      pr,
      kind: 'review' as const,
      id,
      author: 'maintainer',
      text: 'rename a to b',
      headSha: SHA('e'),
    },
    new Date(at),
  ) as FeedbackEvent;

const settled = (issue: number, pr: number, crewId: string, merged: boolean) =>
  event('pr.settled', `settled:${pr}`, { pr, issue, crewId, merged }) as FeedbackEvent;

describe('back-pressure on review: delivery.maxOpenPullRequests', () => {
  it('new issues wait at the limit, a revision still runs, and a merged pull request frees a place', async () => {
    const s = await school({ delivery: { mode: 'pull-request', maxOpenPullRequests: 2 } }, [1, 2, 3, 4]);

    // Nothing waits yet: two places, taken by the first two issues of this very batch (the crews on
    // new issues count, each may open a pull request); the other two wait although slots are free.
    const first = (await s.plan()).plan;
    expect(issuesOf(first)).toEqual([1, 2]);
    for (const i of [3, 4]) {
      expect(refusal(first, i)).toMatchObject({ code: 'review-back-pressure' });
      expect(refusal(first, i)!.reason).toContain('delivery.maxOpenPullRequests 2');
    }
    const crew = new Map(first.assignments.map((a) => [a.issueNumber, a.crewId]));

    // Both are accepted and delivered as pull requests #11 and #12, which nobody reviewed yet.
    await finishCrew(s.layout, crew.get(1)!, 1, 'succeeded', new Date(Date.now() - 60_000));
    await finishCrew(s.layout, crew.get(2)!, 2, 'succeeded', new Date(Date.now() - 60_000));
    await recordDelivered(s.layout, { issue: 1, crewId: crew.get(1)!, pr: 11 });
    await recordDelivered(s.layout, { issue: 2, crewId: crew.get(2)!, pr: 12 });
    const waiting = await s.plan();
    expect(waiting.plan.assignments).toEqual([]);
    expect(refusal(waiting.plan, 3)).toMatchObject({ code: 'review-back-pressure' });
    expect(refusal(waiting.plan, 3)!.reason).toMatch(/^waiting for review: 2 pull request\(s\) reach/);
    expect(waiting.plan.review).toMatchObject({ waiting: 2, working: 0, limit: 2, full: true });
    // The plan's summary says it once, and `school dispatch` prints the same line.
    const summary = JSON.stringify(dispatchSummary(waiting.r));
    expect(summary.match(/Waiting for review: 2; at the limit delivery.maxOpenPullRequests 2/g)).toHaveLength(
      1,
    );
    expect(describePlan(waiting.plan)).toContain(
      'waiting for review: 2; at the limit delivery.maxOpenPullRequests 2: no new issue starts until one is merged or closed; revisions still run',
    );

    // A maintainer reviews #11: its revision runs at the limit; the new issues still wait.
    await feedback(s.layout, [review(1, 11, 'review:1', new Date().toISOString())]);
    const revised = (await s.plan()).plan;
    expect(revised.assignments).toHaveLength(1);
    expect(revised.assignments[0]).toMatchObject({ issueNumber: 1, agent: 'alpha', revision: { pr: 11 } });
    expect(refusal(revised, 3)).toMatchObject({ code: 'review-back-pressure' });
    expect(refusal(revised, 4)).toMatchObject({ code: 'review-back-pressure' });
    await finishCrew(s.layout, revised.assignments[0]!.crewId, 1, 'succeeded');

    // #12 is merged: one place frees, one new issue starts; the other waits for the next.
    await feedback(s.layout, [settled(2, 12, crew.get(2)!, true)]);
    const freed = (await s.plan()).plan;
    expect(issuesOf(freed)).toEqual([3]);
    expect(freed.assignments[0]!.revision).toBeUndefined();
    expect(refusal(freed, 4)).toMatchObject({ code: 'review-back-pressure' });
    expect(freed.review).toMatchObject({ waiting: 1, working: 0 });

    // The board and `school status` say what waits, from the same state.
    const view = buildView(s.layout, s.parsed);
    expect(view.review).toMatchObject({ waiting: 1, working: 1, limit: 2, full: true });
    expect(renderTerminal(view)).toContain(
      'Waiting for review: 1 (and 1 new issue(s) in progress); at the limit delivery.maxOpenPullRequests 2',
    );
    expect(controlMarkdown(view)).toContain('**Waiting for review: 1');
    expect(renderHtml(view)).toMatch(/data-testid="review" data-waiting="1">Waiting for review: 1 /);
  });

  it('a closed unmerged pull request frees its place too; branch delivery has no limit', async () => {
    const s = await school({ delivery: { mode: 'pull-request', maxOpenPullRequests: 1 } }, [1, 2]);
    const first = (await s.plan()).plan;
    expect(issuesOf(first)).toEqual([1]);
    const c1 = first.assignments[0]!.crewId;
    await finishCrew(s.layout, c1, 1, 'succeeded');
    await recordDelivered(s.layout, { issue: 1, crewId: c1, pr: 21 });
    expect((await s.plan()).plan.assignments).toEqual([]);
    await feedback(s.layout, [settled(1, 21, c1, false)]);
    expect(issuesOf((await s.plan()).plan)).toEqual([2]);

    // Local branches open no pull request: the same state and limit hold nothing back.
    const b = await school({ delivery: { mode: 'branch', maxOpenPullRequests: 1 } }, [1, 2, 3]);
    const plan = (await b.plan()).plan;
    expect(issuesOf(plan)).toEqual([1, 2, 3]);
    expect(plan.review).toBeUndefined();
  });
});

describe('back-pressure on review: agents[].maxOpenPullRequests', () => {
  it('an agent at its limit takes no new issue, another agent does; its revision still runs', async () => {
    const s = await school(
      {
        delivery: { mode: 'pull-request' },
        agents: [
          { id: 'alpha', command: ['node', 'a.mjs'], roles: ['coding'], maxOpenPullRequests: 1 },
          { id: 'beta', command: ['node', 'b.mjs'], roles: ['coding'] },
        ],
      },
      [1],
    );
    // alpha comes first in the configuration: unscored, it takes issue 1 and delivers #31.
    const first = (await s.plan()).plan;
    expect(first.assignments.map((a) => [a.issueNumber, a.agent])).toEqual([[1, 'alpha']]);
    const c1 = first.assignments[0]!.crewId;
    await finishCrew(s.layout, c1, 1, 'succeeded', new Date(Date.now() - 60_000));
    await recordDelivered(s.layout, { issue: 1, crewId: c1, pr: 31 });

    // Two new issues: beta takes both (alpha would have been chosen); a review of #31 goes to alpha.
    s.curriculum([item(1), item(2), item(3), item(4, { forceAgent: 'alpha' } as Partial<CurriculumItem>)]);
    await feedback(s.layout, [review(1, 31, 'review:7', new Date().toISOString())]);
    const held = (await s.plan()).plan;
    expect(held.assignments.map((a) => [a.issueNumber, a.agent, !!a.revision])).toEqual([
      [1, 'alpha', true],
      [2, 'beta', false],
      [3, 'beta', false],
    ]);
    // An issue only alpha may take waits, and says why.
    expect(refusal(held, 4)).toMatchObject({ code: 'agent-review-back-pressure' });
    expect(refusal(held, 4)!.reason).toContain(
      'agent alpha has 1 pull request(s) waiting for review, its maxOpenPullRequests 1',
    );
    expect(held.review!.agents.find((a) => a.agent === 'alpha')).toMatchObject({
      waiting: 1,
      limit: 1,
      full: true,
    });
    expect(held.review!.line).toContain(
      'held: agent alpha (1 pull request waiting; its maxOpenPullRequests 1)',
    );

    // The board names the held agent.
    const view = buildView(s.layout, s.parsed);
    expect(renderTerminal(view)).toContain('held: agent alpha');
  });
});
