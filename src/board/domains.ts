import type { StateEvent, LogContents } from '../state/event-log.js';
import type { GradingJob } from '../schemas/grading.js';
import type { LeaderCell, LeaderRow, PauseEntry, QueuePoint } from './model.js';

/**
 * What the board needs from the grading, ledger and school-control logs, behind one seam. These
 * readers follow the event shapes of DESIGN §3–§4 (`job.*` in grading.jsonl, `score.*` in
 * scores.jsonl, `school.paused` / `school.pause-cleared` / `roster.heartbeat` in school.jsonl,
 * `spend.recorded` in spend.jsonl) and are replaced by the domains' exported folds.
 */

export type JobStatus = 'pending' | 'claimed' | 'failed' | 'graded' | 'dead_letter';

export interface JobState {
  jobKey: string;
  issueNumber: number;
  crewId: string;
  agent: string;
  domain: string;
  difficulty: number;
  status: JobStatus;
  attempts: number;
  enqueuedAt: string;
  /** When the job reached its current status. */
  since: string;
  accepted?: boolean;
  reason?: string;
  lastError?: string;
}

type Data = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function jobOf(jobs: Map<string, JobState>, e: StateEvent): JobState | undefined {
  const d = (e.data ?? {}) as Data;
  const key = str(d.jobKey) ?? (e.key.startsWith('grade:') ? e.key : undefined);
  return key ? jobs.get(key) : undefined;
}

export function applyGradingEvent(jobs: Map<string, JobState>, e: StateEvent): void {
  const d = (e.data ?? {}) as Data;
  if (e.type === 'job.enqueued') {
    const j = e.data as GradingJob;
    if (!jobs.has(j.jobKey)) {
      jobs.set(j.jobKey, {
        jobKey: j.jobKey,
        issueNumber: j.issueNumber,
        crewId: j.crewId,
        agent: j.agent,
        domain: j.domain,
        difficulty: j.difficulty,
        status: 'pending',
        attempts: 0,
        enqueuedAt: e.at,
        since: e.at,
      });
    }
    return;
  }
  const job = jobOf(jobs, e);
  if (!job || job.status === 'graded') return;
  switch (e.type) {
    case 'job.claimed':
      job.status = 'claimed';
      job.attempts = num(d.attempt) ?? job.attempts + 1;
      break;
    case 'job.graded': {
      const verdict = (d.verdict ?? d) as Data;
      job.status = 'graded';
      job.accepted = verdict.accepted === true;
      const reasons = verdict.reasons;
      job.reason = Array.isArray(reasons) ? reasons.map(String).join('; ') : str(verdict.reason);
      break;
    }
    case 'job.failed':
      job.status = 'failed';
      job.lastError = str(d.error) ?? job.lastError;
      job.attempts = num(d.attempt) ?? job.attempts;
      break;
    case 'job.dead_lettered':
      job.status = 'dead_letter';
      job.lastError = str(d.error) ?? job.lastError;
      break;
    case 'job.requeued':
      job.status = 'pending';
      job.attempts = 0;
      break;
    default:
      return;
  }
  job.since = e.at;
}

/** Jobs still to be graded: what a drain would pick up now or after a lease expires. */
export function isQueued(job: JobState): boolean {
  return job.status === 'pending' || job.status === 'claimed' || job.status === 'failed';
}

const MAX_POINTS = 240;

