import { DEFAULT_JOB_TIMEOUT_MINUTES, type DispatchOrder } from '../../src/config/schema.js';
import { nextCycle } from '../../src/dispatch/next-cycle.js';
import { quickCut } from '../../src/dispatch/choice/order.js';
import { SimulationError, type SimResult } from './engine.js';
import { MinHeap } from './heap.js';
import { createOffice } from './office-adapter.js';
import { classRank } from './options.js';
import type { FreeDaemon } from './ours.js';
import type { ReadyItem } from './policy.js';
import { RunLog } from './run-log.js';
import { RunQueue } from './shared-queue.js';
import type { SimSlot, Workload } from './workload.js';

/**
 * The school loop as deployed, in virtual minutes: the same admission and order as the real code
 * (through the office adapter: `admit`, `orderCandidates`, `issueStates`), and the same cadence as
 * the workflow and the driver:
 * - a plan runs every `workflow.scheduleMinutes` (the cron); it admits crews onto the slots that are free
 *   then (planned and running crews hold a slot) and queues one crew job per daemon with work;
 * - a daemon's crew job starts `workflow.queueMinutes` after its plan, and never while that daemon's previous
 *   job still runs (one concurrency group per daemon);
 * - `cron`: a job runs the crews its plan gave it and ends; a slot freed in between waits for the
 *   next plan. `refill`: a freed slot first takes crews planned for its daemon meanwhile, then asks
 *   the office for this daemon (`refillFor`), while a crew timeout plus the grading reserve still fit
 *   before the job's time limit (`workflow.jobTimeoutMinutes`; `school loop` gives the driver none, so
 *   compare.ts and the bench run this cadence without one) — the driver's rule.
 * - `standby` (GHES), `shared` (github.com): an Actions plan's first wave and standby crews, each
 *   crew job repairing its own failed crews; a run's crew ends reach the office at its grade, its
 *   crews hold their daemons' slots until then, and the grade starts the next run when work waits
 *   (below). `standby`: a daemon's standby crews are its job's alone. `shared`: any crew job of the
 *   run may claim them (`SharedRun`).
 * Pauses follow seed 002 as in the engine. Every run's duration and outcome come from the workload,
 * so cron and refill do the same work and differ only in when it starts.
 */
export type Cadence = 'cron' | 'refill' | 'standby' | 'shared';

/**
 * One workflow run of the `standby` and `shared` cadences: its plan, its crew jobs, its grade.
 * `shared` (docs/dispatch.md "One queue per run"): a plan's standby crews stay planned for their
 * daemon, each listed with the run's daemons admission accepts it on (`eligible`); a crew job of the
 * run whose slot frees, after its first wave and its own repairs, claims its own standby crews and
 * then the other daemons', in plan order (the real `claimOrder`, through `RunQueue`), while a crew
 * timeout plus the reserve fit. What no job of the run claimed goes back to the backlog when the
 * run's last job ends.
 */
interface SharedRun {
  /** `shared`: the run's standby crews no job has claimed yet. */
  queue: RunQueue;
  /** Crews its jobs started. */
  started: number;
  /** Runs in a row the loop started itself, this one included (0: the cron's). */
  chain: number;
  /**
   * Crews it planned per daemon. Until its grade the state shows them all as planned (their starts
   * and ends reach it with the handoffs), so they hold their daemon's slots for every other plan.
   */
  planned: Map<Daemon, number>;
  /** What the run's grade hands to the office: its crews' ends and the crews they did not start. */
  graded: Array<() => void>;
}

/** Idle slot-minutes while runnable work waits, by what held the slot (docs/simulate.md). */
export interface IdleCauses {
  /** No crew job on the daemon: waiting for the next plan. */
  noJob: number;
  /** A crew job queued (GitHub's queue, or behind the daemon's previous job). */
  queued: number;
  /** The job runs but may not start another crew: a crew timeout plus the reserve no longer fit. */
  window: number;
  /** The job may start crews but has none of its own left. */
  empty: number;
}

/** The workflow's cadence and limits, as the workflow file and the configuration set them. */
export interface DeployedWorkflow {
  /** The cron's interval: a plan runs every this many minutes. */
  scheduleMinutes: number;
  /** Plan → crew job start (time in GitHub's job queue). */
  queueMinutes: number;
  /** A crew job's time limit. */
  jobTimeoutMinutes: number;
  /** What a crew job keeps back for its grading before the limit. */
  gradingReserveMinutes: number;
}

