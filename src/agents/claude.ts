import type { AgentConfig } from '../config/schema.js';
import { classifyText, parseResetTime } from './limits.js';
import { nonNegative, tail, type TurnEnding } from './ending.js';

/**
 * Claude Code, headless: `claude -p --output-format json` with the prompt on stdin (never in argv:
 * the brief holds third-party text). The final `result` object carries `total_cost_usd`, `usage`,
 * `num_turns`, `session_id`, `is_error` and `subtype`; `--output-format stream-json` prints the same
 * object as its last JSON line, and `--verbose` with `json` prints an array that ends with it.
 */
export interface ClaudeTurn {
  /** A correction turn resumes this session (`--resume <id>`). */
  resume?: string;
  /** The reviewer: no tool that writes. */
  readOnly?: boolean;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function claudeArgv(
  agent: Pick<AgentConfig, 'bin' | 'model' | 'args'> & { maxTurns?: number },
  turn: ClaudeTurn = {},
): string[] {
  const argv = [agent.bin ?? 'claude', '-p', '--output-format', 'json'];
  if (agent.model) argv.push('--model', agent.model);
  if (agent.maxTurns) argv.push('--max-turns', String(agent.maxTurns));
  if (turn.readOnly) {
    argv.push(
      '--permission-mode',
      'plan',
      '--disallowedTools',
      'Bash,Edit,MultiEdit,Write,NotebookEdit,WebFetch',
    );
  } else if (!agent.args.some((a) => a === '--permission-mode' || a === '--dangerously-skip-permissions')) {
    argv.push('--permission-mode', 'acceptEdits');
  }
  if (turn.resume) {
    if (!SESSION_ID.test(turn.resume))
      throw new TypeError(`claude: session id ${JSON.stringify(turn.resume)} is not an id`);
    argv.push('--resume', turn.resume);
  }
  argv.push(...agent.args);
  return argv;
}

interface ClaudeResult {
  type: 'result';
  subtype?: string;
  is_error?: boolean;
  result?: string;
  session_id?: string;
  total_cost_usd?: number;
  num_turns?: number;
  usage?: Record<string, unknown>;
}

/** The final result object, wherever the output format put it; undefined when there is none. */
export function findClaudeResult(stdout: string): ClaudeResult | undefined {
  const isResult = (v: unknown): v is ClaudeResult =>
    !!v && typeof v === 'object' && (v as { type?: unknown }).type === 'result';
  const whole = stdout.trim();
  try {
    const v: unknown = JSON.parse(whole);
    if (isResult(v)) return v;
    if (Array.isArray(v)) return [...v].reverse().find(isResult);
  } catch {
    /* stream-json, or not JSON at all */
  }
  const lines = whole.split('\n');
  for (let i = lines.length - 1; i >= 0 && i >= lines.length - 200; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith('{')) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (isResult(v)) return v;
    } catch {
      /* a truncated line */
    }
  }
  return undefined;
}

export function claudeEnding(
  run: { exitCode: number | null; stdout: string; stderr: string },
  now = new Date(),
): TurnEnding {
  const r = findClaudeResult(run.stdout);
  if (!r) return proseEnding('claude', run, now);
  const u = r.usage ?? {};
  const input = nonNegative(u.input_tokens) ?? 0;
  const cacheRead = nonNegative(u.cache_read_input_tokens) ?? 0;
  const cacheCreation = nonNegative(u.cache_creation_input_tokens) ?? 0;
  const output = nonNegative(u.output_tokens);
  const cost = nonNegative(r.total_cost_usd);
  const usage = {
    inputTokens: input + cacheRead + cacheCreation,
    ...(output !== undefined ? { outputTokens: output } : {}),
    ...(cacheRead ? { cachedInputTokens: cacheRead } : {}),
    ...(cacheCreation ? { cacheCreationTokens: cacheCreation } : {}),
    ...(cost !== undefined ? { costUsd: cost } : {}),
  };
  const common = {
    ...(typeof r.session_id === 'string' && SESSION_ID.test(r.session_id) ? { sessionId: r.session_id } : {}),
    usage,
    ...(nonNegative(r.num_turns) !== undefined ? { numTurns: r.num_turns } : {}),
  };
  const text = typeof r.result === 'string' ? r.result : '';
  // `subtype: success` with `is_error: true` and exit 0 is how a limit often arrives: is_error wins.
  // A short result that is nothing but a limit line is a limit too, whatever the flags say.
  const limitLine = text.trim().length < 300 && classifyText(text) === 'usage_limit';
  if (r.is_error === true || (r.subtype && r.subtype !== 'success') || run.exitCode !== 0 || limitLine) {
    const words = [text, r.subtype ?? '', run.stderr].join('\n');
    return { ...errorEnding('claude', words, now, r.subtype), ...common };
  }
  return { kind: 'succeeded', reason: `claude finished (${r.num_turns ?? '?'} turn(s))`, ...common };
}

/** An error ending from the tool's words: a limit, an overload, a credential problem, or a failure. */
export function errorEnding(tool: string, words: string, now: Date, subtype?: string): TurnEnding {
  const kind = classifyText(words);
  const detail = tail(words);
  if (kind === 'usage_limit') {
    const resetAt = parseResetTime(words, now);
    return {
      kind,
      reason: `${tool} reported a usage or credit limit${resetAt ? ` (resets ${resetAt.toISOString()})` : ''}`,
      detail,
      ...(resetAt ? { resetAt } : {}),
    };
  }
  if (kind === 'overloaded')
    return { kind, reason: `${tool} reported a rate limit or service overload (an interruption)`, detail };
  if (kind === 'could_not_start')
    return { kind, reason: `${tool} could not start: its credentials were refused`, detail };
  return {
    kind: 'failed',
    reason: `${tool} reported an error${subtype && subtype !== 'success' ? ` (${subtype})` : ''}: ${tail(words, 200).replace(/\s+/g, ' ')}`,
    detail,
  };
}

/** No result object: a prose line (a limit with exit 1), truncated JSON, or nothing at all. */
export function proseEnding(
  tool: string,
  run: { exitCode: number | null; stdout: string; stderr: string },
  now: Date,
): TurnEnding {
  const words = `${run.stdout}\n${run.stderr}`;
  const e = errorEnding(tool, words, now);
  if (e.kind !== 'failed') return e;
  return {
    kind: 'failed',
    reason: `${tool} exited ${run.exitCode ?? 'on a signal'} without a result object: ${tail(words, 200).replace(/\s+/g, ' ') || '(no output)'}`,
    detail: tail(words),
  };
}
