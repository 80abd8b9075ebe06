import { contestLines } from './contests.js';
import type { SchoolConfig } from '../config/schema.js';
import type { CrewRegistry } from '../dispatch/logs/registry.js';
import { redact, redactText } from '../security/redact.js';
import { schoolAlerts } from './alerts.js';
import type { StateLayout } from '../state/layout.js';
import { controlLines } from './controls.js';
import { budgetStandings } from '../dispatch/gates/budgets.js';
import { loadBoardSources } from './board-fold.js';
import { costTable } from './costs.js';
import { daemonLoads, leaderCells, leaderRows, queued } from './domains.js';
import { buildLanes, cleanText } from './lanes.js';
import { humanFigures, humanScore, type HumanFigures } from './humans.js';
import { ignoredFeedback } from '../feedback/revisions.js';
import { openPullRequests, reviewLine, reviewLoad } from '../dispatch/gates/back-pressure.js';
import { pauseStatusOf } from '../dispatch/gates/pause.js';
import type { ActivePause } from '../dispatch/logs/school-log.js';
import {
  IGNORED_SHOWN,
  LANES,
  type BoardSources,
  type LaneId,
  type PauseEntry,
  type SchoolView,
  type SlotBar,
} from './model.js';

export type { SchoolView } from './model.js';

/**
 * Computes the board from the state directory alone (seed 000 §2), with each domain's own fold,
 * folded once and reused across runs (src/board/board-fold.ts). It writes nothing but the shared
 * reader's quarantine of a corrupt complete line (N5.1) and the persisted fold under `views/`.
 * Never throws on bad state: every source that cannot be read becomes a problem on the board,
 * lanes that depend on it say they may be incomplete, and the rest still renders.
 */
export function buildView(
  layout: StateLayout,
  config: SchoolConfig,
  now: Date = new Date(),
  options: ViewOptions = {},
): SchoolView {
  const view = viewOf(loadBoardSources(layout), layout.root, config, now, options);
  // The school's own failures (a red base, an environment that failed a verification): ./alerts.ts.
  const alerts = schoolAlerts(layout);
  // Who stopped or steered which crew (./controls.ts).
  const controls = controlLines(layout);
  return { ...view, ...(alerts.length ? { alerts } : {}), ...(controls.length ? { controls } : {}) };
}

/**
 * What a view lists. By default everything: every item of every lane and every crew's bar on the
 * timeline (`--json`, the HTML report). A board that shows a few items per lane (the terminal, job
 * summaries) asks for an abridged view: each lane lists its `itemsPerLane` oldest items and still
 * counts all of them, and the timeline has no bars. Its lanes are the full view's lanes cut short.
 */
export interface ViewOptions {
  itemsPerLane?: number;
}

/** The view from folded sources (pure: the same sources, config and time give the same view). */
export function viewOf(
  sources: BoardSources,
  stateDir: string,
  config: SchoolConfig,
  now: Date = new Date(),
  options: ViewOptions = {},
): SchoolView {
  const abridged = options.itemsPerLane;
  const { registry, curriculum, grading, ledger, school, spend, problems } = sources;
  const pauses = pauseFacts(school, now);
  const active = pauses.active;
  const lanes = buildLanes({
    trust: config.curriculum.trust,
    now,
    registry,
    curriculum,
    queue: grading?.state,
    pausedReason: active[0]?.reason,
    requeues: school?.requeues,
    deliveries: sources.deliveries,
    itemsPerLane: abridged,
  });
  markIncomplete(lanes, { crews: !!registry, grading: !!grading, curriculum: !!curriculum });
  const counts = Object.fromEntries(LANES.map((l) => [l, 0])) as Record<LaneId, number>;
  for (const lane of lanes) counts[lane.id] = lane.count;

  const jobs = Object.values(grading?.state.jobs ?? {});
  const spentUsd = spend?.totalUsd ?? 0;

  const view: SchoolView = {
    schema: 1,
    generatedAt: now.toISOString(),
    stateDir,
    healthy: problems.length === 0,
    problems,
    lanes,
    counts,
    daemons: daemonLoads(config, registry, school, now).map((d) => ({
      ...d,
      load: round(d.load, 4),
      busySeconds: round(d.busySeconds, 3),
    })),
    timeline: timeline(abridged === undefined ? registry : undefined, now),
    leaderboard: leaderboardOf(ledger),
    ...(sources.feedback && Object.keys(sources.feedback.settled).length > 0
      ? { humans: roundHumans(humanFigures(sources.feedback, grading?.state, spentUsd)) }
      : {}),
    ...(contestLines(ledger).length > 0 ? { contests: contestLines(ledger) } : {}),
    ...(Object.keys(sources.feedback?.ignored ?? {}).length > 0
      ? { feedbackIgnored: ignoredFeedback(sources.feedback!).slice(0, IGNORED_SHOWN) }
      : {}),
    queue: {
      depth: grading ? queued(grading.state) : 0,
      deadLetters: jobs.filter((j) => j.status === 'dead_letter').length,
      series: grading?.series ?? [],
    },
    spend: spendAgainstCap(spentUsd, config.dispatch.spendCap),
    budgets: budgetsOf(config, spend, now, registry),
    costs: costTable({
      now,
      registry,
      grading: grading?.state,
      feedback: sources.feedback,
      spend,
      curriculum,
    }),
    ...reviewOf(config, sources),
    pauses,
    ...(abridged !== undefined ? { abridged: { itemsPerLane: abridged } } : {}),
  };
  return redactView(view);
}

