import { escapeHtml } from '../../src/security/html.js';
import type { Comparison } from './compare.js';
import type { SimResult } from './engine.js';
import { describeScenario, goalLines, METRIC_HEADERS, metricsRow, minutes } from './report.js';

/**
 * `school-simulate --html FILE`: one self-contained page — inline CSS and inline SVG, no script,
 * no font, no external reference of any kind — so it opens offline and can be attached as a CI
 * artifact. One per-slot timeline per policy, all on the same time axis so their lengths compare.
 */

const MAX_ROWS = 200;
const WIDTH = 1000;
const LEFT = 70;
const COLORS = { success: '#2e8b57', failure: '#c0392b', usage_limit: '#e0a800' } as const;

function timeline(c: Comparison, result: SimResult, horizon: number): string {
  const slots = c.workload.slots;
  const rows = Math.min(slots.length, MAX_ROWS);
  const rowH = rows > 60 ? 4 : rows > 24 ? 8 : 14;
  const top = 20;
  const height = top + rows * rowH + 24;
  const x = (t: number) => LEFT + (t / horizon) * WIDTH;
  const parts: string[] = [];
  for (const p of result.pauses) {
    parts.push(
      `<rect x="${x(p.from).toFixed(1)}" y="${top}" width="${Math.max(1, x(p.to) - x(p.from)).toFixed(1)}" ` +
        `height="${rows * rowH}" fill="#ddd"><title>paused ${minutes(p.from)} – ${minutes(p.to)}</title></rect>`,
    );
  }
  for (let i = 0; i < rows; i++) {
    if (rowH >= 8 || i % 10 === 0) {
      const s = slots[i]!;
      parts.push(
        `<text x="2" y="${top + i * rowH + rowH - 1}" font-size="${Math.min(10, rowH + 4)}">${escapeHtml(`${s.daemon}/${s.slot} ${s.class[0]}`)}</text>`,
      );
    }
  }
  for (const t of result.timeline) {
    if (t.slot >= rows) continue;
    const w = Math.max(0.6, x(t.end) - x(t.start));
    const tip = `#${t.issue} attempt ${t.attempt}${t.repair ? ' (repair)' : ''}: ${t.outcome}, ${minutes(t.start)} → ${minutes(t.end)}`;
    parts.push(
      `<rect x="${x(t.start).toFixed(2)}" y="${top + t.slot * rowH + 1}" width="${w.toFixed(2)}" height="${rowH - 1}" ` +
        `fill="${COLORS[t.outcome]}"${t.repair ? ' fill-opacity="0.6" stroke="#000" stroke-width="0.4"' : ''}><title>${escapeHtml(tip)}</title></rect>`,
    );
  }
  const bound = x(c.workload.lowerBound);
  parts.push(
    `<line x1="${bound.toFixed(1)}" x2="${bound.toFixed(1)}" y1="${top - 6}" y2="${top + rows * rowH}" stroke="#1f4e9c" stroke-dasharray="4 3"/>`,
    `<text x="${(bound + 3).toFixed(1)}" y="${top - 8}" font-size="10" fill="#1f4e9c">lower bound ${escapeHtml(minutes(c.workload.lowerBound))}</text>`,
  );
  for (let k = 0; k <= 10; k++) {
    const t = (horizon * k) / 10;
    parts.push(
      `<text x="${x(t).toFixed(1)}" y="${height - 6}" font-size="10" text-anchor="middle">${escapeHtml(minutes(t))}</text>`,
    );
  }
  const note = slots.length > rows ? `<p class="note">First ${rows} of ${slots.length} slots shown.</p>` : '';
  return (
    `<svg width="${LEFT + WIDTH + 20}" height="${height}" viewBox="0 0 ${LEFT + WIDTH + 20} ${height}" role="img" ` +
    `aria-label="${escapeHtml(result.policy)} per-slot timeline">${parts.join('')}</svg>${note}`
  );
}

export function renderHtml(c: Comparison): string {
  const horizon = Math.max(...c.results.map((r) => r.metrics.makespan), c.workload.lowerBound, 1e-9);
  const table =
    '<table><thead><tr>' +
    METRIC_HEADERS.map((h) => `<th>${escapeHtml(h)}</th>`).join('') +
    '</tr></thead><tbody>' +
    c.results
      .map(
        (r) =>
          '<tr>' +
          metricsRow(r.metrics)
            .map((v) => `<td>${escapeHtml(v)}</td>`)
            .join('') +
          '</tr>',
      )
      .join('') +
    '</tbody></table>';
  const sections = c.results
    .map((r) => `<h2>${escapeHtml(r.label)}</h2>${timeline(c, r.result, horizon)}`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>school-simulate</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}svg{display:block;margin:.5em 0 1.5em}
.note{color:#666;font-size:12px}.key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
</style></head><body>
<h1>Fleet simulation</h1>
<p>${escapeHtml(describeScenario(c))}.</p>
${table}
<ul>${goalLines(c)
    .map((l) => `<li>${escapeHtml(l)}</li>`)
    .join('')}</ul>
<p class="key">Runs:<span style="background:${COLORS.success}"></span>success<span style="background:${COLORS.failure}"></span>failure<span style="background:${COLORS.usage_limit}"></span>usage limit<span style="background:#ddd"></span>school paused · outlined = repair · dashed line = lower bound</p>
${sections}
</body></html>
`;
}
