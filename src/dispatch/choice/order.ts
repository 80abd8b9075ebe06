import type { CapacityClass, DispatchOrder, Role } from '../../config/schema.js';
import type { RevisionPlan } from '../../schemas/crew.js';

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
  /**
   * Predicted run time in minutes: the size scaled by how far the estimates of its agent × domain ×
   * difficulty missed (./predict.ts). What tail-guard and the standby split weigh; the
   * size when absent.
   */
  predicted?: number;
  /**
   * Chance its run is not accepted and the issue needs a repair, from the records of its agent ×
   * domain × difficulty (./predict.ts). Tail-guard weighs the repair it may need; absent: none.
   */
  pFail?: number;
  forceAgent?: string;
  /** A repair of a failed run, in the backlog (seed 002: repairs launch before new work). */
  repair: boolean;
  /** 1 for a first run, 2 for the repair; never 3. */
  attempt: 1 | 2;
  /**
   * Its last run ended on the environment's failure (an infra abort: a failed install, a program
   * the sandbox lacks, an agent that could not start; ./history.ts). It goes behind every other
   * candidate, a repair's place included: the machine is what failed, and the waiting issues may not
   * need what it lacks.
   */
  environment?: boolean;
  /**
   * Its last crew claimed a usage limit nothing confirmed (`limit_unconfirmed`, ./limit-probe.ts):
   * the claim is the issue's, so the issue is its backoff's cost — it goes to the back of the queue,
   * behind every other candidate (environment failures included), and is tried when nothing else
   * waits. Its agent was not paused.
   */
  limitClaim?: boolean;
  /** A revision crew of a delivered pull request (./revision.ts): its agent is `forceAgent`. */
  revision?: RevisionPlan;
}

export interface OrderOptions {
  /** `dispatch.order` (the configuration's default is tail-guard); absent here: smallest-first. */
  order?: DispatchOrder;
  /** Worktree slots of the fleet (Σ K): tail-guard divides the backlog by it. */
  slots?: number;
  /**
   * Expected work in the backlog in total (Σ `expectedMinutes`). Default: the sum over `candidates`.
   * A caller that shows only part of its backlog (the simulator's window) passes the whole backlog's sum.
   */
  backlogSize?: number;
  /**
   * Tail-guard: the size estimate up to which a fresh item is quick (`quickCut` over the issues of
   * the curriculum). Quick items keep the seed's order; the longer ones follow, longest expected
   * first. Absent: every fresh item keeps the seed's order (promotions aside).
   */
  quickMinutes?: number;
}

/**
 * The share of the curriculum's issues, smallest estimates first, that tail-guard keeps in the
 * seed's order (docs/dispatch.md "Ordering"). Above one half, so the issue at the median gets its
 * first verdict as soon as under smallest-first; the rest run longest first, so the backlog ends on
 * its shortest remaining items instead of its longest.
 */
export const QUICK_SHARE = 0.55;

/**
 * The size estimate up to which an issue is quick: the `QUICK_SHARE` quantile (nearest rank) of the
 * estimates of every issue the curriculum lists, whatever its state — done and running ones
 * included, so the cut does not climb as the quick ones finish. Undefined without an estimate.
 */
export function quickCut(sizes: readonly number[]): number | undefined {
  const xs = sizes.filter((x) => Number.isFinite(x) && x >= 0).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  return xs[Math.min(xs.length, Math.max(1, Math.ceil(QUICK_SHARE * xs.length))) - 1];
}

/**
 * Tail guard: a fresh item whose size estimate is at least this fraction of the backlog per
 * slot is promoted (docs/dispatch.md "Order"; measured in docs/simulate.md).
 */
export const TAIL_GUARD_BETA = 0.75;

/** The size from which tail-guard promotes a fresh item: β × backlog / slots. */
export function tailGuardThreshold(backlogSize: number, slots: number): number {
  return (TAIL_GUARD_BETA * backlogSize) / Math.max(1, slots);
}

/** An item's predicted minutes: the records' prediction (./predict.ts), else its size estimate. */
export function predictedMinutes(c: Pick<Candidate, 'size' | 'predicted'>): number {
  return c.predicted ?? c.size;
}

/**
 * A repair's length against the first run's: seed 002's repair restarts the room from the contract,
 * so it takes about as long again.
 */
export const REPAIR_FACTOR = 1;

/**
 * The work an item still stands for, its possible repair included: predicted minutes × (1 + pFail ×
 * REPAIR_FACTOR). A repair (attempt 2) has no repair after it: the two-failure stop ends it.
 */
