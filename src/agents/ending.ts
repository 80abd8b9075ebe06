import type { Pricing } from '../config/schema.js';
import type { Usage } from '../bookbag/schema.js';
import {
  classifyText,
  isConnectionTrouble,
  isRetryNotice,
  parseResetTime,
  sessionLost,
  type LimitKind,
} from './limits.js';

/**
 * How one agent turn ended, before verification. Every turn ends in exactly one of these, and
 * nothing a tool prints that is not recognised is ever a success:
 *  - `succeeded`: the tool finished its work without reporting an error;
 *  - `failed`: it reported an error, exited non-zero, printed its own format but no ending in it,
 *    or every file change it made failed;
 *  - `usage_limit`: a usage or credit limit: the school pauses launches when the crew's key proxy
 *    saw the API answer with a limit (until the reset the API named), else only the agent pauses,
 *    for at most `dispatch.agentPauseMaxMinutes` (a student's word is evidence about itself; the
 *    CLI's own envelope too, since a process inside the sandbox can write the CLI's output);
 *  - `overloaded`: a rate limit or a service overload (an interruption: retried later);
 *  - `timed_out`: the crew's timeout killed it;
 *  - `could_not_start`: missing binary, bad credentials, a plan without the tool, an API it never
 *    reached before the timeout, or a program that printed nothing the tool prints (an
 *    infrastructure alert).
 */
export type EndingKind =
  'succeeded' | 'failed' | 'usage_limit' | 'overloaded' | 'timed_out' | 'could_not_start';

export interface TurnEnding {
  kind: EndingKind;
  reason: string;
  /** The tool's own words (bounded, redacted later at the write seam) when it did not succeed. */
  detail?: string;
  resetAt?: Date;
  /**
   * The limit or overload was read from the CLI's own structured error (Claude Code's `is_error`
   * result with its `api_error_*` fields, a codex `turn.failed` / `error` event), not from prose: its
   * reset time is read from that error alone. It decides no pause's scope: the envelope arrives on
   * the CLI's standard output, which a process inside the sandbox can write too (`/proc/<pid>/fd/1`);
   * the API's own answer, recorded by the key proxy, does (src/sandbox/upstream-record.ts).
   */
  toolSignal?: true;
  /** The session the next correction turn resumes (claude session_id, codex thread_id). */
  sessionId?: string;
  usage?: Usage;
  /** claude-code: the agent's turns (num_turns). */
  numTurns?: number;
  /** The running totals the tool printed, which the next turn of the same session subtracts. */
  meter?: SessionMeter;
  /**
   * codex: the turn finished, but every file change it made failed (and none applied). Whether it
   * changed anything otherwise (a command that wrote a file) only the worktree tells: `settleWrites`.
   */
  failedWrites?: { count: number; paths: string[] };
}

/**
 * Running totals as a tool printed them for a session. Codex's `turn.completed` usage is the
 * thread's total since it began, also after `codex exec resume`; Claude Code's `total_cost_usd`
 * (with `modelUsage`) covers the whole session when resumed in current releases and only the process
 * in older ones, while its `usage` is always the process's own. A turn's usage is the difference.
 */
export interface SessionMeter {
  session: string;
  /** claude-code: `total_cost_usd` as printed. */
  costUsd?: number;
  /** claude-code: tokens summed over `modelUsage`. */
  modelTokens?: number;
  /** codex: the last `turn.completed` usage as printed. */
  tokens?: CodexTokens;
}

/** codex `turn.completed` usage: cached input and cache writes are part of input, reasoning of output. */
export interface CodexTokens {
  input: number;
  cached: number;
  output: number;
  cacheWrite?: number;
  reasoning?: number;
}

/** Tokens a tool reported, before pricing. `cachedInput` and `cacheCreation` are part of `input` (codex). */
export interface TokenCounts {
  input: number;
  output: number;
  cachedInput?: number;
  cacheRead?: number;
  cacheCreation?: number;
}

/**
 * Codex reports no cost: uncached input, cached input, cache writes and output priced per million
 * tokens. Cache writes without a price of their own (`cacheWritePerMTok`) are input like any other.
 */
export function priceTokens(t: TokenCounts, p: Pricing | undefined): number | undefined {
  if (!p) return undefined;
  const cached = Math.min(t.cachedInput ?? 0, t.input);
  const writes = Math.min(t.cacheCreation ?? 0, t.input - cached);
  const usd =
    ((t.input - cached - writes) * p.inputPerMTok +
      cached * p.cachedInputPerMTok +
      writes * (p.cacheWritePerMTok ?? p.inputPerMTok) +
      t.output * p.outputPerMTok) /
    1e6;
  return finiteRound(usd);
}

