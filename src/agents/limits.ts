/**
 * What an agent CLI's words mean. Real CLIs report limits inconsistently — a prose line on stdout
 * with exit 1 and no JSON, a JSON result whose `subtype` says success while `is_error` is true, a
 * codex `error` event — so every ending's text goes through one classifier. Order matters: a usage
 * limit often arrives wrapped in an HTTP 429, which alone would read as a rate limit.
 */
export type LimitKind = 'usage_limit' | 'overloaded' | 'could_not_start';

const USAGE_LIMIT = [
  /usage limit (?:has been )?reached/i,
  /hit your (?:usage )?limit/i,
  /\blimit reached\s*[∙·•|-]\s*resets/i,
  /\busage_limit_reached\b/,
  /credit balance is too low/i,
  /\binsufficient_quota\b/,
  /quota exceeded/i,
  /out of (?:extra usage|credits)/i,
];

const OVERLOADED = [
  /\boverloaded(?:_error)?\b/i,
  /\bAPI Error:?\s*\(?5(?:00|02|03|04|29)\b/i,
  /\brate_limit_error\b/,
  /\brate limit(?:ed)?\b/i,
  /\b429 Too Many Requests\b/i,
  /exceeded retry limit/i,
  /stream disconnected before completion/i,
  /\bserver_error\b/,
  /\bservice (?:is )?(?:temporarily )?unavailable\b/i,
];

const CANNOT_START = [
  /invalid api key/i,
  /please run \/login/i,
  /\bauthentication_error\b/,
  /\bnot logged in\b/i,
  /\b401 Unauthorized\b/i,
  /missing (?:an )?api key/i,
  /oauth token (?:has )?expired/i,
  /\bpermission_error\b/,
];

export function classifyText(text: string): LimitKind | undefined {
  const t = text.slice(-64 * 1024);
  if (USAGE_LIMIT.some((r) => r.test(t))) return 'usage_limit';
  if (CANNOT_START.some((r) => r.test(t))) return 'could_not_start';
  if (OVERLOADED.some((r) => r.test(t))) return 'overloaded';
  return undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * When a limit resets, as the tool said it, or undefined. Understood forms:
 *  - `Claude AI usage limit reached|1755615600` (epoch seconds after a bar);
 *  - `"resets_at":1777936568` / `"resets_in_seconds":13872` (codex's error body);
 *  - `resets 3pm (Europe/Lisbon)`, `resets 3:30am`, `resets Apr 23 at 4pm (America/Recife)`,
 *    `try again at 12:16 PM.` — a wall-clock time, in the named zone or else the runner's.
 * A wall-clock time names the next such moment after `now`.
 */
export function parseResetTime(text: string, now = new Date()): Date | undefined {
  const bar = text.match(/limit reached\|(\d{9,11})\b/i);
  if (bar) return new Date(Number(bar[1]) * 1000);
  const at = text.match(/"resets_at"\s*:\s*(\d{9,11})\b/);
  if (at) return new Date(Number(at[1]) * 1000);
  const inSec = text.match(/"resets_in_seconds"\s*:\s*(\d{1,9})\b/);
  if (inSec) return new Date(now.getTime() + Number(inSec[1]) * 1000);
  const wall = text.match(
    /(?:resets|reset at|try again at)\s+(?:([A-Za-z]{3})[a-z]*\s+(\d{1,2})(?:,?\s+at)?\s+)?(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?:\s*\(([A-Za-z_]+(?:\/[A-Za-z_+-]+)*)\))?/i,
  );
  if (!wall) return undefined;
  let hour = Number(wall[3]);
  const minute = wall[4] ? Number(wall[4]) : 0;
  const meridiem = wall[5]?.toLowerCase().replace(/\./g, '');
  if (!meridiem && !wall[4]) return undefined; // a bare number is not a time
  if (meridiem === 'pm' && hour < 12) hour += 12;
  if (meridiem === 'am' && hour === 12) hour = 0;
  if (hour > 23 || minute > 59) return undefined;
  const zone = wall[6] && validZone(wall[6]) ? wall[6] : undefined;
  const month = wall[1] ? MONTHS.indexOf(wall[1].toLowerCase()) : -1;
  const day = wall[2] ? Number(wall[2]) : undefined;
  return nextWallTime(now, { hour, minute, zone, month: month >= 0 ? month : undefined, day });
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
  t: { hour: number; minute: number; zone?: string; month?: number; day?: number },
): Date {
  const today = wallParts(now, t.zone);
  if (t.month !== undefined && t.day !== undefined) {
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
