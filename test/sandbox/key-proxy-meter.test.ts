import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CrewMeter } from '../../src/agents/usage-meter.js';
import { parseConfig } from '../../src/config/load.js';
import { readSpend, recordSpend } from '../../src/dispatch/gates/spend.js';
import { startKeyProxy, type KeyProxy } from '../../src/sandbox/key-proxy.js';
import { UpstreamRecord } from '../../src/sandbox/upstream-record.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { StateLayout } from '../../src/state/layout.js';
import { anthropicServer, type AnthropicServer } from '../support/model-servers/anthropic.js';
import { openaiServer, type OpenAIServer } from '../support/model-servers/openai.js';
import { tempDir } from '../support/tmp.js';

/**
 * The key proxy meters (src/sandbox/meter.ts, src/agents/usage-meter.ts): every answer's `usage` is
 * priced and recorded in the spend ledger as the crew's, and a request past the crew's budget, the
 * day's budget or the rate cap is answered 429 by the proxy itself — the upstream never sees it.
 * Real sockets, a scripted Anthropic and OpenAI API on 127.0.0.1, a real state directory.
 */
const REAL = 'kp-meter-real-5f1e';
const CREW = { crewId: 'c1-meter001', issueNumber: 1, agent: 'claude' };

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

function school(o: { crewBudgetUsd?: number; dailyBudgetUsd?: number; requestsPerMinute?: number } = {}) {
  const t = tempDir('school-meter-');
  cleanups.push(t.cleanup);
  const config = parseConfig({
    stateDir: join(t.path, 'state'),
    agents: [{ id: 'claude', kind: 'claude-code' }],
    dispatch: {
      ...(o.crewBudgetUsd !== undefined ? { crewBudgetUsd: o.crewBudgetUsd } : {}),
      ...(o.dailyBudgetUsd !== undefined ? { dailyBudgetUsd: o.dailyBudgetUsd } : {}),
    },
    ...(o.requestsPerMinute ? { sandbox: { keyProxy: { requestsPerMinute: o.requestsPerMinute } } } : {}),
  });
  return { dir: t.path, config, layout: new StateLayout(config.stateDir) };
}

async function meteredProxy(
  s: ReturnType<typeof school>,
  upstream: string,
  o: { api?: 'anthropic' | 'openai'; now?: () => Date } = {},
) {
  const alerts: string[] = [];
  const meter = new CrewMeter({
    layout: s.layout,
    who: CREW,
    config: s.config,
    alert: async (kind, detail) => alerts.push(`${kind}: ${detail}`),
    ...(o.now ? { now: o.now } : {}),
  });
  const record = new UpstreamRecord();
  record.meter = meter;
  const anthropic = (o.api ?? 'anthropic') === 'anthropic';
  const proxy = await startKeyProxy({
    socket: join(s.dir, 'key.sock'),
    upstream: anthropic ? upstream : `${upstream}/v1`,
    key: REAL,
    header: anthropic ? 'x-api-key' : 'bearer',
    paths: anthropic ? [/^\/v1\/messages(\/count_tokens)?$/] : [/^\/responses$/],
    record,
  });
  cleanups.push(() => proxy.close());
  return { proxy, meter, alerts };
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}
function ask(
  p: KeyProxy,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request({
      socketPath: p.socket,
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', 'x-api-key': 'placeholder', ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      // A refused request is answered before its body is read: done once the body is sent too.
      const answer = () => done({ status: res.statusCode!, headers: res.headers, body: text });
      res.on('end', () => (req.writableFinished ? answer() : req.once('finish', answer)));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(JSON.stringify(body));
  });
}

/** A request the scripted API takes a step for (it offers a tool), streamed or not. */
const messages = (stream: boolean, model = 'claude-opus-4-1') => ({
  model,
  stream,
  max_tokens: 32_000,
  tools: [{ name: 'Bash' }],
  messages: [{ role: 'user', content: 'hello' }],
});

const rows = (s: ReturnType<typeof school>) =>
  readJsonl<{ key: string; data: { costUsd: number; source?: string; turn?: number; model?: string } }>(
    s.layout.file('spend'),
  ).records;

async function anthropic(steps: Parameters<typeof anthropicServer>[0]): Promise<AnthropicServer> {
  const a = await anthropicServer(steps);
  cleanups.push(() => a.close());
  return a;
}
async function openai(steps: Parameters<typeof openaiServer>[0]): Promise<OpenAIServer> {
  const a = await openaiServer(steps);
  cleanups.push(() => a.close());
  return a;
}

