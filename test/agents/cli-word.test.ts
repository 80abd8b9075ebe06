import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEnding } from '../../src/agents/claude.js';
import { codexEnding } from '../../src/agents/codex.js';
import { classifyEnding } from '../../src/agents/outcome.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { pauseStatus } from '../../src/dispatch/gates/pause.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { item, makeSchool, plan, spec, writeCurriculum, type School } from '../crew/helpers.js';
import { claude, codex, installFakes, uid } from './fake.js';
import { RECORDINGS } from './real/support.js';

/**
 * A CLI agent's limit text can come from its model, which the issue steers, and its error envelope
 * from a process inside the sandbox: without the API's own answer (the key proxy's record,
 * test/agents/real/upstream-limit.test.ts) any of them pauses that agent alone. And a crew's spend is bounded by `dispatch.crewBudgetUsd`: Claude Code is told the rest as
 * `--max-budget-usd`, codex (which has no such flag) is stopped after the turn that passes it.
 */
let school: School | undefined;
let savedPath: string | undefined;
beforeEach(() => {
  savedPath = process.env.PATH;
});
afterEach(() => {
  process.env.PATH = savedPath;
  school?.cleanup();
  school = undefined;
});

const SOLVE = (n: number) => ({ file: 'src/value.txt', text: `solved #${n}\n` });
const FAR = 4_102_444_800; // 2100-01-01, in epoch seconds

function cliSchool(turns: Parameters<typeof installFakes>[1], budgetUsd?: number) {
  // Unconfined: the fakes record their calls beside themselves (as in crew-agents.test.ts).
  const s = (school = makeSchool({
    unconfined: true,
    extraAgents: [
      { id: 'claude', kind: 'claude-code', passEnv: [] },
      {
        id: 'codex',
        kind: 'codex',
        // A million input tokens cost $1.
        pricing: { inputPerMTok: 1, cachedInputPerMTok: 0, outputPerMTok: 0 },
        passEnv: [],
      },
    ],
  }));
  if (budgetUsd !== undefined) s.config.dispatch.crewBudgetUsd = budgetUsd;
  const fake = installFakes(join(s.root, 'bin'), turns);
  process.env.PATH = `${fake.bin}:${savedPath}`;
  return { s, fake };
}

async function run(s: School, crewId: string, issue: number, agent: string) {
  writeCurriculum(s, [item(issue)]);
  await plan(s, [{ crewId, issue, agent }]);
  return runCrew(await spec(s, crewId), { logger: silentLogger });
}

function spend(s: School) {
  return readJsonl<{ key: string; data: { costUsd: number; reportedUsd?: number } }>(
    s.layout.file('spend'),
  ).records.map((r) => [r.key, r.data.costUsd, r.data.reportedUsd]);
}

