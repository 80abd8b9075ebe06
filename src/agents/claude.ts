import type { AgentConfig } from '../config/schema.js';
import { isLimitNotice, type LimitKind } from './limits.js';
import {
  classifyTiers,
  endingBeforeResult,
  errorEnding,
  nonNegative,
  type Printed,
  type SessionMeter,
  type TurnEnding,
} from './ending.js';
import { joinPrinted, lastArrayObject, MAX_LINE, scanText } from './output.js';

/**
 * Claude Code, headless: `claude -p --output-format json` with the prompt on stdin (never in argv:
 * the brief holds third-party text). It prints one `result` object and exits 0, or 1 when the turn
 * ended in an error. The object carries `total_cost_usd`, `usage`, `modelUsage`, `num_turns`,
 * `session_id`, `is_error`, `subtype` (`success`, or `error_max_turns`, `error_during_execution`,
 * `error_max_budget_usd`, … with an `errors` list instead of `result`), `permission_denials` and,
 * after an API error, `api_error_status` / `api_error_type` / `api_error`. An API error (a limit, an
 * overload, refused credentials) is `subtype: success` with `is_error: true` and its message in
 * `result`. `--output-format stream-json --verbose` prints the same object as its last line, after
 * `system`, `assistant`, `user` and `rate_limit_event` lines; `--verbose` with `json` prints one
 * array that ends with it; while the API does not answer, stream-json prints a `system` line of
 * subtype `api_retry` per attempt (`attempt`, `max_retries`, `error_status`, `error`). A resume of an
 * unknown session prints only `No conversation found with session ID: …` on stderr, exit 1.
 */