export interface DeployedOptions {
  cadence: Cadence;
  order: DispatchOrder;
  workflow: DeployedWorkflow;
  /** Default: the longest run of the workload, rounded up (a timeout that kills no run). */
  crewTimeoutMinutes?: number;
  /**
   * `standby`, `shared`: a crew job plans and starts the repair of its own failed crew
   * (`dispatch.repairInJob`, the office's `jobRepair`). Default true, as the configuration.
   */
  repairInJob?: boolean;
  /**
   * `standby`, `shared`: minutes from a run's last crew job end to its grade's save (judge and
   * grade jobs). Only then do the run's crew ends and unstarted crews reach the office: a repair
   * the job did not run waits for it. Default 5.
   */
  gradeMinutes?: number;
  /**
   * `standby`, `shared`: a run's grade starts the next run when work is waiting (the office's
   * `nextCycle`, dispatch/next-cycle.ts).
   */
  nextCycle?: {
    /** At most this many runs in a row; 0 turns it off. Default 12, the workflow input `next-cycle-runs`. */
    runs?: number;
    /** Minutes from the grade to the next run's plan (workflow_dispatch, the plan job). Default 2. */
    minutes?: number;
  };
  /** Filled with the idle slot-minutes while work waits, by cause. */
  idle?: IdleCauses;
  /**
   * The office predicts from its records (the office adapter's `predictions`): the workload's
   * history as earlier cycles, then the backlog's runs as they end; `risk` adds each candidate's
   * chance of a repair, which tail-guard weighs. Absent: the size estimates alone.
   */
  predictions?: { risk: boolean };
}

/**
 * The documented workflow: a two-hourly cron, crew jobs of the workflow's default limit
 * (`crew-timeout-minutes`, the configuration's `dispatch.jobTimeoutMinutes`), a 5-minute grading
 * reserve.
 */
export const DEFAULT_DEPLOYED: DeployedWorkflow = {
  scheduleMinutes: 120,
  queueMinutes: 1,
  jobTimeoutMinutes: DEFAULT_JOB_TIMEOUT_MINUTES,
  gradingReserveMinutes: 5,
};

interface Daemon {
  id: string;
  slots: SimSlot[];
  free: SimSlot[];
  planned: ReadyItem[];
  running: number;
  /** `standby`: the crews this job took at its start (its first wave and the standby behind it). */
  job?: { deadline: number; crews: ReadyItem[]; run?: SharedRun };
  /** A crew job queued behind the running one, or waiting for its runner. */
  jobAt?: number;
  /** `shared`: the run whose crew job is queued for this daemon (the newest plan's). */
  pendingRun?: SharedRun;
}

type Ev =
  | { kind: 'tick' }
  | { kind: 'job'; daemon: Daemon }
  | { kind: 'finish'; daemon: Daemon; slot: SimSlot; item: ReadyItem; start: number }
  | { kind: 'resume' }
  | { kind: 'plan'; chain: number }
  | { kind: 'grade'; run: SharedRun };

export function simulateDeployed(workload: Workload, options: DeployedOptions): SimResult {
  const longest = Math.max(...workload.issues.flatMap((i) => i.runs.map((r) => r.duration)));
  const o = { ...options, crewTimeoutMinutes: options.crewTimeoutMinutes ?? Math.ceil(longest) };
  if (o.crewTimeoutMinutes < longest) {
    throw new SimulationError(
      `crew timeout ${o.crewTimeoutMinutes} min is shorter than the longest run (${longest.toFixed(1)} min): that run would be killed, not finished`,
    );
  }
  const { jobTimeoutMinutes, gradingReserveMinutes } = o.workflow;
  if (o.crewTimeoutMinutes + gradingReserveMinutes > jobTimeoutMinutes) {
    throw new SimulationError(
      `job time limit ${jobTimeoutMinutes} min cannot fit one crew timeout (${o.crewTimeoutMinutes} min) plus the grading reserve (${gradingReserveMinutes} min)`,
    );
  }
  return new DeployedLoop(workload, o).run();
}

