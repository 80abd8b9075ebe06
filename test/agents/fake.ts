import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Output shapes as `claude -p --output-format json` and `codex exec --json` print them. */
export const claude = {
  result(o: {
    session: string;
    cost: number;
    text?: string;
    isError?: boolean;
    subtype?: string;
    turns?: number;
    usage?: { input: number; output: number; cacheRead?: number; cacheCreation?: number };
  }): string {
    const u = o.usage ?? { input: 12, output: 340, cacheRead: 1000, cacheCreation: 200 };
    return (
      JSON.stringify({
        type: 'result',
        subtype: o.subtype ?? 'success',
        is_error: o.isError ?? false,
        duration_ms: 4086,
        duration_api_ms: 3900,
        num_turns: o.turns ?? 3,
        result: o.text ?? 'Done.',
        session_id: o.session,
        total_cost_usd: o.cost,
        usage: {
          input_tokens: u.input,
          cache_creation_input_tokens: u.cacheCreation ?? 0,
          cache_read_input_tokens: u.cacheRead ?? 0,
          output_tokens: u.output,
          server_tool_use: { web_search_requests: 0 },
          service_tier: 'standard',
        },
        permission_denials: [],
      }) + '\n'
    );
  },
  /** stream-json: init, an assistant message, a rate_limit_event, then the result line. */
  stream(session: string, cost: number): string {
    return [
      JSON.stringify({
        type: 'system',
        subtype: 'init',
        session_id: session,
        tools: ['Bash', 'Edit'],
        model: 'claude-sonnet',
      }),
      JSON.stringify({
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
        session_id: session,
      }),
      JSON.stringify({
        type: 'rate_limit_event',
        rate_limit_info: { status: 'allowed', resetsAt: 1774447200, rateLimitType: 'five_hour' },
      }),
      claude.result({ session, cost }).trim(),
      '',
    ].join('\n');
  },
};

export const codex = {
  run(o: { thread: string; input: number; cached: number; output: number; text?: string }): string {
    return (
      [
        { type: 'thread.started', thread_id: o.thread },
        { type: 'turn.started' },
        {
          type: 'item.completed',
          item: { id: 'item_0', type: 'reasoning', text: 'Looking at the repository' },
        },
        { type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: o.text ?? 'Done.' } },
        {
          type: 'turn.completed',
          usage: { input_tokens: o.input, cached_input_tokens: o.cached, output_tokens: o.output },
        },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n'
    );
  },
  failed(thread: string, message: string): string {
    return (
      [
        { type: 'thread.started', thread_id: thread },
        { type: 'turn.started' },
        { type: 'error', message },
        { type: 'turn.failed', error: { message } },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n'
    );
  },
};

export interface Turn {
  stdout?: string;
  exit?: number;
  append?: { file: string; text: string };
  bigOutputBytes?: number;
  hang?: boolean;
}

export interface Call {
  tool: string;
  argv: string[];
  stdin: string;
  cwd: string;
  env: Record<string, string>;
}

const FAKE = resolve(__dirname, '../fixtures/agents/fake-agent.mjs');

/** A bin directory holding fake `claude` and `codex` and the scenario they play. */
export function installFakes(
  dir: string,
  turns: Turn[],
): { bin: string; calls(): Call[]; setTurns(t: Turn[]): void } {
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