export interface ClaudeTurn {
  /** A correction turn resumes this session (`--resume <id>`). */
  resume?: string;
  /** The reviewer: no tool that writes. */
  readOnly?: boolean;
  /**
   * Commands the agent may run without asking (`--allowedTools Bash(<command>:*)`): inside the
   * sandbox the verification command is safe to grant, and headless `acceptEdits` refuses it otherwise,
   * so the student could not check its own work.
   */
  allowCommands?: ReadonlyArray<readonly string[]>;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function claudeArgv(
  agent: Pick<AgentConfig, 'bin' | 'model' | 'args'> & { maxTurns?: number; maxBudgetUsd?: number },
  turn: ClaudeTurn = {},
): string[] {
  const argv = [agent.bin ?? 'claude', '-p', '--output-format', 'json'];
  if (agent.model) argv.push('--model', agent.model);
  if (agent.maxTurns) argv.push('--max-turns', String(agent.maxTurns));
  // What is left of the crew's budget (`budgeted` in ./session.ts): the CLI stops itself there
  // (`error_max_budget_usd`). Per process: a resumed session's earlier cost does not count.
  if (agent.maxBudgetUsd !== undefined && Number.isFinite(agent.maxBudgetUsd) && agent.maxBudgetUsd > 0)
    argv.push('--max-budget-usd', String(Math.max(0.000001, Math.floor(agent.maxBudgetUsd * 1e6) / 1e6)));
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
  if (!turn.readOnly && turn.allowCommands?.length)
    argv.push('--allowedTools', ...turn.allowCommands.map((c) => `Bash(${c.join(' ')}:*)`));
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
  /** Error subtypes (`error_max_turns`, `error_during_execution`, …) carry these instead of a result. */
  errors?: unknown[];
  session_id?: string;
  total_cost_usd?: number;
  /** Older releases. */
  cost_usd?: number;
  total_cost?: number;
  num_turns?: number;
  usage?: Record<string, unknown>;
  modelUsage?: Record<string, Record<string, unknown>>;
  permission_denials?: { tool_name?: unknown }[];
  api_error_status?: number | null;
  api_error_type?: string;
  api_error?: string;
}

/** The `type`s of the lines Claude Code prints in its JSON output formats. */
const CLAUDE_TYPES = new Set([
  'result',
  'system',
  'assistant',
  'user',
  'rate_limit_event',
  'stream_event',
  'tool_progress',
  'auth_status',
]);
/** What the model did: a message, a tool result, a result. */
const CLAUDE_WORK = new Set(['assistant', 'user', 'stream_event', 'result']);
/** The beginning of a line of Claude Code's that was cut short. */
const CLAUDE_FRAGMENT = /^\[?\{.*"(?:session_id|type)"\s*:\s*"/;

/** What a Claude Code turn printed: the last result object, and a rejected rate-limit event's reset. */
export class ClaudeReader {
  result?: ClaudeResult;
  resetAt?: Date;
  /** Lines of Claude Code's output formats. */
  known = 0;
  /** Lines that start like one of them but do not parse (cut short). */
  fragments = 0;
  /** Lines showing the model at work: messages, tool results, a result. */
  work = 0;
  /** `api_retry` notices, in order. */
  notices: string[] = [];

  readonly line = (text: string, cut: boolean): boolean => {
    if (!cut && text[0] !== '{' && text[0] !== '[') return false;
    let v: unknown;
    if (cut) {
      // Only the end of an over-long `--verbose` array was kept: its last element is the result.
      v = lastArrayObject(text);
      if (v === undefined) {
        if (/"session_id"\s*:/.test(text)) this.fragments++;
        return false;
      }
    } else {
      try {
        v = JSON.parse(text);
      } catch {
        // A truncated line, or prose that starts with a bracket.
        if (CLAUDE_FRAGMENT.test(text)) this.fragments++;
        return false;
      }
    }
    for (const x of Array.isArray(v) ? v : [v]) this.take(x);
    return true;
  };

  private take(v: unknown): void {
    if (!v || typeof v !== 'object') return;
    const o = v as {
      type?: unknown;
      subtype?: unknown;
      session_id?: unknown;
      rate_limit_info?: { status?: unknown; resetsAt?: unknown };
      attempt?: unknown;
      max_retries?: unknown;
      error_status?: unknown;
      error?: unknown;
    };
    if (typeof o.type !== 'string') return;
    if (CLAUDE_TYPES.has(o.type) || typeof o.session_id === 'string') this.known++;
    if (CLAUDE_WORK.has(o.type)) this.work++;
    if (o.type === 'result') this.result = v as ClaudeResult;
    else if (o.type === 'rate_limit_event' && o.rate_limit_info?.status === 'rejected') {
      const at = nonNegative(o.rate_limit_info.resetsAt);
      if (at) this.resetAt = new Date(at * 1000);
    } else if (o.type === 'system' && o.subtype === 'api_retry') {
      const status = typeof o.error_status === 'number' ? `HTTP ${o.error_status}` : 'no response';
      const error = typeof o.error === 'string' ? o.error.slice(0, 200) : 'error';
      this.notices.push(
        `API retry ${String(o.attempt ?? '?')}/${String(o.max_retries ?? '?')}: ${error} (${status})`,
      );
      if (this.notices.length > 20) this.notices.shift();
    }
  }
}

/** The final result object, wherever the output format put it; undefined when there is none. */
export function findClaudeResult(stdout: string): ClaudeResult | undefined {
  const r = new ClaudeReader();
  const whole = stdout.trim();
  // A pretty-printed document (not what the CLI prints, but what a wrapper may).
  if (whole.length < MAX_LINE && whole.includes('\n') && (whole[0] === '{' || whole[0] === '['))
    r.line(whole.replace(/\n\s*/g, ' '), false);
  if (!r.result) scanText(stdout, r.line);
  return r.result;
}

/** Context a turn's ending needs besides the output: the session it resumed and its meter. */
export interface TurnContext {
  resumed?: string;
  previous?: SessionMeter;
  /** The program as configured (`agents[].bin`), named when it printed nothing the tool prints. */
  bin?: string;
  /** The crew timeout killed the process after this many milliseconds. */
  killedAfterMs?: number;
}

export function claudeEnding(
  run: { exitCode: number | null; stdout: string; stderr: string },
  now = new Date(),
  ctx: TurnContext = {},
): TurnEnding {
  const reader = new ClaudeReader();
  const out = scanText(run.stdout, reader.line);
  const err = scanText(run.stderr, reader.line);
  return claudeVerdict(reader, run.exitCode, joinPrinted(out, err), now, ctx);
}

const sumTokens = (u: Record<string, unknown>, keys: readonly string[]) =>
  keys.reduce((n, k) => n + (nonNegative(u[k]) ?? 0), 0);

export function claudeVerdict(
  reader: ClaudeReader,
  exitCode: number | null,
  out: Printed,
  now: Date,
  ctx: TurnContext = {},
): TurnEnding {
  const seen = {
    worked: reader.work > 0,
    notices: reader.notices,
    recognised: !!(reader.known || reader.fragments),
    result: !!reader.result,
  };
  const early = endingBeforeResult('claude', 'claude-code', seen, { exitCode, printed: out, now }, ctx);
  if (early) return early;
  const r = reader.result!; // there is one: endingBeforeResult decided otherwise
  const common = claudeUsage(r, ctx);
  const text = typeof r.result === 'string' ? r.result : '';
  // `subtype: success` with `is_error: true` and exit 1 is how every API error arrives (a limit, an
  // overload, refused credentials): is_error wins. A short result that is nothing but a limit line
  // is a limit too, whatever the flags say.
  if (r.is_error === true || (r.subtype && r.subtype !== 'success') || exitCode !== 0 || isLimitNotice(text))
    return { ...claudeErrorEnding(r, text, reader, out, now, ctx), ...common };
  const denied = (Array.isArray(r.permission_denials) ? r.permission_denials : [])
    .map((d) => (typeof d?.tool_name === 'string' ? d.tool_name : '?'))
    .slice(0, 20);
  return {
    kind: 'succeeded',
    reason:
      `claude finished (${r.num_turns ?? '?'} turn(s))` +
      (denied.length
        ? `; ${denied.length} tool call(s) were denied permission (${[...new Set(denied)].join(', ')}): allow them with --allowedTools in agents[].args`
        : ''),
    ...common,
  };
}

/** The session, usage, cost and turns a result reports, and the session meter the next turn reads. */
function claudeUsage(r: ClaudeResult, ctx: TurnContext) {
  const u = r.usage ?? {};
  const input = nonNegative(u.input_tokens) ?? 0;
  const cacheRead = nonNegative(u.cache_read_input_tokens) ?? 0;
  const cacheCreation = nonNegative(u.cache_creation_input_tokens) ?? 0;
  const output = nonNegative(u.output_tokens);
  const session =
    typeof r.session_id === 'string' && SESSION_ID.test(r.session_id) ? r.session_id : undefined;
  const printed = nonNegative(r.total_cost_usd) ?? nonNegative(r.cost_usd) ?? nonNegative(r.total_cost);
  const models = r.modelUsage && typeof r.modelUsage === 'object' ? Object.values(r.modelUsage) : undefined;
  const modelTokens = models?.reduce(
    (n, m) =>
      n +
      sumTokens(m ?? {}, ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens']),
    0,
  );
  const own = input + cacheRead + cacheCreation + (output ?? 0);
  const prev = ctx.previous;
  // A resumed session whose printed totals hold the earlier turns as well (current releases): the
  // turn costs the difference. Per-process totals (older releases) are the turn's own.
  const cumulative =
    !!session &&
    prev?.session === session &&
    printed !== undefined &&
    prev.costUsd !== undefined &&
    modelTokens !== undefined &&
    prev.modelTokens !== undefined &&
    printed >= prev.costUsd &&
    modelTokens >= prev.modelTokens + own;
  const cost =
    printed === undefined
      ? undefined
      : cumulative
        ? Math.round((printed - prev!.costUsd!) * 1e6) / 1e6
        : printed;
  const usage = {
    inputTokens: input + cacheRead + cacheCreation,
    outputTokens: output,
    ...(cacheRead ? { cachedInputTokens: cacheRead } : {}),
    ...(cacheCreation ? { cacheCreationTokens: cacheCreation } : {}),
    costUsd: cost,
  };
  return {
    ...(session ? { sessionId: session } : {}),
    usage,
    ...(nonNegative(r.num_turns) !== undefined ? { numTurns: r.num_turns } : {}),
    ...(session
      ? {
          meter: {
            session,
            costUsd: printed,
            modelTokens,
          },
        }
      : {}),
  };
}

/** A result that is an error (or nothing but a limit line): its kind, from the envelope first. */
function claudeErrorEnding(
  r: ClaudeResult,
  text: string,
  reader: ClaudeReader,
  out: Printed,
  now: Date,
  ctx: TurnContext,
): TurnEnding {
  const prose = out.prose;
  const errors = Array.isArray(r.errors) ? r.errors.map(String).join('\n') : '';
  const decisive = [text, errors].filter(Boolean).join('\n');
  // The CLI's API-error envelope: `is_error` on a `success` subtype (how every API error arrives)
  // or with the `api_error_*` fields. Its kind wins over a limit line in a result that is not an
  // error (a model's answer) or in prose; whom a limit pauses the key proxy's record decides
  // (TurnEnding.toolSignal), since the envelope too can be written from inside the sandbox.
  const envelope =
    r.is_error === true && (apiErrorFields(r) || r.subtype === undefined || r.subtype === 'success');
  const fromEnvelope = envelope
    ? (apiKind(r, 'usage_limit') ?? classifyTiers([decisive]) ?? apiKind(r))
    : undefined;
  const kind =
    fromEnvelope ??
    apiKind(r, 'usage_limit') ??
    classifyTiers([decisive]) ??
    apiKind(r) ??
    classifyTiers([prose]);
  const words = [decisive, r.subtype && r.subtype !== 'success' ? r.subtype : '', prose]
    .filter(Boolean)
    .join('\n');
  const ending = errorEnding('claude', kind, words, now, {
    decisive,
    subtype: r.subtype,
    resumed: ctx.resumed,
    ...(reader.resetAt ? { resetAt: reader.resetAt } : {}),
    ...(fromEnvelope ? { toolSignal: true } : {}),
  });
  // Stopped by the crew budget the school passed as --max-budget-usd: said with the budget's name.
  if (r.subtype === 'error_max_budget_usd')
    ending.reason = `claude stopped at its --max-budget-usd (what was left of dispatch.crewBudgetUsd): ${ending.reason}`;
  return ending;
}

/** The result carries the API error fields current releases print with every API error. */
function apiErrorFields(r: ClaudeResult): boolean {
  return (
    typeof r.api_error_status === 'number' ||
    typeof r.api_error_type === 'string' ||
    typeof r.api_error === 'string'
  );
}

/** What the API error fields of a result say (current releases print them with every API error). */
function apiKind(r: ClaudeResult, only?: LimitKind): LimitKind | undefined {
  const status = typeof r.api_error_status === 'number' ? r.api_error_status : undefined;
  const type = r.api_error_type;
  if (r.api_error === 'usage_limit_reached' || type === 'billing_error') return 'usage_limit';
  if (only) return undefined;
  if (
    status === 401 ||
    status === 403 ||
    type === 'authentication_error' ||
    type === 'permission_error' ||
    r.api_error === 'connection_failed'
  )
    return 'could_not_start';
  if (
    status === 429 ||
    (status !== undefined && status >= 500) ||
    type === 'rate_limit_error' ||
    type === 'overloaded_error' ||
    type === 'api_error'
  )
    return 'overloaded';
  return undefined;
}
