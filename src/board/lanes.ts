import { issueStates, READY, type IssueState, type VerdictLookup } from '../dispatch/history.js';
import type { CrewRecord, CrewRegistry } from '../dispatch/registry.js';
import type { JobState, QueueState } from '../grading/queue.js';
import type { SchoolConfig } from '../config/schema.js';
import { untrustedReason } from '../curriculum/trust.js';
import { PAUSING_OUTCOMES } from '../schemas/crew.js';
import type { CurriculumItem } from '../schemas/curriculum.js';
import { redactText } from '../security/redact.js';
import { sanitizeText } from '../security/sanitize.js';
import { clip } from './format.js';
import { LANES, LANE_LABELS, type BoardItem, type Lane, type LaneId } from './model.js';

export const STOP_REASON = 'repair-stopped-after-two-failures';
const TITLE_MAX = 200;

/**
 * Text for the board: sanitized (idempotent on curriculum text, which was sanitized at the edge,
 * and it strips control characters from reasons and errors a terminal would interpret), on one
 * line, redacted.
 */
export function cleanText(text: string, max = TITLE_MAX): string {
  // Printable ASCII holds nothing the sanitizer removes: skip its passes (most titles and reasons).
  const safe = PRINTABLE_ASCII.test(text) ? text : sanitizeText(text, max * 4).text;
  // Redact before clipping, so a clip can never cut a token into a shape the redactor misses.
  return clip(redactText(safe.replace(/\s+/g, ' ').trim()), max);
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

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
  curriculum?: CurriculumItem[];
  queue?: QueueState;
  pausedReason?: string;
  /** The intake trust gate: an issue nobody has planned that it refuses sits in `untrusted`. */
  trust?: SchoolConfig['curriculum']['trust'];
  /** Delivered work by issue (the outbox's `deliveries()`): the accepted lane links to it. */
  deliveries?: ReadonlyMap<number, { branch: string; pullRequest?: { url: string } }>;
  now: Date;
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

/**
 * Places every known issue in exactly one lane. Where an issue stands (active, done, stopped,
 * repair, ready) is the dispatch office's own `issueStates`; the grading queue says where a done
 * crew's work is (grading, accepted, dead letter); the board adds only the split by lane.
 */
export function buildLanes(input: LaneInput): Lane[] {
  const now = input.now.getTime();
  const titles = new Map<number, string>();
  const items = new Map<number, CurriculumItem>();
  for (const item of input.curriculum ?? []) {
    titles.set(item.number, item.title);
    items.set(item.number, item);
  }
  const { byCrew, lookup } = verdicts(input.queue);
  const states = input.registry ? issueStates(input.registry, lookup) : new Map<number, IssueState>();
  const crews = input.registry?.crews ?? {};

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
  // Jobs whose crew the registry no longer holds (compacted, or merged in from another runner).
  const orphans = new Map<number, JobState>();
  for (const j of byCrew.values()) {
    if (crews[j.job.crewId] || latest.has(j.job.issueNumber)) continue;
    const prev = orphans.get(j.job.issueNumber);
    if (!prev || prev.enqueuedAt < j.enqueuedAt) orphans.set(j.job.issueNumber, j);
  }

  const lanes = new Map<LaneId, BoardItem[]>(LANES.map((l) => [l, []]));
  const place = (lane: LaneId, item: BoardItem, since?: string) => {
    const d = lane === 'accepted' ? input.deliveries?.get(item.issue) : undefined;
    const linked = d
      ? { ...item, delivery: { branch: d.branch, ...(d.pullRequest ? { url: d.pullRequest.url } : {}) } }
      : item;
    lanes.get(lane)!.push(withSince(linked, since, now));
  };
  const issues = new Set<number>([...titles.keys(), ...latest.keys(), ...orphans.keys()]);

  for (const issue of issues) {
    const base: BoardItem = { issue, title: displayTitle(titles.get(issue), issue) };
    const orphan = orphans.get(issue);
    if (orphan) {
      placeJob(place, base, orphan);
      continue;
    }
    const crew = latest.get(issue);
    const refused =
      !crew && input.trust && items.has(issue) ? untrustedReason(items.get(issue)!, input.trust) : undefined;
    if (refused) {
      place('untrusted', { ...base, reason: cleanText(refused) });
      continue;
    }
    if (!crew) {
      place(
        'ready',
        input.pausedReason ? { ...base, reason: `paused: ${cleanText(input.pausedReason)}` } : base,
      );
      continue;
    }
    const first = seconds(now, firstPlanned.get(issue));
    const item: BoardItem = {
      ...base,
      crewId: crew.crewId,
      agent: crew.agent,
      daemon: crew.daemon,
      attempt: crew.attempt,
      ...(crew.slot !== undefined ? { slot: crew.slot } : {}),
      ...(crew.repair ? { repair: true } : {}),
      ...(first !== undefined ? { totalAgeSeconds: first } : {}),
    };
    const state = states.get(issue) ?? READY;
    const job = byCrew.get(crew.crewId);
    if (state.kind === 'active') {
      const active = crews[state.crewId] ?? crew;
      if (active.status === 'running') place('running', item, active.startedAt ?? active.plannedAt);
      else place('planned', item, active.plannedAt);
    } else if (state.kind === 'stopped') {
      place('stopped', { ...item, reason: STOP_REASON }, crew.finishedAt);
    } else if (state.kind === 'done') {
      const done = byCrew.get(state.crewId);
      if (done) placeJob(place, item, done);
      // Succeeded but not enqueued yet: on its way to the graders.
      else place('grading', { ...item, reason: 'awaiting enqueue' }, crew.finishedAt);
    } else if (crew.outcome && PAUSING_OUTCOMES.includes(crew.outcome)) {
      // Seed 002: a usage limit or overload is not a failure; the work waits for the pause to clear.
      place('paused', { ...item, reason: cleanText(crew.reason || crew.outcome) }, crew.finishedAt);
    } else if (job?.verdict && !job.verdict.accepted) {
      const repair = state.kind === 'repair' ? '; repair queued' : '';
      place(
        'rejected',
        { ...item, ...(repair ? { repair: true } : {}), reason: cleanText(verdictReason(job) + repair) },
        job.updatedAt,
      );
    } else if (state.kind === 'repair') {
      place(
        'ready',
        { ...item, repair: true, reason: cleanText(`repair queued: ${crew.reason || crew.outcome}`) },
        crew.finishedAt,
      );
    } else {
      place(
        'ready',
        { ...item, reason: cleanText(crew.reason || String(crew.outcome ?? '')) },
        crew.finishedAt,
      );
    }
  }

  return LANES.map((id) => {
    const items = lanes
      .get(id)!
      .sort((a, b) => (b.ageSeconds ?? -1) - (a.ageSeconds ?? -1) || a.issue - b.issue);
    return { id, label: LANE_LABELS[id], count: items.length, items };
  });
}

function verdictReason(job: JobState): string {
  const v = job.verdict;
  if (!v) return '';
  return `${v.decidedBy}: ${v.code}${v.reasons.length ? ` — ${v.reasons.join('; ')}` : ''}`;
}

function placeJob(
  place: (lane: LaneId, item: BoardItem, since?: string) => void,
  item: BoardItem,
  job: JobState,
): void {
  const withJob: BoardItem = {
    ...item,
    crewId: job.job.crewId,
    agent: item.agent ?? job.job.agent,
    attempts: job.attempts,
  };
  if (job.status === 'graded' && job.verdict) {
    place(
      job.verdict.accepted ? 'accepted' : 'rejected',
      { ...withJob, reason: cleanText(verdictReason(job)) },
      job.updatedAt,
    );
  } else if (job.status === 'dead_letter') {
    place('dead_letter', { ...withJob, reason: cleanText(job.lastError ?? 'dead letter') }, job.updatedAt);
  } else {
    const reason = job.lastError ? `${job.status}; last error: ${job.lastError}` : job.status;
    place('grading', { ...withJob, reason: cleanText(reason) }, job.enqueuedAt);
  }
}

function withSince(item: BoardItem, since: string | undefined, now: number): BoardItem {
  if (!since) return item;
  const age = seconds(now, since);
  return { ...item, since, ...(age !== undefined ? { ageSeconds: age } : {}) };
}
