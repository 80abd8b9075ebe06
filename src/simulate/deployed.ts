import type { DispatchOrder } from '../config/schema.js';
import { SimulationError, type IssueResult, type SimResult, type TimelineEntry } from './engine.js';
import { MinHeap } from './heap.js';
import { createOffice } from './office-adapter.js';
import { classRank } from './options.js';
import type { FreeDaemon } from './ours.js';
import type { ReadyItem } from './policy.js';
import type { SimSlot, Workload } from './workload.js';

/**
 * The school loop as deployed, in virtual minutes: the same admission and order as the real code
 * (through the office adapter: `admit`, `orderCandidates`, `issueStates`), and the same cadence as
 * the workflow and the driver:
 * - a plan runs every `scheduleMinutes` (the cron); it admits crews onto the slots that are free
 *   then (planned and running crews hold a slot) and queues one crew job per daemon with work;
 * - a daemon's crew job starts `queueMinutes` after its plan, and never while that daemon's previous
 *   job still runs (one concurrency group per daemon);
 * - `cron`: a job runs the crews its plan gave it and ends; a slot freed in between waits for the
 *   next plan. `refill`: a freed slot first takes crews planned for its daemon meanwhile, then asks
 *   the office for this daemon (`refillFor`), while a crew timeout plus the grading reserve still fit
 *   before the job's time limit (`jobTimeoutMinutes`) — the driver's rule.
 * Pauses follow seed 002 as in the engine. Every run's duration and outcome come from the workload,
 * so cron and refill do the same work and differ only in when it starts.
 */
export type Cadence = 'cron' | 'refill' | 'standby';

export interface DeployedOptions {
  cadence: Cadence;
  order: DispatchOrder;
  scheduleMinutes: number;
  queueMinutes: number;
  jobTimeoutMinutes: number;
  /** Default: the longest run of the workload, rounded up (a timeout that kills no run). */
  crewTimeoutMinutes?: number;
  gradingReserveMinutes: number;
}

/** The documented workflow: a two-hourly cron, 360-minute jobs, a 5-minute grading reserve. */
export const DEFAULT_DEPLOYED: Omit<DeployedOptions, 'cadence' | 'order'> = {
  scheduleMinutes: 120,
  queueMinutes: 1,
  jobTimeoutMinutes: 360,
  gradingReserveMinutes: 5,
};

interface Daemon {
  id: string;
  slots: SimSlot[];
  free: SimSlot[];
  planned: ReadyItem[];
  running: number;
  /** `standby`: the crews this job took at its start (its first wave and the standby behind it). */
  job?: { deadline: number; crews: ReadyItem[] };
  /** A crew job queued behind the running one, or waiting for its runner. */
  jobAt?: number;
}

type Ev =
  | { kind: 'tick' }
  | { kind: 'job'; daemon: Daemon }
  | { kind: 'finish'; daemon: Daemon; slot: SimSlot; item: ReadyItem; start: number }
  | { kind: 'resume' };