/** One simulated deployment: the fleet, the backlog and the event loop over virtual minutes. */
class DeployedLoop {
  private readonly perDaemon: number;
  private readonly office: ReturnType<typeof createOffice>;
  private readonly daemons = new Map<string, Daemon>();
  private readonly events = new MinHeap<Ev>();
  private readonly ready = new Map<string, ReadyItem>();
  private readonly log: RunLog;
  private readonly backlog = { available: 0, busy: 0 };
  private now = 0;
  private seq = 0;
  private decisions = 0;
  private backlogSize = 0;
  /** `shared`: the runs with a queue, until their last crew job ends. */
  private readonly runs = new Set<SharedRun>();
  /** Items waiting for their run's grade to reach the office. */
  private readonly graded = new Set<ReadyItem>();
  /** Runs whose grade has not handed their crews' ends to the office yet. */
  private readonly ungraded = new Set<SharedRun>();

  constructor(
    workload: Workload,
    private readonly o: DeployedOptions & { crewTimeoutMinutes: number },
  ) {
    this.perDaemon = workload.options.fleet.slotsPerDaemon;
    this.log = new RunLog(workload.options.pauses.minutes);
    this.office = createOffice({
      slotsPerDaemon: this.perDaemon,
      totalSlots: workload.slots.length,
      order: o.order,
      ...quickOf(workload),
      ...(o.predictions
        ? { predictions: { history: workload.history ?? [], risk: o.predictions.risk } }
        : {}),
    });
    for (const s of workload.slots) {
      const d = this.daemons.get(s.daemon) ?? { id: s.daemon, slots: [], free: [], planned: [], running: 0 };
      d.slots.push(s);
      d.free.push(s);
      this.daemons.set(s.daemon, d);
    }
    for (const issue of workload.issues) this.addToBacklog({ issue, run: 0, attempt: 1, repair: false });
  }

  run(): SimResult {
    this.events.push(0, { kind: 'tick' });
    let idleTicks = 0;
    while (this.events.size > 0) {
      this.advanceTo(this.events.peekKey()!);
      const touched = new Set<Daemon>();
      const starting = new Set<Daemon>();
      while (this.events.peekKey() === this.now) {
        const e = this.events.pop()!.value;
        if (e.kind === 'finish') {
          this.finish(e);
          touched.add(e.daemon);
        } else if (e.kind === 'job') {
          e.daemon.jobAt = undefined;
          if (e.daemon.job) continue;
          e.daemon.job = {
            deadline: this.now + this.o.workflow.jobTimeoutMinutes,
            crews: [],
            ...(e.daemon.pendingRun ? { run: e.daemon.pendingRun } : {}),
          };
          e.daemon.pendingRun = undefined;
          touched.add(e.daemon);
          starting.add(e.daemon);
        } else if (e.kind === 'plan') {
          this.plan(e.chain);
        } else if (e.kind === 'grade') {
          this.grade(e.run);
        } else if (e.kind === 'tick') {
          const before = this.running() + this.plannedCount();
          this.tick();
          const idle =
            before === 0 && this.running() + this.plannedCount() === 0 && this.now >= this.log.pausedUntil;
          idleTicks = idle ? idleTicks + 1 : 0;
          if (idleTicks > 2 && this.ready.size > 0) {
            throw new SimulationError(
              `${this.ready.size} run(s) stay unplaced with every slot idle: the office refuses them`,
            );
          }
        }
      }
      for (const d of touched) this.fill(d, starting.has(d));
    }
    if (this.ready.size + this.plannedCount() > 0)
      throw new SimulationError('the simulation ended with work left');
    return this.log.summary(`${this.o.cadence} · ${this.o.order}`, this.decisions, this.backlog);
  }

  /** Moves the clock, counting busy and usable idle slot-time while runnable work waits. */
  private advanceTo(next: number): void {
    if (this.now >= this.log.pausedUntil && this.waiting().length > 0) {
      const idle = this.usableIdle(next - this.now);
      const busy = this.running();
      this.backlog.available += (next - this.now) * (busy + idle);
      this.backlog.busy += (next - this.now) * busy;
    }
    this.now = next;
  }

  private running(): number {
    return [...this.daemons.values()].reduce((n, d) => n + d.running, 0);
  }

  private plannedCount(): number {
    const shared = [...this.runs].reduce((n, r) => n + r.queue.size, 0);
    return [...this.daemons.values()].reduce(
      (n, d) => n + d.planned.length + (d.job?.crews.length ?? 0),
      shared + this.graded.size,
    );
  }

  private addToBacklog(item: Omit<ReadyItem, 'seq' | 'id'>): void {
    const full: ReadyItem = { ...item, id: `${item.issue.number}#${item.run}`, seq: this.seq++ };
    this.ready.set(full.id, full);
    this.backlogSize += item.issue.size;
  }

