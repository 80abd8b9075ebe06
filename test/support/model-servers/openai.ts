import type { ServerResponse } from 'node:http';
import { json, listen, sse, type Listening, type Received } from './http.js';
import { Script, type Action, type ModelStep } from './script.js';

/**
 * A scripted OpenAI Responses API on 127.0.0.1: `POST /v1/responses`, streaming SSE —
 * response.created, response.output_item.added / .done per item (a message, a function_call or a
 * custom_tool_call of the tools Codex offered: apply_patch, shell / exec_command, or the `exec`
 * code tool), response.completed with usage (cached input, reasoning output) — or one of the error
 * forms: an HTTP error with the API's JSON body, or a `response.failed` event in the stream. Every
 * request is recorded.
 */
export const OPENAI_ERRORS = {
  authentication: {
    status: 401,
    body: {
      message: 'Incorrect API key provided: sk-test.',
      type: 'invalid_request_error',
      code: 'invalid_api_key',
    },
  },
  rate_limit: {
    status: 429,
    body: {
      message: 'Rate limit reached for requests per min (RPM): Limit 3, Used 3. Please try again in 1s.',
      type: 'requests',
      code: 'rate_limit_exceeded',
    },
  },
  insufficient_quota: {
    status: 429,
    body: {
      message: 'You exceeded your current quota, please check your plan and billing details.',
      type: 'insufficient_quota',
      code: 'insufficient_quota',
    },
  },
  /** What a ChatGPT sign-in without Codex in its plan gets. */
  usage_not_included: {
    status: 429,
    body: {
      message: 'Usage not included in your plan',
      type: 'usage_not_included',
      code: 'usage_not_included',
    },
  },
  /** A ChatGPT plan past its limit, with the reset. */
  usage_limit_reached: {
    status: 429,
    body: {
      message: 'The usage limit has been reached',
      type: 'usage_limit_reached',
      plan_type: 'plus',
      resets_at: 1798761600,
      resets_in_seconds: 3600,
    },
  },
  server_error: {
    status: 500,
    body: {
      message: 'The server had an error while processing your request.',
      type: 'server_error',
      code: null,
    },
  },
  /** In the stream: the model is at capacity. */
  capacity: {
    stream: { code: 'server_is_overloaded', message: 'The server is overloaded. Please try again later.' },
  },
  context_length: {
    stream: {
      code: 'context_length_exceeded',
      message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
    },
  },
} as const satisfies Record<
  string,
  { status: number; body: Record<string, unknown> } | { stream: { code: string; message: string } }
>;
export type OpenAIError = keyof typeof OPENAI_ERRORS;

export interface OpenAIServer extends Listening {
  script: Script<OpenAIError>;
  requests: Received[];
  /** The tool names each request offered. */
  offered(): string[][];
}

interface Tool {
  type?: string;
  name?: string;
}
interface ResponsesRequest {
  model?: string;
  tools?: Tool[];
  /** Codex 0.171 offers its tools in an `additional_tools` input item, in namespaces. */
  input?: Array<{ type?: string; tools?: Array<Tool & { tools?: Tool[] }> }>;
  stream?: boolean;
}

/** Every tool a request offers, namespaces flattened. */
export function offeredTools(body: ResponsesRequest): Tool[] {
  const flat = (ts: Array<Tool & { tools?: Tool[] }>): Tool[] =>
    ts.flatMap((t) => (t.type === 'namespace' ? flat(t.tools ?? []) : [t]));
  return [
    ...flat(body.tools ?? []),
    ...(Array.isArray(body.input) ? body.input : [])
      .filter((i) => i?.type === 'additional_tools')
      .flatMap((i) => flat(i.tools ?? [])),
  ];
}

/**
 * `o.model`: the model every answer names, whatever the request asked for (a real API answers with
 * the snapshot it served). By default the answer echoes the request's model.
 */
export async function openaiServer(
  steps: ModelStep<OpenAIError>[],
  o: { model?: string } = {},
): Promise<OpenAIServer> {
  const script = new Script(steps);
  const requests: Received[] = [];
  let n = 0;
  const server = await listen((req, res) => {
    if (req.method !== 'POST' || !/^\/v1\/responses(\?|$)/.test(req.path))
      return json(res, 404, {
        error: { message: `no route ${req.method} ${req.path}`, type: 'invalid_request_error' },
      });
    requests.push(req);
    const body = (req.body ?? {}) as ResponsesRequest;
    const id = `resp_scripted${String(++n).padStart(8, '0')}`;
    const step = script.next();
    if (step.error) {
      const e = OPENAI_ERRORS[step.error];
      if ('status' in e)
        return json(
          res,
          e.status,
          { error: { ...e.body, ...(step.message ? { message: step.message } : {}) } },
          {
            'x-request-id': `req_${id}`,
            ...(e.status === 429 ? { 'retry-after': '1' } : {}),
          },
        );
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      sse(res, 'response.created', { type: 'response.created', response: { id, status: 'in_progress' } });
      sse(res, 'response.failed', {
        type: 'response.failed',
        response: {
          id,
          status: 'failed',
          error: { ...e.stream, ...(step.message ? { message: step.message } : {}) },
        },
      });
      return void res.end();
    }
    stream(res, o.model ? { ...body, model: o.model } : body, id, step, n);
  });
  return {
    ...server,
    script,
    requests,
    offered: () =>
      requests.map((r) => offeredTools(r.body as ResponsesRequest).map((t) => `${t.type}:${t.name}`)),
  };
}