/** Folds the grading log and samples queue depth after each event (at most MAX_POINTS points). */
export function gradingState(contents: LogContents<StateEvent>): {
  jobs: Map<string, JobState>;
  series: QueuePoint[];
} {
  const jobs = new Map<string, JobState>();
  // Applied in log order, as the fold does; clock skew between writers cannot run the chart backwards.
  const events = contents.events;
  const series: QueuePoint[] = [];
  let clock = '';
  let depth = 0;
  const step = Math.max(1, Math.ceil(events.length / MAX_POINTS));
  events.forEach((e, i) => {
    if (e.at > clock) clock = e.at;
    const job = jobOf(jobs, e);
    const before = job ? isQueued(job) : false;
    applyGradingEvent(jobs, e);
    const after = jobOf(jobs, e);
    depth += (after && isQueued(after) ? 1 : 0) - (before ? 1 : 0);
    if (i % step === 0 || i === events.length - 1) {
      const last = series[series.length - 1];
      if (last?.at === clock) last.depth = depth;
      else series.push({ at: clock, depth });
    }
  });
  return { jobs, series };
}

/** Leaderboard from score events (EMA already applied by the ledger writer when present). */
export function ledgerState(contents: LogContents<StateEvent>): {
  overall: LeaderRow[];
  cells: LeaderCell[];
} {
  const agents = new Map<string, { score: number; count: number; accepted: number; rejected: number }>();
  const cells = new Map<string, LeaderCell>();
  for (const e of contents.events) {
    const d = (e.data ?? {}) as Data;
    const agent = str(d.agent);
    const score = num(d.score);
    if (!agent || score === undefined) continue;
    const a = agents.get(agent) ?? { score: 0, count: 0, accepted: 0, rejected: 0 };
    a.score = num(d.agentEma) ?? (a.score * a.count + score) / (a.count + 1);
    a.count++;
    if (d.accepted === true) a.accepted++;
    else if (d.accepted === false) a.rejected++;
    agents.set(agent, a);
    const domain = str(d.domain) ?? 'general';
    const difficulty = num(d.difficulty) ?? 0;
    const id = `${agent}\u0000${domain}\u0000${difficulty}`;
    const c = cells.get(id) ?? { agent, domain, difficulty, score: 0, count: 0 };
    c.score = num(d.cellEma) ?? (c.score * c.count + score) / (c.count + 1);
    c.count++;
    cells.set(id, c);
  }
  const overall = [...agents.entries()].map(([agent, a]) => ({ rank: 0, agent, ...a }));
  return { overall, cells: [...cells.values()] };
}

export interface RosterBeat {
  daemon: string;
  lastSeen: string;
  observedClass?: string;
  freeDiskBytes?: number;
}

/** Pauses and roster heartbeats from school.jsonl. */
export function schoolState(contents: LogContents<StateEvent>): {
  active: PauseEntry[];
  history: PauseEntry[];
  roster: Map<string, RosterBeat>;
} {
  const history: PauseEntry[] = [];
  let open: PauseEntry[] = [];
  const roster = new Map<string, RosterBeat>();
  for (const e of [...contents.events].sort((a, b) => a.at.localeCompare(b.at))) {
    const d = (e.data ?? {}) as Data;
    if (e.type === 'school.paused') {
      const p: PauseEntry = { reason: str(d.reason) ?? 'paused', since: e.at };
      const by = str(d.by) ?? str(d.source);
      if (by) p.by = by;
      history.push(p);
      open.push(p);
    } else if (e.type === 'school.pause-cleared') {
      for (const p of open) p.clearedAt = e.at;
      open = [];
    } else if (e.type === 'roster.heartbeat') {
      const daemon = str(d.daemon);
      if (!daemon) continue;
      const beat: RosterBeat = { daemon, lastSeen: str(d.at) ?? e.at };
      const observed = str(d.observedClass);
      if (observed) beat.observedClass = observed;
      const disk = num(d.freeDiskBytes);
      if (disk !== undefined) beat.freeDiskBytes = disk;
      roster.set(daemon, beat);
    }
  }
  return { active: open, history, roster };
}

/** Total spend so far (USD) from spend.jsonl. */
export function spendTotal(contents: LogContents<StateEvent>): number {
  let total = 0;
  for (const e of contents.events) {
    const cost = num(((e.data ?? {}) as Data).costUsd);
    if (cost !== undefined && cost > 0) total += cost;
  }
  return total;
}
