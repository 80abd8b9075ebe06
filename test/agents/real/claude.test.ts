import { afterEach, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { BOOKBAG_FILES } from '../../../src/bookbag/schema.js';
import { join } from 'node:path';
import { runCrew } from '../../../src/crew/run/crew.js';
import { silentLogger } from '../../../src/log.js';
import { readJsonl } from '../../../src/state/jsonl.js';
import { runAgentReviewer } from '../../../src/grading/agent-reviewer.js';
import { item, plan, registry, spec, writeCurriculum } from '../../crew/helpers.js';
import {
  anthropicServer,
  type AnthropicError,
  type AnthropicServer,
} from '../../support/model-servers/anthropic.js';
import type { ModelStep } from '../../support/model-servers/script.js';
import {
  claudeAgent,
  claudeBin,
  codexBin,
  claudeEnv,
  CLAUDE,
  describeReal,
  printedTurns,
  privateHome,
  realSchool,
  record,
  setEnv,
  type RealSchool,
} from './support.js';

/**
 * Claude Code itself, run by the crew path (runCrew: the adapter's argv, the sandbox, the session,
 * the verification and its correction turns) against a scripted Anthropic Messages API.
 */
let school: RealSchool | undefined;
let server: AnthropicServer | undefined;
let restore: (() => void) | undefined;
afterEach(async () => {
  restore?.();
  await server?.close();
  school?.cleanup();
  school = server = restore = undefined;
});

const CREW = 'c7-real0001';
type School = Parameters<typeof writeCurriculum>[0];

async function crew(
  bin: string,
  steps: ModelStep<AnthropicError>[],
  o: {
    url?: string;
    timeout?: number;
    env?: Record<string, string | undefined>;
    agent?: Record<string, unknown>;
  } = {},
) {
  server = await anthropicServer(steps);
  restore = setEnv({ ...claudeEnv(o.url ?? server.url), ...o.env });
  const s = (school = realSchool({
    agents: [claudeAgent(bin, o.agent)],
    ...(o.timeout ? { timeout: o.timeout } : {}),
  }));
  writeCurriculum(s as unknown as School, [item(7)]);
  await plan(s as unknown as School, [{ crewId: CREW, issue: 7, agent: 'claude' }]);
  const r = await runCrew(await spec(s as unknown as School, CREW), { logger: silentLogger });
  const log = s.studentLog(CREW);
  const diff = join(s.layout.bookbag(CREW), BOOKBAG_FILES.diff);
  return {
    s,
    r,
    server,
    log,
    turns: printedTurns(log),
    diff: () => (existsSync(diff) ? readFileSync(diff, 'utf8') : ''),
  };
}

type Spend = {
  key: string;
  data: {
    costUsd: number;
    source?: string;
    turn?: number;
    model?: string;
    meteredUsd?: number;
    reportedUsd?: number;
  };
};
const results = (turns: string[][]) =>
  turns.map((t) => JSON.parse(t.at(-1)!) as { session_id: string; is_error: boolean; result: string });
type Message = {
  role: string;
  content: Array<{ type: string; content?: unknown; is_error?: boolean; text?: string }> | string;
};
const messages = (s: AnthropicServer, i: number) => (s.requests[i]!.body as { messages: Message[] }).messages;
const toolResults = (s: AnthropicServer) =>
  s.requests
    .flatMap(
      (r) =>
        ((r.body as { messages: Message[] }).messages.at(-1)?.content ?? []) as Array<{
          type: string;
          content?: unknown;
          is_error?: boolean;
        }>,
    )
    .filter((c) => typeof c === 'object' && c.type === 'tool_result');

const SOLVE = (text = 'solved #7\n'): ModelStep<AnthropicError>[] => [
  { actions: [{ read: 'src/value.txt' }] },
  { actions: [{ write: { path: 'src/value.txt', content: text } }] },
];

describeReal('claude-code, the real CLI', CLAUDE, claudeBin(), (bin) => {
  it('an edit lands in the worktree, inside the sandbox; usage, cost and session are read from its result', async () => {
    const { s, r, server, log, turns, diff } = await crew(bin, [
      ...SOLVE(),
      { text: 'Done.', usage: { input: 300, output: 40, cacheRead: 1000, cacheWrite: 200 } },
    ]);
    record('claude', 'edit', log, s.root);
    expect(r.outcome, r.reason).toBe('succeeded');
    // Nothing but the model was asked for: no refused connection to alert on.
    expect(r.alerts).toEqual([]);
    expect(diff()).toMatch(/^-base\n\+solved #7$/m);
    expect(server.requests.map((q) => q.path)).toEqual(Array(3).fill('/v1/messages?beta=true'));
    // The brief reached the model on stdin; the key it was given, and nothing else of ours, as its credential.
    expect(JSON.stringify(messages(server, 0))).toContain('Fix thing 7');
    expect(server.requests[0]!.headers['x-api-key']).toBe('sk-ant-scripted-0000');
    expect(turns).toHaveLength(1);
    const [res] = results(turns);
    expect(res!.session_id).toMatch(/^[0-9a-f-]{36}$/);
    const record_ = JSON.parse(readFileSync(join(s.layout.bookbag(CREW), 'bookbag.json'), 'utf8'));
    expect(record_.agentSession).toBe(res!.session_id);
    // 3 requests: 120+120+300 input, 30+30+40 output, the cache of the last one.
    expect(record_.usage).toMatchObject({
      inputTokens: 1740,
      outputTokens: 100,
      cachedInputTokens: 1000,
      cacheCreationTokens: 200,
    });
    expect(record_.usage.costUsd).toBeGreaterThan(0);
    // The key proxy metered each of the 3 answers (claude-sonnet-4-5: $3 input, $15 output, $0.30
    // cache read, $3.75 cache write per million) as its own row; the turn's row holds only what the
    // CLI's own report adds beyond them (it priced the same tokens alike: nothing).
    const spend = readJsonl<Spend>(s.layout.file('spend')).records;
    const metered = spend.filter((x) => x.data.source === 'metered');
    expect(metered.map((x) => x.key)).toEqual(
      [1, 2, 3].map((n) => expect.stringMatching(new RegExp(`^spend:${CREW}:metered:[0-9a-f]{12}-${n}$`))),
    );
    expect(metered.map((x) => x.data.model)).toEqual(Array(3).fill('claude-sonnet-4-5'));
    const cost = (x: Spend) => x.data.costUsd;
    expect(cost(metered[0]!)).toBeCloseTo((120 * 3 + 30 * 15) / 1e6, 6);
    expect(cost(metered[1]!)).toBeCloseTo((120 * 3 + 30 * 15) / 1e6, 6);
    expect(cost(metered[2]!)).toBeCloseTo((300 * 3 + 40 * 15 + 1000 * 0.3 + 200 * 3.75) / 1e6, 6);
    const turn = spend.filter((x) => x.data.source !== 'metered');
    expect(turn.map((x) => x.key)).toEqual([`spend:${CREW}`]);
    const meteredUsd = metered.reduce((a, x) => a + cost(x), 0);
    expect(turn[0]!.data.meteredUsd).toBeCloseTo(meteredUsd, 6);
    expect(turn[0]!.data.reportedUsd).toBeCloseTo(record_.usage.costUsd, 6);
    // A turn costs max(metered, reported): the ledger's total is the larger, never the sum.
    const total = spend.reduce((a, x) => a + cost(x), 0);
    expect(total).toBeCloseTo(Math.max(meteredUsd, turn[0]!.data.reportedUsd!), 6);
    expect(total).toBeCloseTo(record_.usage.costUsd, 6);
  }, 180_000);

  it('a failed verification goes back to the same session; the student ran the verify command itself', async () => {
    const { s, r, server, log, turns, diff } = await crew(bin, [
      ...SOLVE('attempt\n'),
      { actions: [{ shell: 'node check.mjs' }] },
      { text: 'I ran the checker.' },
      // The correction turn: the same conversation, with the checker's output in the new message.
      ...SOLVE(),
      { text: 'Fixed.' },
    ]);
    record('claude', 'correction', log, s.root);
    expect(r.outcome, r.reason).toBe('succeeded');
    expect(r.reason).toContain('after 1 correction turn(s)');
    expect(diff()).toMatch(/^-base\n\+solved #7$/m);
    const [first, second] = results(turns);
    expect(second!.session_id).toBe(first!.session_id);
    expect(log).toContain(`--resume ${first!.session_id}`);
    // The checker ran inside the sandbox without asking (--allowedTools Bash(node check.mjs:*)).
    const ran = toolResults(server).find((t) => JSON.stringify(t.content).includes('checking src/value.txt'));
    expect(ran, JSON.stringify(toolResults(server))).toBeDefined();
    expect(JSON.stringify(ran!.content)).toContain('FAIL: no solution line');
    expect(JSON.stringify(toolResults(server))).not.toContain('requires approval');
    // The resumed request carries the first turn's conversation and then the correction.
    const resumed = messages(server, 4);
    expect(JSON.stringify(resumed)).toContain('Fix thing 7');
    expect(JSON.stringify(resumed.at(-1))).toContain('FAIL: no solution line');
    // One metered row per answer of each turn (4, then 3), and one row per turn holding what its
    // report adds beyond them: each turn costs the larger of its metered and reported figures.
    const spend = readJsonl<Spend>(s.layout.file('spend')).records;
    const metered = spend.filter((x) => x.data.source === 'metered');
    expect(metered).toHaveLength(server.requests.length);
    expect(metered.map((x) => x.data.turn)).toEqual([0, 0, 0, 0, 1, 1, 1]);
    for (const x of metered) {
      expect(x.key).toMatch(new RegExp(`^spend:${CREW}:metered:[0-9a-f]{12}-\\d+$`));
      expect(x.data.costUsd).toBeGreaterThan(0);
    }
    const turns_ = spend.filter((x) => x.data.source !== 'metered');
    expect(turns_.map((x) => x.key)).toEqual([`spend:${CREW}`, `spend:${CREW}:turn-1`]);
    turns_.forEach((row, t) => {
      const m = metered.filter((x) => x.data.turn === t).reduce((a, x) => a + x.data.costUsd, 0);
      expect(row.data.meteredUsd).toBeCloseTo(m, 6);
      expect(row.data.reportedUsd).toBeGreaterThan(0);
      expect(row.data.costUsd).toBeCloseTo(Math.max(0, row.data.reportedUsd! - m), 6);
    });
    // Every answer named a model the price table holds.
    expect(r.alerts.filter((a) => a.startsWith('model-unpriced'))).toEqual([]);
  }, 240_000);

  it('a reviewer turn cannot write: plan mode refuses the write, and its verdict is read', async () => {
    server = await anthropicServer([
      { actions: [{ write: { path: '/PLACEHOLDER', content: 'pwned\n' } }] },
      { text: '{"approve": true, "score": 0.9, "reasons": ["does what the issue asks"]}' },
    ]);
    const s = (school = realSchool({ agents: [claudeAgent(bin)] }));
    restore = setEnv({ ...claudeEnv(server.url), HOME: privateHome(s) });
    const target = join(s.root, 'outside', 'pwned.txt');
    mkdirSync(join(s.root, 'outside'));
    server.script.set([
      { actions: [{ write: { path: target, content: 'pwned\n' } }] },
      { text: '{"approve": true, "score": 0.9, "reasons": ["does what the issue asks"]}' },
    ]);
    // Unconfined on purpose: what keeps this reviewer from writing is the adapter's argv alone.
    const f = await runAgentReviewer(
      {
        kind: 'claude-code',
        bin,
        model: 'claude-sonnet-4-5',
        args: [],
        passEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_MAX_RETRIES'],
      } as never,
      {
        issueNumber: 7,
        crewId: CREW,
        agent: 'claude',
        fences: [],
        brief: 'Fix thing 7',
        diff: '',
        verification: {},
      } as never,
      { timeoutMs: 120_000 },
    );
    expect(f.passed).toBe(true);
    expect(existsSync(target)).toBe(false);
    const refused = toolResults(server);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.is_error).toBe(true);
  }, 180_000);

  // Each API error form as Claude Code reports it, read as the right ending of the crew.
  const FORMS: Array<[AnthropicError, string, RegExp]> = [
    ['usage_limit', 'usage_limit', /usage or credit limit \(resets 2027-01-01T00:00:00\.000Z\)/],
    ['overloaded', 'overloaded', /overload/],
    ['rate_limit', 'overloaded', /rate limit/],
    ['api_error', 'overloaded', /overload/],
    ['authentication', 'aborted', /could not start: Invalid API key/],
    ['permission', 'aborted', /could not start: Failed to authenticate/],
    ['not_found', 'aborted', /could not start: There's an issue with the selected model/],
    ['invalid_request', 'failed', /API Error: 400 messages: field required/],
    ['request_too_large', 'failed', /Request too large/],
  ];
  for (const [form, outcome, reason] of FORMS)
    it(`API error ${form} is read as ${outcome}`, async () => {
      const { s, r, log, turns } = await crew(bin, [{ error: form }]);
      record('claude', `error-${form}`, log, s.root);
      expect(turns.length).toBeGreaterThan(0);
      expect(r.outcome, r.reason).toBe(outcome);
      expect(r.reason).toMatch(reason);
    }, 180_000);

  it('a subscription login past its 5-hour limit is a usage limit with the reset the headers name', async () => {
    const { s, r, log, server } = await crew(bin, [{ error: 'subscription_limit' }], {
      env: { ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-scripted-0000' },
      agent: {
        passEnv: [
          'CLAUDE_CODE_OAUTH_TOKEN',
          'ANTHROPIC_BASE_URL',
          'CLAUDE_CODE_MAX_RETRIES',
          'API_TIMEOUT_MS',
        ],
      },
    });
    record('claude', 'subscription-limit', log, s.root);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-ant-oat01-scripted-0000');
    expect(log).toContain("You've hit your 5-hour limit");
    expect(r.outcome, r.reason).toBe('usage_limit');
    expect(r.reason).toContain('resets 2027-01-01T00:00:00.000Z');
  }, 180_000);

  it('a bin that is another program could not start, and says which', async () => {
    const other = codexBin();
    if (!other)
      return void console.warn('SKIPPED: needs codex installed too (node scripts/install-agents.mjs)');
    const { s, r, server } = await crew(other, [{ text: 'never asked' }], {});
    expect(r.outcome, r.reason).toBe('aborted');
    // What a release that renamed a flag would print too: a set-up problem, not the student's failure.
    expect(r.reason).toMatch(/^claude could not start: error: unexpected argument '--output-format' found/);
    expect(registry(s as unknown as School).crews[CREW]!.infra).toBe(true);
    expect(server.all).toHaveLength(0);
  }, 180_000);

  it('an unreachable API is a crew that could not start', async () => {
    const { s, r, log } = await crew(bin, [{ text: 'never asked' }], { url: 'http://127.0.0.1:9' });
    record('claude', 'unreachable', log, s.root);
    expect(r.outcome, r.reason).toBe('aborted');
    expect(r.reason).toMatch(/could not start/);
    expect(registry(s as unknown as School).crews[CREW]!.infra).toBe(true);
    expect(server!.all).toHaveLength(0);
  }, 180_000);
});
