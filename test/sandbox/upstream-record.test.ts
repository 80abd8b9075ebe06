import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKeyProxy } from '../../src/sandbox/key-proxy.js';
import { limitEvidence, MAX_ANSWERS, readAnswer, UpstreamRecord } from '../../src/sandbox/upstream-record.js';
import { tempDir } from '../support/tmp.js';

/**
 * The key proxy's record of the API's own answers (src/sandbox/upstream-record.ts): which answers
 * are usage limits, rate limits or overloads, the reset each names, and a record a flood cannot
 * empty of its limits.
 */
const NOW = new Date('2026-12-01T10:00:00.000Z');
const body = (v: unknown) => Buffer.from(JSON.stringify(v));
const answer = (status: number, headers: Record<string, string>, b?: unknown) =>
  readAnswer({ status, path: '/v1/messages', headers, ...(b ? { body: body(b) } : {}) }, NOW);
const invalidRequest = (message: string) => ({
  type: 'error',
  error: { type: 'invalid_request_error', message },
});
const LIMIT_400 =
  'You have reached your specified API usage limits. You will regain access on 2026-12-02 at 00:00 UTC.';

describe('what an upstream answer says', () => {
  it('a subscription window past its limit: usage, reset from anthropic-ratelimit-unified-reset', () => {
    const a = answer(
      429,
      { 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-reset': '1796126400' },
      { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited' } },
    );
    expect(a).toMatchObject({ kind: 'usage', type: 'rate_limit_error', resetAt: '2026-12-01T12:00:00.000Z' });
  });

  it('Codex usage_limit_reached and OpenAI insufficient_quota: usage, reset from the body', () => {
    expect(
      answer(429, {}, { error: { type: 'usage_limit_reached', resets_in_seconds: 3600 } }),
    ).toMatchObject({ kind: 'usage', resetAt: '2026-12-01T11:00:00.000Z' });
    expect(
      answer(429, {}, { error: { type: 'insufficient_quota', code: 'insufficient_quota' } }),
    ).toMatchObject({ kind: 'usage', type: 'insufficient_quota' });
  });

  it('a per-minute rate limit is a rate limit: retry-after, else the latest ratelimit reset header', () => {
    expect(
      answer(429, { 'retry-after': '30' }, { type: 'error', error: { type: 'rate_limit_error' } }),
    ).toMatchObject({ kind: 'rate', resetAt: '2026-12-01T10:00:30.000Z' });
    expect(
      answer(
        429,
        {
          'anthropic-ratelimit-requests-reset': '2026-12-01T10:01:00Z',
          'anthropic-ratelimit-tokens-reset': '2026-12-01T10:02:00Z',
        },
        { type: 'error', error: { type: 'rate_limit_error' } },
      ),
    ).toMatchObject({ kind: 'rate', resetAt: '2026-12-01T10:02:00.000Z' });
    expect(
      answer(
        429,
        { 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-reset-tokens': '6m0s' },
        {
          error: { type: 'requests', code: 'rate_limit_exceeded' },
        },
      ),
    ).toMatchObject({
      kind: 'rate',
      type: 'requests/rate_limit_exceeded',
      resetAt: '2026-12-01T10:06:00.000Z',
    });
  });

  it('529 and 503 are overloads; 200 and 500 are no limit', () => {
    expect(answer(529, {}, { type: 'error', error: { type: 'overloaded_error' } }).kind).toBe('overload');
    expect(answer(503, {}).kind).toBe('overload');
    expect(answer(200, {}).kind).toBeUndefined();
    expect(answer(500, {}, { error: { type: 'server_error' } }).kind).toBeUndefined();
  });

  it('a 400 is a usage limit only in the API’s own words, never in an echo of what was sent', () => {
    expect(answer(400, {}, invalidRequest(LIMIT_400))).toMatchObject({
      kind: 'usage',
      resetAt: '2026-12-02T00:00:00.000Z',
    });
    // A model name a student sent, echoed back by the API, says nothing about a limit.
    expect(
      answer(400, {}, invalidRequest('model: You have reached your specified API usage limits')).kind,
    ).toBeUndefined();
    expect(answer(402, {}, { type: 'error', error: { type: 'billing_error' } }).kind).toBe('usage');
  });
});

describe('the record', () => {
  it('keeps limits a flood of ordinary answers would push out, and matches them to the outcome', () => {
    const r = new UpstreamRecord();
    const since = new Date(NOW.getTime() - 60_000);
    r.add(answer(429, { 'retry-after': '5' }, { type: 'error', error: { type: 'rate_limit_error' } }));
    // A per-minute rate limit is no evidence of a usage limit.
    expect(limitEvidence(r, 'usage_limit', since)).toBeUndefined();
    expect(limitEvidence(r, 'overloaded', since)?.limit).toMatchObject({ status: 429 });
    r.add(answer(429, {}, { error: { type: 'usage_limit_reached', resets_in_seconds: 60 } }));
    for (let i = 0; i < MAX_ANSWERS * 3; i++) r.add(answer(200, {}));
    expect(r.answers()).toHaveLength(MAX_ANSWERS);
    expect(limitEvidence(r, 'usage_limit', since)).toEqual({
      limit: { status: 429, at: NOW.toISOString(), resetAt: '2026-12-01T10:01:00.000Z' },
      type: 'usage_limit_reached',
    });
    // An answer from before the crew started is not its evidence.
    expect(limitEvidence(r, 'usage_limit', new Date(NOW.getTime() + 60_000))).toBeUndefined();
  });
});

describe('the key proxy records what the API answered', () => {
  const tmp = tempDir('school-upstream-');
  let up: Server;
  let url = '';
  beforeAll(async () => {
    up = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/v1/messages') {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '120' });
          res.end(JSON.stringify({ error: { type: 'insufficient_quota', message: 'quota' } }));
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        }
      });
    });
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(up.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => up.close(r));
    tmp.cleanup();
  });

  it('each answer’s status, and a limit’s type and reset; the client gets the answer unchanged', async () => {
    const record = new UpstreamRecord();
    const p = await startKeyProxy({
      socket: join(tmp.path, 'k.sock'),
      upstream: url,
      key: 'k',
      header: 'bearer',
      paths: [/^\/v1\/(messages|models)$/],
      record,
    });
    const ask = (path: string) =>
      new Promise<{ status: number; body: string }>((done, fail) => {
        const req = request({ socketPath: p.socket, path, method: 'POST' }, (res) => {
          let b = '';
          res.on('data', (c: Buffer) => (b += c.toString()));
          res.on('end', () => done({ status: res.statusCode!, body: b }));
        });
        req.on('error', fail);
        req.end('{}');
      });
    try {
      expect(await ask('/v1/models')).toEqual({ status: 200, body: '{}' });
      const limited = await ask('/v1/messages');
      expect(limited.status).toBe(429);
      expect(JSON.parse(limited.body)).toEqual({ error: { type: 'insufficient_quota', message: 'quota' } });
      // The record is written as the answer streams back: wait for both (a fixed 50 ms sleep was a
      // guess a loaded machine can miss).
      for (let i = 0; i < 600 && record.answers().length < 2; i++)
        await new Promise((r) => setTimeout(r, 50));
      const [ok, limit] = record.answers();
      expect(ok).toMatchObject({ status: 200, path: '/v1/models' });
      expect(ok!.kind).toBeUndefined();
      expect(limit).toMatchObject({ status: 429, kind: 'usage', type: 'insufficient_quota' });
      expect(Date.parse(limit!.resetAt!) - Date.parse(limit!.at)).toBeGreaterThanOrEqual(119_000);
    } finally {
      await p.close();
    }
  });
});