/**
 * Back-pressure on review, as the plan counts it (src/dispatch/gates/back-pressure.ts): shown while a
 * delivered pull request waits. Unread feedback cannot tell merged from open: nothing is shown.
 */
function reviewOf(config: SchoolConfig, sources: BoardSources): Pick<SchoolView, 'review'> {
  const { feedback, registry } = sources;
  if (!feedback || !registry) return {};
  const open = openPullRequests(sources.deliveries, (pr) => feedback.settled[pr] !== undefined);
  if (open.length === 0) return {};
  const load = reviewLoad(config, open, registry);
  return { review: { ...load, line: reviewLine(load) } };
}

/**
 * The pauses in force at `now`, the school's and each agent's, and the last clear: one reading of
 * `school.jsonl` (src/dispatch/gates/pause.ts `pauseStatusOf`) for the board, `school status` and
 * `school pause --status`. Reasons are cleaned for the board.
 */
export function pauseFacts(school: BoardSources['school'], now: Date): SchoolView['pauses'] {
  const s = pauseStatusOf(school ?? { pauses: [] }, now);
  const entry = (p: ActivePause): PauseEntry => ({
    reason: cleanText(p.reason, 400),
    since: p.at,
    source: p.source,
    crewId: p.crewId,
    issue: p.issueNumber,
    until: p.until,
  });
  return {
    active: s.pauses.map(entry),
    ...(s.agentPauses.length ? { agents: s.agentPauses.map((p) => ({ ...entry(p), agent: p.agent! })) } : {}),
    lastCleared: s.lastCleared,
  };
}

/** The leaderboard: each agent's score (and its human score), and each cell's. */
function leaderboardOf(ledger: BoardSources['ledger']): SchoolView['leaderboard'] {
  if (!ledger) return { overall: [], cells: [] };
  return {
    overall: leaderRows(ledger).map((r) => {
      const h = humanScore(ledger, r.agent);
      return {
        ...r,
        score: round(r.score, 4),
        ...(h ? { human: round(h.score, 4), humanCount: h.count } : {}),
      };
    }),
    cells: leaderCells(ledger).map((c) => ({ ...c, score: round(c.score, 4) })),
  };
}

/** What was spent against the spend cap, when one is set. */
function spendAgainstCap(spentUsd: number, capUsd: number | undefined): SchoolView['spend'] {
  return {
    spentUsd: round(spentUsd, 4),
    ...(capUsd !== undefined
      ? {
          capUsd,
          reached: spentUsd >= capUsd,
          ...(capUsd > 0 ? { fraction: round(spentUsd / capUsd, 4) } : {}),
        }
      : { reached: false }),
  };
}

/** The daily budgets' standings, the running crews' own among them. */
function budgetsOf(
  config: SchoolConfig,
  spend: BoardSources['spend'],
  now: Date,
  registry: BoardSources['registry'],
): SchoolView['budgets'] {
  const running = Object.values(registry?.crews ?? {})
    .filter((c) => c.status === 'running')
    .map((c) => c.crewId)
    .sort();
  return budgetStandings(config, spend, now, running).map((b) => ({
    ...b,
    ...(b.spentUsd !== undefined ? { spentUsd: round(b.spentUsd, 4) } : {}),
    leftUsd: round(b.leftUsd, 4),
  }));
}

/**
 * Everything the board shows passes the redactor once more. Lane items and timeline bars (the bulk
 * of a large board) take a direct pass over their string fields, with repeated values (agents,
 * daemons, reasons) redacted once; the rest goes through the structural redactor.
 */
