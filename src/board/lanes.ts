import {
  issueStates,
  READY,
  type IssueState,
  type Requeues,
  type VerdictLookup,
} from '../dispatch/logs/history.js';
import type { CrewRecord, CrewRegistry } from '../dispatch/logs/registry.js';
import type { JobState, QueueState } from '../grading/queue.js';
import type { SchoolConfig } from '../config/schema.js';
import { untrustedReason } from '../curriculum/trust.js';
import { PAUSING_OUTCOMES } from '../schemas/crew.js';
import { redactText } from '../security/redact.js';
import { sanitizeText } from '../security/sanitize.js';
import { clip } from './format.js';
import { LANES, LANE_LABELS, type BoardIssue, type BoardItem, type Lane, type LaneId } from './model.js';

export const STOP_REASON = 'repair-stopped-after-two-failures';
/** N7.1: the board's reason for an issue stopped by consecutive orphanings (src/dispatch/logs/history.ts). */
export const ORPHAN_STOP_REASON =
  "stopped-after-orphanings: its classroom kept losing its crews (Orca crashed or restarted); not the student's failures; `school requeue` once the daemon is fixed";
/** The board's reason for an issue stopped by usage limits only its students reported (src/dispatch/logs/history.ts). */
export const LIMIT_CLAIMS_STOP_REASON =
  'limit-claims-stopped: its crews kept ending with a usage limit only the agent reported, not the API; each paused its agent; `school requeue` once the issue is looked at';
/** The board's reason for an issue stopped by unconfirmed limit claims (src/dispatch/logs/history.ts). */
export const LIMIT_UNCONFIRMED_STOP_REASON =
  'stopped-after-unconfirmed-limit-claims: its crews kept claiming a usage limit nothing confirmed (limit_unconfirmed); the agent was never paused; `school dead-letters requeue issue:N` once the issue is looked at';
const TITLE_MAX = 200;

/**
 * Text for the board: sanitized (idempotent on curriculum text, which was sanitized at the edge,
 * and it strips control characters from reasons and errors a terminal would interpret), on one
 * line, redacted.
 */
