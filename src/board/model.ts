import type { ContestLine } from './contests.js';
import type { ControlLine } from './controls.js';
import type { SchoolAlert } from './alerts.js';
import type { BudgetStanding } from '../dispatch/gates/budgets.js';
import type { ReviewLoad } from '../dispatch/gates/back-pressure.js';
import type { CrewRegistry } from '../dispatch/logs/registry.js';
import type { SchoolState } from '../dispatch/logs/school-log.js';
import type { SpendState } from '../dispatch/gates/spend.js';
import type { LedgerState } from '../grading/ledger.js';
import type { FeedbackState } from '../feedback/log.js';
import type { HumanFigures } from './humans.js';
import type { QueueState } from '../grading/queue.js';
import type { CurriculumItem } from '../schemas/curriculum.js';

/**
 * The one view model of the school (seed 000 §2: "one board, many lanes"). `buildView` computes it
 * from the state directory; the terminal board, the HTML report and every job summary render it
 * and compute no numbers of their own.
 */

/** Lanes in board order. Every issue the school knows of sits in exactly one lane. */
export const LANES = [
  'ready',
  'planned',
  'running',
  'grading',
  'accepted',
  'rejected',
  'dead_letter',
  'stopped',
  'paused',
  'untrusted',
] as const;
export type LaneId = (typeof LANES)[number];

export const LANE_LABELS: Record<LaneId | 'error', string> = {
  ready: 'Ready',
  planned: 'Planned',
  running: 'Running',
  grading: 'Grading',
  accepted: 'Accepted',
  rejected: 'Rejected',
  dead_letter: 'Dead letter',
  stopped: 'Stopped after two failures',
  paused: 'Paused',
  untrusted: 'Not dispatched: untrusted author',
  error: 'State errors',
};

/**
 * Items per lane an abridged view lists (`buildView`'s `itemsPerLane`): what the terminal board and
 * job summaries show of a lane at most.
 */
export const LISTED_ITEMS = 20;

/** Lanes whose items a person watches; the others are shown as counts (and listed in the report). */
export const ACTIVE_LANES: readonly LaneId[] = ['planned', 'running', 'grading', 'dead_letter', 'paused'];

export interface BoardItem {
  issue: number;
  /** Sanitized and redacted. */
  title: string;
  crewId?: string;
  agent?: string;
  daemon?: string;
  slot?: number;
  attempt?: number;
  /** A queued repair: the issue's last run failed once. */
  repair?: boolean;
  /** When the item entered its lane (ISO), when known. */
  since?: string;
  /** Seconds in this lane at `generatedAt`. */
  ageSeconds?: number;
  /** Seconds since the school first planned a crew for this issue. */
  totalAgeSeconds?: number;
  /** Why it is here: stop reason, last grading error, verdict reason, pause reason. */
  reason?: string;
  /** Grading attempts so far (grading and dead-letter lanes). */
  attempts?: number;
  /** Where accepted work was delivered: its branch and, on GitHub, its pull request. */
  delivery?: { branch: string; url?: string };
}

export interface Lane {
  id: LaneId;
  label: string;
  count: number;
  /** Ordered oldest first. */
  items: BoardItem[];
  /** Set when a state file this lane depends on could not be read: the count may be short. */
  incomplete?: string;
}

/** A state file that could not be read: the board shows it instead of an empty school (N5.1). */
export interface StateProblem {
  /** State file name, e.g. `crews.jsonl`. */
  file: string;
  /** Where the corrupt copy was moved, when it was quarantined. */
  quarantinedTo?: string;
  message: string;
}

export interface DaemonLoad {
  id: string;
  /** Worktree slots (K) from the fleet registry; 0 for a daemon seen in state but not configured. */
  slots: number;
  running: number;
  planned: number;
  /** running / slots, 0..1 (can exceed 1 only if state disagrees with config). */
  load: number;
  configured: boolean;
  declaredClass?: string;
  /** From the roster: `undefined` means no heartbeat was ever recorded. */
  lastSeen?: string;
  online: boolean;
  /** Why the roster reads it offline (no heartbeat, stale past the TTL, not configured). */
  offlineReason?: string;
  observedClass?: string;
  effectiveClass?: string;
  freeDiskBytes?: number;
  /** Crews this daemon finished, and their total busy seconds (for utilization). */
  finished: number;
  busySeconds: number;
}

export interface SlotBar {
  crewId: string;
  issue: number;
  daemon: string;
  slot: number;
  agent: string;
  start: string;
  /** Absent while running: renderers draw to `generatedAt`. */
  end?: string;
  status: 'running' | 'finished';
  outcome?: string;
}

export interface LeaderRow {
  rank: number;
  agent: string;
  score: number;
  /** Crews graded into this score. */
  count: number;
  accepted?: number;
  rejected?: number;
  /** Acceptance by humans (merged 1, closed unmerged 0, as an EMA), beside the graders' score. */
  human?: number;
  /** Delivered pull requests people settled into `human`. */
  humanCount?: number;
}

export interface LeaderCell {
  domain: string;
  difficulty: number;
  agent: string;
  score: number;
  count: number;
}

export interface QueuePoint {
  at: string;
  depth: number;
}

