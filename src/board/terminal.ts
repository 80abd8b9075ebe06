import { contestLine } from './contests.js';
import { controlLine } from './controls.js';
import { renderText } from '../grading/report.js';
import { redactText } from '../security/redact.js';
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
import { ACTIVE_LANES, LANE_LABELS, LISTED_ITEMS, type BoardItem, type SchoolView } from './model.js';

/** Items listed per active lane before "… and N more" (an abridged view lists as many). */
const ITEMS_PER_LANE = LISTED_ITEMS;
const LEADERS = 10;

/** The grading report's plain-text table, indented under a heading. */
function table(rows: string[][], indent = '  '): string[] {
  return renderText(rows)
    .trimEnd()
    .split('\n')
    .map((line) => indent + line);
}

function itemRow(item: BoardItem): string[] {
  const flags = item.repair ? ' (repair)' : '';
  return [
    `#${item.issue}`,
    clip(item.title, 48) + flags,
    item.crewId ?? '—',
    item.agent ?? '—',
    where(item.daemon, item.slot),
    age(item.ageSeconds),
    clip(item.delivery ? `→ ${item.delivery.url ?? item.delivery.branch}` : (item.reason ?? ''), 60),
  ];
}

/**
 * `school status`: counts per lane, the items of the active lanes, pauses with their reasons, spend
 * against the cap, per-daemon load and the leaderboard. Renders the view model; computes nothing.
 */
export function renderTerminal(view: SchoolView): string {
  const out: string[] = [];
  out.push(`School board  ${view.generatedAt}  state ${view.stateDir}`);
  if (!view.healthy) {
    out.push(
      '',
      `!! ${LANE_LABELS.error.toUpperCase()} (${view.problems.length}): the board below may be incomplete`,
    );
    for (const p of view.problems) {
      out.push(`  ${p.file}: ${p.message}`);
      if (p.quarantinedTo) out.push(`    quarantined copy: ${p.quarantinedTo}`);
    }
  }
  out.push('', 'Lanes');
  out.push(
    ...table(
      view.lanes.map((l) => [l.label, String(l.count) + (l.incomplete ? '?' : ''), l.incomplete ?? '']),
    ),
  );

  if (view.alerts?.length) {
    // The school's failures, not the crews': what to fix (docs/grading.md).
    out.push('', "The school's own failures (not the crews'):");
    for (const a of view.alerts)
      out.push(`  ${a.kind}${a.issue ? ` (issue #${a.issue})` : ''} ${a.at}: ${a.detail}`);
  }
  out.push('', ...pauseLines(view.pauses));
  if (view.review) out.push('', `${view.review.line[0]!.toUpperCase()}${view.review.line.slice(1)}`);
  out.push('', `Spend: ${spendLine(view.spend)}`);
  if (view.budgets.length) out.push('Budgets', ...view.budgets.map((b) => `  ${budgetLine(b)}`));
  out.push(`Grading queue: ${view.queue.depth} waiting, ${view.queue.deadLetters} dead letter(s)`);

  for (const id of ACTIVE_LANES) {
    const lane = view.lanes.find((l) => l.id === id);
    if (!lane || lane.count === 0) continue;
    out.push('', `${lane.label} (${lane.count})`);
    out.push(
      ...table([
        ['issue', 'title', 'crew', 'agent', 'where', 'age', 'reason'],
        ...lane.items.slice(0, ITEMS_PER_LANE).map(itemRow),
      ]),
    );
    if (lane.count > ITEMS_PER_LANE)
      out.push(`  … and ${lane.count - ITEMS_PER_LANE} more (see --json or the HTML report)`);
  }

  if (view.daemons.length) {
    out.push('', 'Daemons');
    out.push(
      ...table([
        ['daemon', 'slots', 'running', 'planned', 'load', 'roster', 'class'],
        ...view.daemons.map((d) => [
          d.id + (d.configured ? '' : ' (not configured)'),
          String(d.slots),
          String(d.running),
          String(d.planned),
          percent(d.load),
          d.online ? `online (seen ${d.lastSeen})` : `OFFLINE: ${d.offlineReason ?? 'no heartbeat'}`,
          d.effectiveClass ?? '—',
        ]),
      ]),
    );
  }

  out.push('', 'Leaderboard');
  // The human-acceptance column shows once people have merged or closed a delivered pull request.
  const humans = view.leaderboard.overall.some((r) => r.human !== undefined);
  if (view.leaderboard.overall.length === 0) out.push('  (no graded crews yet)');
  else
    out.push(
      ...table([
        ['rank', 'agent', 'score', 'graded', 'accepted', 'rejected', ...(humans ? ['by humans'] : [])],
        ...view.leaderboard.overall
          .slice(0, LEADERS)
          .map((r) => [
            String(r.rank),
            r.agent,
            score(r.score),
            String(r.count),
            String(r.accepted ?? '—'),
            String(r.rejected ?? '—'),
            ...(humans ? [r.human !== undefined ? `${score(r.human)} (${r.humanCount})` : '—'] : []),
          ]),
      ]),
    );
  const byHumans = humansLine(view.humans);
  if (byHumans) out.push('', `By humans: ${byHumans}`);
  if (view.costs.rows.length) {
    out.push('', 'Cost per agent and domain', `  ${costNote(view.costs)}`);
    out.push(
      ...table([costHeader(view.costs).map((c) => c.toLowerCase()), ...view.costs.rows.map(costCells)]),
    );
  }
  if (view.contests?.length) out.push('', 'Contests', ...view.contests.map((c) => `  ${contestLine(c)}`));
  if (view.feedbackIgnored?.length)
    out.push('', 'Feedback ignored', ...view.feedbackIgnored.map((f) => `  ${ignoredLine(f)}`));
  if (view.controls?.length)
    out.push('', 'Stopped and steered', ...view.controls.map((c) => `  ${controlLine(c)}`));
  return redactText(out.join('\n')) + '\n';
}

/**
 * Whether launches wait and why: the school's pauses, each agent's, the last clear. `school status`
 * and `school pause --status` print these same lines from the same facts (./view.ts `pauseFacts`).
 */
export function pauseLines(pauses: SchoolView['pauses']): string[] {
  const { active, agents = [], lastCleared } = pauses;
  const out = [active.length ? `paused: yes (${active.length} pause(s))` : 'paused: no'];
  for (const p of active) {
    out.push(`  PAUSED since ${p.since}${p.source ? ` (${p.source})` : ''}: ${p.reason}`);
  }
  if (active.length) {
    const lifts = active.every((p) => p.until)
      ? active
          .map((p) => p.until!)
          .sort()
          .at(-1)
      : undefined;
    out.push(
      lifts
        ? `  New launches wait until ${lifts}, when the pause lifts by itself, or until \`school pause --clear\`.`
        : '  New launches wait until the pause is cleared (`school pause --clear`).',
    );
  }
  for (const p of agents) {
    out.push(
      `agent ${p.agent} paused since ${p.since} until ${p.until ?? 'cleared'}${p.source ? ` (${p.source})` : ''}: ${p.reason}; other agents are still planned`,
    );
  }
  if (lastCleared) out.push(`last cleared: ${lastCleared.at} (${lastCleared.reason})`);
  return out;
}
