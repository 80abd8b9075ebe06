import type { AgentConfig } from '../config/schema.js';
import {
  classifyTiers,
  errorEnding,
  nonNegative,
  endingBeforeResult,
  priceTokens,
  tail,
  type CodexTokens,
  type Printed,
  type TurnEnding,
} from './ending.js';
import type { TurnContext } from './claude.js';
import { joinPrinted, scanText } from './output.js';

/**
 * Codex, headless: `codex exec --json … -` (the prompt on stdin). It prints JSONL events on stdout
 * (warnings and logs go to stderr): `thread.started` (`thread_id`), `turn.started`, `item.started` /
 * `item.updated` / `item.completed` (`agent_message`, `reasoning`, `command_execution`,
 * `file_change`, `mcp_tool_call`, `web_search`, `todo_list`, and `error` items, which are warnings;
 * a `file_change` has `changes` and a `status`, `failed` when the patch did not apply),
 * `turn.completed` (`usage`: `input_tokens`, `cached_input_tokens`, `cache_write_input_tokens`,
 * `output_tokens`, `reasoning_output_tokens`; cached input and cache writes are part of input,
 * reasoning part of output), `turn.failed` (`error.message`) and `error` (`message`;
 * `Reconnecting… n/m (…)` is a retry notice). It exits 1 when the turn failed. While its API cannot
 * be reached it prints retry notices and no turn's end until something kills it.
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

/** `-c` overrides that keep a sandboxed codex (0.171) off the network but for its model. */
const QUIET: ReadonlyArray<readonly [string, string]> = [
  ['analytics.enabled', 'false'],
  ['features.plugins', 'false'],
];

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
  // Inside the school's sandbox the traffic besides the model's (analytics to ab.chatgpt.com, the
  // plugin catalogue on github.com) would only be refused connections, an alert on every crew.
  if (turn.outerSandbox)
    for (const [key, value] of QUIET)
      if (!agent.args.some((a) => a.replace(/\s/g, '').startsWith(`${key}=`)))
        argv.push('-c', `${key}=${value}`);
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
  item?: { type?: unknown; text?: unknown; status?: unknown; changes?: unknown };
  /** The event shape of releases before `thread.*` / `turn.*` events: `{"id":…,"msg":{"type":…}}`. */
  msg?: { type?: unknown; message?: unknown };
}

const KEEP = 20;
const keep = (list: string[], s: string) => {
  list.push(s.length > 4096 ? `${s.slice(0, 4096)}…` : s);
  if (list.length > KEEP) list.shift();
};

/** Codex's log line for a patch that applied nothing. */
const PATCH_FAILED =
  /\bERROR codex_core::tools::router: error=(?:apply_patch verification failed|patch rejected)\b/;

/** The event types of `codex exec --json`. */
const CODEX_EVENT = /^(?:(?:thread|turn|item)\.[a-z_]+|error)$/;
/** The beginning of a codex event that was cut short. */
const CODEX_FRAGMENT = /^\{"(?:type"\s*:\s*"(?:thread|turn|item)\.|id"\s*:\s*"[^"]*"\s*,\s*"msg")/;

/** What a codex turn printed, read event by event. */
export class CodexReader {
  threadId?: string;
  completed = 0;
  /** The last `turn.completed` usage, as printed. */
  usage?: CodexTokens;
  failed: string[] = [];
  errors: string[] = [];
  notices: string[] = [];
  /** Every `error` event's message, in order (retry notices and errors alike). */
  said: string[] = [];
  lastMessage?: string;
  /** JSON lines of any shape. */
  events = 0;
  /** Events of codex's formats, current or legacy. */
  known = 0;
  /** Lines that start like a codex event but do not parse (cut short). */
  fragments = 0;
  /** Events showing the model at work: items other than warnings, a turn's end. */
  work = 0;
  legacy = 0;
  /** `file_change` items: the paths of those that failed, and how many applied. */
  writes = { failed: [] as string[], failedCount: 0, applied: 0 };

