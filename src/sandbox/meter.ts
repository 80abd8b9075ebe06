import { StringDecoder } from 'node:string_decoder';

/**
 * What the key proxy (./key-proxy.ts) reads of the API's answers to count what a crew spends: the
 * `usage` of every answer, as the API bills it, from the host side where no process of the sandbox
 * can write. A student's own report (`usage.json`, the CLI's printed cost) is its word; this is
 * the meter. Read on a tee of the answer as it streams on to the client, never held back:
 *
 *  - Anthropic `/v1/messages`: a JSON body's `usage` and `model`; an SSE stream's `message_start`
 *    (`message.usage`: input and cache tokens, `message.model`) and `message_delta` (`usage`:
 *    output tokens so far, cumulative — the largest figure of each field is kept);
 *  - OpenAI `/responses` (Codex): a JSON body's `usage`, or the SSE events `response.completed`,
 *    `response.incomplete`, `response.failed` (`response.usage`, `response.model`);
 *  - OpenAI `/chat/completions`: a JSON body's `usage`, or the stream chunk that carries one.
 *
 * Pricing and the ledger are not here (layer 0): the crew's meter behind the `ProxyMeter` port does
 * that (src/agents/usage.ts `CrewMeter`, src/agents/pricing.ts).
 */
export type ModelApi = 'anthropic' | 'openai';

/** The tokens of one answer as billed: `input` counts every input token, cached and written ones too. */
export interface MeteredUsage {
  api: ModelApi;
  /** The request's path (bounded). */
  path: string;
  /** The model the answer names (else the request's), bounded; undefined when neither says. */
  model?: string;
  input: number;
  /** Input tokens read from the prompt cache (Anthropic `cache_read_input_tokens`, OpenAI `cached_tokens`). */
  cachedInput: number;
  /** Input tokens written to the prompt cache (Anthropic `cache_creation_input_tokens`). */
  cacheCreation: number;
  output: number;
}

/** Why the proxy answers a request itself, without the upstream: a budget spent or the rate cap. */
export interface MeterRefusal {
  kind: 'budget' | 'rate';
  /** The sentence the body carries: what is spent, of what, and the setting. */
  message: string;
  /** Seconds until the rate cap lets a request through again (`retry-after`). */
  retryAfterSeconds?: number;
}

/** The port the key proxy meters through: asked before each request, told each answer's usage. */
export interface ProxyMeter {
  /** Before the request goes upstream: a refusal, or undefined to send it on. */
  admit(request: {
    api: ModelApi;
    path: string;
  }): MeterRefusal | undefined | Promise<MeterRefusal | undefined>;
  /** An answer's usage, once its body has passed. */
  charge(usage: MeteredUsage): void;
}

/** The API a path is metered as: the Messages API, the Responses or Chat Completions API, or none. */
export function meteredApi(relPath: string): ModelApi | undefined {
  const path = relPath.split('?')[0]!;
  if (/^\/v1\/messages$/.test(path)) return 'anthropic';
  if (/^(\/v1)?\/(responses(\/compact)?|chat\/completions)$/.test(path)) return 'openai';
  return undefined;
}

/** A JSON answer body is read up to this; past it, its tail is searched for the usage fields. */
export const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** An SSE line past this is not one of the small events that carry usage: it is skipped. */
const MAX_LINE = 1024 * 1024;
/** How much of the request body is searched for its `model` (clients send it first). */
export const REQUEST_MODEL_BYTES = 64 * 1024;

type Tokens = Omit<MeteredUsage, 'api' | 'path' | 'model'>;

/**
 * One answer's usage, read incrementally from its bytes split anywhere (a UTF-8 character or an
 * SSE line across two chunks). `push` each chunk as it passes, `finish` once at the end.
 */
export class UsageReader {
  private readonly decoder = new StringDecoder('utf8');
  private readonly sse: boolean;
  private line = '';
  private skipping = false;
  private data: string[] = [];
  private json: Buffer[] = [];
  private jsonBytes = 0;
  private tail = Buffer.alloc(0);
  private tokens: Tokens | undefined;
  private model: string | undefined;

  constructor(
    private readonly api: ModelApi,
    private readonly path: string,
    contentType: string | undefined,
    private readonly requestModel?: string,
  ) {
    this.sse = /text\/event-stream/i.test(contentType ?? '');
  }

