import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCrew } from '../../src/crew/run/crew.js';
import { pauseStatus } from '../../src/dispatch/gates/pause.js';
import { totalSpend } from '../../src/dispatch/gates/spend.js';
import { silentLogger } from '../../src/log.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { FIXTURES, item, makeSchool, plan, spec, writeCurriculum, type School } from '../crew/helpers.js';
import { planNow } from '../support/planned-school.js';

/**
 * A student's word is evidence about itself, never about the school. Real crews in the real
 * sandbox: a student that claims a usage limit "for six days", one that reports a billion dollars,
 * and an honest crew beside them; then the dispatch office plans the next batch.
 */
const WORD = join(FIXTURES, 'word-student.mjs');
let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
});

function wordSchool(): School {
  const s = (school = makeSchool({
    worktrees: 2,
    extraAgents: [
      { id: 'liar', command: ['node', WORD, '--mode', 'limit', '{brief}'] },
      { id: 'spender', command: ['node', WORD, '--mode', 'cost', '--cost', '1e9', '{brief}'] },
    ],
  }));
  // The school's cap is far above one crew's budget (dispatch.crewBudgetUsd, default 10).
  s.config.dispatch.spendCap = 100;
  s.config.dispatch.maxCrews = 4;
  return s;
}

async function crew(s: School, crewId: string, issue: number, agent: string) {
  await plan(s, [{ crewId, issue, agent }]);
  return runCrew(await spec(s, crewId), { logger: silentLogger });
}

const nextPlan = (s: School, curriculum: CurriculumItem[], scores?: (agent: string) => number) =>
  planNow(s, curriculum, scores ? { record: { scores } } : {});

describe('a limit only the student reports', () => {
  it('a command student exiting 75 pauses its agent alone, for at most dispatch.agentPauseMaxMinutes; another agent is planned', async () => {
    const s = wordSchool();
    writeCurriculum(s, [item(1), item(2), item(3), item(4)]);
    const before = Date.now();
    const r = await crew(s, 'c1-liar0001', 1, 'liar');
    expect(r.outcome).toBe('usage_limit');
    // The school's probe of the agent (the same command, an empty brief) exits 75 too: confirmed.
    expect(r.reason).toMatch(
      /the API's answers are not seen for this agent \(no key proxy\); confirmed: the probe answered with the limit too .*: agent liar pauses/,
    );

    const p = pauseStatus(s.layout);
    expect(p.paused).toBe(false);
    expect(p.pauses).toEqual([]);
    expect(p.agentPauses).toHaveLength(1);
    expect(p.agentPauses[0]).toMatchObject({ agent: 'liar', source: 'usage_limit', crewId: 'c1-liar0001' });
    // It asked for six days; the cap is 60 minutes from when the crew ended.
    const until = Date.parse(p.agentPauses[0]!.until!);
    expect(until).toBeGreaterThan(before + 59 * 60_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 60 * 60_000);

    // The honest crew beside it runs as ever.
    const honest = await crew(s, 'c2-edit0001', 2, 'editor');
    expect(honest.outcome).toBe('succeeded');

    // The planner prefers the paused agent (its score is best): another agent takes the issue, and
    // an issue forced onto the paused agent waits for that agent only.
    const next = await nextPlan(s, [item(3), item(4, { forceAgent: 'liar' })], (a) =>
      a === 'liar' ? 0.9 : 0.2,
    );
    expect(next.paused).toBeUndefined();
    expect(next.loud).toBeUndefined();
    expect(next.assignments.map((a) => [a.issueNumber, a.agent === 'liar'])).toEqual([[3, false]]);
    expect(next.refused.find((x) => x.issue === 4)).toMatchObject({
      code: 'agent-paused',
      reason: expect.stringMatching(/^agent liar paused since .* until /),
    });
  });
});

