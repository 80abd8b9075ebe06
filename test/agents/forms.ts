import type { EndingKind } from '../../src/agents/ending.js';
import { claude, codex, uid } from './fake.js';

/**
 * What Claude Code (2.1, `claude -p --output-format json`) and codex-cli (0.171, `codex exec --json`)
 * print in the situations a team meets on its first day, with their exit codes. The messages are
 * the tools' own words, as they printed them against an API answering with that error (current
 * releases) or as users reported them from earlier ones. `expect.resetAt` is an ISO instant for
 * `NOW`, or `local:<y>-<m>-<d> <h>:<min>` for a time codex prints in the runner's zone.
 */
export const NOW = new Date('2026-04-30T10:00:00Z');

export interface Form {
  name: string;
  tool: 'claude' | 'codex';
  stdout?: string;
  stderr?: string;
  exit: number;
  /** The tool never ends by itself: the crew timeout kills it after printing this. */
  hang?: boolean;
  expect: { kind: EndingKind; resetAt?: string; reason?: string };
}

const S = uid('form');
/** What Claude Code prints when an API key reaches the spend limit set in the Console. */
const API_KEY_LIMIT =
  'API Error: 400 You have reached your specified API usage limits. You will regain access on 2027-01-01 at 00:00 UTC.';
const api = (text: string, status: number | null, type?: string, error?: string) =>
  claude.apiError(S, text, { status, ...(type ? { type } : {}), ...(error ? { error } : {}) });
const limit = (text: string) => api(text, 429, 'rate_limit_error', 'usage_limit_reached');
const verboseArray = (...objects: string[]) =>
  JSON.stringify([
    { type: 'system', subtype: 'init', session_id: S, tools: ['Bash'], model: 'claude-sonnet-4-5' },
    {
      type: 'assistant',
      message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      session_id: S,
    },
    ...objects.map((o) => JSON.parse(o) as unknown),
  ]) + '\n';

