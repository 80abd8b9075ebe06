import type { AgentConfig } from '../config/schema.js';
import { nonNegative, priceTokens, tail, type TurnEnding } from './ending.js';
import { errorEnding, proseEnding } from './claude.js';

/**
 * Codex, headless: `codex exec --json … -` (the prompt on stdin). It prints JSONL events:
 * `thread.started` (`thread_id`), `turn.started`, `item.*`, `turn.completed` (`usage`:
 * `input_tokens`, `cached_input_tokens`, `output_tokens`; cached input is part of input),
 * `turn.failed` (`error.message`) and `error` (`message`). A correction turn is
 * `codex exec resume <thread_id> --json … -`. Codex reports no cost: `agents[].pricing` prices it.
 */
export interface CodexTurn {
  resume?: string;
  readOnly?: boolean;
}

const THREAD_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function codexArgv(
  agent: Pick<AgentConfig, 'bin' | 'model' | 'args'>,
  turn: CodexTurn = {},
): string[] {
  const argv = [agent.bin ?? 'codex', 'exec'];
  if (turn.resume) {
    if (!THREAD_ID.test(turn.resume))
      throw new TypeError(`codex: thread id ${JSON.stringify(turn.resume)} is not an id`);
    argv.push('resume', turn.resume);
  }
  argv.push('--json', '--skip-git-repo-check');
  if (agent.model) argv.push('--model', agent.model);
  const sandboxed = agent.args.some((a) =>
    ['--sandbox', '-s', '--full-auto', '--dangerously-bypass-approvals-and-sandbox'].includes(a),
  );
  if (turn.readOnly) argv.push('--sandbox', 'read-only');
  else if (!sandboxed && !turn.resume) argv.push('--sandbox', 'workspace-write');
  argv.push(...agent.args, '-');
  return argv;
}

interface CodexEvent {
  type?: string;
  thread_id?: string;
  usage?: Record<string, unknown>;
  message?: string;
  error?: { message?: string };
  item?: { type?: string; text?: string };
}

export interface CodexRead {
  threadId?: string;
  completed: number;
  failed: string[];
  errors: string[];
  lastMessage?: string;
  input: number;
  cached: number;
  output: number;
  events: number;
}

export function readCodexEvents(stdout: string): CodexRead {
  const out: CodexRead = { completed: 0, failed: [], errors: [], input: 0, cached: 0, output: 0, events: 0 };
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('{')) continue;
    let e: CodexEvent;
    try {
      e = JSON.parse(line) as CodexEvent;
    } catch {
      continue; // a truncated line
    }
    out.events++;
    switch (e.type) {
      case 'thread.started':
        if (typeof e.thread_id === 'string' && THREAD_ID.test(e.thread_id)) out.threadId = e.thread_id;
        break;
      case 'turn.completed':
        out.completed++;
        out.input += nonNegative(e.usage?.input_tokens) ?? 0;
        out.cached += nonNegative(e.usage?.cached_input_tokens) ?? 0;
        out.output += nonNegative(e.usage?.output_tokens) ?? 0;
        break;
      case 'turn.failed':
        out.failed.push(String(e.error?.message ?? 'turn failed'));
        break;
      case 'error':
        out.errors.push(String(e.message ?? 'error'));
        break;
      case 'item.completed':
        if (e.item?.type === 'agent_message' && typeof e.item.text === 'string')
          out.lastMessage = e.item.text;
        break;
    }
  }
  return out;
}

export function codexEnding(
  agent: Pick<AgentConfig, 'pricing'>,
  run: { exitCode: number | null; stdout: string; stderr: string },
  now = new Date(),
): TurnEnding {
  const r = readCodexEvents(run.stdout);
  if (r.events === 0) return proseEnding('codex', run, now);
  const cost = priceTokens({ input: r.input, output: r.output, cachedInput: r.cached }, agent.pricing);
  const usage = {
    inputTokens: r.input,
    outputTokens: r.output,
    ...(r.cached ? { cachedInputTokens: r.cached } : {}),
    ...(cost !== undefined ? { costUsd: cost } : {}),
  };
  const common = { ...(r.threadId ? { sessionId: r.threadId } : {}), usage };
  // An `error` event before a completed turn can be a notice the tool recovered from (a reconnect);
  // only a failed turn, a non-zero exit or no completed turn is an error ending.
  if (r.failed.length || run.exitCode !== 0 || r.completed === 0) {
    const words = [...r.errors, ...r.failed, run.stderr].join('\n');
    if (!words.trim())
      return {
        kind: 'failed',
        reason: `codex exited ${run.exitCode ?? 'on a signal'} without a completed turn`,
        detail: tail(run.stdout),
        ...common,
      };
    return { ...errorEnding('codex', words, now), ...common };
  }
  return { kind: 'succeeded', reason: `codex finished (${r.completed} turn(s))`, ...common };
}
