import type { IncomingHttpHeaders } from 'node:http';
import type { ProxyMeter } from './meter.js';

/**
 * What the host side of a crew's key proxy (./key-proxy.ts) saw the API answer: the one account of
 * a limit a student cannot write. A CLI's limit envelope arrives on its standard output, which a
 * process inside the sandbox can also write (`/proc/<pid>/fd/1` of the CLI); the API's status and
 * headers reach only this process. Kept in the crew runner's memory (never in a file the sandbox
 * can reach) and bounded: the last `MAX_ANSWERS` answers, and the last `MAX_LIMITS` limit answers
 * apart, so a flood of ordinary answers cannot push a limit out.
 *
 * Which answers are limits (the forms Claude Code and Codex read as such):
 *  - usage: a 429 whose `anthropic-ratelimit-unified-status` is `rejected` (a subscription window),
 *    or whose error type is `usage_limit_reached`, `usage_not_included` or `insufficient_quota`
 *    (OpenAI, Codex's ChatGPT backend); a 402 `billing_error`; a 400 `invalid_request_error` whose
 *    message begins as the API's own usage-limit or credit-balance message does (an echo of a field
 *    a student sent starts with the field's name, never with these words);
 *  - rate: any other 429 (`rate_limit_error`, `rate_limit_exceeded`): an interruption;
 *  - overload: a 529 (`overloaded_error`) or a 503.
 */
export type LimitKind = 'usage' | 'rate' | 'overload';

export interface UpstreamAnswer {
  /** When the answer's headers arrived (ISO). */
  at: string;
  status: number;
  /** The request's path, bounded. */
  path: string;
  /** Limit answers only: */
  kind?: LimitKind;
  /** The error type (and code) of the answer's body, bounded. */
  type?: string;
  /** When the API said the limit resets (ISO), from its headers or its body. */
  resetAt?: string;
  /** The answer's limit headers (retry-after, anthropic-ratelimit-*, x-ratelimit-*, x-codex-*), bounded. */
  headers?: Record<string, string>;
}

/** The API's limit answer as a crew's end and its pause carry it (`upstream` of src/schemas/crew.ts). */
export interface UpstreamLimit {
  status: number;
  at: string;
  resetAt?: string;
}

export const MAX_ANSWERS = 64;
export const MAX_LIMITS = 16;
/** The statuses whose body is read (its start) for an error type. */
export const LIMIT_STATUSES: ReadonlySet<number> = new Set([400, 402, 429, 503, 529]);
/** How much of a limit answer's body is looked at. */
export const LIMIT_BODY_BYTES = 16 * 1024;

/** Past this, a date cannot be written (the year 275760). */
const MAX_DATE_MS = 8.64e15;
const LIMIT_HEADER = /^(retry-after|anthropic-ratelimit-|x-ratelimit-|x-codex-)/;
const USAGE_TYPES = new Set([
  'usage_limit_reached',
  'usage_not_included',
  'insufficient_quota',
  'billing_error',
]);
const USAGE_MESSAGE = /^(You have reached your specified API usage limits|Your credit balance is too low)/;

/** The answers of one crew's key proxies, in its runner's memory. */
export class UpstreamRecord {
  private readonly all: UpstreamAnswer[] = [];
  private readonly limitList: UpstreamAnswer[] = [];
  /**
   * The crew's meter (./meter.ts): each answer's usage, priced and recorded as the crew's spend, and
   * the budgets and rate cap each request is admitted by. Set by the crew before its first turn; the
   * key proxy the record is given to meters through it.
   */
  meter: ProxyMeter | undefined;

  add(a: UpstreamAnswer): void {
    this.all.push(a);
    if (this.all.length > MAX_ANSWERS) this.all.shift();
    if (!a.kind) return;
    this.limitList.push(a);
    if (this.limitList.length > MAX_LIMITS) this.limitList.shift();
  }

  /** The last answers, oldest first. */
  answers(): UpstreamAnswer[] {
    return [...this.all];
  }