  readonly line = (text: string, cut: boolean): boolean => {
    if (!cut && !text.startsWith('{')) this.logLine(text);
    if (cut || !text.startsWith('{')) return false;
    let e: CodexEvent;
    try {
      e = JSON.parse(text) as CodexEvent;
    } catch {
      if (CODEX_FRAGMENT.test(text)) this.fragments++;
      return false;
    }
    if (!e || typeof e !== 'object') return false;
    this.events++;
    if (typeof e.type === 'string' && CODEX_EVENT.test(e.type)) this.known++;
    if (
      (typeof e.type === 'string' && e.type.startsWith('item.') && e.item?.type !== 'error') ||
      e.type === 'turn.completed' ||
      e.type === 'turn.failed'
    )
      this.work++;
    switch (e.type) {
      case 'thread.started':
        if (typeof e.thread_id === 'string' && THREAD_ID.test(e.thread_id)) this.threadId = e.thread_id;
        break;
      case 'turn.completed': {
        this.completed++;
        const cacheWrite = nonNegative(e.usage?.cache_write_input_tokens);
        const reasoning = nonNegative(e.usage?.reasoning_output_tokens);
        this.usage = {
          input: nonNegative(e.usage?.input_tokens) ?? 0,
          cached: nonNegative(e.usage?.cached_input_tokens) ?? 0,
          output: nonNegative(e.usage?.output_tokens) ?? 0,
          cacheWrite,
          reasoning,
        };
        break;
      }
      case 'turn.failed':
        keep(this.failed, String(e.error?.message ?? 'turn failed'));
        break;
      case 'error': {
        const m = String(e.message ?? 'error');
        keep(/^Reconnecting\b/i.test(m) ? this.notices : this.errors, m);
        keep(this.said, m);
        break;
      }
      case 'item.completed':
        if (e.item?.type === 'agent_message' && typeof e.item.text === 'string')
          this.lastMessage = e.item.text;
        else if (e.item?.type === 'file_change') this.fileChange(e.item);
        break;
      default:
        if (e.type === undefined && e.msg && typeof e.msg === 'object') {
          this.legacy++;
          this.known++;
          if (e.msg.type === 'error' || e.msg.type === 'stream_error')
            keep(this.errors, String(e.msg.message));
        }
    }
    return true;
  };

  /**
   * Codex 0.171 prints a patch that did not apply, or that its approval settings rejected, only as a
   * log line on stderr (`ERROR codex_core::tools::router: error=apply_patch verification failed: …
   * in <path>:`, `error=patch rejected: …`), with no `file_change` item: a failed write all the same.
   * The line stays prose for the reason.
   */
  private logLine(text: string): void {
    const m = PATCH_FAILED.exec(text);
    if (!m) return;
    this.writes.failedCount++;
    const path = /\bin (\/\S+?):?$/.exec(text)?.[1];
    if (path && this.writes.failed.length < 20 && !this.writes.failed.includes(path))
      this.writes.failed.push(path.slice(0, 300));
  }

  private fileChange(item: NonNullable<CodexEvent['item']>): void {
    // `failed` (and `declined`, an approval refused) applied nothing; any other status did.
    if (item.status !== 'failed' && item.status !== 'declined') {
      this.writes.applied++;
      return;
    }
    this.writes.failedCount++;
    for (const c of Array.isArray(item.changes) ? item.changes : []) {
      const path = (c as { path?: unknown } | null)?.path;
      if (typeof path === 'string' && this.writes.failed.length < 20 && !this.writes.failed.includes(path))
        this.writes.failed.push(path.slice(0, 300));
    }
  }
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
  const seen = {
    worked: r.work > 0,
    notices: r.said,
    recognised: !!(r.known || r.fragments),
    result: !!r.known,
  };
  const early = endingBeforeResult('codex', 'codex', seen, { exitCode, printed: out, now }, ctx);
  if (early) return early;
  if (r.legacy && !r.threadId && !r.completed && !r.failed.length) return legacyEnding(r, out, now);
  const common = codexUsage(agent, r, ctx);
  // An `error` event before a completed turn can be a notice the tool recovered from (a reconnect);
  // only a failed turn, a non-zero exit or no completed turn is an error ending.
  if (r.failed.length || exitCode !== 0 || r.completed === 0)
    return { ...codexErrorEnding(r, exitCode, out, now, ctx), ...common };
  const moved = ctx.resumed && r.threadId && r.threadId !== ctx.resumed;
  // Every file change failed and none applied: the turn may have changed nothing. The worktree
  // settles it (`settleWrites`); the reader only says so.
  const failedWrites =
    r.writes.failedCount && !r.writes.applied
      ? { count: r.writes.failedCount, paths: r.writes.failed }
      : undefined;
  return {
    kind: 'succeeded',
    reason:
      `codex finished (${r.completed} turn(s))` +
      (moved ? `; it started thread ${r.threadId} instead of resuming ${ctx.resumed}` : '') +
      (failedWrites ? `; all ${failedWrites.count} of its file change(s) failed` : ''),
    ...common,
    ...(failedWrites
      ? {
          failedWrites,
          detail: tail(
            [`failed file changes: ${failedWrites.paths.join(', ') || '?'}`, r.lastMessage ?? '']
              .filter(Boolean)
              .join('\n'),
          ),
        }
      : {}),
  };
}