export function simulateDeployed(workload: Workload, options: DeployedOptions): SimResult {
  const longest = Math.max(...workload.issues.flatMap((i) => i.runs.map((r) => r.duration)));
  const o = { ...options, crewTimeoutMinutes: options.crewTimeoutMinutes ?? Math.ceil(longest) };
  if (o.crewTimeoutMinutes < longest) {
    throw new SimulationError(
      `crew timeout ${o.crewTimeoutMinutes} min is shorter than the longest run (${longest.toFixed(1)} min): that run would be killed, not finished`,
    );
  }
  if (o.crewTimeoutMinutes + o.gradingReserveMinutes > o.jobTimeoutMinutes) {
    throw new SimulationError(
      `job time limit ${o.jobTimeoutMinutes} min cannot fit one crew timeout (${o.crewTimeoutMinutes} min) plus the grading reserve (${o.gradingReserveMinutes} min)`,
    );
  }
  const perDaemon = workload.options.slotsPerDaemon;
  const total = workload.slots.length;
  const office = createOffice({ slotsPerDaemon: perDaemon, totalSlots: total, order: o.order });
  const daemons = new Map<string, Daemon>();
  for (const s of workload.slots) {
    const d = daemons.get(s.daemon) ?? { id: s.daemon, slots: [], free: [], planned: [], running: 0 };
    d.slots.push(s);
    d.free.push(s);
    daemons.set(s.daemon, d);
  }
  const events = new MinHeap<Ev>();
  const ready = new Map<string, ReadyItem>();
  const timeline: TimelineEntry[] = [];
  const results = new Map<number, IssueResult>();
  const pauses: Array<{ from: number; to: number }> = [];
  const backlog = { available: 0, busy: 0 };
  let now = 0;
  let seq = 0;
  let pausedUntil = -Infinity;
  let decisions = 0;
  let backlogSize = 0;
  const running = () => [...daemons.values()].reduce((n, d) => n + d.running, 0);
  const plannedCount = () =>
    [...daemons.values()].reduce((n, d) => n + d.planned.length + (d.job?.crews.length ?? 0), 0);

  const addToBacklog = (item: Omit<ReadyItem, 'seq' | 'id'>) => {
    const full: ReadyItem = { ...item, id: `${item.issue.number}#${item.run}`, seq: seq++ };
    ready.set(full.id, full);
    backlogSize += item.issue.size;
  };
  for (const issue of workload.issues) addToBacklog({ issue, run: 0, attempt: 1, repair: false });

  /** The office decides for `offered` daemons (others offer no slot); returns what it placed. */
  const place = (offered: Daemon[], capacity: (d: Daemon) => number): Array<[ReadyItem, Daemon]> => {
    const free: FreeDaemon[] = offered
      .filter((d) => capacity(d) > 0)
      .map((d) => ({ id: d.id, class: d.slots[0]!.class, free: capacity(d), busy: perDaemon - capacity(d) }));
    if (free.length === 0 || ready.size === 0) return [];
    decisions++;
    const paused =
      now < pausedUntil ? `usage limit; paused until minute ${pausedUntil.toFixed(1)}` : undefined;
    const taken = free.reduce((n, d) => n + d.free, 0);
    // maxCrews = every slot; the office counts the rest of the fleet as active.
    const placed = office.place(now, [...ready.values()], free, paused, backlogSize);
    if (placed.size > taken) throw new SimulationError('the office placed more crews than free slots');
    const out: Array<[ReadyItem, Daemon]> = [];
    for (const [id, daemon] of placed) {
      const item = ready.get(id)!;
      ready.delete(id);
      backlogSize -= item.issue.size;
      out.push([item, daemons.get(daemon)!]);
    }
    return out;
  };

  const launch = (d: Daemon, item: ReadyItem) => {
    const slot = d.free.shift();
    if (!slot) throw new SimulationError(`daemon ${d.id} launched with no free slot`);
    d.running++;
    events.push(now + item.issue.runs[item.run]!.duration, {
      kind: 'finish',
      daemon: d,
      slot,
      item,
      start: now,
    });
  };

  const canRefill = (d: Daemon) =>
    o.cadence === 'refill' &&
    d.job !== undefined &&
    now + o.crewTimeoutMinutes + o.gradingReserveMinutes <= d.job.deadline;

  /**
   * The driver's loop for one daemon: planned crews first, then refill, then maybe end the job. A
   * cron job takes only the crews planned before it started: later plans queue the next job.
   */
  const fill = (d: Daemon, starting: boolean) => {
    if (!d.job) return;
    if (o.cadence === 'standby') return fillStandby(d, d.job, starting);
    if (starting || o.cadence === 'refill') {
      while (d.free.length > 0 && d.planned.length > 0) launch(d, d.planned.shift()!);
    }
    if (canRefill(d) && d.free.length > 0 && now >= pausedUntil) {
      for (const [item, daemon] of place([d], (x) => x.free.length)) launch(daemon, item);
    }
    if (d.running === 0) {
      d.job = undefined;
      if (d.planned.length > 0) startJobAt(d, now);
    }
  };

  /**
   * An Actions crew job with standby crews (dispatch/standby.ts): it takes what was planned for its daemon
   * when it starts, launches as slots free while a crew timeout plus the reserve fit, and what it
   * did not start goes back to the backlog (the next plan cancels it and plans the issue again).
   */
  const fillStandby = (d: Daemon, job: NonNullable<Daemon['job']>, starting: boolean) => {
    if (starting) job.crews.push(...d.planned.splice(0));
    const fits = () => now + o.crewTimeoutMinutes + o.gradingReserveMinutes <= job.deadline;
    while (d.free.length > 0 && job.crews.length > 0 && now >= pausedUntil && fits()) {
      launch(d, job.crews.shift()!);
    }
    if (d.running > 0) return;
    for (const item of job.crews.splice(0)) {
      ready.set(item.id, item);
      backlogSize += item.issue.size;
    }
    d.job = undefined;
    if (d.planned.length > 0) startJobAt(d, now);
  };

  /** What standby crews are sized by: the 75th percentile of the last 50 runs (standby.ts). */
  const typicalMinutes = () => {
    const runs = timeline
      .slice(-50)
      .map((t) => t.end - t.start)
      .sort((a, b) => a - b);
    if (runs.length < 5) return o.crewTimeoutMinutes;
    const p75 = runs[Math.min(runs.length - 1, Math.ceil(runs.length * 0.75) - 1)]!;
    return Math.min(o.crewTimeoutMinutes, Math.max(1, p75));
  };

  const startJobAt = (d: Daemon, at: number) => {
    if (d.job || d.jobAt !== undefined) return;
    d.jobAt = at;
    events.push(at, { kind: 'job', daemon: d });
  };

  const tick = () => {
    const capacity = (x: Daemon) => x.free.length - x.planned.length - (x.job?.crews.length ?? 0);
    const allowance = new Map<Daemon, number>();
    for (const [item, d] of place([...daemons.values()], capacity)) {
      d.planned.push(item);
      allowance.set(d, (allowance.get(d) ?? 0) + 1);
    }
    if (o.cadence === 'standby' && allowance.size > 0) {
      // The standby behind the first wave: as many per wave as the first wave, for the waves that
      // fit after one crew timeout (the plan's rule in dispatch/standby.ts).
      const left = o.jobTimeoutMinutes - o.crewTimeoutMinutes - o.gradingReserveMinutes;
      const waves = Math.max(0, Math.floor(left / typicalMinutes()));
      for (const [item, d] of place([...allowance.keys()], (x) => allowance.get(x)! * waves)) {
        d.planned.push(item);
      }
    }
    for (const d of daemons.values()) if (d.planned.length > 0) startJobAt(d, now + o.queueMinutes);
    if (ready.size + plannedCount() + running() > 0) events.push(now + o.scheduleMinutes, { kind: 'tick' });
  };

  const finish = (e: Extract<Ev, { kind: 'finish' }>) => {
    const { daemon: d, slot, item, start } = e;
    d.running--;
    d.free.push(slot);
    d.free.sort((a, b) => a.index - b.index);
    const run = item.issue.runs[item.run]!;
    timeline.push({
      slot: slot.index,
      issue: item.issue.number,
      start,
      end: now,
      outcome: run.outcome,
      attempt: item.attempt,
      repair: item.repair,
    });
    const n = item.issue.number;
    const result = results.get(n) ?? { number: n, status: 'done' as const, attempts: 0 };
    results.set(n, result);
    if (run.outcome === 'usage_limit') {
      const until = now + workload.options.pauseMinutes;
      if (until > pausedUntil) {
        const last = pauses.at(-1);
        if (last && last.to >= now) last.to = until;
        else pauses.push({ from: now, to: until });
        pausedUntil = until;
        events.push(until, { kind: 'resume' });
      }
    } else {
      result.attempts = item.attempt;
      result.firstVerdictAt ??= now;
    }
    const step = office.afterRun(item, run.outcome, now);
    if (step.kind === 'backlog') {
      if (item.run + 1 >= item.issue.runs.length) {
        throw new SimulationError(`issue #${n} back in the backlog for a run the workload does not have`);
      }
      addToBacklog({ issue: item.issue, run: item.run + 1, attempt: step.attempt, repair: step.repair });
    } else {
      result.status = step.kind;
      if (step.kind === 'stopped') result.reason = step.reason;
    }
  };

  /** Free slots some ready item fits, for the refill figure (idle while runnable work waits). */
  const usableIdle = () => {
    let lightest = 4;
    for (const i of ready.values()) lightest = Math.min(lightest, classRank(i.issue.weight));
    let idle = 0;
    for (const d of daemons.values()) for (const s of d.free) if (classRank(s.class) >= lightest) idle++;
    return idle;
  };

  events.push(0, { kind: 'tick' });
  let idleTicks = 0;
  while (events.size > 0) {
    const next = events.peekKey()!;
    if (now >= pausedUntil && ready.size > 0) {
      const idle = usableIdle();
      const busy = running();
      backlog.available += (next - now) * (busy + idle);
      backlog.busy += (next - now) * busy;
    }
    now = next;
    const touched = new Set<Daemon>();
    const starting = new Set<Daemon>();
    while (events.peekKey() === now) {
      const e = events.pop()!.value;
      if (e.kind === 'finish') {
        finish(e);
        touched.add(e.daemon);
      } else if (e.kind === 'job') {
        e.daemon.jobAt = undefined;
        if (e.daemon.job) continue;
        e.daemon.job = { deadline: now + o.jobTimeoutMinutes, crews: [] };
        touched.add(e.daemon);
        starting.add(e.daemon);
      } else if (e.kind === 'tick') {
        const before = running() + plannedCount();
        tick();
        idleTicks =
          before === 0 && running() + plannedCount() === 0 && now >= pausedUntil ? idleTicks + 1 : 0;
        if (idleTicks > 2 && ready.size > 0) {
          throw new SimulationError(
            `${ready.size} run(s) stay unplaced with every slot idle: the office refuses them`,
          );
        }
      }
    }
    for (const d of touched) fill(d, starting.has(d));
  }
  if (ready.size + plannedCount() > 0) throw new SimulationError('the simulation ended with work left');
  return {
    policy: `${o.cadence} · ${o.order}`,
    makespan: timeline.reduce((m, t) => Math.max(m, t.end), 0),
    timeline,
    issues: [...results.values()].sort((a, b) => a.number - b.number),
    pauses,
    decisions,
    backlog,
  };
}