export const CLAUDE_FORMS: Form[] = [
  {
    name: 'success',
    tool: 'claude',
    stdout: claude.result({ session: S, cost: 0.05 }),
    exit: 0,
    expect: { kind: 'succeeded' },
  },
  {
    name: 'success, stream-json --verbose',
    tool: 'claude',
    stdout: claude.stream(S, 0.05),
    exit: 0,
    expect: { kind: 'succeeded' },
  },
  {
    name: 'success, json --verbose (one array)',
    tool: 'claude',
    stdout: verboseArray(claude.result({ session: S, cost: 0.05 })),
    exit: 0,
    expect: { kind: 'succeeded' },
  },
  {
    name: 'success after warnings and terminal colours on stdout',
    tool: 'claude',
    stdout: `\u001b[33mwarning:\u001b[0m ignoring unknown setting "theme"\r\nnpm WARN config production Use \`--omit=dev\` instead.\n\u001b[0m${claude.result({ session: S, cost: 0.05 })}`,
    exit: 0,
    expect: { kind: 'succeeded' },
  },
  {
    name: 'success, json --verbose after a warning line',
    tool: 'claude',
    stdout: `Warning: running as root\n${verboseArray(claude.result({ session: S, cost: 0.05 }))}`,
    exit: 0,
    expect: { kind: 'succeeded' },
  },
  {
    name: 'subtype success with is_error true and an unknown error',
    tool: 'claude',
    stdout: claude.result({ session: S, cost: 0.01, isError: true, text: 'Something unexpected happened' }),
    exit: 0,
    expect: { kind: 'failed', reason: 'Something unexpected happened' },
  },
  {
    name: 'not logged in',
    tool: 'claude',
    stdout: api('Not logged in · Please run /login', null),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: '401 invalid API key',
    tool: 'claude',
    stdout: api('Invalid API key · Fix external API key', 401, 'authentication_error'),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: '403 key without permission',
    tool: 'claude',
    stdout: api(
      'Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource.',
      403,
      'permission_error',
    ),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'OAuth token expired (1.0)',
    tool: 'claude',
    stdout: api(
      'OAuth token has expired. Please obtain a new token or refresh your existing token. · Please run /login',
      401,
      'authentication_error',
    ),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'model not available',
    tool: 'claude',
    stdout: api(
      "There's an issue with the selected model (claude-nope). It may not exist or you may not have access to it. Run --model to pick a different model.",
      404,
      'not_found_error',
    ),
    stderr: '[claude-code:unrecognized_model] {"model":"claude-nope","query_source":"sdk"}\n',
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'API unreachable',
    tool: 'claude',
    stdout: api(
      'API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)',
      null,
      undefined,
      'connection_failed',
    ),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: '529 overloaded',
    tool: 'claude',
    stdout: api(
      'API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check status.claude.com.',
      529,
      'overloaded_error',
    ),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: '529 overloaded (2.0)',
    tool: 'claude',
    stdout: api('API Error: Repeated 529 Overloaded errors', 529),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: '529 as a prose line (1.0)',
    tool: 'claude',
    stdout:
      'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CZbiHognn1znP8MCgREwD"}\n',
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: '500 server error',
    tool: 'claude',
    stdout: api(
      'API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check status.claude.com.',
      500,
      'api_error',
    ),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: '429 organisation rate limit',
    tool: 'claude',
    stdout: api(
      'API Error: Request rejected (429) · This request would exceed the rate limit for your organization of 50,000 input tokens per minute.',
      429,
      'rate_limit_error',
    ),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: 'server limiting requests (not a usage limit)',
    tool: 'claude',
    stdout: api('Server is temporarily limiting requests (not your usage limit)', 429, 'rate_limit_error'),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: '5-hour limit',
    tool: 'claude',
    stdout: limit("You've hit your 5-hour limit · resets 1:10am (Europe/Lisbon)"),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2026-05-01T00:10:00.000Z' },
  },
  {
    name: 'weekly limit, a date after a comma',
    tool: 'claude',
    stdout: limit("You've hit your weekly limit · resets Dec 4, 6:30am (America/Recife)"),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2026-12-04T09:30:00.000Z' },
  },
  {
    name: 'limit, a date with "at"',
    tool: 'claude',
    stdout: limit("You've hit your limit · resets Apr 23 at 4pm (America/Recife)"),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2027-04-23T19:00:00.000Z' },
  },
  {
    name: 'session limit',
    tool: 'claude',
    stdout: limit("You've hit your session limit · resets 8:30pm (Asia/Tokyo)"),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2026-04-30T11:30:00.000Z' },
  },
  {
    name: 'out of extra usage',
    tool: 'claude',
    stdout: limit("You're out of extra usage · resets 1pm (America/Los_Angeles)"),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2026-04-30T20:00:00.000Z' },
  },
  {
    name: 'limit with subtype success, is_error and exit 0 (1.0)',
    tool: 'claude',
    stdout: claude.result({
      session: S,
      cost: 0,
      isError: true,
      text: 'Claude AI usage limit reached|1777600800',
    }),
    exit: 0,
    expect: { kind: 'usage_limit', resetAt: '2026-05-01T02:00:00.000Z' },
  },
  {
    name: 'limit as a prose line (1.0)',
    tool: 'claude',
    stdout: 'Claude usage limit reached. Your limit will reset at 3pm (Etc/GMT+5).\n',
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2026-04-30T20:00:00.000Z' },
  },
  {
    name: 'limit with its reset in a rejected rate_limit_event (stream-json)',
    tool: 'claude',
    stdout: claude.stream(S, 0, {
      rejectedResetsAt: 1777605000,
      result: limit("You've hit your 5-hour limit"),
    }),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2026-05-01T03:10:00.000Z' },
  },
  {
    name: 'credit balance too low',
    tool: 'claude',
    stdout: api('Credit balance is too low', 400, 'invalid_request_error'),
    exit: 1,
    expect: { kind: 'usage_limit' },
  },
  {
    name: 'error_max_turns (errors, no result)',
    tool: 'claude',
    stdout: claude.result({
      session: S,
      cost: 0.2,
      subtype: 'error_max_turns',
      errors: ['Reached maximum number of turns (40)'],
    }),
    exit: 1,
    expect: { kind: 'failed', reason: 'Reached maximum number of turns (40)' },
  },
  {
    name: 'error_max_budget_usd',
    tool: 'claude',
    stdout: claude.result({
      session: S,
      cost: 5.01,
      subtype: 'error_max_budget_usd',
      errors: ['Reached maximum budget ($5)'],
    }),
    exit: 1,
    expect: { kind: 'failed', reason: 'error_max_budget_usd' },
  },
  {
    name: 'prompt too long',
    tool: 'claude',
    stdout: api(
      'Prompt is too long · the request is ~250000 tokens (limit 200000)',
      400,
      'invalid_request_error',
    ),
    exit: 1,
    expect: { kind: 'failed', reason: 'Prompt is too long' },
  },
  {
    name: 'stream-json without --verbose',
    tool: 'claude',
    stderr: 'Error: When using --print, --output-format=stream-json requires --verbose\n',
    exit: 1,
    expect: { kind: 'could_not_start', reason: 'requires --verbose' },
  },
  {
    name: 'a flag the release does not know',
    tool: 'claude',
    stderr: "error: unknown option '--max-budget'\n",
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'truncated result',
    tool: 'claude',
    stdout: claude.result({ session: S, cost: 0.3 }).slice(0, 150),
    exit: 0,
    expect: { kind: 'failed', reason: 'without a result it could read' },
  },
  {
    name: 'no output at all',
    tool: 'claude',
    exit: 0,
    expect: {
      kind: 'could_not_start',
      reason: 'printed nothing a claude-code CLI prints (exit 0): (no output)',
    },
  },
  {
    name: 'killed by a signal mid-stream',
    tool: 'claude',
    stdout: claude.stream(S, 0.1).split('\n').slice(0, 3).join('\n') + '\n',
    exit: 137,
    expect: { kind: 'failed', reason: 'without a result it could read' },
  },
  {
    name: 'API key over its spend limit (API Error: 400, is_error with subtype success)',
    tool: 'claude',
    stdout: api(API_KEY_LIMIT, 400, 'invalid_request_error'),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2027-01-01T00:00:00.000Z' },
  },
  {
    name: 'API key over its spend limit, a bare line on stdout',
    tool: 'claude',
    stdout: `${API_KEY_LIMIT}\n`,
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2027-01-01T00:00:00.000Z' },
  },
  {
    name: 'API key over its spend limit, a bare line on stderr',
    tool: 'claude',
    stderr: `${API_KEY_LIMIT}\n`,
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: '2027-01-01T00:00:00.000Z' },
  },
  {
    name: 'unreachable API: nothing but api_retry events until the timeout (stream-json)',
    tool: 'claude',
    stdout: claude.retrying(S, 4),
    exit: 0,
    hang: true,
    expect: { kind: 'could_not_start', reason: 'claude could not reach its API: API retry 4/10: unknown' },
  },
  {
    name: 'unreachable API: nothing but connection retries on stderr until the timeout',
    tool: 'claude',
    stderr:
      'API Error (Connection error.) · Retrying in 1 seconds… (attempt 1/10)\nAPI Error (Connection error.) · Retrying in 2 seconds… (attempt 2/10)\n',
    exit: 0,
    hang: true,
    expect: { kind: 'could_not_start', reason: 'could not reach its API: API Error (Connection error.)' },
  },
  {
    name: 'an overloaded API retried until the timeout (stream-json)',
    tool: 'claude',
    stdout: claude.retrying(S, 3, { status: 529 }),
    exit: 0,
    hang: true,
    expect: { kind: 'overloaded', reason: 'still retrying' },
  },
  {
    name: 'a timeout after real work, with retries at the end (stream-json)',
    tool: 'claude',
    stdout: claude.retrying(S, 2, { work: true }),
    exit: 0,
    hang: true,
    expect: { kind: 'timed_out', reason: 'timeout' },
  },
  {
    name: 'a hang that printed nothing',
    tool: 'claude',
    exit: 0,
    hang: true,
    expect: { kind: 'timed_out', reason: 'timeout' },
  },
  {
    name: 'not the tool: a usage line, exit 0',
    tool: 'claude',
    stdout: 'usage: foo [-h] [--verbose] FILE\n',
    exit: 0,
    expect: {
      kind: 'could_not_start',
      reason: 'printed nothing a claude-code CLI prints (exit 0): usage: foo',
    },
  },
  {
    name: 'not the tool: JSON of another shape, exit 0',
    tool: 'claude',
    stdout: '{"name":"foo","version":"1.2.3"}\n',
    exit: 0,
    expect: { kind: 'could_not_start', reason: '"version":"1.2.3"' },
  },
];