describe('a cost only the student reports', () => {
  it('costUsd 1e9 is recorded as the crew budget, alerted, the crew fails naming the budget, and dispatch continues', async () => {
    const s = wordSchool();
    writeCurriculum(s, [item(1), item(2), item(3)]);
    const r = await crew(s, 'c1-spend001', 1, 'spender');
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(
      /dispatch\.crewBudgetUsd \(\$10\.00\) is spent: turn 1 reported \$1000000000\.00/,
    );
    expect(r.alerts).toEqual([expect.stringMatching(/^cost-over-budget: .*dispatch\.crewBudgetUsd/)]);

    const honest = await crew(s, 'c2-edit0002', 2, 'editor');
    expect(honest.outcome).toBe('succeeded');

    const rows = readJsonl<{ key: string; data: { costUsd: number; reportedUsd?: number } }>(
      s.layout.file('spend'),
    ).records.map((x) => [x.key, x.data.costUsd, x.data.reportedUsd]);
    expect(rows).toEqual([
      ['spend:c1-spend001', 10, 1e9],
      ['spend:c2-edit0002', 0.25, undefined],
    ]);
    expect(totalSpend(s.layout)).toBe(10.25);

    const next = await nextPlan(s, [item(3)]);
    expect(next.loud).toBeUndefined();
    expect(next.assignments.map((a) => a.issueNumber)).toEqual([3]);
  });

  it('1e308 tokens priced, a cost as a string, negative and unparsable figures: bounded, recorded finite, dispatch continues', async () => {
    const word = (id: string, usage: string) => ({
      id,
      command: ['node', WORD, '--mode', 'cost', '--usage', usage, '{brief}'],
      // Where a command agent has pricing its tokens are priced, not its costUsd believed.
      ...(id === 'huge' ? { pricing: { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 } } : {}),
    });
    const s = (school = makeSchool({
      worktrees: 2,
      extraAgents: [
        word('huge', '{"inputTokens": 1e308, "outputTokens": 1e308, "costUsd": 0}'),
        word('text', '{"inputTokens": 10, "costUsd": "1e9"}'),
        word('negative', '{"inputTokens": -5, "costUsd": -1e9}'),
        word('broken', '{"costUsd": NaN, "inputTokens": Infinity}'),
      ],
    }));
    s.config.dispatch.spendCap = 100;
    s.config.dispatch.maxCrews = 4;
    writeCurriculum(s, [item(1), item(2), item(3), item(4), item(5), item(6)]);
    const huge = await crew(s, 'c1-huge0001', 1, 'huge');
    expect(huge.outcome).toBe('failed');
    expect(huge.reason).toMatch(/dispatch\.crewBudgetUsd \(\$10\.00\) is spent: turn 1 reported/);
    expect(huge.alerts).toEqual([expect.stringMatching(/^cost-over-budget: /)]);
    const text = await crew(s, 'c2-text0001', 2, 'text');
    expect(text.outcome).toBe('failed');
    expect(text.reason).toMatch(/turn 1 reported \$1000000000\.00/);
    expect((await crew(s, 'c3-nega0001', 3, 'negative')).outcome).toBe('succeeded');
    expect((await crew(s, 'c4-brok0001', 4, 'broken')).outcome).toBe('succeeded');

    const rows = readJsonl<{ key: string; data: { costUsd: number; reportedUsd?: number } }>(
      s.layout.file('spend'),
    ).records;
    for (const r of rows) {
      expect(Number.isFinite(r.data.costUsd), r.key).toBe(true);
      if (r.data.reportedUsd !== undefined) expect(Number.isFinite(r.data.reportedUsd), r.key).toBe(true);
    }
    expect(rows.map((r) => [r.key, r.data.costUsd])).toEqual([
      ['spend:c1-huge0001', 10],
      ['spend:c2-text0001', 10],
      ['spend:c3-nega0001', 0],
    ]);
    expect(totalSpend(s.layout)).toBe(20);
    // The bookbag holds finite numbers (JSON would write Infinity as null and the grader refuse it).
    const bag = JSON.parse(readFileSync(join(s.layout.bookbag('c1-huge0001'), 'bookbag.json'), 'utf8'));
    expect(bag.usage).toMatchObject({ inputTokens: 1e308, outputTokens: 1e308, costUsd: 10 });

    const next = await nextPlan(s, [item(5), item(6)]);
    expect(next.loud).toBeUndefined();
    expect(next.assignments.map((a) => a.issueNumber)).toEqual([5, 6]);
  });

  it('the school cap still halts dispatch, and the refusal names dispatch.spendCap', async () => {
    const s = wordSchool();
    s.config.dispatch.spendCap = 10;
    writeCurriculum(s, [item(1), item(2)]);
    expect((await crew(s, 'c1-spend002', 1, 'spender')).outcome).toBe('failed');
    const next = await nextPlan(s, [item(2)]);
    expect(next.loud).toBe('SPEND CAP REACHED (10.00 >= 10.00) — dispatch halted, 0/1 placed');
    expect(next.refused).toEqual([
      { issue: 2, code: 'spend-cap', reason: expect.stringContaining('dispatch.spendCap') },
    ]);
  });
});