  /** The daemons of `among` with a free slot, as the office's admission sees them. */
  private freeDaemons(among: Daemon[], capacity: (d: Daemon) => number): FreeDaemon[] {
    return among
      .filter((d) => capacity(d) > 0)
      .map((d) => ({
        id: d.id,
        class: d.slots[0]!.class,
        free: capacity(d),
        busy: this.perDaemon - capacity(d),
      }));
  }

  /** The office decides for `offered` daemons (others offer no slot); returns what it placed. */
  private place(offered: Daemon[], capacity: (d: Daemon) => number): Array<[ReadyItem, Daemon]> {
    const free = this.freeDaemons(offered, capacity);
    if (free.length === 0 || this.ready.size === 0) return [];
    this.decisions++;
    const paused =
      this.now < this.log.pausedUntil
        ? `usage limit; paused until minute ${this.log.pausedUntil.toFixed(1)}`
        : undefined;
    const taken = free.reduce((n, d) => n + d.free, 0);
    // maxCrews = every slot; the office counts the rest of the fleet as active.
    const placed = this.office.place(this.now, [...this.ready.values()], free, paused, this.backlogSize);
    if (placed.size > taken) throw new SimulationError('the office placed more crews than free slots');
    const out: Array<[ReadyItem, Daemon]> = [];
    for (const [id, daemon] of placed) {
      const item = this.ready.get(id)!;
      this.ready.delete(id);
      this.backlogSize -= item.issue.size;
      out.push([item, this.daemons.get(daemon)!]);
    }
    return out;
  }

  private launch(d: Daemon, item: ReadyItem): void {
    const slot = d.free.shift();
    if (!slot) throw new SimulationError(`daemon ${d.id} launched with no free slot`);
    d.running++;
    if (d.job?.run) d.job.run.started++;
    this.events.push(this.now + item.issue.runs[item.run]!.duration, {
      kind: 'finish',
      daemon: d,
      slot,
      item,
      start: this.now,
    });
  }

  /** A crew timeout plus the grading reserve still fit before the job's limit. */
  private fits(job: NonNullable<Daemon['job']>): boolean {
    return this.now + this.o.crewTimeoutMinutes + this.o.workflow.gradingReserveMinutes <= job.deadline;
  }

  /**
   * The driver's loop for one daemon: planned crews first, then refill, then maybe end the job. A
   * cron job takes only the crews planned before it started: later plans queue the next job.
   */
  private fill(d: Daemon, starting: boolean): void {
    if (!d.job) return;
    if (this.o.cadence === 'standby' || this.o.cadence === 'shared')
      return this.fillStandby(d, d.job, starting);
    if (starting || this.o.cadence === 'refill') {
      while (d.free.length > 0 && d.planned.length > 0) this.launch(d, d.planned.shift()!);
    }
    const refill = this.o.cadence === 'refill' && this.fits(d.job);
    if (refill && d.free.length > 0 && this.now >= this.log.pausedUntil) {
      for (const [item, daemon] of this.place([d], (x) => x.free.length)) this.launch(daemon, item);
    }
    if (d.running === 0) {
      d.job = undefined;
      if (d.planned.length > 0) this.startJobAt(d, this.now);
    }
  }

  /**
   * An Actions crew job with standby crews (dispatch/gates/standby.ts): it takes what was planned for its
   * daemon when it starts, launches as slots free while a crew timeout plus the reserve fit, and
   * what it did not start goes back to the backlog (the next plan cancels it and plans the issue
   * again).
   */
  private fillStandby(d: Daemon, job: NonNullable<Daemon['job']>, starting: boolean): void {
    if (starting) job.crews.push(...d.planned.splice(0));
    while (d.free.length > 0 && job.crews.length > 0 && this.now >= this.log.pausedUntil && this.fits(job)) {
      this.launch(d, job.crews.shift()!);
    }
    // `shared`: a freed slot claims its own standby crews, then the other daemons', in plan order.
    while (job.run && d.free.length > 0 && this.now >= this.log.pausedUntil && this.fits(job)) {
      const item = job.run.queue.claim(d.id);
      if (!item) break;
      this.launch(d, item);
    }
    if (d.running > 0) return;
    this.afterGrade(job.run, job.crews.splice(0));
    d.job = undefined;
    this.endRuns();
    if (d.planned.length > 0) this.startJobAt(d, this.now);
  }

