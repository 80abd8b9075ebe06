import { contestLine } from './contests.js';
import { controlLine } from './controls.js';
import { h } from './escape.js';
import { budgetLine } from '../dispatch/gates/budgets.js';
import {
  age,
  costCells,
  costHeader,
  costNote,
  humansLine,
  ignoredLine,
  percent,
  score,
  spendLine,
  usd,
  where,
} from './format.js';
import { LANE_LABELS, type BoardItem, type Lane, type SchoolView } from './model.js';
import { ganttSvg, queueSvg } from './svg.js';

/**
 * `school report --html`: one self-contained file. Inline CSS and inline SVG only — no script, no
 * font, no image, no link to anything outside the file — so it opens the same from an artifact, a
 * laptop or an air-gapped machine, and viewing it makes no network request. Every string passes the
 * redactor and is HTML-escaped (`h`). Stable `data-testid`s for tests and scrapers.
 */

/** Items per lane in the report; the rest are counted, the JSON view has them all. */
const ITEMS_PER_LANE = 100;

const CSS = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1b1f24;--mute:#5b6470;--line:#d9dde3;--ok:#2e8b57;--bad:#c0392b;--warn:#d68910;--run:#2f6fd6;--dead:#6c3483}
*{box-sizing:border-box}body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--ink)}
header{padding:16px 24px;background:#1b1f24;color:#fff}header h1{margin:0 0 4px;font-size:20px}header p{margin:0;color:#c9d1d9;font-size:12px}
main{padding:16px 24px}section.block{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:0 0 16px}
h2{font-size:16px;margin:0 0 8px}.board{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px}
.lane{background:var(--card);border:1px solid var(--line);border-top:4px solid var(--mute);border-radius:6px;padding:8px;min-height:80px}
.lane h3{margin:0 0 6px;font-size:13px;display:flex;justify-content:space-between}.lane .count{font-size:18px;font-weight:700}
.lane-running{border-top-color:var(--run)}.lane-accepted{border-top-color:var(--ok)}.lane-rejected,.lane-stopped{border-top-color:var(--bad)}
.lane-dead_letter{border-top-color:var(--dead)}.lane-paused,.lane-grading{border-top-color:var(--warn)}
.lane ul{list-style:none;margin:0;padding:0;max-height:320px;overflow:auto}.lane li{border-top:1px solid var(--line);padding:4px 0;font-size:12px}
.lane li .t,.lane li .m{display:block;word-break:break-word}.lane li .m{color:var(--mute)}.incomplete{color:var(--bad);font-size:11px}
.errors{border-color:var(--bad);background:#fdf0ee}.errors code{word-break:break-all}.pause{color:var(--bad);font-weight:700}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line)}th{color:var(--mute);font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}.empty{color:var(--mute)}
svg.chart{display:block;background:#fff}svg .lane-bg{fill:#fafbfc;stroke:var(--line)}svg .label{font-size:11px;font-weight:600;fill:var(--ink)}
svg .slot,svg .tick{font-size:10px;fill:var(--mute)}svg .grid{stroke:#eef0f3}svg .axis{stroke:var(--mute)}
svg .bar-ok{fill:var(--ok)}svg .bar-failed{fill:var(--bad)}svg .bar-running{fill:var(--run)}svg .bar-paused{fill:var(--warn)}svg .bar-cancelled{fill:#999}
svg .depth{fill:none;stroke:var(--run);stroke-width:2}svg .depth-now{fill:var(--run)}
.legend span{display:inline-block;margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
`;

function item(i: BoardItem): string {
  const meta = [
    i.crewId,
    i.agent,
    i.daemon ? where(i.daemon, i.slot) : undefined,
    i.ageSeconds !== undefined ? age(i.ageSeconds) : undefined,
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    `<li data-testid="item" data-issue="${i.issue}"${i.crewId ? ` data-crew="${h(i.crewId)}"` : ''}>` +
    `<span class="t">#${i.issue} ${h(i.title)}${i.repair ? ' <em>(repair)</em>' : ''}</span>` +
    (meta ? `<span class="m">${h(meta)}</span>` : '') +
    (i.reason ? `<span class="m">${h(i.reason)}</span>` : '') +
    (i.delivery ? `<span class="m" data-testid="delivery">${delivery(i.delivery)}</span>` : '') +
    '</li>'
  );
}

/** Where accepted work went, as text: the page stays self-contained (no link leaves the file). */
function delivery(d: NonNullable<BoardItem['delivery']>): string {
  return d.url ? `pull request ${h(d.url)}` : `branch ${h(d.branch)}`;
}

function lane(l: Lane): string {
  const more = l.count > ITEMS_PER_LANE ? `<li class="m">… and ${l.count - ITEMS_PER_LANE} more</li>` : '';
  return (
    `<section class="lane lane-${l.id}" id="lane-${l.id}" data-testid="lane-${l.id}" data-count="${l.count}">` +
    `<h3><span>${h(l.label)}</span><span class="count" data-testid="lane-count-${l.id}">${l.count}</span></h3>` +
    (l.incomplete ? `<p class="incomplete">${h(l.incomplete)}</p>` : '') +
    `<ul>${l.items.slice(0, ITEMS_PER_LANE).map(item).join('')}${more}</ul></section>`
  );
}

function errors(view: SchoolView): string {
  if (view.healthy) return '';
  const rows = view.problems
    .map(
      (p) =>
        `<li data-testid="problem" data-file="${h(p.file)}"><strong>${h(p.file)}</strong>: ${h(p.message)}` +
        (p.quarantinedTo
          ? `<br>quarantined copy: <code data-testid="quarantine-path">${h(p.quarantinedTo)}</code>`
          : '') +
        '</li>',
    )
    .join('');
  return `<section class="block errors" id="lane-error" data-testid="lane-error" data-count="${view.problems.length}"><h2>${h(LANE_LABELS.error)} (${view.problems.length})</h2><p>The board may be incomplete until these are repaired.</p><ul>${rows}</ul></section>`;
}

function control(view: SchoolView): string {
  const pauses = view.pauses.active.length
    ? view.pauses.active
        .map(
          (p) =>
            `<p class="pause" data-testid="pause">PAUSED since ${h(p.since)}${p.source ? ` (${h(p.source)})` : ''}: ${h(p.reason)}</p>`,
        )
        .join('')
    : '<p data-testid="no-pause">Not paused.</p>';
  const agents = (view.pauses.agents ?? [])
    .map(
      (p) =>
        `<p data-testid="agent-pause">Agent ${h(p.agent)} paused since ${h(p.since)} until ${h(p.until ?? 'cleared')}: ${h(p.reason)}; other agents are still planned</p>`,
    )
    .join('');
  const cleared = view.pauses.lastCleared
    ? `<p>Last pause cleared ${h(view.pauses.lastCleared.at)}: ${h(view.pauses.lastCleared.reason)}</p>`
    : '';
  // Back-pressure on review (src/dispatch/gates/back-pressure.ts): the line the plan prints.
  const review = view.review
    ? `<p class="${view.review.full || view.review.agents.some((a) => a.full) ? 'pause' : ''}" data-testid="review" data-waiting="${view.review.waiting}">${h(view.review.line[0]!.toUpperCase() + view.review.line.slice(1))}</p>`
    : '';
  return (
    `<section class="block" data-testid="control"><h2>Pauses and spend</h2>${pauses}${agents}${cleared}${review}` +
    `<p data-testid="spend" data-spent="${view.spend.spentUsd}"${view.spend.capUsd !== undefined ? ` data-cap="${view.spend.capUsd}"` : ''}>Spend: ${h(spendLine(view.spend))}</p>` +
    budgets(view) +
    `<p>Grading queue: <span data-testid="queue-depth">${view.queue.depth}</span> waiting, ${view.queue.deadLetters} dead letter(s).</p></section>`
  );
}

function budgets(view: SchoolView): string {
  if (!view.budgets.length) return '';
  const items = view.budgets
    .map(
      (b) =>
        `<li data-testid="budget" data-kind="${b.kind}" data-left="${b.leftUsd}" data-reached="${b.reached}">${h(budgetLine(b))}</li>`,
    )
    .join('');
  return `<h3>Budgets</h3><ul data-testid="budgets">${items}</ul>`;
}

function costs(view: SchoolView): string {
  if (!view.costs.rows.length) return '';
  const head = costHeader(view.costs)
    .map((c) => `<th>${h(c)}</th>`)
    .join('');
  const rows = view.costs.rows
    .map(
      (r) =>
        `<tr data-testid="cost-row" data-agent="${h(r.agent)}" data-domain="${h(r.domain)}">${costCells(r)
          .map((c, i) => `<td${i >= 2 ? ' class="n"' : ''}>${h(c)}</td>`)
          .join('')}</tr>`,
    )
    .join('');
  return `<section class="block" id="costs"><h2>Cost per agent and domain</h2><p>${h(costNote(view.costs))}</p><table data-testid="costs"><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></section>`;
}

function leaderboard(view: SchoolView): string {
  const humans = view.leaderboard.overall.some((r) => r.human !== undefined);
  const humanCell = (r: SchoolView['leaderboard']['overall'][number]) =>
    humans
      ? `<td class="n" data-testid="human-score">${r.human !== undefined ? `${score(r.human)} (${r.humanCount})` : '—'}</td>`
      : '';
  const rows = view.leaderboard.overall
    .map(
      (r) =>
        `<tr data-testid="leader-row" data-agent="${h(r.agent)}" data-rank="${r.rank}"><td class="n">${r.rank}</td><td>${h(r.agent)}</td><td class="n">${score(r.score)}</td><td class="n">${r.count}</td><td class="n">${r.accepted ?? '—'}</td><td class="n">${r.rejected ?? '—'}</td>${humanCell(r)}</tr>`,
    )
    .join('');
  const cells = view.leaderboard.cells
    .map(
      (c) =>
        `<tr data-testid="cell-row"><td>${h(c.domain)}</td><td class="n">${c.difficulty}</td><td>${h(c.agent)}</td><td class="n">${score(c.score)}</td><td class="n">${c.count}</td></tr>`,
    )
    .join('');
  const overall = rows
    ? `<table data-testid="leaderboard"><thead><tr><th>#</th><th>agent</th><th>score</th><th>graded</th><th>accepted</th><th>rejected</th>${humans ? '<th>by humans</th>' : ''}</tr></thead><tbody>${rows}</tbody></table>`
    : '<p class="empty" data-testid="leaderboard-empty">No graded crews yet.</p>';
  const perCell = cells
    ? `<h3>Per domain × difficulty</h3><table data-testid="leaderboard-cells"><thead><tr><th>domain</th><th>difficulty</th><th>agent</th><th>score</th><th>graded</th></tr></thead><tbody>${cells}</tbody></table>`
    : '';
  const byHumans = humansLine(view.humans);
  const humanLine = byHumans ? `<p data-testid="by-humans">By humans: ${h(byHumans)}</p>` : '';
  const ignored = view.feedbackIgnored?.length
    ? `<h3>Feedback ignored</h3><ul data-testid="feedback-ignored">${view.feedbackIgnored.map((f) => `<li>${h(ignoredLine(f))}</li>`).join('')}</ul>`
    : '';
  const contests = view.contests?.length
    ? `<h3>Contests</h3><ul data-testid="contests">${view.contests.map((c) => `<li>${h(contestLine(c))}</li>`).join('')}</ul>`
    : '';
  const controls = view.controls?.length
    ? `<h3>Stopped and steered</h3><ul data-testid="controls">${view.controls.map((c) => `<li>${h(controlLine(c))}</li>`).join('')}</ul>`
    : '';
  return `<section class="block" id="leaderboard"><h2>Leaderboard</h2>${overall}${humanLine}${contests}${ignored}${controls}${perCell}</section>`;
}

function daemons(view: SchoolView): string {
  const rows = view.daemons
    .map(
      (d) =>
        `<tr data-testid="daemon-row" data-daemon="${h(d.id)}"><td>${h(d.id)}${d.configured ? '' : ' <em>(not configured)</em>'}</td><td class="n">${d.slots}</td><td class="n">${d.running}</td><td class="n">${d.planned}</td><td class="n">${percent(d.load)}</td><td class="n">${d.finished}</td><td class="n">${h(age(d.busySeconds))}</td><td data-testid="daemon-online" data-online="${d.online}">${d.online ? `online (seen ${h(d.lastSeen)})` : `<strong>offline</strong>: ${h(d.offlineReason ?? 'no heartbeat')}`}</td><td>${h(d.effectiveClass ?? '—')}</td></tr>`,
    )
    .join('');
  return `<table data-testid="daemons"><thead><tr><th>daemon</th><th>slots</th><th>running</th><th>planned</th><th>load</th><th>finished</th><th>busy</th><th>roster</th><th>class</th></tr></thead><tbody>${rows}</tbody></table>`;
}

const LEGEND =
  '<p class="legend"><span><i style="background:var(--run)"></i>running</span><span><i style="background:var(--ok)"></i>succeeded</span><span><i style="background:var(--bad)"></i>failed</span><span><i style="background:var(--warn)"></i>paused (usage / overload)</span><span><i style="background:#999"></i>cancelled</span></p>';

export function renderHtml(view: SchoolView): string {
  const title = `School board — ${view.generatedAt}`;
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    // No network at view time, even if a future edit slips in a reference.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${h(title)}</title><style>${CSS}</style></head><body>`,
    `<header><h1>School board</h1><p data-testid="generated">Generated ${h(view.generatedAt)} from <code>${h(view.stateDir)}</code> · ${view.healthy ? 'state healthy' : `<strong>${view.problems.length} state problem(s)</strong>`}</p></header>`,
    '<main>',
    errors(view),
    `<section class="block" id="lanes"><h2>Lanes</h2><div class="board" data-testid="board">${view.lanes.map(lane).join('')}</div></section>`,
    control(view),
    leaderboard(view),
    costs(view),
    `<section class="block" id="fleet"><h2>Fleet</h2>${daemons(view)}<h3>Crews per daemon slot</h3>${LEGEND}${ganttSvg(view)}</section>`,
    `<section class="block" id="queue"><h2>Grading queue depth</h2>${queueSvg(view)}</section>`,
    `<footer class="empty" style="padding:0 24px 16px">Spend ${h(usd(view.spend.spentUsd))} · ${view.lanes.reduce((n, l) => n + l.count, 0)} issue(s) on the board</footer>`,
    '</main></body></html>',
    '',
  ].join('\n');
}
