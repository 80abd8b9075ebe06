/**
 * What an agent CLI's words mean. Real CLIs report limits inconsistently — a prose line on stdout
 * with exit 1 and no JSON, a JSON result whose `subtype` says success while `is_error` is true, a
 * codex `error` event — so every ending's text goes through one classifier. Order matters: a usage
 * limit often arrives wrapped in an HTTP 429, which alone would read as a rate limit.
 */
export type LimitKind = 'usage_limit' | 'overloaded' | 'could_not_start';

const USAGE_LIMIT = [
  /usage limit (?:has been )?reached/i,
  // "You've hit your limit", "…your 5-hour limit", "…weekly limit", "…session limit", "…usage limit",
  // "…monthly spend limit", "…org's monthly usage limit" (claude and codex; either apostrophe).
  /hit your [\w'’ -]{0,40}?limit\b/i,
  /\blimit reached\s*[∙·•|-]\s*resets/i,
  /\busage_limit_reached\b/,
  /credit balance is too low/i,
  /\binsufficient_quota\b/,
  /quota exceeded/i,
  /\bout of (?:extra usage|usage credits|usage|credits)\b/i,
  /\bspend limit reached\b/i,
  // An API key over the spend limit set in the Console (Claude Code: `API Error: 400 …`).
  /reached your specified API usage limits?\b/i,
];

const OVERLOADED = [
  /\boverloaded(?:_error)?\b/i,
  /\bAPI Error:?\s*\(?5\d\d\b/i,
  /\bAPI Error:?\s*Connection error\b/i,
  /\brequest timed out\b/i,
  /\brate_limit_error\b/,
  /\brate[ _]limit(?:ed|_exceeded)?\b/i,
  /\b429 Too Many Requests\b/i,
  /\brejected \(429\)/i,
  /exceeded retry limit/i,
  /stream disconnected before completion/i,
  /\bserver_error\b/,
  /\bservice (?:is )?(?:temporarily )?unavailable\b/i,
  /temporarily limiting requests/i,
  /experiencing (?:high demand|high load)/i,
  // codex: `Selected model is at capacity. Please try a different model.`
  /\bmodel is at capacity\b/i,
];

/**
 * The agent cannot run here until someone fixes the set-up: credentials, a model name the account
 * cannot use, an argv the installed release refuses, or a session that is gone.
 */
const CANNOT_START = [
  /invalid api key/i,
  /incorrect api key/i,
  /invalid auth token/i,
  /please run \/login/i,
  /\bauthentication_error\b/,
  /\bauthentication (?:error|failed)\b/i,
  /failed to authenticate/i,
  /\bnot logged in\b/i,
  /\b401 Unauthorized\b/i,
  /missing (?:an )?api key/i,
  /missing environment variable/i,
  /oauth token (?:has )?(?:expired|revoked)/i,
  /\blogin expired\b/i,
  /\bsign in again\b/i,
  /\bpermission_error\b/,
  /belongs to a disabled organization/i,
  /organization has disabled/i,
  /apiKeyHelper script is failing/i,
  /request blocked before it reached/i,
  // A ChatGPT plan that does not include Codex (`usage_not_included`): nothing runs until it changes.
  /to use codex with your chatgpt plan/i,
  /\busage_not_included\b/,
  // The API cannot be reached from this runner (a firewall, a proxy, DNS, TLS).
  /\bconnection refused\b/i,
  /\b(?:ECONNREFUSED|ENOTFOUND|EAI_AGAIN)\b/,
  /unable to connect to (?:the )?API\b/i,
  /failed to lookup address/i,
  /(?:may|does) not exist or you (?:may|do) not have access/i,
  /model is not supported when using/i,
  /no conversation found with session id/i,
  /no rollout found for thread id/i,
  /^error: unexpected argument '[^']*' found/im,
  /^error: unknown option '[^']*'/im,
];

/**
 * A final message that is nothing but a limit notice (some releases print it as a successful
 * result): it must start like one, so an answer that merely mentions a limit is not taken for one.
 */
