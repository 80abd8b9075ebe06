import { redactText } from './redact.js';

/**
 * Bounds for what the school records of a student. Anything a student can make long (a host name it
 * asks the proxy for, a path it creates, the text its tool printed) reaches alerts, reasons, audit
 * lines and summaries; each is cut where it is recorded, so that no record outgrows the readers that
 * must take it whole (a handoff line is refused over 256 KiB, and a refused `crew.finished` would lose
 * the crew's end). The cut is visible: the kept text ends with a marker saying how much went.
 */

/** One detail of an alert or a refused target: a host name, a path, a reason. */
export const MAX_DETAIL = 1024;
/** A whole alert, a crew's reason, a grading reason, one audit field. */
export const MAX_REASON = 4 * 1024;
/** A crew's `crew.finished` reason with its alerts. */
export const MAX_FINISHED_REASON = 16 * 1024;

/** A job's or an outbox entry's last error, as kept in state. */
export const MAX_ERROR_LENGTH = 500;

export function boundMarker(removed: number): string {
  return `…[${removed} more characters]`;
}

/**
 * `s` when it has at most `max` characters; else its first characters and the marker, together at
 * most `max` characters (a marker longer than `max` is returned alone). Never splits a surrogate pair.
 */
export function boundText(s: string, max: number): string {
  if (s.length <= max) return s;
  let keep = Math.max(0, max - boundMarker(s.length).length);
  if (keep > 0 && isHighSurrogate(s.charCodeAt(keep - 1))) keep--;
  return `${s.slice(0, keep)}${boundMarker(s.length - keep)}`;
}

/** Every string inside `v` (object values, array items) bounded to `max`; other values as they are. */
export function boundStrings<T>(v: T, max: number): T {
  if (typeof v === 'string') return boundText(v, max) as T;
  if (Array.isArray(v)) return v.map((x: unknown) => boundStrings(x, max)) as T;
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = boundStrings(x, max);
    return out as T;
  }
  return v;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/**
 * An error kept in state (a grading job's, an outbox entry's): redacted, on one line, and bounded,
 * so a stack trace does not grow the checkpoint.
 */
export function boundError(text: string): string {
  const clean = redactText(text).replace(/\s+/g, ' ').trim();
  return clean.length > MAX_ERROR_LENGTH ? `${clean.slice(0, MAX_ERROR_LENGTH - 1)}…` : clean;
}