/** Events of an older release (no thread, no completed or failed turn): a set-up problem unless they name a limit. */
function legacyEnding(r: CodexReader, out: Printed, now: Date): TurnEnding {
  const words = [...r.errors, out.prose].join('\n');
  const kind = classifyTiers([words]);
  if (kind && kind !== 'could_not_start') return errorEnding('codex', kind, words, now);
  return {
    kind: 'could_not_start',
    reason:
      'codex printed the event format of an older release (no thread.started / turn.completed events); install a current @openai/codex on this runner',
    detail: tail(words.trim() ? words : out.tail),
  };
}

/** The turn's tokens and cost (the thread's running total less the previous turn's), and the meter. */
function codexUsage(agent: Pick<AgentConfig, 'pricing'>, r: CodexReader, ctx: TurnContext) {
  const printed: CodexTokens = r.usage ?? { input: 0, cached: 0, output: 0 };
  const prev = ctx.previous?.tokens && ctx.previous.session === r.threadId ? ctx.previous.tokens : undefined;
  // The thread's running total minus what it had after the previous turn. A total below the previous
  // one (a release that does not carry it over) is the turn's own.
  const grew =
    !!prev && printed.input >= prev.input && printed.cached >= prev.cached && printed.output >= prev.output;
  const less = (a: number | undefined, b: number | undefined) => Math.max(0, (a ?? 0) - (b ?? 0));
  const t: CodexTokens = grew
    ? {
        input: printed.input - prev.input,
        cached: printed.cached - prev.cached,
        output: printed.output - prev.output,
        cacheWrite: less(printed.cacheWrite, prev.cacheWrite),
        reasoning: less(printed.reasoning, prev.reasoning),
      }
    : printed;
  const cost = priceTokens(
    { input: t.input, output: t.output, cachedInput: t.cached, cacheCreation: t.cacheWrite ?? 0 },
    agent.pricing,
  );
  const usage = {
    inputTokens: t.input,
    outputTokens: t.output,
    ...(t.cached ? { cachedInputTokens: t.cached } : {}),
    ...(t.cacheWrite ? { cacheCreationTokens: t.cacheWrite } : {}),
    ...(t.reasoning ? { reasoningOutputTokens: t.reasoning } : {}),
    costUsd: cost,
  };
  return {
    ...(r.threadId ? { sessionId: r.threadId } : {}),
    usage,
    ...(r.threadId && r.usage ? { meter: { session: r.threadId, tokens: r.usage } } : {}),
  };
}

/** A failed turn, a non-zero exit or no completed turn: the message that ended the turn decides. */
function codexErrorEnding(
  r: CodexReader,
  exitCode: number | null,
  out: Printed,
  now: Date,
  ctx: TurnContext,
): TurnEnding {
  // The retry notices and stderr before it only when there is none (a notice about a recovered
  // reconnect must not overrule it).
  const decisive = [...new Set([...r.failed, ...r.errors.slice(-3)])].join('\n');
  const around = [...r.notices.slice(-3), out.prose].filter(Boolean).join('\n');
  if (!decisive.trim() && !around.trim())
    return {
      kind: 'failed',
      reason: `codex exited ${exitCode ?? 'on a signal'} without a completed turn`,
      detail: tail(out.tail),
    };
  const words = [decisive, around].filter(Boolean).join('\n');
  // A kind read from codex's own `turn.failed` / `error` events takes its reset from them; one read
  // from stderr prose from the prose. Neither decides whom a limit pauses (TurnEnding.toolSignal).
  const fromEvents = decisive.trim() ? classifyTiers([decisive]) : undefined;
  return errorEnding('codex', decisive.trim() ? fromEvents : classifyTiers([around]), words, now, {
    resumed: ctx.resumed,
    decisive,
    ...(fromEvents ? { toolSignal: true } : {}),
  });
}