  push(chunk: Buffer): void {
    if (!this.sse) return this.pushJson(chunk);
    const text = this.line + this.decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      this.onLine(text.slice(start, nl).replace(/\r$/, ''));
      start = nl + 1;
    }
    this.line = text.slice(start);
    if (this.line.length > MAX_LINE) {
      // An event of text, not of usage: dropped up to its end.
      this.line = '';
      this.skipping = true;
    }
  }

  /** The answer's usage, or undefined when it named none. */
  finish(): MeteredUsage | undefined {
    if (this.sse) {
      this.onLine(this.line + this.decoder.end());
      this.onLine('');
    } else this.readJson();
    if (!this.tokens) return undefined;
    const model = this.model ?? this.requestModel;
    return { api: this.api, path: this.path.slice(0, 200), model, ...this.tokens };
  }

  private onLine(line: string): void {
    if (this.skipping) {
      // The rest of an over-long line: the next line begins after its newline.
      this.skipping = false;
      this.data = [];
      return;
    }
    if (line === '') {
      if (this.data.length) this.onEvent(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith('data:')) this.data.push(line.slice(line[5] === ' ' ? 6 : 5));
  }

  private onEvent(data: string): void {
    if (data === '[DONE]') return;
    const e = parse(data);
    if (!e) return;
    if (this.api === 'anthropic') {
      if (e.type === 'message_start') {
        const m = obj(e.message);
        this.named(m?.model);
        this.add(anthropicTokens(obj(m?.usage)));
      } else if (e.type === 'message_delta') this.add(anthropicTokens(obj(e.usage)));
      return;
    }
    if (typeof e.type === 'string' && e.type.startsWith('response.')) {
      const r = obj(e.response);
      this.named(r?.model);
      if (/^response\.(completed|incomplete|failed|done)$/.test(e.type))
        this.add(openaiTokens(obj(r?.usage)));
      return;
    }
    // A chat completion chunk: the last (with stream_options.include_usage) carries the usage.
    this.named(e.model);
    this.add(openaiTokens(obj(e.usage)));
  }

  private pushJson(chunk: Buffer): void {
    if (this.jsonBytes < MAX_JSON_BYTES) this.json.push(chunk.subarray(0, MAX_JSON_BYTES - this.jsonBytes));
    this.jsonBytes += chunk.length;
    // The last bytes, where a body past the bound still has its usage.
    this.tail = Buffer.concat([this.tail, chunk]).subarray(-64 * 1024);
  }

  private readJson(): void {
    const whole = this.jsonBytes <= MAX_JSON_BYTES;
    const body = whole ? parse(Buffer.concat(this.json).toString('utf8')) : undefined;
    if (body) {
      this.named(body.model);
      const usage = obj(body.usage);
      this.add(this.api === 'anthropic' ? anthropicTokens(usage) : openaiTokens(usage));
      return;
    }
    if (whole) return;
    // Too large to hold: the usage object is the answer's last part; its fields are read from the tail.
    const text = this.tail.toString('utf8');
    const at = text.lastIndexOf('"usage"');
    if (at < 0) return;
    const fields: Record<string, number> = {};
    for (const m of text.slice(at).matchAll(/"([a-z_]+)"\s*:\s*(\d{1,15})/g)) fields[m[1]!] ??= Number(m[2]);
    this.add(this.api === 'anthropic' ? anthropicTokens(fields) : openaiTokens(fields));
  }

  private named(model: unknown): void {
    if (typeof model === 'string' && model) this.model = model.slice(0, 120);
  }

  /** Each field is the largest figure seen: the stream's counts are running totals. */
  private add(t: Tokens | undefined): void {
    if (!t) return;
    const o = (this.tokens ??= { input: 0, cachedInput: 0, cacheCreation: 0, output: 0 });
    o.input = Math.max(o.input, t.input);
    o.cachedInput = Math.max(o.cachedInput, t.cachedInput);
    o.cacheCreation = Math.max(o.cacheCreation, t.cacheCreation);
    o.output = Math.max(o.output, t.output);
  }
}

/** The `model` of a request body's start, or undefined (the answer's own name is preferred). */
export function requestModel(start: Buffer): string | undefined {
  const m = /"model"\s*:\s*"([^"\\]{1,120})"/.exec(start.toString('utf8'));
  return m?.[1];
}

type Obj = Record<string, unknown>;

function parse(text: string): Obj | undefined {
  try {
    return obj(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function obj(v: unknown): Obj | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** A token count: a finite number ≥ 0, else 0. */
function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}

/** Anthropic's usage: `input_tokens` excludes the cache's reads and writes, which are billed apart. */
function anthropicTokens(u: Obj | undefined): Tokens | undefined {
  if (!u) return undefined;
  const read = count(u.cache_read_input_tokens);
  const write = count(u.cache_creation_input_tokens);
  return {
    input: count(u.input_tokens) + read + write,
    cachedInput: read,
    cacheCreation: write,
    output: count(u.output_tokens),
  };
}

/** OpenAI's usage (Responses or Chat Completions): the input count includes its cached part. */
function openaiTokens(u: Obj | undefined): Tokens | undefined {
  if (!u) return undefined;
  if ('prompt_tokens' in u || 'completion_tokens' in u)
    return {
      input: count(u.prompt_tokens),
      cachedInput: count(obj(u.prompt_tokens_details)?.cached_tokens ?? u.cached_tokens),
      cacheCreation: 0,
      output: count(u.completion_tokens),
    };
  return {
    input: count(u.input_tokens),
    cachedInput: count(obj(u.input_tokens_details)?.cached_tokens ?? u.cached_tokens),
    cacheCreation: 0,
    output: count(u.output_tokens),
  };
}
