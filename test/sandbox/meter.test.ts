import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { meteredApi, requestModel, UsageReader, type MeteredUsage } from '../../src/sandbox/meter.js';
import { DEFAULT_PRICES, dearestRate, priceEntry, priceTable, priceUsage } from '../../src/agents/pricing.js';

/**
 * The key proxy's meter reads `usage` from the API's answers on a tee as they stream by
 * (src/sandbox/meter.ts): chunks arrive split anywhere — inside a UTF-8 character, a line, a CRLF —
 * and the usage read must be the same however the bytes were cut.
 */
const ev = (event: string, data: unknown, nl = '\n') =>
  `event: ${event}${nl}data: ${JSON.stringify(data)}${nl}${nl}`;

/** An Anthropic Messages stream as the API sends it, text with multi-byte characters. */
function anthropicStream(nl = '\n'): string {
  return [
    ev(
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-opus-4-1-20250805',
          content: [],
          usage: {
            input_tokens: 200_000,
            cache_creation_input_tokens: 1_000,
            cache_read_input_tokens: 5_000,
            output_tokens: 1,
          },
        },
      },
      nl,
    ),
    ev('ping', { type: 'ping' }, nl),
    ev(
      'content_block_start',
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      nl,
    ),
    ...['Grüße ', '✓ naïve ', '😀 done'].map((text) =>
      ev(
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
        nl,
      ),
    ),
    ev('content_block_stop', { type: 'content_block_stop', index: 0 }, nl),
    ev(
      'message_delta',
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 16_000 } },
      nl,
    ),
    ev('message_delta', { type: 'message_delta', delta: {}, usage: { output_tokens: 32_000 } }, nl),
    ev('message_stop', { type: 'message_stop' }, nl),
  ].join('');
}

const ANTHROPIC_USAGE: MeteredUsage = {
  api: 'anthropic',
  path: '/v1/messages',
  model: 'claude-opus-4-1-20250805',
  input: 206_000,
  cachedInput: 5_000,
  cacheCreation: 1_000,
  output: 32_000,
};

/** A Responses API stream (Codex), usage in `response.completed`. */
function responsesStream(): string {
  const response = { id: 'resp_1', object: 'response', model: 'gpt-5.1-codex', status: 'in_progress' };
  return [
    ev('response.created', { type: 'response.created', response }),
    ev('response.output_text.delta', { type: 'response.output_text.delta', delta: 'héllo wörld ✓' }),
    ev('response.completed', {
      type: 'response.completed',
      response: {
        ...response,
        status: 'completed',
        usage: {
          input_tokens: 50_000,
          input_tokens_details: { cached_tokens: 40_000 },
          output_tokens: 2_000,
          output_tokens_details: { reasoning_tokens: 1_500 },
          total_tokens: 52_000,
        },
      },
    }),
  ].join('');
}

function read(
  api: 'anthropic' | 'openai',
  path: string,
  type: string,
  bytes: Buffer,
  cuts: number[],
): MeteredUsage | undefined {
  const r = new UsageReader(api, path, type);
  let at = 0;
  for (const c of [...new Set(cuts)].sort((a, b) => a - b)) {
    r.push(bytes.subarray(at, c));
    at = c;
  }
  r.push(bytes.subarray(at));
  return r.finish();
}

const cutsOf = (n: number) => fc.array(fc.integer({ min: 0, max: n }), { maxLength: 40 });

