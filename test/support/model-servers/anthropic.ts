import type { ServerResponse } from 'node:http';
import { json, listen, sse, type Listening, type Received } from './http.js';
import { Script, type Action, type ModelStep } from './script.js';

/**
 * A scripted Anthropic Messages API on 127.0.0.1: `POST /v1/messages` (Claude Code sends
 * `?beta=true`), streaming SSE as the API documents it — message_start, content_block_start /
 * content_block_delta (text_delta, input_json_delta) / content_block_stop, message_delta with the
 * stop reason and usage, message_stop — or one of the documented error forms. Every request is
 * recorded. Requests without tools (a title, a quota probe) are answered with a short text and take
 * no step.
 */
export const ANTHROPIC_ERRORS = {
  invalid_request: { status: 400, type: 'invalid_request_error', message: 'messages: field required' },
  authentication: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
  permission: {
    status: 403,
    type: 'permission_error',
    message: 'Your API key does not have permission to use the specified resource.',
  },
  not_found: { status: 404, type: 'not_found_error', message: 'model: claude-nope' },
  request_too_large: {
    status: 413,
    type: 'request_too_large',
    message: 'Request exceeds the maximum allowed number of bytes.',
  },
  rate_limit: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Number of request tokens has exceeded your per-minute rate limit',
  },
  api_error: { status: 500, type: 'api_error', message: 'Internal server error' },
  overloaded: { status: 529, type: 'overloaded_error', message: 'Overloaded' },
  /** What the API answers an organisation past the usage limit it set itself. */
  usage_limit: {
    status: 400,
    type: 'invalid_request_error',
    message:
      'You have reached your specified API usage limits. You will regain access on 2027-01-01 at 00:00 UTC.',
  },
  /**
   * A subscription login (CLAUDE_CODE_OAUTH_TOKEN) past its 5-hour window: a 429 whose
   * `anthropic-ratelimit-unified-*` headers say rejected and when it resets (2027-01-01T00:00Z).
   */
  subscription_limit: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Rate limited',
    headers: {
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-reset': '1798761600',
      'anthropic-ratelimit-unified-representative-claim': 'five_hour',
      'anthropic-ratelimit-unified-5h-status': 'rejected',
      'anthropic-ratelimit-unified-5h-reset': '1798761600',
      'anthropic-ratelimit-unified-5h-utilization': '1.0',
    },
  },
} as const;
export type AnthropicError = keyof typeof ANTHROPIC_ERRORS;

export interface AnthropicServer extends Listening {
  script: Script<AnthropicError>;
  /** Requests that took a step (with tools), in order. */
  requests: Received[];
  /** Every request, auxiliary ones included. */
  all: Received[];
}

export async function anthropicServer(steps: ModelStep<AnthropicError>[]): Promise<AnthropicServer> {
  const script = new Script(steps);
  const requests: Received[] = [];
  const all: Received[] = [];
  let n = 0;
  const server = await listen((req, res) => {
    all.push(req);
    if (req.method !== 'POST' || !req.path.startsWith('/v1/messages'))
      return json(res, 404, error('not_found_error', `no route ${req.method} ${req.path}`));
    const body = (req.body ?? {}) as MessagesRequest;
    const id = `msg_01Scripted${String(++n).padStart(12, '0')}`;
    if (!Array.isArray(body.tools) || body.tools.length === 0)
      return answer(res, body, id, { text: 'Scripted.' }, []);
    requests.push(req);
    const step = script.next();
    if (step.error) {
      const e: { status: number; type: string; message: string; headers?: Record<string, string> } =
        ANTHROPIC_ERRORS[step.error];
      return json(res, e.status, error(e.type, step.message ?? e.message), {
        ...e.headers,
        'request-id': `req_${id}`,
        ...(e.status === 429 || e.status === 529 ? { 'retry-after': '1' } : {}),
        ...(e.status === 429 ? { 'anthropic-ratelimit-requests-remaining': '0' } : {}),
      });
    }
    return answer(res, body, id, step, toolUses(step.actions ?? [], body));
  });
  return { ...server, script, requests, all };
}

interface MessagesRequest {
  model?: string;
  stream?: boolean;
  system?: string | Array<{ text?: string }>;
  tools?: Array<{ name?: string }>;
}

const error = (type: string, message: string) => ({ type: 'error', error: { type, message } });

type ToolUse = { id: string; name: string; input: Record<string, unknown> };

let toolN = 0;
function toolUses(actions: Action[], body: MessagesRequest): ToolUse[] {
  const cwd = workingDirectory(body);
  return actions.map((a) => {
    const id = `toolu_01Scripted${String(++toolN).padStart(10, '0')}`;
    if ('write' in a) {
      const path = a.write.path.startsWith('/') ? a.write.path : `${cwd}/${a.write.path}`;
      return { id, name: 'Write', input: { file_path: path, content: a.write.content } };
    }
    if ('badEdit' in a) {
      const path = a.badEdit.path.startsWith('/') ? a.badEdit.path : `${cwd}/${a.badEdit.path}`;
      return {
        id,
        name: 'Edit',
        input: { file_path: path, old_string: a.badEdit.old, new_string: a.badEdit.new },
      };
    }
    if ('read' in a)
      return { id, name: 'Read', input: { file_path: a.read.startsWith('/') ? a.read : `${cwd}/${a.read}` } };
    return { id, name: 'Bash', input: { command: a.shell, description: 'Run a command' } };
  });
}

/** Claude Code names its working directory in its prompt (`Primary working directory: /…`). */
function workingDirectory(body: MessagesRequest): string {
  const all = JSON.stringify(body).replace(/\\n/g, '\n');
  return /(?:Primary working directory|Working directory): (\/[^\s"\\]+)/.exec(all)?.[1] ?? '.';
}

function answer(
  res: ServerResponse,
  body: MessagesRequest,
  id: string,
  step: ModelStep,
  tools: ToolUse[],
): void {
  const model = body.model ?? 'claude-sonnet-4-5';
  const u = step.usage ?? {};
  const usage = {
    input_tokens: u.input ?? 120,
    cache_creation_input_tokens: u.cacheWrite ?? 0,
    cache_read_input_tokens: u.cacheRead ?? 0,
    output_tokens: u.output ?? 30,
  };
  const text = step.text ?? (tools.length ? '' : 'Done.');
  const stop = tools.length ? 'tool_use' : 'end_turn';
  if (body.stream === false) {
    return json(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [...(text ? [{ type: 'text', text }] : []), ...tools.map((t) => ({ type: 'tool_use', ...t }))],
      stop_reason: stop,
      stop_sequence: null,
      usage,
    });
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': `req_${id}`,
  });
  sse(res, 'message_start', {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  sse(res, 'ping', { type: 'ping' });
  let index = 0;
  if (text) {
    sse(res, 'content_block_start', {
      type: 'content_block_start',
      index,
      content_block: { type: 'text', text: '' },
    });
    for (const part of text.match(/[\s\S]{1,40}/g) ?? [])
      sse(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: part },
      });
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
    index++;
  }
  for (const t of tools) {
    sse(res, 'content_block_start', {
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: t.id, name: t.name, input: {} },
    });
    const input = JSON.stringify(t.input);
    for (const part of input.match(/[\s\S]{1,64}/g) ?? [])
      sse(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: part },
      });
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
    index++;
  }
  sse(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}