export function cleanText(text: string, max = TITLE_MAX): string {
  // Printable ASCII holds nothing the sanitizer removes and no whitespace but single inner spaces
  // unless it says so: skip those passes (most titles and reasons).
  const ascii = PRINTABLE_ASCII.test(text);
  const safe = ascii ? text : sanitizeText(text, max * 4).text;
  const oneLine = ascii && !LOOSE_SPACES.test(safe) ? safe : safe.replace(/\s+/g, ' ').trim();
  // Redact before clipping, so a clip can never cut a token into a shape the redactor misses.
  return clip(redactText(oneLine), max);
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const LOOSE_SPACES = /^ | $| {2}/;

/** cleanText with repeated inputs (reasons, verdicts) cleaned once. */
function cleaner(): (text: string) => string {
  const memo = new Map<string, string>();
  return (text) => {
    let v = memo.get(text);
    if (v === undefined) memo.set(text, (v = cleanText(text)));
    return v;
  };
}

export function displayTitle(title: string | undefined, issue: number): string {
  return title ? cleanText(title) : `#${issue}`;
}

function seconds(now: number, iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? Math.max(0, Math.round((now - t) / 1000)) : undefined;
}

export interface LaneInput {
  registry?: CrewRegistry;
  curriculum?: readonly BoardIssue[];
  queue?: QueueState;
  pausedReason?: string;
  /** The intake trust gate: an issue nobody has planned that it refuses sits in `untrusted`. */
  trust?: SchoolConfig['curriculum']['trust'];
  /** `school requeue`: runs before an issue's requeue no longer count toward its stop. */
  requeues?: Requeues;
  /** Delivered work by issue (the outbox's `deliveries()`): the accepted lane links to it. */
  deliveries?: ReadonlyMap<number, { branch: string; pullRequest?: { url: string } }>;
  now: Date;
  /** List at most this many items per lane (its oldest); every lane still counts all of its own. */
  itemsPerLane?: number;
}

/** What grading concluded about a crew: the dispatch history counts a rejection as a failed run. */
export function verdicts(queue: QueueState | undefined): {
  byCrew: Map<string, JobState>;
  lookup: VerdictLookup;
} {
  const byCrew = new Map<string, JobState>();
  for (const j of Object.values(queue?.jobs ?? {})) byCrew.set(j.job.crewId, j);
  const lookup: VerdictLookup = (crewId) => {
    const v = byCrew.get(crewId)?.verdict;
    return v ? (v.accepted ? 'accepted' : 'rejected') : undefined;
  };
  return { byCrew, lookup };
}

type Place = (lane: LaneId, item: BoardItem, since?: string, reason?: () => string) => void;

/** Each issue's latest crew (by plan time, then attempt) and when its first crew was planned. */
function latestCrews(crews: CrewRegistry['crews']): {
  latest: Map<number, CrewRecord>;
  firstPlanned: Map<number, string>;
} {
  const latest = new Map<number, CrewRecord>();
  const firstPlanned = new Map<number, string>();
  for (const c of Object.values(crews)) {
    const f = firstPlanned.get(c.issueNumber);
    if (f === undefined || c.plannedAt < f) firstPlanned.set(c.issueNumber, c.plannedAt);
    const prev = latest.get(c.issueNumber);
    if (
      !prev ||
      prev.plannedAt < c.plannedAt ||
      (prev.plannedAt === c.plannedAt && prev.attempt < c.attempt)
    ) {
      latest.set(c.issueNumber, c);
    }
  }
  return { latest, firstPlanned };
}

/** Jobs whose crew the registry no longer holds (compacted, or merged in from another runner). */
function orphanJobs(
  byCrew: ReadonlyMap<string, JobState>,
  crews: CrewRegistry['crews'],
  latest: ReadonlyMap<number, CrewRecord>,
): Map<number, JobState> {
  const orphans = new Map<number, JobState>();
  for (const j of byCrew.values()) {
    if (crews[j.job.crewId] || latest.has(j.job.issueNumber)) continue;
    const prev = orphans.get(j.job.issueNumber);
    if (!prev || prev.enqueuedAt < j.enqueuedAt) orphans.set(j.job.issueNumber, j);
  }
  return orphans;
}

/**
 * The lanes being filled. Each item is built once and completed in place (this runs for every
 * issue on every board). Its texts (title, reason: sanitized and redacted) are only written for the
 * items a lane lists, as they cost the most and an abridged board lists a few items of each lane.
 */
class LaneFill {
  private readonly lanes = new Map<LaneId, BoardItem[]>(LANES.map((l) => [l, []]));
  private readonly texts = new Map<BoardItem, () => string>();

  constructor(
    private readonly now: number,
    private readonly deliveries: LaneInput['deliveries'],
  ) {}

  readonly place: Place = (lane, item, since, reason) => {
    if (reason) {
      item.reason = ''; // written when listed; set here to keep the item's key order
      this.texts.set(item, reason);
    }
    const d = lane === 'accepted' ? this.deliveries?.get(item.issue) : undefined;
    if (d)
      item.delivery = d.pullRequest ? { branch: d.branch, url: d.pullRequest.url } : { branch: d.branch };
    if (since) {
      item.since = since;
      const age = seconds(this.now, since);
      if (age !== undefined) item.ageSeconds = age;
    }
    this.lanes.get(lane)!.push(item);
  };

  /** Every lane, oldest first, with the texts of the items it lists written. */
  list(titles: ReadonlyMap<number, string>, itemsPerLane = Infinity): Lane[] {
    return LANES.map((id) => {
      const all = this.lanes
        .get(id)!
        .sort((a, b) => (b.ageSeconds ?? -1) - (a.ageSeconds ?? -1) || a.issue - b.issue);
      const items = all.length > itemsPerLane ? all.slice(0, itemsPerLane) : all;
      for (const item of items) {
        item.title = displayTitle(titles.get(item.issue), item.issue);
        const reason = this.texts.get(item);
        if (reason) item.reason = reason();
      }
      return { id, label: LANE_LABELS[id], count: all.length, items };
    });
  }
}

/**
 * Places every known issue in exactly one lane. Where an issue stands (active, done, stopped,
 * repair, ready) is the dispatch office's own `issueStates`; the grading queue says where a done
 * crew's work is (grading, accepted, dead letter); the board adds only the split by lane.
 */
export function buildLanes(input: LaneInput): Lane[] {
  const now = input.now.getTime();
  const clean = cleaner();
  const titles = new Map<number, string>();
  const items = new Map<number, BoardIssue>();
  for (const item of input.curriculum ?? []) {
    titles.set(item.number, item.title);
    items.set(item.number, item);
  }
  const { byCrew, lookup } = verdicts(input.queue);
  const states = input.registry
    ? issueStates(input.registry, lookup, input.requeues)
    : new Map<number, IssueState>();
  const crews = input.registry?.crews ?? {};
  const { latest, firstPlanned } = latestCrews(crews);
  const orphans = orphanJobs(byCrew, crews, latest);
  const fill = new LaneFill(now, input.deliveries);
  const issues = new Set<number>(titles.keys());
  for (const issue of latest.keys()) issues.add(issue);
  for (const issue of orphans.keys()) issues.add(issue);
  const paused = input.pausedReason ? `paused: ${clean(input.pausedReason)}` : undefined;

  for (const issue of issues) {
    const item: BoardItem = { issue, title: '' };
    const orphan = orphans.get(issue);
    const crew = latest.get(issue);
    if (orphan) {
      placeJob(fill.place, clean, item, orphan);
    } else if (!crew) {
      const known = input.trust && items.get(issue);
      const refused = known ? untrustedReason(known, input.trust!) : undefined;
      if (refused) fill.place('untrusted', item, undefined, () => clean(refused));
      else fill.place('ready', item, undefined, paused ? () => paused : undefined);
    } else {
      describeCrew(item, crew, seconds(now, firstPlanned.get(issue)));
      placeCrew(fill.place, clean, item, { crew, state: states.get(issue) ?? READY, byCrew, crews });
    }
  }
  return fill.list(titles, input.itemsPerLane);
}

/** The item names its latest crew. */
function describeCrew(item: BoardItem, crew: CrewRecord, totalAgeSeconds: number | undefined): void {
  item.crewId = crew.crewId;
  item.agent = crew.agent;
  item.daemon = crew.daemon;
  item.attempt = crew.attempt;
  if (crew.slot !== undefined) item.slot = crew.slot;
  if (crew.repair) item.repair = true;
  if (totalAgeSeconds !== undefined) item.totalAgeSeconds = totalAgeSeconds;
}

/** The lane of an issue that has a crew: by its state in the dispatch office, then its grade. */
function placeCrew(
  place: Place,
  clean: (text: string) => string,
  item: BoardItem,
  at: {
    crew: CrewRecord;
    state: IssueState;
    byCrew: ReadonlyMap<string, JobState>;
    crews: CrewRegistry['crews'];
  },
): void {
  const { crew, state, byCrew } = at;
  const job = byCrew.get(crew.crewId);
  if (state.kind === 'active') {
    const active = at.crews[state.crewId] ?? crew;
    if (active.status === 'running') place('running', item, active.startedAt ?? active.plannedAt);
    else place('planned', item, active.plannedAt);
  } else if (state.kind === 'stopped') {
    place('stopped', item, crew.finishedAt, () =>
      state.orphaned
        ? ORPHAN_STOP_REASON
        : state.limitUnconfirmed
          ? LIMIT_UNCONFIRMED_STOP_REASON
          : state.limitClaims
            ? LIMIT_CLAIMS_STOP_REASON
            : STOP_REASON,
    );
  } else if (state.kind === 'done') {
    const done = byCrew.get(state.crewId);
    if (done) placeJob(place, clean, item, done);
    // Succeeded but not enqueued yet: on its way to the graders.
    else place('grading', item, crew.finishedAt, () => 'awaiting enqueue');
  } else if (crew.outcome === 'limit_unconfirmed') {
    // The claim is the issue's: it is ready, behind the other issues; its agent was not paused.
    place('ready', item, crew.finishedAt, () =>
      clean(`limit_unconfirmed (waits behind the other issues): ${crew.reason || ''}`),
    );
  } else if (crew.outcome && PAUSING_OUTCOMES.includes(crew.outcome)) {
    // Seed 002: a usage limit or overload is not a failure; the work waits for the pause to clear.
    place('paused', item, crew.finishedAt, () => clean(crew.reason || crew.outcome!));
  } else if (job?.verdict && !job.verdict.accepted) {
    const repair = state.kind === 'repair' ? '; repair queued' : '';
    if (repair) item.repair = true;
    place('rejected', item, job.updatedAt, () => clean(verdictReason(job) + repair));
  } else if (state.kind === 'repair') {
    item.repair = true;
    place('ready', item, crew.finishedAt, () => clean(`repair queued: ${crew.reason || crew.outcome}`));
  } else {
    place('ready', item, crew.finishedAt, () => clean(crew.reason || String(crew.outcome ?? '')));
  }
}

function verdictReason(job: JobState): string {
  const v = job.verdict;
  if (!v) return '';
  const proof = v.accepted && v.proof ? ` — proved by: ${v.proof}` : '';
  // First after the code: the board clips a reason, and what proved a change is what it is asked for.
  return `${v.decidedBy}: ${v.code}${proof}${v.reasons.length ? ` — ${v.reasons.join('; ')}` : ''}`;
}

function placeJob(place: Place, clean: (text: string) => string, item: BoardItem, job: JobState): void {
  item.crewId = job.job.crewId;
  item.agent = item.agent ?? job.job.agent;
  item.attempts = job.attempts;
  if (job.status === 'graded' && job.verdict) {
    const accepted = job.verdict.accepted;
    place(accepted ? 'accepted' : 'rejected', item, job.updatedAt, () => clean(verdictReason(job)));
  } else if (job.status === 'dead_letter') {
    place('dead_letter', item, job.updatedAt, () => clean(job.lastError ?? 'dead letter'));
  } else {
    const reason = job.lastError ? `${job.status}; last error: ${job.lastError}` : job.status;
    place('grading', item, job.enqueuedAt, () => clean(reason));
  }
}