describe('the usage reader', () => {
  it('an Anthropic SSE stream: message_start input and cache tokens, message_delta output, however the bytes are cut', () => {
    for (const nl of ['\n', '\r\n']) {
      const bytes = Buffer.from(anthropicStream(nl));
      fc.assert(
        fc.property(cutsOf(bytes.length), (cuts) => {
          expect(read('anthropic', '/v1/messages', 'text/event-stream; charset=utf-8', bytes, cuts)).toEqual(
            ANTHROPIC_USAGE,
          );
        }),
        { numRuns: 300 },
      );
      // One byte at a time: every character split.
      const each = Array.from({ length: bytes.length }, (_, i) => i);
      expect(read('anthropic', '/v1/messages', 'text/event-stream', bytes, each)).toEqual(ANTHROPIC_USAGE);
    }
  });

  it('a Responses API stream: response.completed usage, the cached part of the input kept apart', () => {
    const bytes = Buffer.from(responsesStream());
    const want: MeteredUsage = {
      api: 'openai',
      path: '/v1/responses',
      model: 'gpt-5.1-codex',
      input: 50_000,
      cachedInput: 40_000,
      cacheCreation: 0,
      output: 2_000,
    };
    fc.assert(
      fc.property(cutsOf(bytes.length), (cuts) => {
        expect(read('openai', '/v1/responses', 'text/event-stream', bytes, cuts)).toEqual(want);
      }),
      { numRuns: 200 },
    );
  });

  it('JSON answers: Anthropic, Chat Completions and Responses bodies, cut anywhere', () => {
    const anthropic = Buffer.from(
      JSON.stringify({
        id: 'msg_2',
        type: 'message',
        model: 'claude-sonnet-4-5-20250929',
        content: [{ type: 'text', text: 'ünïcödé ✓' }],
        usage: {
          input_tokens: 10,
          cache_read_input_tokens: 90,
          cache_creation_input_tokens: 0,
          output_tokens: 7,
        },
      }),
    );
    const chat = Buffer.from(
      JSON.stringify({
        object: 'chat.completion',
        model: 'gpt-4.1',
        choices: [{ message: { content: 'ok' } }],
        usage: { prompt_tokens: 1000, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 600 } },
      }),
    );
    fc.assert(
      fc.property(cutsOf(anthropic.length), cutsOf(chat.length), (a, c) => {
        expect(read('anthropic', '/v1/messages', 'application/json', anthropic, a)).toEqual({
          api: 'anthropic',
          path: '/v1/messages',
          model: 'claude-sonnet-4-5-20250929',
          input: 100,
          cachedInput: 90,
          cacheCreation: 0,
          output: 7,
        });
        expect(read('openai', '/v1/chat/completions', 'application/json', chat, c)).toEqual({
          api: 'openai',
          path: '/v1/chat/completions',
          model: 'gpt-4.1',
          input: 1000,
          cachedInput: 600,
          cacheCreation: 0,
          output: 50,
        });
      }),
      { numRuns: 100 },
    );
  });

  it('a stream of chat completion chunks: the last chunk’s usage', () => {
    const chunk = (o: object) =>
      `data: ${JSON.stringify({ object: 'chat.completion.chunk', model: 'gpt-4o', ...o })}\n\n`;
    const bytes = Buffer.from(
      chunk({ choices: [{ delta: { content: 'a' } }], usage: null }) +
        chunk({ choices: [], usage: { prompt_tokens: 30, completion_tokens: 4 } }) +
        'data: [DONE]\n\n',
    );
    expect(read('openai', '/chat/completions', 'text/event-stream', bytes, [5, 17, 80])).toMatchObject({
      model: 'gpt-4o',
      input: 30,
      output: 4,
    });
  });

  it('an answer without usage (a cut stream, an unparsable body) reads as none; an over-long event is skipped', () => {
    expect(
      read('anthropic', '/v1/messages', 'text/event-stream', Buffer.from('event: ping\ndata: {}\n\n'), []),
    ).toBe(undefined);
    expect(read('anthropic', '/v1/messages', 'application/json', Buffer.from('{"type":'), [])).toBe(
      undefined,
    );
    const long = `data: {"type":"content_block_delta","delta":{"text":"${'x'.repeat(1_200_000)}"}}\n\n`;
    const bytes = Buffer.from(long + anthropicStream());
    expect(
      read('anthropic', '/v1/messages', 'text/event-stream', bytes, [100, 600_000, 1_100_000, 1_200_050]),
    ).toEqual(ANTHROPIC_USAGE);
  });

  it('which paths are metered, and a request body’s model', () => {
    expect(meteredApi('/v1/messages')).toBe('anthropic');
    expect(meteredApi('/v1/messages/count_tokens')).toBeUndefined();
    expect(meteredApi('/v1/models')).toBeUndefined();
    expect(meteredApi('/responses')).toBe('openai');
    expect(meteredApi('/chat/completions')).toBe('openai');
    expect(meteredApi('/models')).toBeUndefined();
    expect(requestModel(Buffer.from('{"model": "claude-haiku-4-5", "messages": []}'))).toBe(
      'claude-haiku-4-5',
    );
  });
});

describe('the price table', () => {
  const t = priceTable({ 'my-gateway-model': { inputPerMTok: 1, cachedInputPerMTok: 0, outputPerMTok: 2 } });

  it('a dated model name takes the longest entry it begins with; a configured entry adds to the defaults', () => {
    expect(priceEntry(t, 'claude-sonnet-4-5-20250929')).toBe('claude-sonnet-4-5');
    expect(priceEntry(t, 'claude-sonnet-4-20250514')).toBe('claude-sonnet-4');
    expect(priceEntry(t, 'gpt-5.1-codex-mini')).toBe('gpt-5.1-codex-mini');
    expect(priceEntry(t, 'gpt-5-mini-2025-08-07')).toBe('gpt-5-mini');
    expect(priceEntry(t, 'my-gateway-model')).toBe('my-gateway-model');
    // A name that only shares letters with an entry is not it.
    expect(priceEntry(t, 'gpt-50')).toBeUndefined();
  });

  it('prices the issue’s request: 200k input and 32k output on Opus 4.1 cost $5.40', () => {
    const u: MeteredUsage = { ...ANTHROPIC_USAGE, input: 200_000, cachedInput: 0, cacheCreation: 0 };
    expect(priceUsage(u, t)).toEqual({ usd: 5.4, entry: 'claude-opus-4-1' });
    // Cache reads and writes at their own rates: 5k read at $1.50, 1k written at $18.75 per million.
    expect(priceUsage(ANTHROPIC_USAGE, t).usd).toBeCloseTo(5.4 + 0.0075 + 0.01875, 6);
  });

  it('an unknown model costs its provider’s dearest rate, never nothing, and says so', () => {
    const u: MeteredUsage = {
      ...ANTHROPIC_USAGE,
      model: 'claude-mystery-9',
      input: 1e6,
      cachedInput: 0,
      cacheCreation: 0,
      output: 1e6,
    };
    const dear = dearestRate(DEFAULT_PRICES, 'anthropic');
    expect(dear.inputPerMTok).toBe(15);
    expect(dear.outputPerMTok).toBe(75);
    expect(priceUsage(u, t)).toEqual({ usd: 90, unknown: 'claude-mystery-9' });
    const nameless = priceUsage({ ...u, api: 'openai', model: undefined }, t);
    expect(nameless.unknown).toBe('(no model named)');
    expect(nameless.usd).toBeGreaterThanOrEqual(100);
  });
});