  private toBacklog(items: ReadyItem[]): void {
    for (const item of items) {
      this.ready.set(item.id, item);
      this.backlogSize += item.issue.size;
    }
  }

  /**
   * An Actions plan's free slots on `d`: the slots less the crews runs not graded yet planned there
   * (admission counts planned crews as busy; a daemon with standby counts at most its slots).
   */
  private unheld(d: Daemon): number {
    let planned = 0;
    for (const r of this.ungraded) planned += r.planned.get(d) ?? 0;
    return this.perDaemon - Math.min(this.perDaemon, planned);
  }

  /** Items back to the backlog: at once, or (a crew job's) when its run's grade reaches the office. */
  private afterGrade(run: SharedRun | undefined, items: ReadyItem[]): void {
    if (!run) return this.toBacklog(items);
    for (const i of items) this.graded.add(i);
    run.graded.push(() => {
      for (const i of items) this.graded.delete(i);
      this.toBacklog(items);
    });
  }

  /** A run none of whose crew jobs runs or waits any more: what its queue still holds goes back. */
  private endRuns(): void {
    for (const r of this.runs) {
      const live = [...this.daemons.values()].some((d) => d.job?.run === r || d.pendingRun === r);
      if (live) continue;
      this.afterGrade(r, r.queue.drain());
      this.runs.delete(r);
      this.events.push(this.now + (this.o.gradeMinutes ?? 5), { kind: 'grade', run: r });
    }
  }

  /** A run's grade: its crews' ends reach the office, and the office says whether to start the next run. */
  private grade(run: SharedRun): void {
    for (const f of run.graded.splice(0)) f();
    this.ungraded.delete(run);
    const paused = this.now < this.log.pausedUntil ? 'usage limit' : undefined;
    const next = nextCycle({
      maxRuns: this.o.nextCycle?.runs ?? 12,
      started: run.started,
      waiting: this.ready.size,
      chain: run.chain,
      ...(paused ? { paused } : {}),
    });
    if (next.start)
      this.events.push(this.now + (this.o.nextCycle?.minutes ?? 2), { kind: 'plan', chain: next.chain });
  }

  /** A run the loop started itself: a plan as the cron's, without moving the cron. */
  private plan(chain: number): void {
    this.planStandby((x) => this.unheld(x), chain);
    for (const d of this.daemons.values())
      if (d.planned.length > 0) this.startJobAt(d, this.now + this.o.workflow.queueMinutes);
  }

  /** What standby crews are sized by: the 75th percentile of the last 50 runs (standby.ts). */
  private typicalMinutes(): number {
    const runs = this.log.timeline
      .slice(-50)
      .map((t) => t.end - t.start)
      .sort((a, b) => a - b);
    if (runs.length < 5) return this.o.crewTimeoutMinutes;
    const p75 = runs[Math.min(runs.length - 1, Math.ceil(runs.length * 0.75) - 1)]!;
    return Math.min(this.o.crewTimeoutMinutes, Math.max(1, p75));
  }

  private startJobAt(d: Daemon, at: number): void {
    if (d.job || d.jobAt !== undefined) return;
    d.jobAt = at;
    this.events.push(at, { kind: 'job', daemon: d });
  }

  /** The cron: a plan onto the free slots (and, for `standby`, the standby behind them). */
  private tick(): void {
    const o = this.o;
    const capacity = (x: Daemon) => x.free.length - x.planned.length - (x.job?.crews.length ?? 0);
    if (o.cadence === 'standby' || o.cadence === 'shared') this.planStandby((x) => this.unheld(x));
    else for (const [item, d] of this.place([...this.daemons.values()], capacity)) d.planned.push(item);
    for (const d of this.daemons.values())
      if (d.planned.length > 0) this.startJobAt(d, this.now + o.workflow.queueMinutes);
    if (this.ready.size + this.plannedCount() + this.running() > 0)
      this.events.push(this.now + o.workflow.scheduleMinutes, { kind: 'tick' });
  }

