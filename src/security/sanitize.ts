/**
 * N1.1: issue text is hostile. Sanitizing happens once, at the curriculum edge, and everything
 * downstream (briefs, summaries, comments) sees only the sanitized text.
 *
 * Removed: bidi controls (U+202A–202E, U+2066–2069, U+200E/F, U+061C), tag characters
 * (U+E0000–E007F), zero-width characters, NUL and other control characters except tab and newline,
 * and lone UTF-16 surrogates. Text longer than the cap is cut with a visible marker. Shell and
 * Markdown metacharacters are left as text: they are inert because nothing ever hands issue text to
 * a shell (N1.2).
 *
 * The function is idempotent: sanitize(sanitize(x)) === sanitize(x).
 */

export interface SanitizeReport {
  bidi: number;
  tag: number;
  zeroWidth: number;
  nul: number;
  control: number;
  surrogate: number;
  /** Length (UTF-16 code units) of the text before the cap, when the cap cut it. */
  truncatedFrom?: number;
}

export interface Sanitized {
  text: string;
  report: SanitizeReport;
}

const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;
const TAG = /\u{E0000}|[\u{E0001}-\u{E007F}]/gu;
// eslint-disable-next-line no-misleading-character-class -- each listed code point is removed on its own
const ZERO_WIDTH = /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E\u034F\u115F\u1160\u3164\uFFA0]/g;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NUL = /\u0000/g;
// C0 controls except \t and \n, DEL, C1 controls. \r is folded into \n first.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0001-\u0008\u000B-\u001F\u007F-\u009F]/g;
// A high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function truncationMarker(removed: number): string {
  return `\n[… ${removed} characters cut by school-core]`;
}

function count(text: string, re: RegExp): [string, number] {
  let n = 0;
  const out = text.replace(re, () => {
    n++;
    return '';
  });
  return [out, n];
}

export function sanitizeText(input: string, maxLength: number): Sanitized {
  const report: SanitizeReport = { bidi: 0, tag: 0, zeroWidth: 0, nul: 0, control: 0, surrogate: 0 };
  let text = typeof input === 'string' ? input : String(input ?? '');
  // Surrogates first: the other patterns assume well-formed text.
  [text, report.surrogate] = count(text, LONE_SURROGATE);
  text = text.replace(/\r\n?/g, '\n');
  [text, report.bidi] = count(text, BIDI);
  [text, report.tag] = count(text, TAG);
  [text, report.zeroWidth] = count(text, ZERO_WIDTH);
  [text, report.nul] = count(text, NUL);
  [text, report.control] = count(text, CONTROL);
  if (text.length > maxLength) {
    const original = text.length;
    // Reserve room for the marker so the result is within the cap and a second pass is a no-op.
    let keep = Math.max(0, maxLength - truncationMarker(original).length);
    // Never cut a surrogate pair in half.
    const code = text.charCodeAt(keep - 1);
    if (keep > 0 && code >= 0xd800 && code <= 0xdbff) keep -= 1;
    text = text.slice(0, keep) + truncationMarker(original - keep);
    if (text.length > maxLength) text = text.slice(0, maxLength).replace(LONE_SURROGATE, '');
    report.truncatedFrom = original;
  }
  return { text, report };
}

/** True when the report says something was removed or cut. */
export function wasSanitized(report: SanitizeReport): boolean {
  return (
    report.bidi + report.tag + report.zeroWidth + report.nul + report.control + report.surrogate > 0 ||
    report.truncatedFrom !== undefined
  );
}

/** One short human line: "2 bidi, 1 NUL, cut from 2097152". Empty when nothing was removed. */
export function describeSanitized(report: SanitizeReport): string {
  const parts: string[] = [];
  if (report.bidi) parts.push(`${report.bidi} bidi`);
  if (report.tag) parts.push(`${report.tag} tag`);
  if (report.zeroWidth) parts.push(`${report.zeroWidth} zero-width`);
  if (report.nul) parts.push(`${report.nul} NUL`);
  if (report.control) parts.push(`${report.control} control`);
  if (report.surrogate) parts.push(`${report.surrogate} lone surrogate`);
  if (report.truncatedFrom !== undefined) parts.push(`cut from ${report.truncatedFrom} chars`);
  return parts.join(', ');
}

/** N1.3: a number from text is used only when finite; otherwise the default. */
export function finiteOr(value: unknown, fallback: number, range?: { min: number; max: number }): number {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : NaN;
  if (!Number.isFinite(n)) return fallback;
  if (Object.is(n, -0)) return 0;
  if (range && (n < range.min || n > range.max)) return fallback;
  return n;
}