export interface PauseEntry {
  reason: string;
  since: string;
  /** `manual`, or the crew outcome that paused the school (`usage_limit`, `overloaded`, `lost`). */
  source?: string;
  crewId?: string;
  issue?: number;
  /** When it lifts by itself (a usage limit's reset time); absent: when it is cleared. */
  until?: string;
}

export interface SchoolView {
  schema: 1;
  generatedAt: string;
  stateDir: string;
  /** False when any state file is corrupt, quarantined or unreadable. */
  healthy: boolean;
  problems: StateProblem[];
  lanes: Lane[];
  counts: Record<LaneId, number>;
  /** The roster joined with per-daemon load. */
  daemons: DaemonLoad[];
  timeline: { start?: string; end: string; bars: SlotBar[] };
  leaderboard: { overall: LeaderRow[]; cells: LeaderCell[] };
  queue: { depth: number; deadLetters: number; series: QueuePoint[] };
  /** What people did with the delivered pull requests (src/board/humans.ts). */
  humans?: HumanFigures;
  /**
   * Feedback on open delivered pull requests that the school does not act on (an untrusted author, an
   * unlisted bot, `/school` without an instruction), newest first, at most `IGNORED_SHOWN`.
   */
  feedbackIgnored?: IgnoredItem[];
  /** Who stopped or steered which crew, newest first (src/board/controls.ts); absent when none. */
  controls?: ControlLine[];
  /** Contests the judges decided, newest first (src/board/contests.ts); absent when none. */
  contests?: ContestLine[];
  spend: { spentUsd: number; capUsd?: number; reached: boolean; fraction?: number };
  /**
   * Every budget and what it has left (src/dispatch/gates/budgets.ts): each running crew's, the school's
   * and each agent's daily budget (this UTC day), the school-wide cap.
   */
  budgets: BudgetStanding[];
  /** What each agent's work cost per domain, with the trend (src/board/costs.ts). */
  costs: CostTable;
  /**
   * The school's own failures, newest first (./alerts.ts): a red base, an environment that failed a
   * verification, a program missing from the sandbox. Absent when there are none.
   */
  alerts?: SchoolAlert[];
  /**
   * Back-pressure on review (src/dispatch/gates/back-pressure.ts): the delivered pull requests waiting for
   * review, the new issues in progress, the limits and the agents they hold, with the line the
   * plan prints. Absent while no delivered pull request waits.
   */
  review?: ReviewLoad & { line: string };
  /**
   * Launch pauses in force (any one blocks new launches), the pauses that hold one agent each (its
   * crews wait, other agents are planned) and the last time they were cleared: the facts
   * `school pause --status` prints too (src/board/view.ts `pauseFacts`).
   */
  pauses: {
    active: PauseEntry[];
    agents?: Array<PauseEntry & { agent: string }>;
    lastCleared?: { at: string; reason: string };
  };
  /**
   * Set on an abridged view (`buildView`'s `itemsPerLane`): each lane lists at most this many of
   * its `count` items, and `timeline.bars` is empty.
   */
  abridged?: { itemsPerLane: number };
}

/** What the board reads of a curriculum item. */
export type BoardIssue = Pick<CurriculumItem, 'number' | 'title' | 'labels' | 'authorAssociation'> &
  Partial<Pick<CurriculumItem, 'domain' | 'difficulty'>>;

/** One agent × domain over a set of finished crews: what they cost and what came of them. */
export interface CostWindow {
  crews: number;
  /** Crews the judges accepted. */
  accepted: number;
  /** Their pull requests people merged. */
  merged: number;
  /** Spend of those crews: their turns and their reviews (USD). */
  spendUsd: number;
  /** Of that spend, what the crews' key proxies metered from the API's answers (absent: none). */
  meteredUsd?: number;
  costPerAcceptedUsd?: number;
  costPerMergedUsd?: number;
}

export interface CostRow extends CostWindow {
  agent: string;
  domain: string;
  /** Crews finished in the last `trendDays` days, and in the `trendDays` before. */
  trend: { recent: CostWindow; before: CostWindow };
}

export interface CostTable {
  trendDays: number;
  /** When the oldest finished crew the state holds finished: the table counts from there. */
  since?: string;
  rows: CostRow[];
}

/**
 * The state the view is computed from, each source folded with its domain's own fold. A source
 * that could not be read is absent and has a problem.
 */
export interface BoardSources {
  registry?: CrewRegistry;
  curriculum?: BoardIssue[];
  grading?: { state: QueueState; series: QueuePoint[] };
  ledger?: LedgerState;
  /** Settled pull requests (feedback.jsonl); absent when unread. */
  feedback?: FeedbackState;
  school?: SchoolState;
  spend?: SpendState;
  /** Delivered work by issue (an unreadable outbox only drops the links). */
  deliveries: ReadonlyMap<
    number,
    { branch: string; pullRequest?: { url: string; number: number }; crewId: string }
  >;
  problems: StateProblem[];
}

/** One piece of feedback the school did not act on, and why. */
export interface IgnoredItem {
  issue: number;
  pr: number;
  id: string;
  author: string;
  reason: string;
  at: string;
}

export const IGNORED_SHOWN = 10;