  /**
   * An Actions plan: the first wave onto the free slots and the standby behind it, balanced by
   * predicted work — the office's own standby pass (dispatch/gates/standby.ts), for a full job.
   */
  private planStandby(capacity: (d: Daemon) => number, chain = 0): void {
    if (this.now < this.log.pausedUntil || this.ready.size === 0) return;
    const free = this.freeDaemons([...this.daemons.values()], capacity);
    if (free.length === 0) return;
    this.decisions++;
    const { first, standby, eligible } = this.office.planStandby(
      [...this.ready.values()],
      free,
      {
        jobMinutes: this.o.workflow.jobTimeoutMinutes,
        crewTimeoutMinutes: this.o.crewTimeoutMinutes,
        gradingReserveMinutes: this.o.workflow.gradingReserveMinutes,
        typicalMinutes: this.typicalMinutes(),
      },
      this.backlogSize,
    );
    if (first.size > free.reduce((n, d) => n + d.free, 0)) {
      throw new SimulationError('the office placed more crews than free slots');
    }
    const run: SharedRun = { queue: new RunQueue(), started: 0, graded: [], chain, planned: new Map() };
    const shared = this.o.cadence === 'shared';
    // A shared crew may be claimed by the crew job of any daemon the plan lists for it.
    for (const [id, daemon] of [...first, ...standby]) {
      const item = this.ready.get(id)!;
      this.ready.delete(id);
      this.backlogSize -= item.issue.size;
      const d = this.daemons.get(daemon)!;
      if (shared && standby.has(id)) run.queue.add(item, daemon, eligible.get(id)!);
      else d.planned.push(item);
      run.planned.set(d, (run.planned.get(d) ?? 0) + 1);
    }
    this.runs.add(run);
    this.ungraded.add(run);
    // The run's crew jobs: one per daemon it gave a first wave (as the workflow's matrix).
    for (const d of this.daemons.values()) if (d.planned.length > 0) d.pendingRun = run;
    this.endRuns();
  }

  /** A run ends: its slot frees, it is recorded, and the office says what follows. */
  private finish(e: Extract<Ev, { kind: 'finish' }>): void {
    const { daemon: d, slot, item, start } = e;
    d.running--;
    d.free.push(slot);
    d.free.sort((a, b) => a.index - b.index);
    const { run, resumeAt } = this.log.ended(slot, item, start, this.now);
    if (resumeAt !== undefined) this.events.push(resumeAt, { kind: 'resume' });
    const step = this.office.afterRun(item, run.outcome, this.now);
    if (step.kind !== 'backlog') return this.log.settle(item.issue.number, step);
    if (item.run + 1 >= item.issue.runs.length) {
      throw new SimulationError(
        `issue #${item.issue.number} back in the backlog for a run the workload does not have`,
      );
    }
    const next = { issue: item.issue, run: item.run + 1, attempt: step.attempt, repair: step.repair };
    const job = d.job?.run ? d.job : undefined;
    if (!job) return this.addToBacklog(next);
    const full: ReadyItem = { ...next, id: `${item.issue.number}#${next.run}`, seq: this.seq++ };
    // A crew job plans the repair of its own failed crew and starts it next (dispatch/gates/standby.ts).
    if ((this.o.repairInJob ?? true) && this.office.jobRepair(item)) return void job.crews.unshift(full);
    this.afterGrade(job.run, [full]);
  }

  /** Work not started: the backlog, crews planned or on standby, and what a grade will return. */
  private waiting(): ReadyItem[] {
    const out = [...this.ready.values()];
    for (const d of this.daemons.values()) out.push(...d.planned, ...(d.job?.crews ?? []));
    for (const r of this.runs) out.push(...r.queue.unclaimed());
    for (const i of this.graded) out.push(i);
    return out;
  }

  /** Free slots some ready item fits, for the refill figure (idle while runnable work waits). */
  private usableIdle(minutes: number): number {
    let lightest = 4;
    for (const i of this.waiting()) lightest = Math.min(lightest, classRank(i.issue.weight));
    let idle = 0;
    const causes = this.o.idle;
    for (const d of this.daemons.values()) {
      let n = 0;
      for (const s of d.free) if (classRank(s.class) >= lightest) n++;
      idle += n;
      if (!causes || n === 0) continue;
      const why: keyof IdleCauses = d.job
        ? this.fits(d.job)
          ? 'empty'
          : 'window'
        : d.jobAt !== undefined
          ? 'queued'
          : 'noJob';
      causes[why] += n * minutes;
    }
    return idle;
  }
}

/** The curriculum lists every issue of the backlog all along: tail-guard's quick cut over them. */
function quickOf(workload: Workload): { quickMinutes?: number } {
  const cut = quickCut(workload.issues.map((i) => i.size));
  return cut === undefined ? {} : { quickMinutes: cut };
}
