import type { AgentConfig } from '../config/schema.js';
import {
  classifyTiers,
  errorEnding,
  nonNegative,
  priceTokens,
  proseEnding,
  tail,
  type Printed,
  type TurnEnding,
} from './ending.js';
import type { TurnContext } from './claude.js';
import { joinPrinted, scanText } from './output.js';

/**
 * Codex, headless: `codex exec --json … -` (the prompt on stdin). It prints JSONL events on stdout
 * (warnings and logs go to stderr): `thread.started` (`thread_id`), `turn.started`, `item.started` /
 * `item.updated` / `item.completed` (`agent_message`, `reasoning`, `command_execution`,
 * `file_change`, `mcp_tool_call`, `web_search`, `todo_list`, and `error` items, which are warnings),
 * `turn.completed` (`usage`: `input_tokens`, `cached_input_tokens`, `output_tokens`, …; cached input
 * is part of input, reasoning part of output), `turn.failed` (`error.message`) and `error`
 * (`message`; `Reconnecting… n/m (…)` is a retry notice). It exits 1 when the turn failed.
 *
 * `turn.completed` usage is the thread's running total, and a resumed thread starts from the total it
 * had, so a correction turn's usage is the difference to the previous turn's (see `SessionMeter`).
 *
 * A correction turn is `codex exec [options] resume <thread_id> -`. The exec options go before
 * `resume`: after it the subcommand refuses `--sandbox`, `-C`, `--add-dir`, `--profile`, `--color`…,
 * and without a sandbox option a resumed thread runs read-only. Codex reports no cost:
 * `agents[].pricing` prices it.
 */
export interface CodexTurn {
  resume?: string;
  readOnly?: boolean;
  /**
   * The turn runs inside the school's sandbox: Codex's own (Landlock/seccomp, or bubblewrap) would
   * nest inside it, so it is switched off with the flag Codex documents for externally sandboxed
   * environments. The school's sandbox keeps the worktree the only writable tree and the network to
   * the allow-list.
   */
  outerSandbox?: boolean;
}

const THREAD_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function codexArgv(
  agent: Pick<AgentConfig, 'bin' | 'model' | 'args'>,
  turn: CodexTurn = {},
): string[] {
  if (turn.resume && !THREAD_ID.test(turn.resume))
    throw new TypeError(`codex: thread id ${JSON.stringify(turn.resume)} is not an id`);
  const argv = [agent.bin ?? 'codex', 'exec', '--json', '--skip-git-repo-check'];
  if (agent.model) argv.push('--model', agent.model);
  const sandboxed = agent.args.some(
    (a) =>
      ['--sandbox', '-s', '--full-auto', '--dangerously-bypass-approvals-and-sandbox'].includes(a) ||
      a.startsWith('--sandbox='),
  );
  if (turn.outerSandbox && !sandboxed) argv.push('--dangerously-bypass-approvals-and-sandbox');
  else if (turn.readOnly) argv.push('--sandbox', 'read-only');
  else if (!sandboxed) argv.push('--sandbox', 'workspace-write');
  argv.push(...agent.args);
  if (turn.resume) argv.push('resume', turn.resume);
  argv.push('-');
  return argv;
}

interface CodexEvent {
  type?: unknown;
  thread_id?: unknown;
  usage?: Record<string, unknown>;
  message?: unknown;
  error?: { message?: unknown };
  item?: { type?: unknown; text?: unknown };
  /** The event shape of releases before `thread.*` / `turn.*` events: `{"id":…,"msg":{"type":…}}`. */
  msg?: { type?: unknown; message?: unknown };
}

const KEEP = 20;
const keep = (list: string[], s: string) => {
  list.push(s.length > 4096 ? `${s.slice(0, 4096)}…` : s);
  if (list.length > KEEP) list.shift();
};

/** What a codex turn printed, read event by event. */
export class CodexReader {
  threadId?: string;
  completed = 0;
  /** The last `turn.completed` usage, as printed. */
  usage?: { input: number; cached: number; output: number };
  failed: string[] = [];
  errors: string[] = [];
  notices: string[] = [];
  lastMessage?: string;
  events = 0;
  legacy = 0;

