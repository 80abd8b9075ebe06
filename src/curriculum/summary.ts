import type { CurriculumItem } from '../schemas/curriculum.js';
import { escapeMarkdownHtml } from '../security/html.js';
import { redactText } from '../security/redact.js';
import { describeSanitized } from '../security/sanitize.js';
import type { FetchResult } from './fetch.js';

/**
 * Job-summary and terminal views of a fetch. Issue titles are hostile text (N1.1): in a summary
 * they are redacted, then every character HTML or Markdown could act on becomes an entity, so a
 * title cannot open a tag, a link, an image or a table cell.
 */

export function escapeCell(text: string, max = 120): string {
  let t = redactText(text).replace(/\s+/g, ' ').trim();
  if (t.length > max) t = `${t.slice(0, max - 1)}…`;
  return escapeMarkdownHtml(t);
}

export function sanitizedNote(item: CurriculumItem): string {
  const parts: string[] = [];
  const title = describeSanitized(item.sanitized.title);
  const body = describeSanitized(item.sanitized.body);
  if (title) parts.push(`title: ${title}`);
  if (body) parts.push(`body: ${body}`);
  return parts.join('; ');
}

export const SUMMARY_HEADER = ['#', 'Title', 'Domain', 'Difficulty', 'Role', 'Sanitized'] as const;

/** Table rows (already escaped), at most `limit`: a summary has a 1 MiB ceiling. */
export function summaryRows(items: readonly CurriculumItem[], limit = 200): string[][] {
  return items
    .slice(0, limit)
    .map((i) => [
      String(i.number),
      escapeCell(i.title),
      escapeCell(i.domain, 40),
      String(i.difficulty),
      i.role,
      escapeCell(sanitizedNote(i) || '—', 80),
    ]);
}

export function headline(r: FetchResult): string {
  const how =
    r.mode === 'not-modified'
      ? 'unchanged on GitHub (one conditional request, answered 304)'
      : r.mode === 'file-unchanged'
        ? 'issues file unchanged'
        : `${r.mode} fetch`;
  return `${r.count} issue(s) in the curriculum — ${how}: ${r.added} added, ${r.changed} changed, ${r.removed} removed${r.requests ? `, ${r.requests} GitHub request(s)` : ''}.`;
}

/** Plain-text table for the terminal (titles sanitized already; redacted again here). */
export function textTable(items: readonly CurriculumItem[], limit = 50): string {
  const rows = [
    ['#', 'difficulty', 'role', 'domain', 'title'],
    ...items
      .slice(0, limit)
      .map((i) => [
        String(i.number),
        String(i.difficulty),
        i.role,
        i.domain,
        redactText(i.title).slice(0, 70),
      ]),
  ];
  const widths = rows[0]!.slice(0, -1).map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) =>
    r.map((cell, c) => (c < widths.length ? cell.padEnd(widths[c]!) : cell)).join('  '),
  );
  if (items.length > limit) lines.push(`… and ${items.length - limit} more`);
  return lines.join('\n') + '\n';
}