const T = uid('form-thread');
const notice = (n: number, of: number, why: string) => `Reconnecting... ${n}/${of} (${why})`;
const PLAN_WITHOUT_CODEX =
  'To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus.';

export const CODEX_FORMS: Form[] = [
  {
    name: 'success',
    tool: 'codex',
    stdout: codex.run({ thread: T, input: 1000, cached: 100, output: 10 }),
    exit: 0,
    expect: { kind: 'succeeded' },
  },
  {
    name: 'success after a reconnect notice',
    tool: 'codex',
    stdout:
      JSON.stringify({
        type: 'error',
        message: notice(1, 5, 'stream disconnected before completion: error sending request'),
      }) +
      '\n' +
      codex.run({ thread: T, input: 1000, cached: 100, output: 10 }),
    exit: 0,
    expect: { kind: 'succeeded' },
  },
  {
    name: 'usage limit, another day',
    tool: 'codex',
    stdout: codex.failed(
      T,
      'You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at Dec 1st, 2026 12:14 AM.',
    ),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: 'local:2026-12-01 00:14' },
  },
  {
    name: 'usage limit, later today',
    tool: 'codex',
    stdout: codex.failed(
      T,
      "You've hit your usage limit. To get more access now, send a request to your admin or try again at 12:16 PM.",
    ),
    exit: 1,
    expect: { kind: 'usage_limit', resetAt: 'local:next 12:16' },
  },
  {
    name: 'usage limit, no time',
    tool: 'codex',
    stdout: codex.failed(T, "You've hit your usage limit. Try again later."),
    exit: 1,
    expect: { kind: 'usage_limit' },
  },
  {
    name: 'quota exceeded (API key)',
    tool: 'codex',
    stdout: codex.failed(T, 'Quota exceeded. Check your plan and billing details.'),
    exit: 1,
    expect: { kind: 'usage_limit' },
  },
  {
    name: '429 retries exhausted',
    tool: 'codex',
    stdout: codex.failed(T, 'exceeded retry limit, last status: 429 Too Many Requests', [
      notice(1, 5, 'exceeded retry limit, last status: 429 Too Many Requests'),
    ]),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: '5xx: high demand',
    tool: 'codex',
    stdout: codex.failed(T, 'We’re currently experiencing high demand, which may cause temporary errors.', [
      notice(1, 5, 'We’re currently experiencing high demand, which may cause temporary errors.'),
    ]),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: 'stream disconnected',
    tool: 'codex',
    stdout: codex.failed(
      T,
      'stream disconnected before completion: stream closed before response.completed',
      [notice(1, 5, 'stream disconnected before completion: stream closed before response.completed')],
    ),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: '401 incorrect API key',
    tool: 'codex',
    stdout: codex.failed(
      T,
      'unexpected status 401 Unauthorized: Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys., url: https://api.openai.com/v1/responses',
      [notice(1, 5, 'unexpected status 401 Unauthorized: Incorrect API key provided: sk-test.')],
    ),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'key not in the environment',
    tool: 'codex',
    stdout: codex.failed(T, 'Missing environment variable: `OPENAI_API_KEY`.'),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'ChatGPT login expired',
    tool: 'codex',
    stdout: codex.failed(
      T,
      'Your access token could not be refreshed because your refresh token has expired. Please log out and sign in again.',
    ),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'model not available',
    tool: 'codex',
    stdout: codex.failed(T, 'The model `gpt-nope` does not exist or you do not have access to it.'),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'model retired for ChatGPT accounts',
    tool: 'codex',
    stdout: codex.failed(
      T,
      '{"type":"error","status":400,"error":{"type":"invalid_request_error","message":"The \'gpt-5.3-codex\' model is not supported when using Codex with a ChatGPT account."}}',
    ),
    exit: 1,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'a notice about the network, then an unknown error',
    tool: 'codex',
    stdout: codex.failed(T, 'sandbox denied: cannot write outside workspace', [
      notice(1, 5, 'stream disconnected before completion: error sending request'),
    ]),
    exit: 1,
    expect: { kind: 'failed', reason: 'sandbox denied: cannot write outside workspace' },
  },
  {
    name: 'an option the release refuses',
    tool: 'codex',
    stderr:
      "error: unexpected argument '--full-auto' found\n\n  tip: to pass '--full-auto' as a value, use '-- --full-auto'\n\nUsage: codex exec [OPTIONS] [PROMPT]\n",
    exit: 2,
    expect: { kind: 'could_not_start' },
  },
  {
    name: 'the event format of an older release',
    tool: 'codex',
    stdout:
      [
        { model: 'gpt-5', sandbox: 'workspace-write', 'reasoning effort': 'medium' },
        { prompt: 'Fix the bug' },
        { id: '0', msg: { type: 'task_started' } },
        { id: '0', msg: { type: 'agent_message', message: 'Done.' } },
        {
          id: '0',
          msg: { type: 'token_count', input_tokens: 1200, cached_input_tokens: 0, output_tokens: 40 },
        },
        { id: '0', msg: { type: 'task_complete', last_agent_message: 'Done.' } },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n',
    exit: 0,
    expect: { kind: 'could_not_start', reason: 'older release' },
  },
  {
    name: 'a completed turn but a non-zero exit',
    tool: 'codex',
    stdout: codex.run({ thread: T, input: 1000, cached: 0, output: 10 }),
    stderr: 'Error: failed to write last message file\n',
    exit: 1,
    expect: { kind: 'failed', reason: 'failed to write last message file' },
  },
  {
    name: 'events but no completed turn, exit 0',
    tool: 'codex',
    stdout:
      [{ type: 'thread.started', thread_id: T }, { type: 'turn.started' }]
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n',
    exit: 0,
    expect: { kind: 'failed', reason: 'without a completed turn' },
  },
  {
    name: 'no output at all',
    tool: 'codex',
    exit: 0,
    expect: { kind: 'could_not_start', reason: 'printed nothing a codex CLI prints (exit 0): (no output)' },
  },
  {
    name: 'model at capacity (turn.failed)',
    tool: 'codex',
    stdout: codex.failed(T, 'Selected model is at capacity. Please try a different model.'),
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: 'model at capacity (an error event only)',
    tool: 'codex',
    stdout:
      [
        { type: 'thread.started', thread_id: T },
        { type: 'turn.started' },
        { type: 'error', message: 'Selected model is at capacity. Please try a different model.' },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n',
    exit: 1,
    expect: { kind: 'overloaded' },
  },
  {
    name: 'a ChatGPT plan without Codex',
    tool: 'codex',
    stdout: codex.failed(T, PLAN_WITHOUT_CODEX),
    exit: 1,
    expect: { kind: 'could_not_start', reason: 'To use Codex with your ChatGPT plan, upgrade to Plus' },
  },
  {
    name: 'a ChatGPT plan without Codex, on stderr',
    tool: 'codex',
    stderr: `ERROR: ${PLAN_WITHOUT_CODEX}\n`,
    exit: 1,
    expect: { kind: 'could_not_start', reason: 'To use Codex with your ChatGPT plan, upgrade to Plus' },
  },
  {
    name: 'unreachable API: reconnect notices until the timeout',
    tool: 'codex',
    stdout: codex.reconnecting(T, [
      notice(
        1,
        5,
        'stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses)',
      ),
      notice(
        2,
        5,
        'stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses)',
      ),
      'Reconnecting... waiting for network',
    ]),
    stderr:
      '2026-04-30T10:00:01.204Z ERROR codex_api::endpoint::responses: error sending request for url (https://api.openai.com/v1/responses): client error (Connect): tcp connect error: Connection refused (os error 111)\n',
    exit: 0,
    hang: true,
    expect: {
      kind: 'could_not_start',
      reason: 'codex could not reach its API: Reconnecting... waiting for network',
    },
  },
  {
    name: 'unreachable API: connection refused on stderr only, until the timeout',
    tool: 'codex',
    stdout: codex.reconnecting(T, []),
    stderr:
      'ERROR codex_core::client: stream error: error sending request for url (https://api.openai.com/v1/responses): Connection refused (os error 111); retrying 1/5 in 212ms…\n',
    exit: 0,
    hang: true,
    expect: { kind: 'could_not_start', reason: 'could not reach its API: ERROR codex_core::client' },
  },
  {
    name: 'a timeout after real work, with reconnect notices at the end',
    tool: 'codex',
    stdout: codex.reconnecting(
      T,
      [notice(1, 5, 'stream disconnected before completion: error sending request')],
      {
        work: true,
      },
    ),
    exit: 0,
    hang: true,
    expect: { kind: 'timed_out', reason: 'timeout' },
  },
  {
    name: 'every file change failed, then the turn completed',
    tool: 'codex',
    stdout: codex.failedWrites(T, ['src/x.ts', 'src/y.ts']),
    exit: 0,
    expect: { kind: 'failed', reason: 'writes all failed' },
  },
  {
    name: 'a failed file change, then one that applied',
    tool: 'codex',
    stdout: codex.failedWrites(T, ['src/x.ts'], { completed: 'src/x.ts' }),
    exit: 0,
    expect: { kind: 'succeeded' },
  },
  {
    name: 'not the tool: a usage line, exit 0',
    tool: 'codex',
    stdout: 'usage: foo [-h] FILE\n',
    exit: 0,
    expect: { kind: 'could_not_start', reason: 'printed nothing a codex CLI prints (exit 0): usage: foo' },
  },
  {
    name: 'not the tool: JSON of another shape, exit 0',
    tool: 'codex',
    stdout: '{"ok":true}\n',
    exit: 0,
    expect: { kind: 'could_not_start', reason: '{"ok":true}' },
  },
];
