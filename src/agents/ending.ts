import type { Pricing } from '../config/schema.js';
import type { Usage } from '../bookbag/schema.js';
import { classifyText, parseResetTime, sessionLost, type LimitKind } from './limits.js';

/**
 * How one agent turn ended, before verification. Every turn ends in exactly one of these; anything
 * a tool prints that is not recognised is `failed` with its text kept for the operator — never a
 * success.
 *  - `succeeded`: the tool finished its work without reporting an error;
 *  - `failed`: it reported an error, exited non-zero, or printed something unreadable;
 *  - `usage_limit`: a usage or credit limit (the school pauses launches, until `resetAt` if known);
 *  - `overloaded`: a rate limit or a service overload (an interruption: retried later);
 *  - `timed_out`: the crew's timeout killed it;
 *  - `could_not_start`: missing binary, bad credentials (an infrastructure alert).
 */
export type EndingKind =
  'succeeded' | 'failed' | 'usage_limit' | 'overloaded' | 'timed_out' | 'could_not_start';

export interface TurnEnding {
  kind: EndingKind;
  reason: string;
  /** The tool's own words (bounded, redacted later at the write seam) when it did not succeed. */
  detail?: string;
  resetAt?: Date;
  /** The session the next correction turn resumes (claude session_id, codex thread_id). */
  sessionId?: string;
  usage?: Usage;
  /** claude-code: the agent's turns (num_turns). */
  numTurns?: number;
  /** The running totals the tool printed, which the next turn of the same session subtracts. */
  meter?: SessionMeter;
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
  tokens?: { input: number; cached: number; output: number };
}

/** Tokens a tool reported, before pricing. `cachedInput` is part of `input` (codex). */
export interface TokenCounts {
  input: number;
  output: number;
  cachedInput?: number;
  cacheRead?: number;
  cacheCreation?: number;
}

/** Codex reports no cost: uncached input, cached input and output priced per million tokens. */
export function priceTokens(t: TokenCounts, p: Pricing | undefined): number | undefined {
  if (!p) return undefined;
  const cached = Math.min(t.cachedInput ?? 0, t.input);
  const usd =
    ((t.input - cached) * p.inputPerMTok + cached * p.cachedInputPerMTok + t.output * p.outputPerMTok) / 1e6;
  return Math.round(usd * 1e6) / 1e6;
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
    if (x !== undefined || y !== undefined) out[k] = Math.round(((x ?? 0) + (y ?? 0)) * 1e6) / 1e6;
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
  o: { subtype?: string; resetAt?: Date; resumed?: string } = {},
): TurnEnding {
  const detail = tail(words);
  const said = tail(words, 200).replace(/\s+/g, ' ');
  if (kind === 'usage_limit') {
    const resetAt = o.resetAt ?? parseResetTime(words, now);
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
