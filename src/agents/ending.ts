import type { Pricing } from '../config/schema.js';
import type { Usage } from '../bookbag/schema.js';

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
