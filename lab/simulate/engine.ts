import { SchoolError } from '../../src/errors.js';
import { MinHeap } from './heap.js';
import { classRank } from './options.js';
import type { NextStep, PolicyFactory, ReadyItem, SimPolicy } from './policy.js';
import { RunLog } from './run-log.js';
import type { RunOutcome, SimSlot, Workload } from './workload.js';

/**
 * The discrete-event loop (virtual minutes; nothing sleeps). Events are run completions and pause
 * ends. After every batch of simultaneous events the policy is asked to fill the free slots.
 * The lifecycle rules are the scheduler's (seed 002) and the same for every policy:
 * - a failed run puts the issue back in the backlog as a repair; a second consecutive failure stops it
 *   (`repair-stopped-after-two-failures`), never a third attempt;
 * - a usage/credit limit pauses the school: no new launch until the pause ends, no failure counted,
 *   the interrupted issue goes back in the backlog; runs already going carry on.
 */
export class SimulationError extends SchoolError {
  override readonly code = 'simulation';
  constructor(message: string) {
    super(message);
    this.name = 'SimulationError';
  }
}

export interface TimelineEntry {
  slot: number;
  issue: number;
  start: number;
  end: number;
  outcome: RunOutcome;
  attempt: number;
  repair: boolean;
}

export interface IssueResult {
  number: number;
  /** End of the first run that produced a verdict (success or failure). */
  firstVerdictAt?: number;
  status: 'done' | 'stopped';
  reason?: 'repair-stopped-after-two-failures';
  attempts: number;
}

export interface SimResult {
  policy: string;
  makespan: number;
  timeline: TimelineEntry[];
  issues: IssueResult[];
  pauses: Array<{ from: number; to: number }>;
  /** How many times the policy was consulted. */
  decisions: number;
  /**
   * Slot-minutes busy, and busy plus idle-but-usable (a free slot some item of the backlog fits), while the
   * school was not paused: how well the policy refills slots when it has something they can run.
   */
  backlog: { available: number; busy: number };
}

/** Seed 002: a failure is repaired once; the second consecutive failure stops the issue. */
export function seedRule(item: ReadyItem, outcome: RunOutcome): NextStep {
  if (outcome === 'success') return { kind: 'done' };
  if (outcome === 'usage_limit') return { kind: 'backlog', attempt: item.attempt, repair: item.repair };
  return item.attempt >= 2
    ? { kind: 'stopped', reason: 'repair-stopped-after-two-failures' }
    : { kind: 'backlog', attempt: item.attempt + 1, repair: true };
}

type SimEvent = { kind: 'finish'; slot: SimSlot; item: ReadyItem; start: number } | { kind: 'resume' };

export function simulate(workload: Workload, factory: PolicyFactory): SimResult {
  return new PolicyLoop(workload, factory(workload)).run();
}

/** One simulation of a policy: the slots, the backlog and the event loop over virtual minutes. */
class PolicyLoop {
  private readonly events = new MinHeap<SimEvent>();
  private readonly busy: boolean[];
  /** Free slot indexes, kept incrementally: scanning 1,000 slots at every event would dominate. */
  private readonly freeSet: Set<number>;
  private readonly ready = new Set<string>();
  private readonly log: RunLog;
  private readonly backlog = { available: 0, busy: 0 };
  /** Per class: items of that weight in the backlog, free slots of that class (for the backlog figure). */
  private readonly readyByClass = [0, 0, 0, 0];
  private readonly freeByClass = [0, 0, 0, 0];
  private running = 0;
  private seq = 0;
  private decisions = 0;
  private now = 0;

  constructor(
    private readonly workload: Workload,
    private readonly policy: SimPolicy,
  ) {
    this.busy = new Array<boolean>(workload.slots.length).fill(false);
    this.freeSet = new Set<number>(workload.slots.map((s) => s.index));
    this.log = new RunLog(workload.options.pauses.minutes);
    for (const s of workload.slots) this.freeByClass[classRank(s.class)]!++;
    for (const issue of workload.issues) this.addToBacklog({ issue, run: 0, attempt: 1, repair: false });
  }