function redactView(view: SchoolView): SchoolView {
  const memo = new Map<string, string>();
  const text = (s: string): string => {
    let v = memo.get(s);
    if (v === undefined) memo.set(s, (v = redactText(s)));
    return v;
  };
  // crewId is an identity field (the redactor leaves it everywhere); titles and reasons come out of
  // cleanText, which redacts before it clips, so a second pass would find nothing. Items and bars
  // were built for this view alone: they are redacted in place.
  const strings = <T extends object>(o: T): T => {
    const r = o as Record<string, unknown>;
    for (const k in r) {
      const v = r[k];
      if (typeof v === 'string' && k !== 'crewId' && k !== 'title' && k !== 'reason') r[k] = text(v);
    }
    return o;
  };
  const { lanes, timeline, ...rest } = view;
  const safe = redact(rest);
  return {
    ...safe,
    lanes: lanes.map((l) => {
      const lane = strings({ ...l });
      lane.items = l.items.map(strings);
      return lane;
    }),
    timeline: { ...strings({ ...timeline }), bars: timeline.bars.map(strings) },
  };
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/** A lane never reads as confidently empty when the log behind it is unreadable (N5.1). */
function markIncomplete(
  lanes: SchoolView['lanes'],
  ok: { crews: boolean; grading: boolean; curriculum: boolean },
): void {
  const missing = (flags: Array<[boolean, string]>) => flags.filter(([good]) => !good).map(([, f]) => f);
  for (const lane of lanes) {
    const files =
      lane.id === 'ready'
        ? missing([
            [ok.crews, 'crews.jsonl'],
            [ok.curriculum, 'curriculum.jsonl'],
            [ok.grading, 'grading.jsonl'],
          ])
        : lane.id === 'planned' || lane.id === 'running' || lane.id === 'paused'
          ? missing([[ok.crews, 'crews.jsonl']])
          : missing([
              [ok.crews, 'crews.jsonl'],
              [ok.grading, 'grading.jsonl'],
            ]);
    if (files.length) lane.incomplete = `${files.join(', ')} unreadable: this lane may be missing items`;
  }
}

/**
 * Daemon, slot, start, each in localeCompare's order. Daemons are ranked once; starts in the one
 * shape `toISOString` writes differ only in digits at the same places, where localeCompare's order
 * is the code-unit order, so they are compared directly (any other shape goes to the collator).
 */
export function timelineOrder(bars: readonly SlotBar[]): (a: SlotBar, b: SlotBar) => number {
  const { compare } = new Intl.Collator();
  const rank = new Map<string, number>();
  let r = 0;
  let prev: string | undefined;
  for (const d of [...new Set(bars.map((b) => b.daemon))].sort(compare)) {
    if (prev !== undefined && compare(prev, d) !== 0) r++;
    rank.set(d, r);
    prev = d;
  }
  const iso = bars.every((b) => ISO.test(b.start));
  const start = iso ? (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0) : compare;
  return (a, b) => rank.get(a.daemon)! - rank.get(b.daemon)! || a.slot - b.slot || start(a.start, b.start);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function timeline(registry: CrewRegistry | undefined, now: Date): SchoolView['timeline'] {
  const bars: SlotBar[] = [];
  for (const c of Object.values(registry?.crews ?? {})) {
    if (!c.startedAt) continue;
    const bar: SlotBar = {
      crewId: c.crewId,
      issue: c.issueNumber,
      daemon: c.daemon,
      slot: c.slot ?? 0,
      agent: c.agent,
      start: c.startedAt,
      status: c.status === 'finished' ? 'finished' : 'running',
    };
    if (c.finishedAt) bar.end = c.finishedAt;
    if (c.outcome) bar.outcome = c.outcome;
    bars.push(bar);
  }
  // The order's collator is costly to set up in a new process: none for an empty timeline.
  if (bars.length > 1) bars.sort(timelineOrder(bars));
  const start = bars.reduce<string | undefined>(
    (m, b) => (m === undefined || b.start < m ? b.start : m),
    undefined,
  );
  return { start, end: now.toISOString(), bars };
}

function roundHumans(h: HumanFigures): HumanFigures {
  return {
    settled: h.settled,
    merged: h.merged,
    ...(h.acceptance !== undefined ? { acceptance: round(h.acceptance, 4) } : {}),
    ...(h.revisionsPerMerged !== undefined ? { revisionsPerMerged: round(h.revisionsPerMerged, 4) } : {}),
    ...(h.costPerMergedUsd !== undefined ? { costPerMergedUsd: round(h.costPerMergedUsd, 4) } : {}),
  };
}
