import { escapeHtml } from '../security/html.js';
import type { HandoffImport } from './import.js';

/** The import's job-summary section: what each handoff contributed, what was refused and why, what was cut. */
export function handoffSummary(r: HandoffImport): string {
  const rows = r.dirs
    .map(
      (d) =>
        `<tr><td>${escapeHtml(d.dir)}</td><td>${escapeHtml(d.daemon ?? '?')}</td><td>${d.accepted}</td><td>${d.bookbags}</td><td>${d.refused}</td></tr>`,
    )
    .join('');
  const refused = r.refused
    .slice(0, 50)
    .map((x) => `<li>${escapeHtml(x.dir)}: ${escapeHtml(x.what)} — ${escapeHtml(x.reason)}</li>`)
    .join('');
  const alerts = (r.alerts ?? [])
    .slice(0, 50)
    .map((x) => `<li>${escapeHtml(x.dir)}: ${escapeHtml(x.kind)} — ${escapeHtml(x.detail)}</li>`)
    .join('');
  return (
    `<h3>Handoffs from crew jobs</h3>` +
    (r.dirs.length
      ? `<table><tr><th>handoff</th><th>daemon</th><th>events imported</th><th>bookbags</th><th>refused</th></tr>${rows}</table>`
      : '<p>No handoff was found.</p>') +
    (refused ? `<p>Refused (not imported):</p><ul>${refused}</ul>` : '') +
    (alerts ? `<p>Imported within a crew's bounds (budget, pause):</p><ul>${alerts}</ul>` : '')
  );
}
