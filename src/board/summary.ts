import { contestLine } from './contests.js';
import { controlLine } from './controls.js';
import { escapeCell } from '../curriculum/summary.js';
import { budgetLine } from '../dispatch/gates/budgets.js';
import {
  age,
  clip,
  costCells,
  costHeader,
  costNote,
  humansLine,
  ignoredLine,
  percent,
  score,
  spendLine,
  where,
} from './format.js';
import { ACTIVE_LANES, LANE_LABELS, LISTED_ITEMS, type LaneId, type SchoolView } from './model.js';

/**
 * Job-summary rendering from the same view model as `school status` and the HTML report, so every
 * action's summary shows the same numbers (docs/board.md: one view model, no second
 * implementation). Two forms: Markdown strings (for `core.summary.addRaw(md, true)`) and
 * `core.summary.addTable` rows. The core never imports @actions/core, so the row type is declared
 * structurally here.
 */

export interface SummaryCell {
  data: string;
  header?: boolean;
}
export type SummaryRow = Array<SummaryCell | string>;

/**
 * A Markdown cell or inline text: the curriculum summary's escaper (redacted, then every character
 * HTML or Markdown could act on becomes an entity), so issue text cannot open a tag, link or cell.
 */
export function mdCell(value: string | number | undefined): string {
  return value === undefined ? '' : escapeCell(String(value), 400);
}

function mdTable(head: string[], rows: Array<Array<string | number | undefined>>): string {
  const line = (cells: Array<string | number | undefined>) => `| ${cells.map(mdCell).join(' | ')} |`;
  return [line(head), `| ${head.map(() => '---').join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** `core.summary.addTable` inserts cells as HTML: the same escaper makes them inert. */
const cell = (v: string | number | undefined): string => mdCell(v ?? '');
const header = (...names: string[]): SummaryRow => names.map((n) => ({ data: cell(n), header: true }));

export function laneRows(view: SchoolView): SummaryRow[] {
  return [
    header('Lane', 'Count'),
    ...view.lanes.map((l) => [cell(l.label), cell(`${l.count}${l.incomplete ? '?' : ''}`)]),
  ];
}

export function leaderboardRows(view: SchoolView, limit = 10): SummaryRow[] {
  return [
    header('#', 'Agent', 'Score', 'Graded', 'Accepted', 'Rejected'),
    ...view.leaderboard.overall
      .slice(0, limit)
      .map((r) => [
        cell(r.rank),
        cell(r.agent),
        cell(score(r.score)),
        cell(r.count),
        cell(r.accepted ?? '—'),
        cell(r.rejected ?? '—'),
      ]),
  ];
}

export function daemonRows(view: SchoolView): SummaryRow[] {
  return [
    header('Daemon', 'Slots', 'Running', 'Planned', 'Load', 'Roster'),
    ...view.daemons.map((d) => [
      cell(d.id),
      cell(d.slots),
      cell(d.running),
      cell(d.planned),
      cell(percent(d.load)),
      cell(d.online ? 'online' : `offline: ${d.offlineReason ?? 'no heartbeat'}`),
    ]),
  ];
}

export function lanesMarkdown(view: SchoolView): string {
  return mdTable(
    view.lanes.map((l) => l.label),
    [view.lanes.map((l) => `${l.count}${l.incomplete ? '?' : ''}`)],
  );
}

/** State errors first: a summary never shows a healthy-looking school over corrupt state (N5.1). */
export function problemsMarkdown(view: SchoolView): string {
  if (view.healthy) return '';
  const lines = view.problems.map(
    (p) =>
      `- **${mdCell(p.file)}**: ${mdCell(p.message)}${p.quarantinedTo ? ` (quarantined copy: ${mdCell(p.quarantinedTo)})` : ''}`,
  );
  return [
    `> [!CAUTION]`,
    `> ${view.problems.length} state problem(s): the board may be incomplete.`,
    '',
    ...lines,
  ].join('\n');
}

export function controlMarkdown(view: SchoolView): string {
  const lines = view.pauses.active.map(
    (p) =>
      `**PAUSED** since ${mdCell(p.since)}${p.source ? ` (${mdCell(p.source)})` : ''}: ${mdCell(p.reason)}`,
  );
  if (view.review)
    lines.push(`**${mdCell(view.review.line[0]!.toUpperCase() + view.review.line.slice(1))}**`);
  lines.push(`Spend: ${mdCell(spendLine(view.spend))}`);
  for (const b of view.budgets) lines.push(`Budget: ${mdCell(budgetLine(b))}`);
  lines.push(`Grading queue: ${view.queue.depth} waiting, ${view.queue.deadLetters} dead letter(s)`);
  return lines.join('  \n');
}

export function leaderboardMarkdown(view: SchoolView, limit = 10): string {
  if (!view.leaderboard.overall.length) return '_No graded crews yet._';
  // The human-acceptance column once people have merged or closed a delivered pull request.
  const humans = view.leaderboard.overall.some((r) => r.human !== undefined);
  const table = mdTable(
    ['#', 'Agent', 'Score', 'Graded', 'Accepted', 'Rejected', ...(humans ? ['By humans'] : [])],
    view.leaderboard.overall
      .slice(0, limit)
      .map((r) => [
        r.rank,
        r.agent,
        score(r.score),
        r.count,
        r.accepted ?? '—',
        r.rejected ?? '—',
        ...(humans ? [r.human !== undefined ? `${score(r.human)} (${r.humanCount})` : '—'] : []),
      ]),
  );
  const line = humansLine(view.humans);
  const ignored = view.feedbackIgnored?.length
    ? `\n\nFeedback ignored:  \n${view.feedbackIgnored.map((f) => mdCell(ignoredLine(f))).join('  \n')}`
    : '';
  const contests = view.contests?.length
    ? `\n\nContests:  \n${view.contests.map((c) => mdCell(contestLine(c))).join('  \n')}`
    : '';
  const controls = view.controls?.length
    ? `\n\nStopped and steered:  \n${view.controls.map((c) => mdCell(controlLine(c))).join('  \n')}`
    : '';
  return (line ? `${table}\n\nBy humans: ${mdCell(line)}` : table) + contests + ignored + controls;
}

/** What each agent's work cost per domain, with the trend; every cell through `mdCell`. */
export function costsMarkdown(view: SchoolView, limit = 30): string {
  const { costs } = view;
  if (!costs.rows.length) return '';
  const more = costs.rows.length > limit ? `\n\n_… and ${costs.rows.length - limit} more._` : '';
  return `**Cost per agent and domain**\n\n${mdCell(costNote(costs))}\n\n${mdTable(costHeader(costs), costs.rows.slice(0, limit).map(costCells))}${more}`;
}

export function daemonsMarkdown(view: SchoolView): string {
  return mdTable(
    ['Daemon', 'Slots', 'Running', 'Planned', 'Load', 'Roster', 'Class'],
    view.daemons.map((d) => [
      d.id,
      d.slots,
      d.running,
      d.planned,
      percent(d.load),
      d.online ? 'online' : `offline: ${d.offlineReason ?? 'no heartbeat'}`,
      d.effectiveClass ?? '—',
    ]),
  );
}

export function itemsMarkdown(
  view: SchoolView,
  lanes: readonly LaneId[] = ACTIVE_LANES,
  limit = Math.min(15, LISTED_ITEMS),
): string {
  const parts: string[] = [];
  for (const id of lanes) {
    const lane = view.lanes.find((l) => l.id === id);
    if (!lane?.count) continue;
    const rows = lane.items
      .slice(0, limit)
      .map((i) => [
        `#${i.issue}`,
        clip(i.title, 60),
        i.crewId ?? '—',
        i.agent ?? '—',
        where(i.daemon, i.slot),
        age(i.ageSeconds),
        clip(i.reason ?? '', 80),
      ]);
    parts.push(
      `**${LANE_LABELS[id]} (${lane.count})**\n\n${mdTable(['Issue', 'Title', 'Crew', 'Agent', 'Where', 'Age', 'Reason'], rows)}`,
    );
    if (lane.count > limit) parts.push(`_… and ${lane.count - limit} more._`);
  }
  return parts.join('\n\n');
}

