import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** A session or thread id as the tools print them (UUIDs); `n` makes it unique and readable. */
export function uid(n: number | string): string {
  const tailHex = Buffer.from(String(n)).toString('hex').slice(0, 12).padStart(12, '0');
  return `0199a213-81c0-7800-8aa1-${tailHex}`;
}

type Tokens = { input: number; output: number; cacheRead?: number; cacheCreation?: number };

/**
 * Output shapes as `claude -p --output-format json` (Claude Code 2.1) and `codex exec --json`
 * (codex-cli 0.171) print them: field order, extra fields and exit codes as observed.
 */
export const claude = {
  result(o: {
    session: string;
    cost: number;
    text?: string;
    isError?: boolean;
    subtype?: string;
    turns?: number;
    usage?: Tokens;
    /** Totals over the session's models; by default the same as `usage` (a first turn). */
    modelUsage?: Tokens & { cost: number };
    api?: { status: number | null; type?: string; error?: string };
    errors?: string[];
    denials?: string[];
  }): string {
    const u = o.usage ?? { input: 12, output: 340, cacheRead: 1000, cacheCreation: 200 };
    const m = o.modelUsage ?? { ...u, cost: o.cost };
    const errorSubtype = o.subtype !== undefined && o.subtype !== 'success';
    return (
      JSON.stringify({
        duration_api_ms: 3900,
        stop_reason: errorSubtype ? 'tool_use' : 'end_turn',
        session_id: o.session,
        total_cost_usd: o.cost,
        usage: {
          input_tokens: u.input,
          cache_creation_input_tokens: u.cacheCreation ?? 0,
          cache_read_input_tokens: u.cacheRead ?? 0,
          output_tokens: u.output,
          output_tokens_details: { thinking_tokens: 0 },
          server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
          service_tier: 'standard',
        },
        modelUsage: {
          'claude-sonnet-4-5': {
            inputTokens: m.input,
            outputTokens: m.output,
            cacheReadInputTokens: m.cacheRead ?? 0,
            cacheCreationInputTokens: m.cacheCreation ?? 0,
            webSearchRequests: 0,
            costUSD: m.cost,
            contextWindow: 200000,
          },
        },
        permission_denials: (o.denials ?? []).map((t, i) => ({
          tool_name: t,
          tool_use_id: `toolu_0${i}`,
          tool_input: { command: 'npm test' },
        })),
        terminal_reason: o.api ? 'api_error' : errorSubtype ? 'max_turns' : 'completed',
        is_error: o.isError ?? errorSubtype,
        num_turns: o.turns ?? 3,
        subtype: o.subtype ?? 'success',
        ...(errorSubtype
          ? { errors: o.errors ?? [] }
          : {
              api_error_status: o.api?.status ?? null,
              ...(o.api?.type ? { api_error_type: o.api.type } : {}),
              ...(o.api?.error ? { api_error: o.api.error } : {}),
              result: o.text ?? 'Done.',
            }),
        type: 'result',
        duration_ms: 4086,
        uuid: '8f29dff7-4e8e-44e0-b6ac-57161d671978',
      }) + '\n'
    );
  },
  /** An API error as the result of a turn (printed with exit 1): nothing was spent. */
  apiError(
    session: string,
    text: string,
    api: { status: number | null; type?: string; error?: string },
  ): string {
    return claude.result({
      session,
      cost: 0,
      text,
      isError: true,
      turns: 1,
      usage: { input: 0, output: 0 },
      api,
    });
  },
  /**
   * stream-json --verbose while the API cannot be reached: init, then an `api_retry` system event per
   * attempt, and nothing else (the turn never ends by itself). `work` adds an assistant message first.
   */
  retrying(session: string, attempts: number, o: { work?: boolean; status?: number | null } = {}): string {
    return [
      JSON.stringify({ type: 'system', subtype: 'init', session_id: session, tools: ['Bash'] }),
      ...(o.work
        ? [
            JSON.stringify({
              type: 'assistant',
              message: { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }] },
              session_id: session,
            }),
          ]
        : []),
      ...Array.from({ length: attempts }, (_, i) =>
        JSON.stringify({
          type: 'system',
          subtype: 'api_retry',
          attempt: i + 1,
          max_retries: 10,
          retry_delay_ms: 500 * 2 ** i,
          error_status: o.status ?? null,
          error: o.status ? 'server_error' : 'unknown',
          session_id: session,
        }),
      ),
      '',
    ].join('\n');
  },
  /** stream-json --verbose: init, an assistant message, a rate_limit_event, then the result line. */
  stream(session: string, cost: number, o: { rejectedResetsAt?: number; result?: string } = {}): string {
    return [
      JSON.stringify({
        type: 'system',
        subtype: 'init',
        cwd: '/home/runner/work/repo/repo',
        session_id: session,
        tools: ['Bash', 'Edit'],
        model: 'claude-sonnet-4-5',
        permissionMode: 'acceptEdits',
      }),
      JSON.stringify({
        type: 'rate_limit_event',
        rate_limit_info: {
          status: o.rejectedResetsAt ? 'rejected' : 'allowed',
          resetsAt: o.rejectedResetsAt ?? 1774447200,
          rateLimitType: 'five_hour',
        },
        session_id: session,
      }),
      JSON.stringify({
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
        session_id: session,
      }),
      (o.result ?? claude.result({ session, cost })).trim(),
      '',
    ].join('\n');
  },
};