/**
 * `n` rounded to a millionth, and never past the largest finite number: token counts a tool (or a
 * student) reports can be as large as 1e308, whose price or sum is Infinity, which no ledger row,
 * bookbag or JSON file can hold (it would be written as null).
 */
export function finiteRound(n: number): number {
  if (Number.isNaN(n)) return Number.MAX_VALUE;
  const r = Math.round(n * 1e6) / 1e6;
  if (Number.isFinite(r)) return r;
  return Number.isFinite(n) ? n : n > 0 ? Number.MAX_VALUE : -Number.MAX_VALUE;
}

export function nonNegative(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** Sums turn usages; a field is present when any turn reported it. */
export function addUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (!a) return b;
  if (!b) return a;
  const out: Usage = {};
  for (const k of Object.keys({ ...a, ...b }) as (keyof Usage)[]) {
    const x = a[k];
    const y = b[k];
    if (x !== undefined || y !== undefined) out[k] = finiteRound((x ?? 0) + (y ?? 0));
  }
  return out;
}

export function tail(text: string, max = 2000): string {
  const t = text.trim();
  if (t.length <= max) return t;
  let from = t.length - max;
  // Never start inside a surrogate pair: half of one is a lone surrogate (N1.1).
  if (/[\udc00-\udfff]/.test(t[from] ?? '')) from++;
  return `…${t.slice(from)}`;
}

/**
 * The first kind the tiers' words name, most decisive tier first (the tool's error message before
 * the notices and stderr around it), so a retry notice cannot overrule the error that ended a turn.
 */
export function classifyTiers(tiers: readonly string[]): LimitKind | undefined {
  for (const t of tiers) {
    const kind = t.trim() ? classifyText(t) : undefined;
    if (kind) return kind;
  }
  return undefined;
}

/** An error ending of a known kind (or `failed`), keeping the tool's words for the operator. */
export function errorEnding(
  tool: string,
  kind: LimitKind | undefined,
  words: string,
  now: Date,
  o: {
    subtype?: string;
    resetAt?: Date;
    resumed?: string;
    /**
     * The tool's own error message, which the reason quotes; `words` adds the notices and stderr
     * around it (a warning printed after the error must not take its place in the reason).
     */
    decisive?: string;
    /** `kind` was read from the tool's structured error (`decisive`): see `TurnEnding.toolSignal`. */
    toolSignal?: boolean;
  } = {},
): TurnEnding {
  const detail = tail(words);
  const said = tail(o.decisive?.trim() ? o.decisive : words, 200).replace(/\s+/g, ' ');
  const signal = o.toolSignal ? { toolSignal: true as const } : {};
  if (kind === 'usage_limit') {
    // The school's own signal takes its reset time from the tool's error, not the words around it.
    const resetAt = o.resetAt ?? parseResetTime(o.toolSignal && o.decisive ? o.decisive : words, now);
    return {
      kind,
      reason: `${tool} reported a usage or credit limit${resetAt ? ` (resets ${resetAt.toISOString()})` : ''}`,
      detail,
      resetAt,
      ...signal,
    };
  }
  if (kind === 'overloaded')
    return {
      kind,
      reason: `${tool} reported a rate limit or service overload (an interruption)`,
      detail,
      ...signal,
    };
  if (kind === 'could_not_start')
    return {
      kind,
      reason:
        o.resumed && sessionLost(words)
          ? `${tool} could not resume session ${o.resumed}: it is not in the tool's session store on this runner (${said})`
          : `${tool} could not start: ${said}`,
      detail,
    };
  return {
    kind: 'failed',
    reason: `${tool} reported an error${o.subtype && o.subtype !== 'success' ? ` (${o.subtype})` : ''}: ${said || '(no words)'}`,
    detail,
  };
}

const oneLine = (text: string) => tail(text, 200).replace(/\s+/g, ' ');

/**
 * A program that printed not one line of the tool's output format — not the tool it is configured
 * as (a wrapper, a wrong `bin`), or a tool that could not run as the school started it. What it
 * printed decides when it names a limit or refused credentials; otherwise it is a set-up problem,
 * never a success and never the agent's failure.
 */
export function unrecognisedEnding(
  tool: string,
  o: { bin: string; kind: 'claude-code' | 'codex'; resumed?: string },
  exitCode: number | null,
  printed: Printed,
  now: Date,
): TurnEnding {
  const kind = classifyText(printed.prose);
  if (kind) {
    // The line that names it leads the reason (a usage text printed after an unknown option).
    const line = printed.prose.split('\n').find((l) => classifyText(l) === kind);
    return errorEnding(tool, kind, printed.prose, now, {
      resumed: o.resumed,
      decisive: line,
    });
  }
  const shown = printed.prose.trim() ? printed.prose : printed.tail;
  return {
    kind: 'could_not_start',
    reason: `\`${o.bin}\` printed nothing a ${o.kind} CLI prints (exit ${exitCode ?? 'on a signal'}): ${oneLine(shown) || '(no output)'}`,
    detail: tail(shown),
  };
}

