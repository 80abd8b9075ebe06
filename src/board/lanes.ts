import type { CrewRecord, CrewRegistry } from '../dispatch/registry.js';
import { PAUSING_OUTCOMES, type CrewOutcome } from '../schemas/crew.js';
import type { CurriculumItem } from '../schemas/curriculum.js';
import { redactText } from '../security/redact.js';
import { sanitizeText } from '../security/sanitize.js';
import { clip } from './format.js';
import type { JobState } from './domains.js';
import { LANES, LANE_LABELS, type BoardItem, type Lane, type LaneId } from './model.js';

export const STOP_REASON = 'repair-stopped-after-two-failures';
const TITLE_MAX = 200;

/** Runs that count toward the two-failure stop: not success, not a pause, not a cancellation (seed 002). */
function failed(outcome: CrewOutcome | undefined): boolean {
  return (
    outcome !== undefined &&
    outcome !== 'succeeded' &&
    outcome !== 'cancelled' &&
    !PAUSING_OUTCOMES.includes(outcome)
  );
}

/**
 * Text for the board: sanitized (idempotent on curriculum text, which was sanitized at the edge,
 * and it strips control characters from reasons and errors a terminal would interpret), on one
 * line, redacted.
 */
export function cleanText(text: string, max = TITLE_MAX): string {
  const one = redactText(
    sanitizeText(text, max * 4)
      .text.replace(/\s+/g, ' ')
      .trim(),
  );
  return clip(one, max);
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
  curriculum?: CurriculumItem[];
  jobs?: Map<string, JobState>;
  pausedReason?: string;
  now: Date;
}

/** Places every known issue in exactly one lane, from its latest crew and that crew's grading job. */
export function buildLanes(input: LaneInput): Lane[] {
  const now = input.now.getTime();
  const titles = new Map<number, string>();
  for (const item of input.curriculum ?? []) titles.set(item.number, item.title);

  const crewsByIssue = new Map<number, CrewRecord[]>();
  for (const c of Object.values(input.registry?.crews ?? {})) {
    const list = crewsByIssue.get(c.issueNumber) ?? [];
    list.push(c);
    crewsByIssue.set(c.issueNumber, list);
  }
  const jobsByCrew = new Map<string, JobState>();
  const jobsByIssue = new Map<number, JobState[]>();
  for (const j of input.jobs?.values() ?? []) {
    jobsByCrew.set(j.crewId, j);
    const list = jobsByIssue.get(j.issueNumber) ?? [];
    list.push(j);
    jobsByIssue.set(j.issueNumber, list);
  }

  const lanes = new Map<LaneId, BoardItem[]>(LANES.map((l) => [l, []]));
  const place = (lane: LaneId, item: BoardItem) => lanes.get(lane)!.push(item);
  const issues = new Set<number>([...titles.keys(), ...crewsByIssue.keys(), ...jobsByIssue.keys()]);

  for (const issue of issues) {
    const crews = (crewsByIssue.get(issue) ?? []).sort(
      (a, b) => a.plannedAt.localeCompare(b.plannedAt) || a.attempt - b.attempt,
    );
    const latest = crews[crews.length - 1];
    const base: BoardItem = { issue, title: displayTitle(titles.get(issue), issue) };
    const first = crews[0]?.plannedAt;
    if (first) base.totalAgeSeconds = seconds(now, first);

    // An issue graded from a crew the registry no longer holds (compacted, or merged from another runner).
    const orphanJob = !latest
      ? (jobsByIssue.get(issue) ?? []).sort((a, b) => a.enqueuedAt.localeCompare(b.enqueuedAt)).pop()
      : undefined;
    if (!latest && !orphanJob) {
      place('ready', { ...base, ...(input.pausedReason ? { reason: `paused: ${input.pausedReason}` } : {}) });
      continue;
    }
    if (orphanJob) {
      placeJob(place, base, orphanJob, now);
      continue;
    }
    const crew = latest!;
    const item: BoardItem = {
      ...base,
      crewId: crew.crewId,
      agent: crew.agent,
      daemon: crew.daemon,
      attempt: crew.attempt,
      ...(crew.slot !== undefined ? { slot: crew.slot } : {}),
      ...(crew.repair ? { repair: true } : {}),
    };
    if (crew.status === 'planned') {
      place('planned', withSince(item, crew.plannedAt, now));
    } else if (crew.status === 'running') {
      place('running', withSince(item, crew.startedAt ?? crew.plannedAt, now));
    } else if (crew.outcome === 'succeeded') {
      const job = jobsByCrew.get(crew.crewId);
      if (job) placeJob(place, item, job, now);
      // Finished but not yet enqueued: it is on its way to the graders.
      else place('grading', withSince({ ...item, reason: 'awaiting enqueue' }, crew.finishedAt, now));
    } else if (crew.outcome && PAUSING_OUTCOMES.includes(crew.outcome)) {
      place(
        'paused',
        withSince({ ...item, reason: cleanText(crew.reason || crew.outcome || '') }, crew.finishedAt, now),
      );
    } else {
      const lastTwo = crews.slice(-2);
      const stopped =
        lastTwo.length === 2 && lastTwo.every((c) => c.status === 'finished' && failed(c.outcome));
      if (stopped) {
        place('stopped', withSince({ ...item, reason: STOP_REASON }, crew.finishedAt, now));
      } else {
        const repair = failed(crew.outcome);
        place(
          'ready',
          withSince(
            {
              ...item,
              ...(repair ? { repair: true } : {}),
              reason: cleanText(
                repair ? `repair queued: ${crew.reason || crew.outcome}` : crew.reason || `${crew.outcome}`,
              ),
            },
            crew.finishedAt,
            now,
          ),
        );
      }
    }
  }

  return LANES.map((id) => {
    const items = lanes
      .get(id)!
      .sort((a, b) => (b.ageSeconds ?? -1) - (a.ageSeconds ?? -1) || a.issue - b.issue);
    return { id, label: LANE_LABELS[id], count: items.length, items };
  });
}

function placeJob(
  place: (l: LaneId, i: BoardItem) => void,
  item: BoardItem,
  job: JobState,
  now: number,
): void {
  const withJob: BoardItem = {
    ...item,
    crewId: job.crewId,
    agent: item.agent ?? job.agent,
    attempts: job.attempts,
  };
  if (job.status === 'graded') {
    const reason = job.reason ? cleanText(job.reason) : undefined;
    place(
      job.accepted ? 'accepted' : 'rejected',
      withSince({ ...withJob, ...(reason ? { reason } : {}) }, job.since, now),
    );
  } else if (job.status === 'dead_letter') {
    place(
      'dead_letter',
      withSince({ ...withJob, reason: cleanText(job.lastError ?? 'dead letter') }, job.since, now),
    );
  } else {
    const reason = job.status === 'failed' && job.lastError ? cleanText(job.lastError) : job.status;
    place('grading', withSince({ ...withJob, reason }, job.enqueuedAt, now));
  }
}

function withSince(item: BoardItem, since: string | undefined, now: number): BoardItem {
  if (!since) return item;
  const age = seconds(now, since);
  return { ...item, since, ...(age !== undefined ? { ageSeconds: age } : {}) };
}
