/**
 * The one way the school quotes text it did not write (a student's paths and output, a reviewer's
 * words, test output, `git apply` errors, issue text) in its own comments, pull request bodies and
 * job summaries: as text, never as markup. GitHub renders those as GitHub Flavored Markdown and then
 * links what the rendered text says — `@user` and `@org/team` mentions (a notification),
 * `#N` / `GH-N` / `owner/repo#N` references (a cross-reference on that issue), closing keywords in a
 * pull request body (`fixes #2` closes issue 2 on merge) — and lets some HTML through (`<!--` hides
 * everything after it). Each function names the position it is for:
 *
 * - `inlineCode`: a code span. GFM code spans are literal: backslash escapes, entities, HTML (a
 *   `<!--` included) and link syntax inside are shown as written, and GitHub links no mention or
 *   reference inside `<code>`. The fence is one backtick longer than the longest run inside, so the
 *   text cannot close it; newlines collapse (a code span is one line of a table or list item).
 * - `codeBlock`: a fenced block, for multi-line output; the fence is longer than any backtick run
 *   inside, so no line can close it.
 * - `plainText`: prose positions (a reason after "rejected —"). Markdown and HTML are escaped, and
 *   what GitHub would link after rendering is broken with a zero-width joiner (U+200D) — an entity
 *   or a backslash would not do: they are decoded before GitHub looks for mentions.
 * - `htmlText`: a cell of a job summary's HTML table (`core.summary.addTable` writes cells as HTML).
 * - `unlinkedText`: a commit message or a pull request title (scanned for references, not rendered).
 *
 * Each redacts first: escaping splits a token's shape (`ghp\_…`), and the redactor at the write seam
 * would no longer see it.
 */

import { redactText } from './redact.js';

const ZWJ = '\u200D';

/** The longest run of backticks in `s`. */
function longestBacktickRun(s: string): number {
  let longest = 0;
  for (const m of s.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/** At most `max` code points (a surrogate pair is never split), with a visible marker when cut. */
export function bound(s: string, max: number): string {
  const points = Array.from(s);
  return points.length > max ? `${points.slice(0, Math.max(0, max - 1)).join('')}…` : s;
}

/** The last `max` code points, with a visible marker when cut (the end of a log is what says why). */
export function boundTail(s: string, max: number): string {
  const points = Array.from(s);
  return points.length > max ? `…${points.slice(points.length - Math.max(0, max - 1)).join('')}` : s;
}

/** Whitespace runs (newlines included) become one space; NUL, which GFM would replace anyway, too. */
function oneLine(s: string): string {
  return s.replace(/[\s\0]+/g, ' ').trim();
}

export interface InlineCodeOptions {
  /** Code points kept (default 200). */
  max?: number;
  /** In a GFM table row: a `|` inside a code span still ends the cell unless escaped. */
  table?: boolean;
}

/** `s` as a GFM code span: shown literally, linked never. */
export function inlineCode(s: string, o: InlineCodeOptions = {}): string {
  let t = bound(oneLine(redactText(s)), o.max ?? 200);
  // The table splits cells before the code span is read; `\|` is its escape, also inside a span.
  // A backslash run before a pipe is doubled first, so the pipe's own escape is never taken as a
  // backslash's (the table reads `\\|` as an escaped backslash and a cell break).
  if (o.table) t = t.replace(/(\\*)\|/g, (_, b: string) => `${b}${b}\\|`);
  const fence = '`'.repeat(longestBacktickRun(t) + 1);
  if (t === '') return `${fence} ${fence}`;
  // GFM strips one space from each side when both are there: padding keeps a leading or trailing
  // backtick off the fence, and the text as it was.
  const pad = /^[` ]|[` ]$/.test(t) ? ' ' : '';
  return `${fence}${pad}${t}${pad}${fence}`;
}

/** `s` as a fenced code block (its own lines); `max` code points of its end are kept (default 4000). */
export function codeBlock(s: string, o: { max?: number } = {}): string {
  const t = boundTail(
    redactText(s).replace(/\0/g, '\uFFFD').replace(/\r\n?/g, '\n').replace(/\s+$/, ''),
    o.max ?? 4000,
  );
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(t) + 1));
  return `${fence}text\n${t}\n${fence}`;
}

/**
 * What GitHub links in rendered text, each broken by a zero-width joiner so it is shown, not acted
 * on: mentions and `user@` emails (`@` + ZWJ), `#N` references (also in `owner/repo#N`), `GH-N`,
 * closing keywords (`fixes` as `f` + ZWJ + `ixes`: with a URL to an issue they close it too) and
 * URL autolinks (`https` + ZWJ + `://`, `www` + ZWJ + `.`).
 */
function unlink(s: string, keywords = true): string {
  const t = s
    .replace(/@(?=[\p{L}\p{N}_-])/gu, `@${ZWJ}`)
    .replace(/#(?=\p{N})/gu, `#${ZWJ}`)
    .replace(/\b(GH-)(?=\d)/gi, `$1${ZWJ}`)
    .replace(/\b(https?|ftp)(?=:\/\/)/gi, `$1${ZWJ}`)
    .replace(/\b(www)(?=\.)/gi, `$1${ZWJ}`);
  return keywords
    ? t.replace(/\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b/gi, (k: string) => `${k[0]}${ZWJ}${k.slice(1)}`)
    : t;
}

/** Markdown's active punctuation, backslash-escaped (GFM shows an escaped one as itself). */
const MARKDOWN_PUNCTUATION = /[\\`*_[\]~|$]/g;

/**
 * `s` for a prose position of a comment or pull request body: one line of at most `max` code points
 * (default 300), shown as written — no emphasis, link, image, HTML, table cell, mention, reference or
 * closing keyword.
 */
export function plainText(s: string, max = 300): string {
  let t = bound(oneLine(redactText(s)), max)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(MARKDOWN_PUNCTUATION, (c) => `\\${c}`);
  // At the start of a line (a list item's text), `1.`, `-`, `+`, `#` or `=` would open a block.
  t = t.replace(/^(\d+)([.)])/, '$1\\$2').replace(/^([-+#=])/, '\\$1');
  return unlink(t);
}

/**
 * `s` for a place GitHub scans for references but does not render as Markdown: a commit message
 * (`fixes #2` there closes issue 2 when the commit reaches the default branch) and a pull request
 * title. One line; mentions, references and URLs are broken as in `plainText`, so a closing keyword
 * has nothing to close and stays as written (a "Fix …" title reads as it did); nothing is escaped
 * (a backslash would show).
 */
export function unlinkedText(s: string): string {
  return unlink(oneLine(redactText(s)), false);
}

/**
 * `s` for a cell of a job summary's HTML table: one line of at most `max` code points (default
 * 400), HTML-escaped, mentions broken. An entity already there (a cell escaped by its producer,
 * src/curriculum/summary.ts) is kept as it is: an entity is text in HTML, never a tag, so it needs
 * no second escape.
 */
export function htmlText(s: string, max = 400): string {
  return bound(oneLine(redactText(s)), max)
    .replace(/&(?!(?:#\d{1,7}|#x[\da-f]{1,6}|[a-z][a-z\d]{1,31});)/gi, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/@(?=[\p{L}\p{N}_-])/gu, `@${ZWJ}`);
}
