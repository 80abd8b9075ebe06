import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { costTable } from '../../src/board/costs.js';
import { costCells } from '../../src/board/format.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { crewRuntimeDir, defaultRuntimeDir } from '../../src/crew/spec.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { readSpend } from '../../src/dispatch/gates/spend.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { FIXTURES, item, makeSchool, plan, spec, writeCurriculum, type School } from '../crew/helpers.js';
import { anthropicServer, type AnthropicServer } from '../support/model-servers/anthropic.js';
import { openaiServer, type OpenAIServer } from '../support/model-servers/openai.js';
import { tempDir } from '../support/tmp.js';

/**
 * Spend is metered where the money goes: a Claude Code crew behind the key proxy, in the default
 * sandbox, whose student sends requests of its own to the Messages API (JSON and SSE answers that
 * bill large usage) and prints a result claiming $0.01. The school records what the API billed, not
 * the claim, and the proxy refuses the crew's requests once its budget is spent — the API is not
 * asked again. An honest crew under its budget beside it is unaffected and recorded at the larger
 * of its metered and reported cost, never their sum.
 */
const REAL_KEY = 'sk-ant-metered-real-3c9d';
let school: School | undefined;
let server: AnthropicServer | undefined;
let openai: OpenAIServer | undefined;
const restore: Array<() => void> = [];
afterEach(async () => {
  for (const r of restore.splice(0)) r();
  await server?.close();
  await openai?.close();
  school?.cleanup();
  school = server = openai = undefined;
});