  /** The last limit answers, oldest first. */
  limits(): UpstreamAnswer[] {
    return [...this.limitList];
  }
}

/**
 * One upstream answer as the record keeps it. `body` is the start of a limit status's body (or
 * undefined for other statuses, whose body is never read).
 */
export function readAnswer(
  o: { status: number; path: string; headers: IncomingHttpHeaders; body?: Buffer },
  now = new Date(),
): UpstreamAnswer {
  const answer: UpstreamAnswer = { at: now.toISOString(), status: o.status, path: o.path.slice(0, 200) };
  if (!LIMIT_STATUSES.has(o.status)) return answer;
  const error = bodyError(o.body);
  const header = (name: string) => {
    const v = o.headers[name];
    return (Array.isArray(v) ? v[0] : v)?.trim();
  };
  const type = [error.type, error.code].filter(Boolean).join('/') || undefined;
  const kind = limitKind(o.status, error, header('anthropic-ratelimit-unified-status'));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.headers))
    if (LIMIT_HEADER.test(k) && v !== undefined && Object.keys(headers).length < 24)
      headers[k] = String(Array.isArray(v) ? v[0] : v).slice(0, 100);
  if (!kind) return { ...answer, ...(type ? { type: type.slice(0, 80) } : {}) };
  const reset = resetOf(kind, header, error, now);
  return {
    ...answer,
    kind,
    ...(type ? { type: type.slice(0, 80) } : {}),
    ...(reset ? { resetAt: reset.toISOString() } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
  };
}

interface BodyError {
  type?: string;
  code?: string;
  message?: string;
  resetsAt?: number;
  resetsInSeconds?: number;
}

/** The error object of a JSON error body (Anthropic's `{type:'error', error}`, OpenAI's `{error}`). */
function bodyError(body: Buffer | undefined): BodyError {
  if (!body?.length) return {};
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return {};
  }
  const e = (v as { error?: unknown } | null)?.error;
  if (!e || typeof e !== 'object') return {};
  const o = e as Record<string, unknown>;
  const str = (x: unknown) => (typeof x === 'string' ? x.slice(0, 300) : undefined);
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : undefined);
  const out: BodyError = {};
  const type = str(o.type);
  const code = str(o.code);
  const message = str(o.message);
  const resetsAt = num(o.resets_at);
  const resetsIn = num(o.resets_in_seconds);
  if (type) out.type = type;
  if (code && code !== type) out.code = code;
  if (message) out.message = message;
  if (resetsAt !== undefined) out.resetsAt = resetsAt;
  if (resetsIn !== undefined) out.resetsInSeconds = resetsIn;
  return out;
}

function limitKind(status: number, e: BodyError, unified: string | undefined): LimitKind | undefined {
  const usageType = USAGE_TYPES.has(e.type ?? '') || USAGE_TYPES.has(e.code ?? '');
  if (status === 429) return unified === 'rejected' || usageType ? 'usage' : 'rate';
  if (status === 529 || status === 503) return 'overload';
  if (status === 402) return usageType ? 'usage' : undefined;
  if (status === 400)
    return e.type === 'invalid_request_error' && USAGE_MESSAGE.test(e.message ?? '') ? 'usage' : undefined;
  return undefined;
}

/**
 * When the API said the limit resets: for a usage limit its own reset first (the subscription
 * window's `anthropic-ratelimit-unified-reset`, the body's `resets_at` / `resets_in_seconds`, the
 * date in Anthropic's usage-limit message), then `retry-after`; for a rate limit `retry-after`, then
 * the latest of `anthropic-ratelimit-*-reset` (RFC 3339) and `x-ratelimit-reset-requests/tokens`
 * (durations such as `6m0s`). A time in the past is none.
 */