  run(): SimResult {
    this.dispatch();
    while (this.events.size > 0) {
      this.advanceTo(this.events.peekKey()!);
      while (this.events.peekKey() === this.now) {
        const e = this.events.pop()!.value;
        if (e.kind === 'finish') this.finish(e.slot, e.item, e.start);
      }
      this.dispatch();
    }
    if (this.ready.size > 0) {
      throw new SimulationError(
        `${this.policy.name} left ${this.ready.size} issue run(s) unplaced with every slot idle ` +
          `(${this.policy.backlog()} still in the policy's backlog): the policy refuses work it could run.`,
      );
    }
    return this.log.summary(this.policy.name, this.decisions, this.backlog);
  }

  /** The state between two event times is constant: account the interval before moving on. */
  private advanceTo(next: number): void {
    if (this.now >= this.log.pausedUntil) {
      const idle = this.usableIdle();
      if (idle > 0) {
        this.backlog.available += (next - this.now) * (this.running + idle);
        this.backlog.busy += (next - this.now) * this.running;
      }
    }
    this.now = next;
  }

  private usableIdle(): number {
    let lightest = this.readyByClass.findIndex((n) => n > 0);
    if (lightest < 0) return 0;
    let idle = 0;
    for (; lightest < this.freeByClass.length; lightest++) idle += this.freeByClass[lightest]!;
    return idle;
  }

  private addToBacklog(item: Omit<ReadyItem, 'seq' | 'id'>): void {
    const full: ReadyItem = { ...item, id: `${item.issue.number}#${item.run}`, seq: this.seq++ };
    this.ready.add(full.id);
    this.readyByClass[classRank(item.issue.weight)]!++;
    this.policy.add(full);
  }

  /** Asks the policy to fill the free slots, and launches what it decides (checked). */
  private dispatch(): void {
    const { policy, workload, now } = this;
    const paused = now < this.log.pausedUntil;
    if (
      (paused && !policy.consultWhilePaused) ||
      this.running === workload.slots.length ||
      this.ready.size === 0
    )
      return;
    const free = [...this.freeSet].sort((a, b) => a - b).map((i) => workload.slots[i]!);
    this.decisions++;
    const reason = paused
      ? `usage limit reached; paused until minute ${this.log.pausedUntil.toFixed(1)}`
      : undefined;
    const launches = policy.decide({
      now,
      free,
      running: this.running,
      workload,
      ...(reason ? { paused: reason } : {}),
    });
    for (const { item, slot } of launches) {
      if (paused) throw new SimulationError(`${policy.name} launched ${item.id} while the school was paused`);
      this.launch(item, slot);
    }
  }

  private launch(item: ReadyItem, slot: SimSlot): void {
    const name = this.policy.name;
    if (this.busy[slot.index]) throw new SimulationError(`${name} launched on busy slot ${slot.index}`);
    if (!this.ready.delete(item.id)) throw new SimulationError(`${name} launched ${item.id}, not ready`);
    this.readyByClass[classRank(item.issue.weight)]!--;
    this.freeByClass[classRank(slot.class)]!--;
    this.busy[slot.index] = true;
    this.freeSet.delete(slot.index);
    this.running++;
    this.events.push(this.now + item.issue.runs[item.run]!.duration, {
      kind: 'finish',
      slot,
      item,
      start: this.now,
    });
  }

  /** A run ends: its slot frees, it is recorded, and the policy (or seed 002's rule) says what follows. */
  private finish(slot: SimSlot, item: ReadyItem, start: number): void {
    const { policy, now } = this;
    this.busy[slot.index] = false;
    this.freeSet.add(slot.index);
    this.freeByClass[classRank(slot.class)]!++;
    this.running--;
    const { run, resumeAt } = this.log.ended(slot, item, start, now);
    if (resumeAt !== undefined) this.events.push(resumeAt, { kind: 'resume' });
    const n = item.issue.number;
    const step = policy.afterRun?.(item, run.outcome, now) ?? seedRule(item, run.outcome);
    const more = item.run + 1 < item.issue.runs.length;
    if (step.kind === 'backlog') {
      if (!more) {
        throw new SimulationError(
          `${policy.name} put issue #${n} back in the backlog for attempt ${step.attempt} after ${item.issue.runs.length} run(s); ` +
            'the workload ends there (a success or the second consecutive failure)',
        );
      }
      this.addToBacklog({ issue: item.issue, run: item.run + 1, attempt: step.attempt, repair: step.repair });
    } else {
      if (more) throw new SimulationError(`${policy.name} ended issue #${n} (${step.kind}) with runs left`);
      this.log.settle(n, step);
    }
  }
}
