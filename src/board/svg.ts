import { h, slug } from './escape.js';
import { age } from './format.js';
import type { SchoolView, SlotBar } from './model.js';

/**
 * Inline SVG charts for the HTML report: no scripts, no fonts, no external references. Sizes are in
 * user units; the browser scales the viewBox to the page width.
 */

const WIDTH = 960;
const LABEL = 150;
/** Row height per slot; large fleets get thin rows so the chart stays a chart. */
const rowHeight = (rows: number) => (rows > 120 ? 6 : rows > 40 ? 10 : 18);
const AXIS = 28;

function ms(iso: string | undefined): number {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : NaN;
}

function outcomeClass(bar: SlotBar): string {
  if (bar.status === 'running') return 'bar-running';
  if (bar.outcome === 'succeeded') return 'bar-ok';
  if (bar.outcome === 'usage_limit' || bar.outcome === 'limit_unconfirmed' || bar.outcome === 'overloaded')
    return 'bar-paused';
  if (bar.outcome === 'cancelled') return 'bar-cancelled';
  return 'bar-failed';
}

/** Exact offset labels for ticks (1m15s, 2h30m): `age` rounds, which would repeat labels. */
function tickLabel(seconds: number): string {
  const s = Math.round(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m${two(s % 60)}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h${two(m % 60)}m` : `${h}h`;
  return h % 24 ? `${Math.floor(h / 24)}d${two(h % 24)}h` : `${Math.floor(h / 24)}d`;
}

/** Time ticks at a round step, labelled relative to the start (0s, 15m, 1h30m, …). */
function ticks(t0: number, t1: number, x: (t: number) => number, height: number): string {
  const span = Math.max(1, t1 - t0);
  const steps = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 21600, 43200, 86400].map((s) => s * 1000);
  const step = steps.find((s) => span / s <= 8) ?? span / 8;
  const out: string[] = [];
  for (let t = t0; t <= t1 + 1; t += step) {
    const px = x(t).toFixed(1);
    out.push(
      `<line class="grid" x1="${px}" x2="${px}" y1="0" y2="${height}"/>` +
        `<text class="tick" x="${px}" y="${height + 14}" text-anchor="middle">${h(tickLabel((t - t0) / 1000))}</text>`,
    );
  }
  return out.join('');
}

/** Per-daemon Gantt timeline of crews: one row per daemon slot, one bar per crew. */
export function ganttSvg(view: SchoolView): string {
  const end = ms(view.timeline.end);
  const start = ms(view.timeline.start);
  const bars = view.timeline.bars;
  if (!bars.length || !Number.isFinite(start)) {
    return '<p class="empty" data-testid="gantt-empty">No crew has started yet.</p>';
  }
  const slotsOf = new Map<string, number>();
  for (const d of view.daemons) slotsOf.set(d.id, Math.max(d.slots, 1));
  for (const b of bars) slotsOf.set(b.daemon, Math.max(slotsOf.get(b.daemon) ?? 1, b.slot + 1));
  const daemons = [...slotsOf.keys()];
  const rowOf = new Map<string, number>();
  let rows = 0;
  for (const d of daemons) {
    rowOf.set(d, rows);
    rows += slotsOf.get(d)!;
  }
  const ROW = rowHeight(rows);
  const height = rows * ROW;
  const t1 = Math.max(end, start + 1000);
  const x = (t: number) => LABEL + ((t - start) / (t1 - start)) * (WIDTH - LABEL - 10);
  const parts: string[] = [];
  for (const d of daemons) {
    const y = rowOf.get(d)! * ROW;
    const k = slotsOf.get(d)!;
    parts.push(
      `<g data-testid="gantt-daemon-${h(slug(d))}" data-daemon="${h(d)}">` +
        `<rect class="lane-bg" x="0" y="${y}" width="${WIDTH}" height="${k * ROW}"/>` +
        `<text class="label" x="4" y="${y + Math.min(13, k * ROW - 1)}">${h(d)}</text>`,
    );
    for (let s = 0; s < k && ROW >= 18; s++) {
      parts.push(`<text class="slot" x="${LABEL - 6}" y="${y + s * ROW + 13}" text-anchor="end">${s}</text>`);
    }
    parts.push('</g>');
  }
  for (const b of bars) {
    const x0 = x(ms(b.start));
    const x1 = x(b.end ? ms(b.end) : end);
    const y = (rowOf.get(b.daemon) ?? 0) * ROW + b.slot * ROW + (ROW >= 18 ? 2 : 1);
    const w = Math.max(2, x1 - x0);
    const duration = ((b.end ? ms(b.end) : end) - ms(b.start)) / 1000;
    const tip = `#${b.issue} ${b.crewId} · ${b.agent} · ${b.daemon}/${b.slot} · ${b.outcome ?? b.status} · ${age(duration)}`;
    parts.push(
      `<rect class="bar ${outcomeClass(b)}" data-testid="gantt-bar" data-crew="${h(b.crewId)}" x="${x0.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${Math.max(2, ROW - 4)}" rx="2"><title>${h(tip)}</title></rect>`,
    );
  }
  return (
    `<svg class="chart" data-testid="gantt" role="img" aria-label="Crews per daemon slot over time" viewBox="0 0 ${WIDTH} ${height + AXIS}" width="100%">` +
    ticks(start, t1, x, height) +
    parts.join('') +
    '</svg>'
  );
}

/** Grading queue depth over time as a step line. */
export function queueSvg(view: SchoolView): string {
  const pts = view.queue.series.map((p) => ({ t: ms(p.at), d: p.depth })).filter((p) => Number.isFinite(p.t));
  if (!pts.length) return '<p class="empty" data-testid="queue-empty">No grading jobs yet.</p>';
  const height = 160;
  const t0 = pts[0]!.t;
  const t1 = Math.max(ms(view.generatedAt), pts[pts.length - 1]!.t, t0 + 1000);
  const max = Math.max(1, ...pts.map((p) => p.d));
  const x = (t: number) => 40 + ((t - t0) / (t1 - t0)) * (WIDTH - 50);
  const y = (d: number) => height - (d / max) * (height - 10);
  let path = `M${x(t0).toFixed(1)},${y(0).toFixed(1)}`;
  for (const p of pts) path += ` H${x(p.t).toFixed(1)} V${y(p.d).toFixed(1)}`;
  path += ` H${x(t1).toFixed(1)}`;
  const last = pts[pts.length - 1]!;
  return (
    `<svg class="chart" data-testid="queue-chart" data-points="${pts.length}" data-max="${max}" role="img" aria-label="Grading queue depth over time" viewBox="0 0 ${WIDTH} ${height + AXIS}" width="100%">` +
    ticks(t0, t1, x, height) +
    `<line class="axis" x1="40" x2="40" y1="0" y2="${height}"/>` +
    `<text class="tick" x="34" y="${y(max) + 4}" text-anchor="end">${max}</text>` +
    `<text class="tick" x="34" y="${height}" text-anchor="end">0</text>` +
    `<path class="depth" d="${path}"/>` +
    `<circle class="depth-now" cx="${x(last.t).toFixed(1)}" cy="${y(last.d).toFixed(1)}" r="3"><title>${h(`${last.d} waiting at ${new Date(last.t).toISOString()}`)}</title></circle>` +
    '</svg>'
  );
}