type CodexUsage = { input: number; cached: number; output: number; cacheWrite?: number; reasoning?: number };
const codexUsage = (u: CodexUsage) => ({
  input_tokens: u.input,
  cached_input_tokens: u.cached,
  cache_write_input_tokens: u.cacheWrite ?? 0,
  output_tokens: u.output,
  reasoning_output_tokens: u.reasoning ?? Math.floor(u.output / 4),
});
const lines = (events: object[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

/** A codex `file_change` item as `item.completed` carries it. */
const fileChange = (id: string, path: string, status: 'completed' | 'failed') => ({
  type: 'item.completed',
  item: { id, type: 'file_change', changes: [{ path, kind: 'update' }], status },
});

export const codex = {
  /** A completed turn; `input`/`cached`/`output` are the thread's running totals, as printed. */
  run(o: { thread: string; text?: string } & CodexUsage): string {
    return lines([
      { type: 'thread.started', thread_id: o.thread },
      {
        type: 'item.completed',
        item: {
          id: 'item_0',
          type: 'error',
          message:
            'Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.',
        },
      },
      { type: 'turn.started' },
      {
        type: 'item.completed',
        item: { id: 'item_1', type: 'reasoning', text: 'Looking at the repository' },
      },
      {
        type: 'item.started',
        item: {
          id: 'item_2',
          type: 'command_execution',
          command: 'npm test',
          aggregated_output: '',
          exit_code: null,
          status: 'in_progress',
        },
      },
      {
        type: 'item.completed',
        item: {
          id: 'item_2',
          type: 'command_execution',
          command: 'npm test',
          aggregated_output: 'ok\n',
          exit_code: 0,
          status: 'completed',
        },
      },
      {
        type: 'item.completed',
        item: {
          id: 'item_3',
          type: 'file_change',
          changes: [{ path: 'src/value.txt', kind: 'update' }],
          status: 'completed',
        },
      },
      { type: 'item.completed', item: { id: 'item_4', type: 'agent_message', text: o.text ?? 'Done.' } },
      { type: 'turn.completed', usage: codexUsage(o) },
    ]);
  },
  /**
   * A turn that completed while its file changes failed (`status: failed`: a patch that did not
   * apply, a write the sandbox refused); `completed` adds a file change that did apply.
   */
  failedWrites(thread: string, paths: string[], o: { completed?: string } = {}): string {
    return lines([
      { type: 'thread.started', thread_id: thread },
      { type: 'turn.started' },
      ...paths.map((p, i) => fileChange(`item_${i + 1}`, p, 'failed')),
      ...(o.completed ? [fileChange('item_9', o.completed, 'completed')] : []),
      {
        type: 'item.completed',
        item: { id: 'item_10', type: 'agent_message', text: 'I could not write the files.' },
      },
      { type: 'turn.completed', usage: codexUsage({ input: 2000, cached: 0, output: 40 }) },
    ]);
  },
  /** What codex prints while it cannot reach its API: retry notices, and never a turn's end. */
  reconnecting(thread: string, notices: string[], o: { work?: boolean } = {}): string {
    return lines([
      { type: 'thread.started', thread_id: thread },
      { type: 'turn.started' },
      ...(o.work
        ? [
            {
              type: 'item.completed',
              item: {
                id: 'item_1',
                type: 'command_execution',
                command: 'npm test',
                aggregated_output: 'ok\n',
                exit_code: 0,
                status: 'completed',
              },
            },
          ]
        : []),
      ...notices.map((n) => ({ type: 'error', message: n })),
    ]);
  },
  /** A failed turn (printed with exit 1); `notices` are the retry notices before it. */
  failed(thread: string, message: string, notices: string[] = []): string {
    return lines([
      { type: 'thread.started', thread_id: thread },
      { type: 'turn.started' },
      ...notices.map((n) => ({ type: 'error', message: n })),
      { type: 'error', message },
      { type: 'turn.failed', error: { message } },
    ]);
  },
};

export interface Turn {
  /** Printed before the big output; `stdout` after it. */
  head?: string;
  stdout?: string;
  stderr?: string;
  exit?: number;
  append?: { file: string; text: string };
  bigOutputBytes?: number;
  /** The line repeated for bigOutputBytes (default 1023 × `x`). */
  bigLine?: string;
  hang?: boolean;
  /** The tool's session store is gone after this turn. */
  forget?: boolean;
  /** Waits this long before doing anything of the turn. */
  sleepMs?: number;
}

export interface Call {
  tool: string;
  argv: string[];
  stdin: string;
  cwd: string;
  env: Record<string, string>;
  /** Whether the real tool could have written files with this argv. */
  writable: boolean;
  /** Whether the real tool would have refused this argv before doing anything. */
  refused: boolean;
}

const FAKE = resolve(__dirname, '../fixtures/agents/fake-agent.mjs');

/** A bin directory holding fake `claude` and `codex` and the scenario they play. */
export function installFakes(
  dir: string,
  turns: Turn[],
): { bin: string; calls(): Call[]; setTurns(t: Turn[]): void; forget(): void } {
  mkdirSync(dir, { recursive: true });
  for (const tool of ['claude', 'codex']) {
    copyFileSync(FAKE, join(dir, tool));
    chmodSync(join(dir, tool), 0o755);
  }
  const setTurns = (t: Turn[]) => writeFileSync(join(dir, 'scenario.json'), JSON.stringify({ turns: t }));
  setTurns(turns);
  return {
    bin: dir,
    setTurns,
    /** The tool's session store is gone (another HOME, a cleaned runner). */
    forget: () => rmSync(join(dir, 'sessions.json'), { force: true }),
    calls: () => {
      const f = join(dir, 'calls.jsonl');
      return existsSync(f)
        ? readFileSync(f, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Call)
        : [];
    },
  };
}