function setEnv(vars: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  restore.push(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

/** The fake CLI in a bin directory of its own (visible read-only in the sandbox), told what to do. */
function fakeAgent(
  tool: 'claude' | 'codex',
  o: { requests: number; model: string; claimUsd?: number; edit?: object },
): string {
  const bin = tempDir('school-metered-bin-');
  restore.push(bin.cleanup);
  const path = join(bin.path, tool);
  copyFileSync(join(FIXTURES, 'agents', 'metered-agent.mjs'), path);
  chmodSync(path, 0o755);
  writeFileSync(join(bin.path, 'metered.json'), JSON.stringify(o));
  return path;
}

async function meteredSchool(bin: string, budgetUsd: number, usage: { input: number; output: number }) {
  server = await anthropicServer([{ text: 'ok', usage }]);
  setEnv({ ANTHROPIC_API_KEY: REAL_KEY, ANTHROPIC_BASE_URL: server.url });
  const s = (school = makeSchool({
    extraAgents: [
      {
        id: 'claude',
        kind: 'claude-code',
        bin,
        passEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'],
        roles: ['coding'],
      },
    ],
  }));
  s.config.dispatch.crewBudgetUsd = budgetUsd;
  s.config.sandbox.readOnly.push(join(bin, '..'));
  return s;
}

async function crew(s: School, crewId: string, issue: number) {
  writeCurriculum(s, [item(issue)]);
  await plan(s, [{ crewId, issue, agent: 'claude' }]);
  return runCrew(await spec(s, crewId), { logger: silentLogger });
}

type Row = {
  key: string;
  data: { costUsd: number; source?: string; meteredUsd?: number; reportedUsd?: number; crewId?: string };
};
const rows = (s: School) => readJsonl<Row>(s.layout.file('spend')).records;

describe('spend metered by the key proxy', () => {
  it('codex: its own Responses requests are metered from the stream; past the budget the proxy answers 429 itself', async () => {
    const bin = fakeAgent('codex', { requests: 6, model: 'gpt-5.1-codex' });
    // 1M uncached input tokens on gpt-5.1-codex: $1.25 an answer; the turn reports 10 tokens.
    const api = (openai = await openaiServer([{ text: 'ok', usage: { input: 1_000_000, output: 0 } }]));
    setEnv({ CODEX_API_KEY: REAL_KEY });
    const s = (school = makeSchool({
      extraAgents: [
        {
          id: 'codex',
          kind: 'codex',
          bin,
          args: ['-c', `openai_base_url=${JSON.stringify(`${api.url}/v1`)}`],
          passEnv: ['CODEX_API_KEY'],
          roles: ['coding'],
        },
      ],
    }));
    s.config.dispatch.crewBudgetUsd = 2;
    s.config.sandbox.readOnly.push(join(bin, '..'));
    writeCurriculum(s, [item(3)]);
    await plan(s, [{ crewId: 'c3-codex001', issue: 3, agent: 'codex' }]);
    const r = await runCrew(await spec(s, 'c3-codex001'), { logger: silentLogger });

    expect(r.outcome, r.reason).toBe('failed');
    expect(r.reason).toMatch(
      /^the school's budget for this crew is spent: \$2\.50 of \$2\.00 \(dispatch\.crewBudgetUsd\)\. The key proxy refused/,
    );
    expect(api.requests).toHaveLength(2);
    expect(api.requests.every((x) => x.headers.authorization === `Bearer ${REAL_KEY}`)).toBe(true);
    expect(
      rows(s)
        .filter((x) => x.data.source === 'metered')
        .map((x) => x.data.costUsd),
    ).toEqual([1.25, 1.25]);
    expect(readSpend(s.layout).crews?.['c3-codex001']?.usd).toBeCloseTo(2.5, 9);
    // What the student saw: two answers, then the proxy's own 429s.
    const log = join(crewRuntimeDir(defaultRuntimeDir(s.config.stateDir), 'c3-codex001'), 'student.log');
    expect(readFileSync(log, 'utf8')).toContain('statuses: 200 200 429 429 429 429');
  }, 120_000);

  it('a student’s own 21 requests billing $5.40 each (SSE and JSON), claimed as $0.01: what the API billed is recorded, the rest refused without reaching it', async () => {
    const bin = fakeAgent('claude', { requests: 21, model: 'claude-opus-4-1', claimUsd: 0.01 });
    // 200k input and 32k output tokens on Opus 4.1: $5.40 an answer, $113.40 for 21.
    // The crew's budget (dispatch.crewBudgetUsd, 10): the first answer (SSE) leaves $4.60, the second
    // (JSON) is admitted and crosses it; the 19 after it are refused.
    const s = await meteredSchool(bin, 10, { input: 200_000, output: 32_000 });
    const r = await crew(s, 'c1-meter001', 1);

    expect(r.outcome, r.reason).toBe('failed');
    expect(r.reason).toMatch(
      /^the school's budget for this crew is spent: \$10\.80 of \$10\.00 \(dispatch\.crewBudgetUsd\)\. The key proxy refused the crew's further requests: it metered \$10\.80 of the API's answers this turn, the crew reported \$0\.01/,
    );
    expect(r.alerts).toEqual([
      expect.stringMatching(/^cost-over-budget: the school's budget for this crew is spent/),
    ]);
    // The API answered two requests, with the real key; the other nineteen were the proxy's own 429s.
    expect(server!.requests.map((x) => (x.body as { stream: boolean }).stream)).toEqual([true, false]);
    expect(server!.requests.every((x) => x.headers['x-api-key'] === REAL_KEY)).toBe(true);
    expect(server!.all).toHaveLength(2);
    const log = join(crewRuntimeDir(defaultRuntimeDir(s.config.stateDir), 'c1-meter001'), 'student.log');
    expect(readFileSync(log, 'utf8')).toContain(`statuses: 200 200${' 429'.repeat(19)}\n`);

    const spent = rows(s).map((x) => [x.data.costUsd, x.data.source, x.data.meteredUsd, x.data.reportedUsd]);
    expect(spent).toEqual([
      [5.4, 'metered', undefined, undefined],
      [5.4, 'metered', undefined, undefined],
      // The turn's own row: its $0.01 claim is below the metered $10.80, so it adds nothing.
      [0, undefined, 10.8, 0.01],
    ]);
    expect(rows(s)[2]!.key).toBe('spend:c1-meter001');
    const ledger = readSpend(s.layout);
    expect(ledger.totalUsd).toBeCloseTo(10.8, 9);
    expect(ledger.crews?.['c1-meter001']?.usd).toBeCloseTo(10.8, 9);
    expect(ledger.crews?.['c1-meter001']?.meteredUsd).toBeCloseTo(10.8, 9);

    // The board's cost table says the spend was metered.
    const table = costTable({ registry: readCrewState(s.layout).registry, spend: ledger, now: new Date() });
    const row = table.rows.find((x) => x.agent === 'claude')!;
    expect(row).toMatchObject({ spendUsd: 10.8, meteredUsd: 10.8 });
    expect(costCells(row)[5]).toBe('$10.80 ($10.80 metered)');
  }, 120_000);

  it('an honest crew under its budget: every request answered, recorded at the larger of metered and reported', async () => {
    const bin = fakeAgent('claude', {
      requests: 4,
      model: 'claude-haiku-4-5',
      claimUsd: 0.02,
      edit: { file: 'src/value.txt', text: 'solved #2\n' },
    });
    // Haiku 4.5: 2000 input and 100 output tokens, $0.0025 an answer, $0.01 metered in all.
    const s = await meteredSchool(bin, 5, { input: 2000, output: 100 });
    const r = await crew(s, 'c2-honest01', 2);
    expect(r.outcome, r.reason).toBe('succeeded');
    expect(r.alerts).toEqual([]);
    expect(server!.requests).toHaveLength(4);
    const metered = rows(s).filter((x) => x.data.source === 'metered');
    expect(metered.map((x) => x.data.costUsd)).toEqual([0.0025, 0.0025, 0.0025, 0.0025]);
    const turn = rows(s).find((x) => x.key === 'spend:c2-honest01')!;
    expect(turn.data).toMatchObject({ meteredUsd: 0.01, reportedUsd: 0.02 });
    expect(turn.data.costUsd).toBeCloseTo(0.01, 9);
    // One spend: $0.02 (the report, the larger), not $0.03.
    expect(readSpend(s.layout).crews?.['c2-honest01']?.usd).toBeCloseTo(0.02, 9);
  }, 120_000);
});
