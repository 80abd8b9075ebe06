import type { CapacityClass, Role } from '../config/schema.js';

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
  /** A queued repair of a failed run (seed 002: repairs launch before new work). */
  repair: boolean;
  /** 1 for a first run, 2 for the repair; never 3. */
  attempt: 1 | 2;
}

/**
 * Seed 002 order: queued repairs first, then priority (0 most urgent), then smallest size, ties by
 * issue number. A total order, so every planner over the same inputs sees the same sequence.
 * Sorts a copy: O(n log n).
 */
export function orderCandidates(candidates: readonly Candidate[]): Candidate[] {
  return [...candidates].sort(compareCandidates);
}

export function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.repair !== b.repair) return a.repair ? -1 : 1;
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.size !== b.size) return a.size - b.size;
  return a.issueNumber - b.issueNumber;
}
