import { SchoolError } from '../errors.js';
import { MinHeap } from './heap.js';
import { classRank } from './options.js';
import type { NextStep, PolicyFactory, ReadyItem } from './policy.js';
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
  const policy = factory(workload);
  const events = new MinHeap<SimEvent>();
  const busy = new Array<boolean>(workload.slots.length).fill(false);
  // Free slot indexes, kept incrementally: scanning 1,000 slots at every event would dominate.
  const freeSet = new Set<number>(workload.slots.map((s) => s.index));
  const ready = new Set<string>();
  const timeline: TimelineEntry[] = [];
  const pauses: Array<{ from: number; to: number }> = [];
  const results = new Map<number, IssueResult>();
  let running = 0;
  let seq = 0;
  let pausedUntil = -Infinity;
  let decisions = 0;
  let now = 0;
  const backlog = { available: 0, busy: 0 };
  // Per class: items of that weight in the backlog, free slots of that class (for the backlog figure).
  const readyByClass = [0, 0, 0, 0];
  const freeByClass = [0, 0, 0, 0];
  for (const s of workload.slots) freeByClass[classRank(s.class)]!++;
  const usableIdle = () => {
    let lightest = readyByClass.findIndex((n) => n > 0);
    if (lightest < 0) return 0;
    let idle = 0;
    for (; lightest < freeByClass.length; lightest++) idle += freeByClass[lightest]!;
    return idle;
  };

  const addToBacklog = (item: Omit<ReadyItem, 'seq' | 'id'>) => {
    const full: ReadyItem = { ...item, id: `${item.issue.number}#${item.run}`, seq: seq++ };
    ready.add(full.id);
    readyByClass[classRank(item.issue.weight)]!++;
    policy.add(full);
  };
  for (const issue of workload.issues) addToBacklog({ issue, run: 0, attempt: 1, repair: false });

  const dispatch = () => {
    const paused = now < pausedUntil;
    if ((paused && !policy.consultWhilePaused) || running === workload.slots.length || ready.size === 0)
      return;
    const free = [...freeSet].sort((a, b) => a - b).map((i) => workload.slots[i]!);
    decisions++;
    const reason = paused ? `usage limit reached; paused until minute ${pausedUntil.toFixed(1)}` : undefined;
    for (const { item, slot } of policy.decide({
      now,
      free,
      running,
      workload,
      ...(reason ? { paused: reason } : {}),
    })) {
      if (paused) throw new SimulationError(`${policy.name} launched ${item.id} while the school was paused`);
      if (busy[slot.index]) throw new SimulationError(`${policy.name} launched on busy slot ${slot.index}`);
      if (!ready.delete(item.id)) throw new SimulationError(`${policy.name} launched ${item.id}, not ready`);
      readyByClass[classRank(item.issue.weight)]!--;
      freeByClass[classRank(slot.class)]!--;
      busy[slot.index] = true;
      freeSet.delete(slot.index);
      running++;
      events.push(now + item.issue.runs[item.run]!.duration, { kind: 'finish', slot, item, start: now });
    }
  };

  const finish = (slot: SimSlot, item: ReadyItem, start: number) => {
    busy[slot.index] = false;
    freeSet.add(slot.index);
    freeByClass[classRank(slot.class)]!++;
    running--;
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
    const next = { issue: item.issue, run: item.run + 1 };
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
    const step = policy.afterRun?.(item, run.outcome, now) ?? seedRule(item, run.outcome);
    const more = next.run < item.issue.runs.length;
    if (step.kind === 'backlog') {
      if (!more) {
        throw new SimulationError(
          `${policy.name} put issue #${n} back in the backlog for attempt ${step.attempt} after ${item.issue.runs.length} run(s); ` +
            'the workload ends there (a success or the second consecutive failure)',
        );
      }
      addToBacklog({ ...next, attempt: step.attempt, repair: step.repair });
    } else {
      if (more) throw new SimulationError(`${policy.name} ended issue #${n} (${step.kind}) with runs left`);
      result.status = step.kind;
      if (step.kind === 'stopped') result.reason = step.reason;
    }
  };

  dispatch();
  while (events.size > 0) {
    const next = events.peekKey()!;
    // The state between two event times is constant: account the interval before moving on.
    if (now >= pausedUntil) {
      const idle = usableIdle();
      if (idle > 0) {
        backlog.available += (next - now) * (running + idle);
        backlog.busy += (next - now) * running;
      }
    }
    now = next;
    while (events.peekKey() === now) {
      const e = events.pop()!.value;
      if (e.kind === 'finish') finish(e.slot, e.item, e.start);
    }
    dispatch();
  }
  if (ready.size > 0) {
    throw new SimulationError(
      `${policy.name} left ${ready.size} issue run(s) unplaced with every slot idle ` +
        `(${policy.backlog()} still in the policy's backlog): the policy refuses work it could run.`,
    );
  }
  return {
    policy: policy.name,
    makespan: timeline.reduce((m, t) => Math.max(m, t.end), 0),
    timeline,
    issues: [...results.values()].sort((a, b) => a.number - b.number),
    pauses,
    decisions,
    backlog,
  };
}
