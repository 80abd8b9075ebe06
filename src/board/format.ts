import type { HumanFigures } from './humans.js';
import type { CostRow, CostTable, CostWindow } from './model.js';
/** Formatting shared by the terminal board, the HTML report and the job summaries. */

/** 45s, 12m, 3h04m, 2d03h: short, sortable by eye. */
export function age(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

export function usd(n: number): string {
  return `$${n.toFixed(2)}`;
}

export function percent(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}

export function score(n: number): string {
  return n.toFixed(3);
}

/** One line about spend against the cap; `undefined` cap means no cap is configured. */
export function spendLine(spend: {
  spentUsd: number;
  capUsd?: number;
  reached: boolean;
  fraction?: number;
}): string {
  if (spend.capUsd === undefined) return `${usd(spend.spentUsd)} spent (no cap configured)`;
  const pct = spend.fraction !== undefined ? ` (${percent(spend.fraction)})` : '';
  const reached = spend.reached ? ' — SPEND CAP REACHED, dispatch halted' : '';
  return `${usd(spend.spentUsd)} of ${usd(spend.capUsd)}${pct}${reached}`;
}

/** A cost per accepted crew or merged pull request, or a dash when there is none to divide by. */
export function costPer(n: number | undefined): string {
  return n === undefined ? '—' : usd(n);
}

/**
 * The trend of a cost row: spend per accepted crew over the last days against the days before,
 * e.g. `$1.20 vs $2.40 (−50%)`; a window without an accepted crew says how many crews it had.
 */
export function trendText(t: CostRow['trend']): string {
  const part = (w: CostWindow) =>
    w.costPerAcceptedUsd !== undefined
      ? usd(w.costPerAcceptedUsd)
      : w.crews > 0
        ? `none of ${w.crews} accepted`
        : 'no crews';
  const a = t.recent.costPerAcceptedUsd;
  const b = t.before.costPerAcceptedUsd;
  const change =
    a !== undefined && b !== undefined && b > 0
      ? a === b
        ? ' (same)'
        : ` (${a < b ? '−' : '+'}${Math.round((Math.abs(a - b) / b) * 100)}%)`
      : '';
  return `${part(t.recent)} vs ${part(t.before)}${change}`;
}

/** The cost table's column names (one place for the summary, the terminal and the report). */
export function costHeader(table: CostTable): string[] {
  const d = table.trendDays;
  return [
    'Agent',
    'Domain',
    'Crews',
    'Accepted',
    'Merged',
    'Spend',
    '$/accepted',
    '$/merged',
    `$/accepted: last ${d} d vs ${d} d before`,
  ];
}

export function costCells(r: CostRow): string[] {
  return [
    r.agent,
    r.domain,
    String(r.crews),
    String(r.accepted),
    String(r.merged),
    r.meteredUsd ? `${usd(r.spendUsd)} (${usd(r.meteredUsd)} metered)` : usd(r.spendUsd),
    costPer(r.costPerAcceptedUsd),
    costPer(r.costPerMergedUsd),
    trendText(r.trend),
  ];
}

/** What the cost table counts. */
export function costNote(table: CostTable): string {
  return `Finished crews the state holds${table.since ? ` (since ${table.since.slice(0, 10)})` : ''}; spend includes failed runs and reviews.`;
}

/** Cuts a string to `max` characters with an ellipsis; never splits a surrogate pair. */
export function clip(text: string, max: number): string {
  // Never more code points than UTF-16 units: a short string needs no count.
  if (text.length <= max) return text;
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, Math.max(1, max - 1)).join('') + '…';
}

export function where(daemon: string | undefined, slot: number | undefined): string {
  if (!daemon) return '—';
  return slot === undefined ? daemon : `${daemon}/${slot}`;
}

/** One line on what people did with the delivered pull requests, or undefined before any settled. */
export function humansLine(h: HumanFigures | undefined): string | undefined {
  if (!h || h.settled === 0) return undefined;
  const parts = [
    `${h.merged} of ${h.settled} delivered pull request(s) merged${h.acceptance !== undefined ? ` (${percent(h.acceptance)} acceptance by humans)` : ''}`,
    ...(h.revisionsPerMerged !== undefined
      ? [`${h.revisionsPerMerged.toFixed(2)} revisions per merged PR`]
      : []),
    ...(h.costPerMergedUsd !== undefined ? [`${usd(h.costPerMergedUsd)} per merged PR`] : []),
  ];
  return parts.join('; ');
}

/** Why a piece of feedback was not acted on, in one line. */
export function ignoredLine(f: {
  issue: number;
  pr: number;
  id: string;
  author: string;
  reason: string;
}): string {
  return `#${f.issue} (pull request #${f.pr}) ${f.id} by ${f.author}: ${f.reason}`;
}