/**
 * A turn the crew timeout killed. One that printed nothing but retry notices and connection errors —
 * no work, no answer, no completed turn — never reached its API: a set-up problem (a firewall, a
 * proxy, DNS), unless the notices say the API answered that it is overloaded. Anything else is the
 * agent's timeout.
 */
export function timedOutEnding(
  tool: string,
  timeoutMs: number,
  o: { worked: boolean; notices: readonly string[]; printed: Printed },
  now: Date,
): TurnEnding {
  const killed = `student exceeded its ${Math.round(timeoutMs / 1000)} s timeout; process group killed`;
  const proseNotices = o.printed.prose.split('\n').filter((l) => l.trim() && isRetryNotice(l));
  const last = o.notices.at(-1) ?? proseNotices.at(-1);
  const words = [...o.notices.slice(-5), ...proseNotices.slice(-5)].join('\n');
  if (o.worked || !last)
    return {
      kind: 'timed_out',
      reason: killed,
      ...(o.printed.tail.trim() ? { detail: tail(o.printed.tail) } : {}),
    };
  const still = `still retrying when the ${Math.round(timeoutMs / 1000)} s timeout killed it`;
  const kind = isConnectionTrouble(last) ? undefined : classifyText(last);
  if (kind) {
    const e = errorEnding(tool, kind, words, now);
    return { ...e, reason: `${e.reason}; ${still}` };
  }
  return {
    kind: 'could_not_start',
    reason: `${tool} could not reach its API: ${oneLine(last)} (${still})`,
    detail: tail(words),
  };
}

/**
 * A turn whose every file change failed (`failedWrites`), settled by whether the worktree changed
 * in that turn: when it did (a command wrote the files) it stands as the success it was and
 * verification decides; when it did not, or nobody looked (`undefined`), it is a failure.
 */
export function settleWrites(ending: TurnEnding, changed: boolean | undefined): TurnEnding {
  const w = ending.failedWrites;
  if (!w) return ending;
  const { failedWrites: _, ...rest } = ending;
  if (changed) return { ...rest, reason: `${ending.reason}; the worktree changed nonetheless` };
  const files = w.paths.length
    ? ` (${w.paths.slice(0, 10).join(', ')}${w.paths.length > 10 ? ', …' : ''})`
    : '';
  return {
    ...rest,
    kind: 'failed',
    reason: `the agent's writes all failed: ${w.count} file change(s)${files} failed, none applied, and ${changed === false ? 'the turn changed nothing' : 'by its events the turn changed nothing'}`,
  };
}

/** What a turn printed that no reader understood, and the end of everything it printed. */
export interface Printed {
  prose: string;
  tail: string;
}

/** No result a reader understood: the prose the tool printed says what happened, or nothing does. */
export function proseEnding(
  tool: string,
  exitCode: number | null,
  printed: Printed,
  now: Date,
  resumed?: string,
): TurnEnding {
  const kind = classifyText(printed.prose);
  if (kind) return errorEnding(tool, kind, printed.prose, now, { resumed });
  const shown = printed.prose.trim() ? printed.prose : printed.tail;
  return {
    kind: 'failed',
    reason: `${tool} exited ${exitCode ?? 'on a signal'} without a result it could read: ${tail(shown, 200).replace(/\s+/g, ' ') || '(no output)'}`,
    detail: tail(shown),
  };
}

/**
 * The endings decided before a tool's own result is read: killed by the crew timeout, printed
 * nothing of the tool's format (`recognised` false), or printed no result its reader understood
 * (its prose decides). Undefined: the result decides.
 */
export function endingBeforeResult(
  tool: 'claude' | 'codex',
  agentKind: 'claude-code' | 'codex',
  seen: { worked: boolean; notices: readonly string[]; recognised: boolean; result: boolean },
  o: { exitCode: number | null; printed: Printed; now: Date },
  ctx: { bin?: string; resumed?: string; killedAfterMs?: number },
): TurnEnding | undefined {
  const { exitCode, printed, now } = o;
  if (ctx.killedAfterMs !== undefined)
    return timedOutEnding(
      tool,
      ctx.killedAfterMs,
      { worked: seen.worked, notices: seen.notices, printed },
      now,
    );
  if (!seen.result && !seen.recognised) {
    const bin = { bin: ctx.bin ?? tool, kind: agentKind, resumed: ctx.resumed };
    return unrecognisedEnding(tool, bin, exitCode, printed, now);
  }
  if (!seen.result) return proseEnding(tool, exitCode, printed, now, ctx.resumed);
  return undefined;
}