describe('limits: the model’s words against the CLI’s envelope', () => {
  it('claude: a limit line as the model’s answer (not an API error) pauses that agent alone, capped', async () => {
    const { s } = cliSchool([
      {
        stdout: claude.result({
          session: uid('w1'),
          cost: 0.01,
          text: `Claude AI usage limit reached|${FAR}`,
        }),
      },
    ]);
    const r = await run(s, 'c1-cliw0001', 1, 'claude');
    expect(r.outcome).toBe('usage_limit');
    const p = pauseStatus(s.layout);
    expect(p.paused).toBe(false);
    expect(p.agentPauses.map((x) => x.agent)).toEqual(['claude']);
    // The year 2100 it named is cut to dispatch.agentPauseMaxMinutes (60).
    expect(Date.parse(p.agentPauses[0]!.until!)).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
  });

  it('codex: a limit only in prose on its output pauses that agent alone', async () => {
    const { s } = cliSchool([
      {
        stdout: `${JSON.stringify({ type: 'thread.started', thread_id: uid('w2') })}\n${JSON.stringify({ type: 'turn.started' })}\n`,
        stderr: "You've hit your usage limit. Try again at Dec 1st, 2099 12:14 AM.\n",
        exit: 1,
      },
    ]);
    const r = await run(s, 'c2-cliw0002', 2, 'codex');
    expect(r.outcome).toBe('usage_limit');
    const p = pauseStatus(s.layout);
    expect(p.paused).toBe(false);
    expect(p.agentPauses.map((x) => x.agent)).toEqual(['codex']);
    expect(Date.parse(p.agentPauses[0]!.until!)).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
  });

  it('claude: the CLI’s own API-error envelope, with no key proxy to see the API’s answer, pauses its agent alone', async () => {
    // The envelope arrives on the CLI's stdout, which a process inside the sandbox can also write
    // (/proc/<pid>/fd/1 of the CLI): without the API's own answer it is the student's word.
    const { s } = cliSchool([
      {
        stdout: claude.apiError(uid('w3'), "You've hit your 5-hour limit · resets Jan 1, 2099, 12am (UTC)", {
          status: 429,
          type: 'rate_limit_error',
          error: 'usage_limit_reached',
        }),
        exit: 1,
      },
    ]);
    const r = await run(s, 'c3-cliw0003', 3, 'claude');
    expect(r.outcome).toBe('usage_limit');
    // The school's own probe (the agent's CLI with a fixed prompt, outside the worktree) answered
    // with the limit too: a confirmed limit pauses the agent, still not the school.
    expect(r.reason).toMatch(
      /the API's answers are not seen for this agent \(no key proxy\); confirmed: the probe answered with the limit too .*: agent claude pauses/,
    );
    const p = pauseStatus(s.layout);
    expect(p.paused).toBe(false);
    expect(p.agentPauses.map((x) => x.agent)).toEqual(['claude']);
    // The year 2099 it named is cut to dispatch.agentPauseMaxMinutes (60).
    expect(Date.parse(p.agentPauses[0]!.until!)).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
    // No record of the API's answer: it counts toward the issue's limit-claim stop.
    const finished = readJsonl<{ type: string; data: { upstream?: unknown } }>(
      s.layout.file('crews'),
    ).records.find((e) => e.type === 'crew.finished');
    expect(finished?.data.upstream).toBeUndefined();
  });

  it('the recorded CLI limit envelopes are read as the CLI’s own error, the same words as a model’s answer are not', () => {
    const NOW = new Date('2026-12-01T00:00:00Z');
    const recorded = (tool: string, scenario: string) =>
      readFileSync(join(RECORDINGS, tool, `${scenario}.jsonl`), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{') && !/^\{"turn":\d+\}$/.test(l));
    for (const scenario of ['error-usage_limit', 'subscription-limit']) {
      const lines = recorded('claude', scenario);
      const e = claudeEnding({ exitCode: 1, stdout: lines.join('\n'), stderr: '' }, NOW);
      expect([scenario, e.kind, e.toolSignal]).toEqual([scenario, 'usage_limit', true]);
      // Whom it pauses is no longer the envelope's to say (the key proxy's record decides).
      expect(classifyEnding(e, null, 0)).toEqual({ outcome: 'usage_limit', reason: expect.any(String) });
    }
    for (const scenario of ['error-usage_limit_reached', 'error-insufficient_quota']) {
      const lines = recorded('codex', scenario);
      const e = codexEnding({}, { exitCode: 1, stdout: lines.join('\n'), stderr: '' }, NOW);
      expect([scenario, e.kind, e.toolSignal]).toEqual([scenario, 'usage_limit', true]);
    }
    // The recorded successful turn, its answer replaced by the subscription limit's words.
    const [edit] = recorded('claude', 'edit').filter((l) => l.includes('"type":"result"'));
    const answer = JSON.parse(edit!) as Record<string, unknown>;
    answer.result = "You've hit your 5-hour limit · resets Jan 1, 2099, 12am (UTC)";
    const e = claudeEnding({ exitCode: 0, stdout: JSON.stringify(answer), stderr: '' }, NOW);
    expect(e.kind).toBe('usage_limit');
    expect(e.toolSignal).toBeUndefined();
    expect(classifyEnding(e, null, 0).outcome).toBe('usage_limit');
  });
});

describe('the crew budget (dispatch.crewBudgetUsd)', () => {
  it('codex, which has no budget flag: the crew is stopped after the turn that passes it, failed, the budget named', async () => {
    const { s, fake } = cliSchool(
      [
        // Turn 1: $0.60 and nothing solved (verification fails); turn 2: $0.60 more, over the $0.40 left.
        { stdout: codex.run({ thread: uid('b1'), input: 600_000, cached: 0, output: 0 }) },
        {
          append: SOLVE(4),
          stdout: codex.run({ thread: uid('b1'), input: 1_200_000, cached: 0, output: 0 }),
        },
        {
          append: SOLVE(4),
          stdout: codex.run({ thread: uid('b1'), input: 1_800_000, cached: 0, output: 0 }),
        },
      ],
      1,
    );
    const r = await run(s, 'c4-budg0001', 4, 'codex');
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(
      /dispatch\.crewBudgetUsd \(\$1\.00\) is spent: turn 2 reported \$0\.60, more than the \$0\.40 left/,
    );
    // The fixture's base fails its own verification (said once, as base-red); the budget alert is this test's.
    expect(r.alerts.filter((a) => !a.startsWith('base-red: '))).toEqual([
      expect.stringMatching(/^cost-over-budget: /),
    ]);
    // No third turn, though dispatch.correctionTurns (2) would allow one.
    expect(fake.calls()).toHaveLength(2);
    expect(spend(s)).toEqual([
      ['spend:c4-budg0001', 0.6, undefined],
      ['spend:c4-budg0001:turn-1', 0.4, 0.6],
    ]);
  });

  it('claude is told what is left of the budget as --max-budget-usd, turn by turn', async () => {
    const { s, fake } = cliSchool(
      [
        { stdout: claude.result({ session: uid('b2'), cost: 0.3 }) },
        { append: SOLVE(5), stdout: claude.result({ session: uid('b2'), cost: 0.2 }) },
      ],
      1,
    );
    const r = await run(s, 'c5-budg0002', 5, 'claude');
    expect(r.outcome).toBe('succeeded');
    const budgets = fake.calls().map((c) => c.argv[c.argv.indexOf('--max-budget-usd') + 1]);
    expect(budgets).toEqual(['1', '0.7']);
  });

  it('claude stopped by its --max-budget-usd says so with the budget’s name', () => {
    const e = claudeEnding(
      {
        exitCode: 1,
        stdout: claude.result({
          session: uid('b3'),
          cost: 1.02,
          isError: true,
          subtype: 'error_max_budget_usd',
          errors: ['Reached maximum budget ($1)'],
        }),
        stderr: '',
      },
      new Date(),
    );
    expect(e.kind).toBe('failed');
    expect(e.reason).toMatch(
      /^claude stopped at its --max-budget-usd \(what was left of dispatch\.crewBudgetUsd\)/,
    );
  });
});
