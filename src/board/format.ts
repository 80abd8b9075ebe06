import type { HumanFigures } from './humans.js';
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