describe('the metered key proxy', () => {
  it('records each answer’s usage as the crew’s spend and refuses once the crew budget is spent, without asking the API', async () => {
    const s = school({ crewBudgetUsd: 5 });
    // 200k input and 32k output tokens on Opus 4.1: $5.40 an answer.
    const api = await anthropic([{ text: 'ok', usage: { input: 200_000, output: 32_000 } }]);
    const { proxy, meter } = await meteredProxy(s, api.url);
    const answers: Answer[] = [];
    for (let i = 0; i < 21; i++) answers.push(await ask(proxy, '/v1/messages', messages(i % 2 === 1)));
    await meter.settle();

    expect(answers[0]!.status).toBe(200);
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]!.headers['x-api-key']).toBe(REAL);
    for (const a of answers.slice(1)) {
      expect(a.status).toBe(429);
      expect(a.headers['x-should-retry']).toBe('false');
      expect(JSON.parse(a.body)).toEqual({
        type: 'error',
        error: {
          type: 'rate_limit_error',
          message:
            "school-core key proxy: the school's budget for this crew is spent: $5.40 of $5.00 (dispatch.crewBudgetUsd)",
        },
      });
    }
    expect(rows(s).map((r) => [r.data.costUsd, r.data.source, r.data.turn, r.data.model])).toEqual([
      [5.4, 'metered', 0, 'claude-opus-4-1'],
    ]);
    expect(readSpend(s.layout).crews?.[CREW.crewId]).toMatchObject({ usd: 5.4, meteredUsd: 5.4 });
    // The meter's refusals are not the sandbox's: no egress refusal to alert.
    expect(proxy.refused()).toEqual([]);
  });

  it('refused requests with a 4 MB body each get their 429, the body read and dropped, never sent on', async () => {
    const s = school({ crewBudgetUsd: 5 });
    const api = await anthropic([{ text: 'ok', usage: { input: 200_000, output: 32_000 } }]);
    const { proxy } = await meteredProxy(s, api.url);
    expect((await ask(proxy, '/v1/messages', messages(false))).status).toBe(200);
    // A conversation of 4 MB: refused before it is read, read to its end and dropped.
    const big = { ...messages(true), messages: [{ role: 'user', content: 'x'.repeat(4 * 1024 * 1024) }] };
    for (let i = 0; i < 3; i++) expect((await ask(proxy, '/v1/messages', big)).status).toBe(429);
    expect(api.requests).toHaveLength(1);
  });

  it('an SSE answer is metered from message_start and message_delta, and streams through unchanged', async () => {
    const s = school({ crewBudgetUsd: 100 });
    const api = await anthropic([
      { text: 'streamed', usage: { input: 1000, output: 500, cacheRead: 9000, cacheWrite: 2000 } },
    ]);
    const { proxy, meter, alerts } = await meteredProxy(s, api.url);
    const a = await ask(proxy, '/v1/messages', messages(true, 'claude-sonnet-4-5'));
    await meter.settle();
    expect(a.status).toBe(200);
    expect(a.body).toContain('event: message_start');
    expect(a.body).toContain('event: message_stop');
    // Sonnet 4.5: 1000 × $3 + 9000 × $0.30 + 2000 × $3.75 + 500 × $15, per million.
    const usd = (1000 * 3 + 9000 * 0.3 + 2000 * 3.75 + 500 * 15) / 1e6;
    expect(rows(s).map((r) => r.data.costUsd)).toEqual([usd]);
    expect(alerts).toEqual([]);
    // The API was asked for an uncompressed answer: the meter reads it as it passes.
    expect(api.requests[0]!.headers['accept-encoding']).toBe('identity');
  });

  it('an honest crew under its budget is unaffected: every request passes, each answer recorded once', async () => {
    const s = school({ crewBudgetUsd: 10 });
    const api = await anthropic([{ text: 'ok', usage: { input: 2000, output: 100 } }]);
    const { proxy, meter } = await meteredProxy(s, api.url);
    for (let i = 0; i < 6; i++)
      expect((await ask(proxy, '/v1/messages', messages(i % 2 === 0, 'claude-haiku-4-5'))).status).toBe(200);
    await meter.settle();
    expect(api.requests).toHaveLength(6);
    const r = rows(s);
    expect(r).toHaveLength(6);
    expect(new Set(r.map((x) => x.key)).size).toBe(6);
    expect(readSpend(s.layout).totalUsd).toBeCloseTo(6 * ((2000 * 1 + 100 * 5) / 1e6), 9);
    expect(await meter.turnUsd(0)).toBeCloseTo(0.015, 9);
  });

  it('an unknown model is priced at its provider’s dearest rate, with an alert, never as free', async () => {
    const s = school({ crewBudgetUsd: 100 });
    const api = await anthropic([{ text: 'ok', usage: { input: 1_000_000, output: 0 } }]);
    const { proxy, meter, alerts } = await meteredProxy(s, api.url);
    expect((await ask(proxy, '/v1/messages', messages(false, 'claude-unlisted-7'))).status).toBe(200);
    await meter.settle();
    expect(rows(s).map((r) => r.data.costUsd)).toEqual([15]);
    expect(alerts).toEqual([
      expect.stringMatching(/^model-unpriced: .*claude-unlisted-7.*sandbox\.keyProxy\.prices/),
    ]);
  });

  it('the day’s budget, re-read from the ledger: another crew’s spend today stops this crew’s requests', async () => {
    const s = school({ crewBudgetUsd: 10, dailyBudgetUsd: 20 });
    const api = await anthropic([{ text: 'ok', usage: { input: 100, output: 10 } }]);
    const { proxy } = await meteredProxy(s, api.url);
    expect((await ask(proxy, '/v1/messages', messages(false))).status).toBe(200);
    await recordSpend(s.layout, 'other-crew', { costUsd: 20, crewId: 'c9-other001', agent: 'codex' });
    const refused = await ask(proxy, '/v1/messages', messages(false));
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error.message).toMatch(
      /the school's budget for today \(UTC\) is spent: \$20\.\d\d of \$20\.00 \(dispatch\.dailyBudgetUsd\)/,
    );
    expect(api.requests).toHaveLength(1);
  });

  it('the rate cap: past sandbox.keyProxy.requestsPerMinute a request is answered 429 with retry-after, the API not asked', async () => {
    const s = school({ requestsPerMinute: 3 });
    const api = await anthropic([{ text: 'ok', usage: { input: 10, output: 1 } }]);
    let now = Date.parse('2026-06-01T12:00:00Z');
    const { proxy, alerts } = await meteredProxy(s, api.url, { now: () => new Date(now) });
    for (let i = 0; i < 3; i++) {
      expect((await ask(proxy, '/v1/messages', messages(false))).status).toBe(200);
      now += 10_000;
    }
    const capped = await ask(proxy, '/v1/messages', messages(true));
    expect(capped.status).toBe(429);
    // The first request leaves the minute 30 s from now.
    expect(capped.headers['retry-after']).toBe('30');
    expect(capped.headers['x-should-retry']).toBe('true');
    expect(JSON.parse(capped.body).error.message).toMatch(/sandbox\.keyProxy\.requestsPerMinute \(3\)/);
    expect(api.requests).toHaveLength(3);
    expect(alerts).toEqual([expect.stringMatching(/^request-rate-capped: the key proxy answered 429/)]);
    now += 30_000;
    expect((await ask(proxy, '/v1/messages', messages(false))).status).toBe(200);
    expect(api.requests).toHaveLength(4);
  });

  it('Codex’s Responses API: the completed event’s usage is metered, a spent budget answered in OpenAI’s shape', async () => {
    const s = school({ crewBudgetUsd: 1 });
    // gpt-5.1-codex: 1M uncached input at $1.25.
    const api = await openai([{ text: 'ok', usage: { input: 1_000_000, output: 0 } }]);
    const { proxy, meter } = await meteredProxy(s, api.url, { api: 'openai' });
    const body = { model: 'gpt-5.1-codex', stream: true, input: [] };
    const auth = { authorization: 'Bearer placeholder' };
    expect((await ask(proxy, '/v1/responses', body, auth)).status).toBe(200);
    await meter.settle();
    expect(rows(s).map((r) => [r.data.costUsd, r.data.model])).toEqual([[1.25, 'gpt-5.1-codex']]);
    const refused = await ask(proxy, '/v1/responses', body, auth);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toEqual({
      error: {
        message:
          "school-core key proxy: the school's budget for this crew is spent: $1.25 of $1.00 (dispatch.crewBudgetUsd)",
        type: 'insufficient_quota',
        code: 'insufficient_quota',
        param: null,
      },
    });
    expect(api.requests).toHaveLength(1);
  });

  it('a metered proxy tunnels no WebSocket (its frames would not be metered)', async () => {
    const s = school();
    const api = await openai([{ text: 'ok' }]);
    const { proxy } = await meteredProxy(s, api.url, { api: 'openai' });
    const status = await new Promise<number>((done, fail) => {
      const req = request({
        socketPath: proxy.socket,
        path: '/v1/responses',
        headers: { connection: 'Upgrade', upgrade: 'websocket' },
      });
      req.on('response', (res) => {
        res.resume();
        done(res.statusCode!);
      });
      req.on('upgrade', () => done(101));
      req.on('error', fail);
      req.end();
    });
    expect(status).toBe(426);
    expect(api.requests).toHaveLength(0);
  });
});