type Item = Record<string, unknown> & { type: string };

function patchFor(path: string, content: string): string {
  const lines = content
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => `+${l}`);
  return ['*** Begin Patch', `*** Add File: ${path}`, ...lines, '*** End Patch', ''].join('\n');
}

/** The tool call that does `a` with what this request offered. */
function callFor(a: Action, tools: Tool[], callId: string, itemId: string): Item {
  const has = (name: string, type?: string) =>
    tools.find((t) => t.name === name && (!type || t.type === type));
  if ('write' in a || 'badEdit' in a) {
    const patch =
      'write' in a
        ? patchFor(a.write.path, a.write.content)
        : [
            '*** Begin Patch',
            `*** Update File: ${a.badEdit.path}`,
            '@@',
            `-${a.badEdit.old}`,
            `+${a.badEdit.new}`,
            '*** End Patch',
            '',
          ].join('\n');
    if (has('apply_patch', 'custom'))
      return {
        type: 'custom_tool_call',
        id: itemId,
        status: 'completed',
        call_id: callId,
        name: 'apply_patch',
        input: patch,
      };
    if (has('apply_patch')) return fn(itemId, callId, 'apply_patch', { input: patch });
    if (has('exec', 'custom'))
      return {
        type: 'custom_tool_call',
        id: itemId,
        status: 'completed',
        call_id: callId,
        name: 'exec',
        input: `const r = await tools.apply_patch(${JSON.stringify(patch)});\ntext(JSON.stringify(r));`,
      };
    if (!('write' in a)) throw new Error('badEdit needs an apply_patch or exec tool');
    return shellCall(
      `cat > ${JSON.stringify(a.write.path)} <<'SCRIPTED_EOF'\n${a.write.content}SCRIPTED_EOF`,
      tools,
      callId,
      itemId,
    );
  }
  return shellCall('read' in a ? `cat ${JSON.stringify(a.read)}` : a.shell, tools, callId, itemId);
}

function shellCall(cmd: string, tools: Tool[], callId: string, itemId: string): Item {
  const names = new Set(tools.map((t) => t.name));
  if (names.has('exec_command')) return fn(itemId, callId, 'exec_command', { cmd });
  if (names.has('shell_command')) return fn(itemId, callId, 'shell_command', { command: cmd });
  if (names.has('shell')) return fn(itemId, callId, 'shell', { command: ['bash', '-lc', cmd] });
  if (tools.some((t) => t.name === 'exec' && t.type === 'custom'))
    return {
      type: 'custom_tool_call',
      id: itemId,
      status: 'completed',
      call_id: callId,
      name: 'exec',
      input: `const r = await tools.exec_command({ cmd: ${JSON.stringify(cmd)}, yield_time_ms: 30000 });\ntext(JSON.stringify(r));`,
    };
  throw new Error(`no shell tool offered (tools: ${[...names].join(', ')})`);
}

const fn = (id: string, callId: string, name: string, args: unknown): Item => ({
  type: 'function_call',
  id,
  status: 'completed',
  call_id: callId,
  name,
  arguments: JSON.stringify(args),
});

function stream(res: ServerResponse, body: ResponsesRequest, id: string, step: ModelStep, n: number): void {
  const tools = offeredTools(body);
  const items: Item[] = (step.actions ?? []).map((a, i) =>
    callFor(a, tools, `call_scripted${n}_${i}`, `fc_scripted${n}_${i}`),
  );
  const text = step.text ?? (items.length ? '' : 'Done.');
  if (text)
    items.unshift({
      type: 'message',
      id: `msg_scripted${n}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
  if (step.reasoning)
    items.unshift({
      type: 'reasoning',
      id: `rs_scripted${n}`,
      summary: [{ type: 'summary_text', text: step.reasoning }],
    });
  const u = step.usage ?? {};
  const cached = u.cacheRead ?? 0;
  const usage = {
    input_tokens: (u.input ?? 1000) + cached,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: (u.output ?? 50) + (u.reasoning ?? 0),
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: (u.input ?? 1000) + cached + (u.output ?? 50) + (u.reasoning ?? 0),
  };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': `req_${id}` });
  const response = {
    id,
    object: 'response',
    status: 'in_progress',
    model: body.model ?? 'gpt-5-codex',
    output: [],
  };
  sse(res, 'response.created', { type: 'response.created', response });
  items.forEach((item, output_index) => {
    sse(res, 'response.output_item.added', { type: 'response.output_item.added', output_index, item });
    if (item.type === 'message')
      sse(res, 'response.output_text.delta', {
        type: 'response.output_text.delta',
        item_id: item.id,
        output_index,
        content_index: 0,
        delta: text,
      });
    sse(res, 'response.output_item.done', { type: 'response.output_item.done', output_index, item });
  });
  sse(res, 'response.completed', {
    type: 'response.completed',
    response: { ...response, status: 'completed', output: items, usage },
  });
  res.end();
}
