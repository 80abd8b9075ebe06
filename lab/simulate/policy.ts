import type { RunOutcome, SimIssue, SimSlot, Workload } from './workload.js';

/**
 * The seam between the event loop and a scheduling policy. The engine owns virtual time, slots,
 * outcomes, repairs, the two-failure stop and pauses; a policy only decides which ready item runs
 * on which free slot. Policies keep their own backlog, fed through `add`.
 */
export interface ReadyItem {
  /** Unique per attempt in the backlog: `<issue>#<run index>`. */
  id: string;
  issue: SimIssue;
  /** Index into issue.runs of the run this item will perform. */
  run: number;
  /** 1-based verdict attempt (a usage-limit retry keeps the attempt). */
  attempt: number;
  /** The previous verdict was a failure: this is a repair (seed 002: repairs go first). */
  repair: boolean;
  /** Order in which items became ready: what FIFO means. */
  seq: number;
}

export interface Launch {
  item: ReadyItem;
  slot: SimSlot;
}

export interface DecideContext {
  now: number;
  /** Free slots, by slot index. */
  free: readonly SimSlot[];
  /** Runs in progress. */
  running: number;
  workload: Workload;
  /** Set while a usage-limit pause is in force: why. Only policies with `consultWhilePaused` see it. */
  paused?: string;
}

/** What happens to an issue after a run ends. */
export type NextStep =
  | { kind: 'done' }
  | { kind: 'stopped'; reason: 'repair-stopped-after-two-failures' }
  | { kind: 'backlog'; attempt: number; repair: boolean };

export interface SimPolicy {
  readonly name: string;
  add(item: ReadyItem): void;
  /** Called whenever a slot is free and the school is not paused. Must not launch on a busy slot. */
  decide(ctx: DecideContext): Launch[];
  /** Items still in the backlog, for the stall diagnostic. */
  backlog(): number;
  /**
   * Decides what follows a run (repair, stop, retry). Without it the engine applies seed 002's rule
   * itself; with it (our policy: the dispatch office's history) the engine checks the answer against
   * the workload and fails loudly on a disagreement, e.g. a third attempt.
   */
  afterRun?(item: ReadyItem, outcome: RunOutcome, now: number): NextStep;
  /** Ask this policy during pauses too; it must refuse to launch (the engine checks). */
  readonly consultWhilePaused?: boolean;
}

export type PolicyFactory = (workload: Workload) => SimPolicy;