export function expectedMinutes(c: Pick<Candidate, 'size' | 'predicted' | 'pFail' | 'attempt'>): number {
  const p = c.attempt >= 2 ? 0 : Math.min(1, Math.max(0, c.pFail ?? 0));
  return predictedMinutes(c) * (1 + p * REPAIR_FACTOR);
}

/**
 * `smallest-first` (seed 002): repairs (and revision crews) first, then priority (0 most urgent), then smallest size,
 * ties by issue number; an issue whose last run was the environment's failure last of all.
 * `tail-guard` (the default): smallest-first, except that a fresh item expected to be long
 * (`expectedMinutes`, its possible repair included, ≥ β × the backlog's expected work per slot)
 * starts first within its priority, longest expected first: of two equally long items the risky
 * one qualifies earlier and goes first. An item of p
 * minutes is hidden when the slots still have about p of other work each to do beside it; with β
 * = ¾ a long item is started while at least 4/3 of its length per slot remains, so the end of the
 * backlog never waits on it. Of the rest, the quick items (size ≤ `quickMinutes`: the smaller
 * `QUICK_SHARE` of the curriculum) keep the seed's order, which is what the median issue's first
 * verdict waits for; the longer ones follow, longest expected first, so the backlog ends on its
 * shortest remaining items and a late failure's repair has short work beside it.
 * Both are total orders, so every planner over the same inputs sees the same sequence. Sorts a
 * copy: O(n log n).
 */
export function orderCandidates(candidates: readonly Candidate[], o: OrderOptions = {}): Candidate[] {
  const sorted = [...candidates].sort(compareCandidates);
  if (o.order !== 'tail-guard') return sorted;
  const total = o.backlogSize ?? candidates.reduce((s, c) => s + expectedMinutes(c), 0);
  const threshold = tailGuardThreshold(total, o.slots ?? 1);
  const quick = o.quickMinutes;
  return promote(
    sorted,
    (c) => expectedMinutes(c) >= threshold,
    quick === undefined ? undefined : (c) => c.size > quick,
  );
}

/**
 * Repairs keep the front; within each priority the promoted fresh items (longest expected first)
 * go before the rest, which keep their order — except the `long` ones (not quick), which go after
 * the rest, longest expected first. Priority is the operator's word and stays first: tail-guard
 * replaces only the size key of smallest-first.
 */
export function promote(
  ordered: readonly Candidate[],
  lifted: (c: Candidate) => boolean,
  long?: (c: Candidate) => boolean,
): Candidate[] {
  // 0 promoted, 1 in the seed's order, 2 long: longest expected first.
  const band = new Map<Candidate, 0 | 1 | 2>();
  for (const c of ordered)
    if (!front(c) && !c.environment && !c.limitClaim) {
      if (lifted(c)) band.set(c, 0);
      else if (long?.(c)) band.set(c, 2);
    }
  if (band.size === 0) return [...ordered];
  const rank = new Map(ordered.map((c, i) => [c, i]));
  const bandOf = (c: Candidate) => band.get(c) ?? 1;
  return [...ordered].sort((a, b) => {
    if (front(a) !== front(b)) return front(a) ? -1 : 1;
    const env = behind(a, b);
    if (env) return env;
    if (a.priority !== b.priority) return a.priority - b.priority;
    const ba = bandOf(a);
    if (ba !== bandOf(b)) return ba - bandOf(b);
    if (ba !== 1) return expectedMinutes(b) - expectedMinutes(a) || a.issueNumber - b.issueNumber;
    return rank.get(a)! - rank.get(b)!;
  });
}

/**
 * Repairs and revision crews go first: a repair is never overtaken (seed 002), and a revision answers
 * a person waiting on their pull request. A repair whose last run was the environment's failure does
 * not: it waits with the others of its kind at the back.
 */
export function front(c: Candidate): boolean {
  return (c.repair && !c.environment && !c.limitClaim) || c.revision !== undefined;
}

/**
 * -1/1 when exactly one of the two waits behind the other: an unconfirmed limit claim behind
 * everything, then an environment failure behind the rest; else 0.
 */
function behind(a: Candidate, b: Candidate): number {
  if (!!a.limitClaim !== !!b.limitClaim) return a.limitClaim ? 1 : -1;
  return !!a.environment === !!b.environment ? 0 : a.environment ? 1 : -1;
}

export function compareCandidates(a: Candidate, b: Candidate): number {
  if (front(a) !== front(b)) return front(a) ? -1 : 1;
  const env = behind(a, b);
  if (env) return env;
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.size !== b.size) return a.size - b.size;
  return a.issueNumber - b.issueNumber;
}
