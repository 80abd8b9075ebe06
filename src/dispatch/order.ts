import type { CapacityClass, DispatchOrder, Role } from '../config/schema.js';

/** One issue the dispatch office may place this cycle, with what its history says about it. */
export interface Candidate {
  issueNumber: number;
  role: Role;
  domain: string;
  difficulty: number;
  weight: CapacityClass;
  fences: readonly string[];
  /** 0 is most urgent. */
  priority: number;
  /** Estimated size; smaller runs first. */
  size: number;
  forceAgent?: string;
  /** A repair of a failed run, in the backlog (seed 002: repairs launch before new work). */
  repair: boolean;
  /** 1 for a first run, 2 for the repair; never 3. */
  attempt: 1 | 2;
}

export interface OrderOptions {
  /** `dispatch.order`; default smallest-first. */
  order?: DispatchOrder;
  /** Worktree slots of the fleet (Σ K): tail-guard divides the backlog by it. */
  slots?: number;
  /**
   * Estimated work in the backlog in total (Σ size). Default: the sum over `candidates`. A caller
   * that shows only part of its backlog (the simulator's window) passes the whole backlog's sum.
   */
  backlogSize?: number;
}

/**
 * Tail guard: a fresh item whose size estimate is at least this fraction of the backlog per
 * slot is promoted (docs/dispatch.md "Order"; measured in docs/simulate.md).
 */
export const TAIL_GUARD_BETA = 0.5;

/** The size from which tail-guard promotes a fresh item: β × backlog / slots. */
export function tailGuardThreshold(backlogSize: number, slots: number): number {
  return (TAIL_GUARD_BETA * backlogSize) / Math.max(1, slots);
}

/**
 * `smallest-first` (seed 002, the default): repairs first, then priority (0 most urgent),
 * then smallest size, ties by issue number.
 * `tail-guard`: repairs first; then fresh items large enough to stretch the makespan (size ≥ β ×
 * backlog per slot), largest first; then the rest in the smallest-first order. Starting the few
 * long runs early keeps the end of the backlog from waiting on one of them.
 * Both are total orders, so every planner over the same inputs sees the same sequence. Sorts a
 * copy: O(n log n).
 */
export function orderCandidates(candidates: readonly Candidate[], o: OrderOptions = {}): Candidate[] {
  const sorted = [...candidates].sort(compareCandidates);
  if (o.order !== 'tail-guard') return sorted;
  const total = o.backlogSize ?? candidates.reduce((s, c) => s + c.size, 0);
  const threshold = tailGuardThreshold(total, o.slots ?? 1);
  return promote(sorted, (c) => c.size >= threshold);
}

/** Repairs keep the front; the promoted fresh items (largest first) follow; then the rest in order. */
export function promote(ordered: readonly Candidate[], lifted: (c: Candidate) => boolean): Candidate[] {
  const up = ordered
    .filter((c) => !c.repair && lifted(c))
    .sort((a, b) => b.size - a.size || a.issueNumber - b.issueNumber);
  if (up.length === 0) return [...ordered];
  const isUp = new Set(up);
  return [...ordered.filter((c) => c.repair), ...up, ...ordered.filter((c) => !c.repair && !isUp.has(c))];
}

export function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.repair !== b.repair) return a.repair ? -1 : 1;
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.size !== b.size) return a.size - b.size;
  return a.issueNumber - b.issueNumber;
}