export type SummarySection = 'problems' | 'lanes' | 'control' | 'items' | 'daemons' | 'leaderboard' | 'costs';

/** Which board sections each action's job summary carries, after its own step-specific lines. */
export const ACTION_SECTIONS: Record<string, readonly SummarySection[]> = {
  'fetch-curriculum': ['problems', 'lanes'],
  'dispatch-crew': ['problems', 'lanes', 'control', 'items', 'daemons', 'costs'],
  'drain-grading': ['problems', 'lanes', 'control', 'leaderboard', 'costs'],
  'checkpoint-state': ['problems', 'lanes', 'control'],
};

/**
 * The board as Markdown for a job summary. `reportName` names the uploaded HTML report artifact so
 * the summary can point at it (artifact URLs are not known inside the job, and summaries must not
 * carry issue text in links).
 */
export function boardMarkdown(
  view: SchoolView,
  options: { sections?: readonly SummarySection[]; reportName?: string; heading?: string } = {},
): string {
  const sections = options.sections ?? [
    'problems',
    'lanes',
    'control',
    'items',
    'daemons',
    'leaderboard',
    'costs',
  ];
  const render: Record<SummarySection, () => string> = {
    problems: () => problemsMarkdown(view),
    lanes: () => lanesMarkdown(view),
    control: () => controlMarkdown(view),
    items: () => itemsMarkdown(view),
    daemons: () => daemonsMarkdown(view),
    leaderboard: () => `**Leaderboard**\n\n${leaderboardMarkdown(view)}`,
    costs: () => costsMarkdown(view),
  };
  const parts = [`### ${mdCell(options.heading ?? 'School board')}`];
  for (const s of sections) {
    const text = render[s]();
    if (text) parts.push(text);
  }
  if (options.reportName) {
    parts.push(
      `Full board: download the **${mdCell(options.reportName)}** artifact of this run (a self-contained HTML file).`,
    );
  }
  return parts.join('\n\n') + '\n';
}

/** The summary block an action appends: `core.summary.addRaw(actionSummaryMarkdown('drain-grading', view), true)`. */
export function actionSummaryMarkdown(
  action: keyof typeof ACTION_SECTIONS | string,
  view: SchoolView,
  reportName?: string,
): string {
  const sections = ACTION_SECTIONS[action] ?? ACTION_SECTIONS['checkpoint-state']!;
  return boardMarkdown(view, { sections, reportName });
}