function resetOf(
  kind: LimitKind,
  header: (name: string) => string | undefined,
  e: BodyError,
  now: Date,
): Date | undefined {
  const t = now.getTime();
  // A reset more than a week away is kept as named: the pause is cut to a week (src/dispatch/gates/pause.ts).
  const ok = (ms: number | undefined) =>
    ms !== undefined && Number.isFinite(ms) && ms > t && ms < MAX_DATE_MS ? new Date(ms) : undefined;
  const unix = (s: string | undefined) => (s && /^\d{9,11}$/.test(s) ? Number(s) * 1000 : undefined);
  const retryAfter = (): number | undefined => {
    const v = header('retry-after');
    if (!v) return undefined;
    if (/^\d+(\.\d+)?$/.test(v)) return t + Number(v) * 1000;
    const d = Date.parse(v);
    return Number.isNaN(d) ? undefined : d;
  };
  const latest = (names: string[], read: (v: string) => number | undefined) =>
    names
      .map((n) => header(n))
      .map((v) => (v ? read(v) : undefined))
      .filter((ms): ms is number => ms !== undefined && ms > t)
      .sort((a, b) => b - a)[0];
  if (kind === 'usage') {
    const message = /regain access on (\d{4}-\d{2}-\d{2}) at (\d{2}:\d{2}) UTC/.exec(e.message ?? '');
    return (
      ok(unix(header('anthropic-ratelimit-unified-reset'))) ??
      ok(e.resetsAt !== undefined ? e.resetsAt * 1000 : undefined) ??
      ok(e.resetsInSeconds !== undefined ? t + e.resetsInSeconds * 1000 : undefined) ??
      ok(message ? Date.parse(`${message[1]}T${message[2]}:00Z`) : undefined) ??
      ok(retryAfter())
    );
  }
  return (
    ok(retryAfter()) ??
    ok(
      latest(
        [
          'anthropic-ratelimit-requests-reset',
          'anthropic-ratelimit-tokens-reset',
          'anthropic-ratelimit-input-tokens-reset',
          'anthropic-ratelimit-output-tokens-reset',
        ],
        (v) => {
          const d = Date.parse(v);
          return Number.isNaN(d) ? undefined : d;
        },
      ),
    ) ??
    ok(latest(['x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens'], (v) => duration(v, t)))
  );
}

/** OpenAI's reset durations: `1s`, `20ms`, `6m0s`, `1h2m3.5s`. */
function duration(v: string, t: number): number | undefined {
  const m = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(v.trim());
  if (!m || !m.slice(1).some(Boolean)) return undefined;
  const [h, mi, s, ms] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number];
  return t + ((h * 60 + mi) * 60 + s) * 1000 + ms;
}

/**
 * The API's own answer behind a crew's limit or overload, or undefined: the last limit answer the
 * crew's key proxy saw since `since` that matches the outcome — a usage limit for `usage_limit`, a
 * rate limit or an overload for `overloaded`. A plain rate limit is no evidence of a usage limit
 * (the CLIs read it as an interruption), so a student that floods the API into a per-minute limit
 * cannot dress its claim up as the school's.
 */
export function limitEvidence(
  record: UpstreamRecord | undefined,
  /** The crew's outcome (src/schemas/crew.ts): `usage_limit` and `overloaded` have evidence. */
  outcome: string,
  since: Date,
): { limit: UpstreamLimit; type?: string } | undefined {
  if (!record) return undefined;
  const kinds: LimitKind[] =
    outcome === 'usage_limit' ? ['usage'] : outcome === 'overloaded' ? ['rate', 'overload'] : [];
  const seen = record
    .limits()
    .filter((a) => a.kind && kinds.includes(a.kind) && Date.parse(a.at) >= since.getTime() - 1000)
    .at(-1);
  if (!seen) return undefined;
  return {
    limit: { status: seen.status, at: seen.at, ...(seen.resetAt ? { resetAt: seen.resetAt } : {}) },
    ...(seen.type ? { type: seen.type } : {}),
  };
}

/** How a reason names the API's answer: `429 usage_limit_reached at <time>`. */
export function describeUpstream(u: UpstreamLimit, type?: string): string {
  return `${u.status}${type ? ` ${type}` : ''} at ${u.at}${u.resetAt ? `, resets ${u.resetAt}` : ''}`;
}