  readonly line = (text: string, cut: boolean): boolean => {
    if (cut || !text.startsWith('{')) return false;
    let e: CodexEvent;
    try {
      e = JSON.parse(text) as CodexEvent;
    } catch {
      return false;
    }
    if (!e || typeof e !== 'object') return false;
    this.events++;
    switch (e.type) {
      case 'thread.started':
        if (typeof e.thread_id === 'string' && THREAD_ID.test(e.thread_id)) this.threadId = e.thread_id;
        break;
      case 'turn.completed':
        this.completed++;
        this.usage = {
          input: nonNegative(e.usage?.input_tokens) ?? 0,
          cached: nonNegative(e.usage?.cached_input_tokens) ?? 0,
          output: nonNegative(e.usage?.output_tokens) ?? 0,
        };
        break;
      case 'turn.failed':
        keep(this.failed, String(e.error?.message ?? 'turn failed'));
        break;
      case 'error': {
        const m = String(e.message ?? 'error');
        keep(/^Reconnecting\b/i.test(m) ? this.notices : this.errors, m);
        break;
      }
      case 'item.completed':
        if (e.item?.type === 'agent_message' && typeof e.item.text === 'string')
          this.lastMessage = e.item.text;
        break;
      default:
        if (e.type === undefined && e.msg && typeof e.msg === 'object') {
          this.legacy++;
          if (e.msg.type === 'error' || e.msg.type === 'stream_error')
            keep(this.errors, String(e.msg.message));
        }
    }
    return true;
  };
}

export function readCodexEvents(stdout: string): CodexReader {
  const r = new CodexReader();
  scanText(stdout, r.line);
  return r;
}

export function codexEnding(
  agent: Pick<AgentConfig, 'pricing'>,
  run: { exitCode: number | null; stdout: string; stderr: string },
  now = new Date(),
  ctx: TurnContext = {},
): TurnEnding {
  const r = new CodexReader();
  const out = scanText(run.stdout, r.line);
  const err = scanText(run.stderr, r.line);
  return codexVerdict(agent, r, run.exitCode, joinPrinted(out, err), now, ctx);
}

export function codexVerdict(
  agent: Pick<AgentConfig, 'pricing'>,
  r: CodexReader,
  exitCode: number | null,
  out: Printed,
  now: Date,
  ctx: TurnContext = {},
): TurnEnding {
  if (r.events === 0) return proseEnding('codex', exitCode, out, now, ctx.resumed);
  const prose = out.prose;
  if (r.legacy && !r.threadId && !r.completed && !r.failed.length) {
    const words = [...r.errors, prose].join('\n');
    const kind = classifyTiers([words]);
    if (kind && kind !== 'could_not_start') return errorEnding('codex', kind, words, now);
    return {
      kind: 'could_not_start',
      reason:
        'codex printed the event format of an older release (no thread.started / turn.completed events); install a current @openai/codex on this runner',
      detail: tail(words.trim() ? words : out.tail),
    };
  }
  const printed = r.usage ?? { input: 0, cached: 0, output: 0 };
  const prev = ctx.previous?.tokens && ctx.previous.session === r.threadId ? ctx.previous.tokens : undefined;
  // The thread's running total minus what it had after the previous turn. A total below the previous
  // one (a release that does not carry it over) is the turn's own.
  const grew =
    !!prev && printed.input >= prev.input && printed.cached >= prev.cached && printed.output >= prev.output;
  const t = grew
    ? {
        input: printed.input - prev.input,
        cached: printed.cached - prev.cached,
        output: printed.output - prev.output,
      }
    : printed;
  const cost = priceTokens({ input: t.input, output: t.output, cachedInput: t.cached }, agent.pricing);
  const usage = {
    inputTokens: t.input,
    outputTokens: t.output,
    ...(t.cached ? { cachedInputTokens: t.cached } : {}),
    ...(cost !== undefined ? { costUsd: cost } : {}),
  };
  const common = {
    ...(r.threadId ? { sessionId: r.threadId } : {}),
    usage,
    ...(r.threadId && r.usage ? { meter: { session: r.threadId, tokens: r.usage } } : {}),
  };
  // An `error` event before a completed turn can be a notice the tool recovered from (a reconnect);
  // only a failed turn, a non-zero exit or no completed turn is an error ending.
  if (r.failed.length || exitCode !== 0 || r.completed === 0) {
    // The message that ended the turn decides; the retry notices and stderr before it only when
    // there is none (a notice about a recovered reconnect must not overrule it).
    const decisive = [...r.failed, ...r.errors.slice(-3)].join('\n');
    const around = [...r.notices.slice(-3), prose].filter(Boolean).join('\n');
    if (!decisive.trim() && !around.trim())
      return {
        kind: 'failed',
        reason: `codex exited ${exitCode ?? 'on a signal'} without a completed turn`,
        detail: tail(out.tail),
        ...common,
      };
    const words = [decisive, around].filter(Boolean).join('\n');
    return {
      ...errorEnding('codex', classifyTiers([decisive.trim() ? decisive : around]), words, now, {
        resumed: ctx.resumed,
      }),
      ...common,
    };
  }
  const moved = ctx.resumed && r.threadId && r.threadId !== ctx.resumed;
  return {
    kind: 'succeeded',
    reason:
      `codex finished (${r.completed} turn(s))` +
      (moved ? `; it started thread ${r.threadId} instead of resuming ${ctx.resumed}` : ''),
    ...common,
  };
}