export function isLimitNotice(text: string): boolean {
  const t = text.trim();
  return (
    t.length < 300 &&
    /^(?:Claude (?:AI )?usage limit reached|You(?:'|’)ve hit your [\w'’ -]{0,40}?limit\b|You(?:'|’)re out of (?:extra usage|usage credits)|\d+-hour limit reached|Credit balance is too low)/i.test(
      t,
    )
  );
}

export function classifyText(text: string): LimitKind | undefined {
  const t = text.slice(-64 * 1024);
  if (USAGE_LIMIT.some((r) => r.test(t))) return 'usage_limit';
  if (CANNOT_START.some((r) => r.test(t))) return 'could_not_start';
  if (OVERLOADED.some((r) => r.test(t))) return 'overloaded';
  return undefined;
}

/**
 * Words of a tool that cannot reach its API (no answer at all, as opposed to an answer saying it is
 * overloaded): a refused or reset connection, DNS, a request that could not be sent, no network.
 */
const CONNECTION = [
  /\bconnection (?:refused|reset|closed|error|failed)\b/i,
  /\b(?:ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b/,
  /error sending request/i,
  /failed to lookup address|dns error/i,
  /waiting for network/i,
  /network is unreachable/i,
  /tcp connect error/i,
  /unable to connect/i,
];

export function isConnectionTrouble(text: string): boolean {
  return CONNECTION.some((r) => r.test(text));
}

/** A line that is a retry notice or a connection error (`Reconnecting... 2/5`, `retrying 1/5 in 200ms`). */
export function isRetryNotice(line: string): boolean {
  return /\b(?:reconnecting|retrying|retry)\b/i.test(line) || isConnectionTrouble(line);
}

/** A session the tool no longer has: a correction turn could not resume it. */
export function sessionLost(text: string): boolean {
  return /no conversation found with session id|no rollout found for thread id/i.test(text);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * When a limit resets, as the tool said it, or undefined. Understood forms:
 *  - `Claude AI usage limit reached|1755615600` (epoch seconds after a bar);
 *  - `"resets_at":1777936568` / `"resets_in_seconds":13872` (an error body);
 *  - `resets 3pm (Europe/Lisbon)`, `resets 1:10am`, `resets Dec 4, 6:30am (America/Recife)`,
 *    `resets Apr 23 at 4pm (America/Recife)`, `resets Jan 2, 2027, 4pm`, `reset at 3pm (Etc/GMT+5)`;
 *  - codex: `try again at 12:16 PM.`, `Try again at Dec 1st, 2026 12:14 AM.`
 *  - an API key's spend limit: `You will regain access on 2027-01-01 at 00:00 UTC.`
 * A time is in the named zone, else the runner's (codex prints the runner's local time); without a
 * date it names the next such moment after `now`.
 */
export function parseResetTime(text: string, now = new Date()): Date | undefined {
  const bar = text.match(/limit reached\|(\d{9,11})\b/i);
  if (bar) return new Date(Number(bar[1]) * 1000);
  const at = text.match(/"resets_at"\s*:\s*(\d{9,11})\b/);
  if (at) return new Date(Number(at[1]) * 1000);
  const inSec = text.match(/"resets_in_seconds"\s*:\s*(\d{1,9})\b/);
  if (inSec) return new Date(now.getTime() + Number(inSec[1]) * 1000);
  const regain = text.match(
    /regain access on (\d{4})-(\d{2})-(\d{2})(?:\s+at\s+|T|\s+)(\d{1,2}):(\d{2})(?:\s*(UTC|GMT|Z)\b)?/i,
  );
  if (regain) {
    const [y, mo, d, h, mi] = regain.slice(1, 6).map(Number) as [number, number, number, number, number];
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59) return undefined;
    return instantOf(y, mo - 1, d, h, mi, regain[6] ? 'UTC' : undefined);
  }
  const wall = text.match(
    /(?:resets|reset at|try again at)\s+(?:([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?(?:\s+(\d{4}),?)?(?:\s+at)?\s+)?(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?:\s*\(([A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)*)\))?/i,
  );
  if (!wall) return undefined;
  let hour = Number(wall[4]);
  const minute = wall[5] ? Number(wall[5]) : 0;
  const meridiem = wall[6]?.toLowerCase().replace(/\./g, '');
  if (!meridiem && !wall[5]) return undefined; // a bare number is not a time
  if (meridiem === 'pm' && hour < 12) hour += 12;
  if (meridiem === 'am' && hour === 12) hour = 0;
  if (hour > 23 || minute > 59) return undefined;
  const zone = wall[7] && validZone(wall[7]) ? wall[7] : undefined;
  const month = wall[1] ? MONTHS.indexOf(wall[1].toLowerCase()) : -1;
  const day = wall[2] ? Number(wall[2]) : undefined;
  const year = wall[3] ? Number(wall[3]) : undefined;
  if (month >= 0 && day !== undefined && (day < 1 || day > 31)) return undefined;
  return nextWallTime(now, {
    hour,
    minute,
    zone,
    ...(month >= 0 && day !== undefined ? { month, day, year } : {}),
  });
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Wall-clock parts of `at` in `zone` (the runner's zone when undefined). */
function wallParts(at: Date, zone: string | undefined) {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  return {
    year: Number(p.year),
    month: Number(p.month) - 1,
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
  };
}

/** The instant whose wall time in `zone` is the given date and time (offset found by one probe). */
function instantOf(
  y: number,
  m: number,
  d: number,
  hour: number,
  minute: number,
  zone: string | undefined,
): Date {
  const guess = Date.UTC(y, m, d, hour, minute);
  const w = wallParts(new Date(guess), zone);
  const offset = Date.UTC(w.year, w.month, w.day, w.hour, w.minute) - guess;
  return new Date(guess - offset);
}

function nextWallTime(
  now: Date,
  t: { hour: number; minute: number; zone?: string; month?: number; day?: number; year?: number },
): Date {
  const today = wallParts(now, t.zone);
  if (t.month !== undefined && t.day !== undefined) {
    if (t.year !== undefined) return instantOf(t.year, t.month, t.day, t.hour, t.minute, t.zone);
    let candidate = instantOf(today.year, t.month, t.day, t.hour, t.minute, t.zone);
    if (candidate <= now) candidate = instantOf(today.year + 1, t.month, t.day, t.hour, t.minute, t.zone);
    return candidate;
  }
  for (let i = 0; i < 2; i++) {
    const candidate = instantOf(today.year, today.month, today.day + i, t.hour, t.minute, t.zone);
    if (candidate > now) return candidate;
  }
  return instantOf(today.year, today.month, today.day + 2, t.hour, t.minute, t.zone);
}
