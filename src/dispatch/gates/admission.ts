import { CAPACITY_CLASSES, type AgentConfig } from '../../config/schema.js';
import { chooserFor, DaemonPlacer, type ChoiceRule, type Chooser } from '../choice/assign.js';
import type { ChoiceWhy } from '../choice/choice.js';
import { FenceSet } from './fences.js';
import { classRank, type DaemonStatus } from '../fleet/fleet.js';
import type { Candidate } from '../choice/order.js';
import { spendCapLine } from './spend.js';
import { opensPullRequest, type ReviewRoom } from './back-pressure.js';

/**
 * Admission: ONE pure decision over one batch (docs/architecture.md, N3.1, N5.1, N7.3, seeds 002/003). It reads
 * nothing and writes nothing; `planDispatch` gathers the inputs under the registry lock and records
 * the result. Every candidate comes out either admitted (with agent and daemon) or refused with a
 * code and a sentence.
 *
 * Batch gates, in order (each refuses every candidate):
 *  1. `blocked` — a corrupt or quarantined registry/ledger: assume the fleet is full (N5.1);
 *  2. spend cap — spent ≥ cap: exactly one loud line, nothing placed (seed 003); then the school's
 *     daily budget (`daily-budget`, ./budgets.ts);
 *  3. pause — a recorded usage limit, overload or operator pause (seed 002);
 *  4. time budget — not even one wave of crew timeout + grading reserve fits (N3.1).
 * Then, per candidate in the given order:
 *  5. global cap `maxCrews` minus active crews;
 *  6. an agent (N4.3 allowlist for a forced agent), never one an agent pause holds (`pausedAgents`:
 *     a limit only its student reported) nor one over its daily budget (`dailyBudgets.agents`): another
 *     eligible agent is chosen, else `agent-paused` / `agent-daily-budget`;
 *  7. a classroom pool; a coding crew may fall back to a `bot` daemon only when no worktree daemon is
 *     online, and at most `maxFallbacks` times per batch;
 *  8. capacity: online daemons, effective class ≥ weight (over-capacity is refused, not dropped),
 *     free disk ≥ floor, and free slots (K × waves − busy) — checked for the whole class ladder so
 *     the set admitted can always be packed (see below);
 *  9. fences disjoint from every running, planned and already admitted crew.
 *
 * Packing: crews of class w fit only on daemons of class ≥ w, a nested structure, so a set of crews
 * can be placed iff for every class c the crews needing ≥ c number at most the free slots on daemons
 * of class ≥ c (Hall's condition on nested sets). Admission keeps that invariant in priority order;
 * placement then packs best-fit-decreasing (heaviest first, tightest class first), which always
 * succeeds under it. Both steps are O(n log n) for n candidates.
 */
export type RefusalCode =
  | 'state-corrupt'
  | 'spend-cap'
  | 'daily-budget'
  | 'agent-daily-budget'
  | 'paused'
  | 'time-budget'
  | 'global-cap'
  | 'no-agent'
  | 'agent-paused'
  /** Back-pressure on review (./back-pressure.ts): the school's open pull requests are at the limit. */
  | 'review-back-pressure'
  /** Back-pressure on review: the only agent for it has as many open pull requests as it may. */
  | 'agent-review-back-pressure'
  | 'force-agent-not-allowed'
  | 'no-classroom'
  | 'fleet-offline'
  | 'fallback-limit'
  | 'over-capacity'
  | 'disk-floor'
  | 'no-free-slot'
  | 'fence-conflict'
  | 'active-crew'
  | 'repair-stopped-after-two-failures'
  | 'stopped-after-orphanings'
  | 'limit-claims-stopped'
  /** Its crews' usage-limit claims went unconfirmed `dispatch.maxUnconfirmedLimitClaims` times. */
  | 'stopped-after-unconfirmed-limit-claims'
  /** A person stopped its crew (`/school stop`, `school crew stop`); it waits for `school requeue`. */
  | 'stopped-by-person'
  | 'untrusted-author'
  | 'revisions-exhausted'
  | 'done';

export interface Refusal {
  issue: number;
  code: RefusalCode;
  reason: string;
}

export interface AdmissionDaemon extends DaemonStatus {
  /** Crews holding or about to hold one of its slots (active crews ∪ lease holders). */
  busy: number;
}

export interface AdmissionInput {
  /** Ready candidates, already ordered (repairs, priority, size, number). */
  candidates: readonly Candidate[];
  daemons: readonly AdmissionDaemon[];
  agents: readonly AgentConfig[];
  /** How an agent is chosen (./assign.ts `choiceRule`). */
  choice?: ChoiceRule;
  limits: AdmissionLimits;
  /** Fences of planned and running crews, with a label naming the holder. */
  heldFences: ReadonlyArray<{ fences: readonly string[]; holder: string }>;
  time: { remainingMs: number; crewTimeoutMs: number; gradingReserveMs: number; maxWaves: number };
  spend: { spentUsd: number; capUsd?: number };
  holds?: AdmissionHolds;
}

/** How many crews may start, on which daemons, and how often a bot takes a worktree crew. */
export interface AdmissionLimits {
  maxCrews: number;
  activeCrews: number;
  minFreeDiskBytes: number;
  maxFallbacks: number;
}

/** What holds crews back: the whole school, or single agents. */
export interface AdmissionHolds {
  /** Set when the registry or a control ledger cannot be trusted: deny everything with this reason. */
  blocked?: string;
  /** Set while the school is paused: deny everything with this reason. */
  paused?: string;
  /** Agents paused on their own (agent id → why): their crews wait, other agents are chosen. */
  pausedAgents?: ReadonlyMap<string, string>;
  /**
   * Daily budgets reached (./budgets.ts `dailyBudgets`): the school's refuses the batch; an agent
   * over its own (agent id → why) is not chosen, another eligible agent is.
   */
  dailyBudgets?: { school?: string; agents?: ReadonlyMap<string, string> };
  /**
   * Back-pressure on review (./back-pressure.ts): the places left for new issues, the school's and
   * each agent's, taken as new issues are admitted. Revisions of open pull requests pass.
   */
  review?: ReviewRoom;
}

export interface Admitted {
  candidate: Candidate;
  agent: string;
  daemon: string;
  classroom: DaemonStatus['classroom'];
  /** A coding crew sent to a bot classroom because no worktree daemon was online (N7.3). */
  fallback: boolean;
  /** Why a learning choice took this agent. */
  why?: ChoiceWhy;
}

export interface AdmissionResult {
  admitted: Admitted[];
  refused: Refusal[];
  /** The loud line of a cap-frozen batch. */
  loud?: string;
  /** Crew-timeout waves that fit in the remaining job time (capped at maxWaves). */
  waves: number;
}

type PoolName = 'worktree' | 'bot';
const CLASSES = CAPACITY_CLASSES.length;
const GiB = 1024 ** 3;

export function admit(input: AdmissionInput): AdmissionResult {
  const { remainingMs, crewTimeoutMs, gradingReserveMs, maxWaves } = input.time;
  const fit = crewTimeoutMs > 0 ? Math.floor((remainingMs - gradingReserveMs) / crewTimeoutMs) : 0;
  const waves = Math.max(0, Math.min(maxWaves, fit));
  const gated = batchGate(input, waves);
  if (gated) return gated;
  const pools = buildPools(input, waves);
  const { selected, refused } = select(input, pools, waves);
  const admitted = place(selected, pools, refused);
  return { admitted, refused, waves };
}

/** Gates 1–4: a reason that refuses the whole batch, as the batch's result; undefined when none. */
function batchGate(input: AdmissionInput, waves: number): AdmissionResult | undefined {
  const { candidates } = input;
  const all = (code: RefusalCode, reason: string, loud?: string): AdmissionResult => ({
    admitted: [],
    refused: candidates.map((c) => ({ issue: c.issueNumber, code, reason })),
    ...(loud ? { loud } : {}),
    waves,
  });
  const holds = input.holds ?? {};
  if (holds.blocked !== undefined)
    return all('state-corrupt', `registry assumed full (the crew state cannot be read): ${holds.blocked}`);
  const { spentUsd, capUsd } = input.spend;
  if (capUsd !== undefined && !(spentUsd < capUsd)) {
    const loud = spendCapLine(spentUsd, capUsd, candidates.length);
    // The refusal names the budget (the loud line stays exactly seed 003's).
    return all('spend-cap', `${loud}: the school's budget dispatch.spendCap is spent`, loud);
  }
  if (holds.dailyBudgets?.school !== undefined) return all('daily-budget', holds.dailyBudgets.school);
  if (holds.paused !== undefined) return all('paused', holds.paused);
  if (waves < 1) {
    const { remainingMs, crewTimeoutMs, gradingReserveMs } = input.time;
    return all(
      'time-budget',
      `time budget: ${min(remainingMs)} left in the job < crew timeout ${min(crewTimeoutMs)} + grading reserve ${min(gradingReserveMs)}`,
    );
  }
  return undefined;
}

/** A candidate admission took, before placement picks its daemon. */
interface Selected {
  c: Candidate;
  agent: string;
  pool: PoolName;
  fallback: boolean;
  rank: number;
  /** Its place in admission order. */
  order: number;
  why?: ChoiceWhy;
}

/** Gates 5–9, candidate by candidate in the given order, keeping the packing invariant. */
function select(
  input: AdmissionInput,
  pools: Record<PoolName, Pool>,
  waves: number,
): { selected: Selected[]; refused: Refusal[] } {
  const hasBot = pools.bot.daemons.length > 0;
  const held = heldAgents(input);
  const rule = input.choice ?? {};
  const chooser = chooserFor(held.size ? input.agents.filter((a) => !held.has(a.id)) : input.agents, rule);
  // Without the held agents nobody takes it: whether a held one would, and then why it waits.
  const everyone = held.size ? chooserFor(input.agents, rule) : undefined;
  // Back-pressure: a new issue goes to none of the agents at their review limit (one chooser per
  // set of such agents; the set only grows as the batch takes places).
  const review = input.holds?.review;
  const choosers = new Map<string, Chooser>();
  const reviewChooser = (reviewHeld: ReadonlyMap<string, string>) => {
    if (reviewHeld.size === 0) return chooser;
    const key = [...reviewHeld.keys()].sort().join('\u0000');
    let c = choosers.get(key);
    if (!c)
      choosers.set(
        key,
        (c = chooserFor(
          input.agents.filter((a) => !held.has(a.id) && !reviewHeld.has(a.id)),
          rule,
        )),
      );
    return c;
  };
  const whole = everyone ?? chooserFor(input.agents, rule);
  const fences = new FenceSet();
  for (const h of input.heldFences) fences.claim(h.fences, h.holder);
  const refused: Refusal[] = [];
  const selected: Selected[] = [];
  let room = input.limits.maxCrews - input.limits.activeCrews;
  let fallbacks = 0;
  const refuse = (c: Candidate, code: RefusalCode, reason: string) =>
    refused.push({ issue: c.issueNumber, code, reason });

  for (const c of input.candidates) {
    if (room <= 0) {
      refuse(
        c,
        'global-cap',
        `global cap reached: maxCrews ${input.limits.maxCrews}, ${input.limits.activeCrews} active, ${selected.length} admitted this batch`,
      );
      continue;
    }
    const fresh = review !== undefined && opensPullRequest(c);
    const full = fresh ? review.schoolHeld() : undefined;
    if (full !== undefined) {
      refuse(c, 'review-back-pressure', full);
      continue;
    }
    const reviewHeld = fresh ? review.heldAgents() : new Map<string, string>();
    const choice = reviewChooser(reviewHeld).choose(c);
    if ('code' in choice) {
      // The whole roster's answer names the real reason (a forced agent that is paused, or unknown).
      const all = held.size || reviewHeld.size ? whole.choose(c) : choice;
      if ('code' in all) refuse(c, all.code, all.reason);
      else {
        const h = held.get(all.agent);
        const r = reviewHeld.get(all.agent);
        if (!h && r) refuse(c, 'agent-review-back-pressure', r);
        else refuse(c, h?.code ?? 'agent-paused', h?.reason ?? `agent ${all.agent} is paused`);
      }
      continue;
    }
    let poolName: PoolName = c.role !== 'coding' && hasBot ? 'bot' : 'worktree';
    let fallback = false;
    if (c.role === 'coding' && pools.worktree.online === 0 && pools.bot.online > 0) {
      if (fallbacks >= input.limits.maxFallbacks) {
        refuse(
          c,
          'fallback-limit',
          `no worktree daemon is online and fallback runs are capped at ${input.limits.maxFallbacks} per batch`,
        );
        continue;
      }
      poolName = 'bot';
      fallback = true;
    }
    const pool = pools[poolName];
    const rank = classRank(c.weight);
    const why = pool.refusal(rank, input, waves);
    if (why) {
      refuse(c, why.code, why.reason);
      continue;
    }
    const conflict = fences.tryClaim(c.fences, c.issueNumber);
    if (conflict) {
      const holder =
        typeof conflict.heldBy === 'number'
          ? `issue #${conflict.heldBy} (admitted this batch)`
          : conflict.heldBy;
      refuse(c, 'fence-conflict', `fence ${conflict.fence} overlaps a fence held by ${holder}`);
      continue;
    }
    pool.take(rank);
    if (fresh) review.take(choice.agent);
    if (fallback) fallbacks++;
    room--;
    selected.push({
      c,
      agent: choice.agent,
      pool: poolName,
      fallback,
      rank,
      order: selected.length,
      ...(choice.why ? { why: choice.why } : {}),
    });
  }
  return { selected, refused };
}

/** Agents a crew may not go to now: paused ones, then those over their daily budget. */
function heldAgents(input: AdmissionInput): Map<string, { code: RefusalCode; reason: string }> {
  const held = new Map<string, { code: RefusalCode; reason: string }>();
  for (const [agent, reason] of input.holds?.dailyBudgets?.agents ?? [])
    held.set(agent, { code: 'agent-daily-budget', reason });
  for (const [agent, reason] of input.holds?.pausedAgents ?? [])
    held.set(agent, { code: 'agent-paused', reason });
  return held;
}

/**
 * Best-fit-decreasing: heaviest first (stable in priority order), each on the tightest class.
 * Results land by admission order, so no final sort is needed.
 */
function place(selected: Selected[], pools: Record<PoolName, Pool>, refused: Refusal[]): Admitted[] {
  const slots: Array<Admitted | undefined> = new Array(selected.length);
  for (const name of ['worktree', 'bot'] as const) {
    const placer = new DaemonPlacer(pools[name].placerDaemons, CLASSES);
    const mine = selected.filter((s) => s.pool === name).sort((a, b) => b.rank - a.rank || a.order - b.order);
    for (const s of mine) {
      const daemon = placer.place(s.rank);
      if (daemon === undefined) {
        // Unreachable while the Hall invariant holds; refuse rather than drop if it ever breaks.
        refused.push({
          issue: s.c.issueNumber,
          code: 'no-free-slot',
          reason: `no daemon of class ≥ ${s.c.weight} had a free slot at placement`,
        });
        continue;
      }
      slots[s.order] = {
        candidate: s.c,
        agent: s.agent,
        daemon,
        classroom: pools[name].classroomOf.get(daemon)!,
        fallback: s.fallback,
        ...(s.why ? { why: s.why } : {}),
      };
    }
  }
  return slots.filter((a): a is Admitted => a !== undefined);
}

class Pool {
  readonly daemons: AdmissionDaemon[] = [];
  online = 0;
  /** Free slots this batch on usable daemons of class ≥ c. */
  private readonly capAtLeast = new Array<number>(CLASSES).fill(0);
  private readonly onlineAtLeast = new Array<number>(CLASSES).fill(0);
  private readonly usableAtLeast = new Array<number>(CLASSES).fill(0);
  /** Admitted so far, by class. */
  private readonly taken = new Array<number>(CLASSES).fill(0);
  readonly placerDaemons: Array<{ id: string; rank: number; slots: number; busy: number; capacity: number }> =
    [];
  readonly classroomOf = new Map<string, DaemonStatus['classroom']>();

  constructor(
    readonly name: PoolName,
    daemons: readonly AdmissionDaemon[],
    minFreeDiskBytes: number,
    waves: number,
  ) {
    for (const d of daemons) {
      this.daemons.push(d);
      this.classroomOf.set(d.id, d.classroom);
      if (!d.online) continue;
      this.online++;
      const rank = classRank(d.effectiveClass);
      // Fail closed on an unknown disk figure: the floor cannot be shown to hold.
      const usable = d.freeDiskBytes !== undefined && d.freeDiskBytes >= minFreeDiskBytes;
      const capacity = usable ? Math.max(0, d.slots * waves - d.busy) : 0;
      for (let c = 0; c <= rank; c++) {
        this.onlineAtLeast[c]!++;
        if (usable) this.usableAtLeast[c]!++;
        this.capAtLeast[c]! += capacity;
      }
      this.placerDaemons.push({ id: d.id, rank, slots: d.slots, busy: d.busy, capacity });
    }
  }

  take(rank: number): void {
    this.taken[rank]!++;
  }

  /** Why one more crew of class `rank` cannot be admitted, or undefined when it can. */
  refusal(
    rank: number,
    input: AdmissionInput,
    waves: number,
  ): { code: RefusalCode; reason: string } | undefined {
    const weight = CAPACITY_CLASSES[rank]!;
    let needAtLeast = 0;
    // Walk down from the crew's class: needAtLeast = admitted crews of class ≥ c, plus this one.
    for (let c = CLASSES - 1; c >= 0; c--) {
      needAtLeast += this.taken[c]!;
      if (c > rank) continue;
      if (needAtLeast + 1 <= this.capAtLeast[c]!) continue;
      return this.explain(rank, c, weight, input, waves);
    }
    return undefined;
  }

  private explain(rank: number, c: number, weight: string, input: AdmissionInput, waves: number) {
    if (this.daemons.length === 0) {
      return {
        code: 'no-classroom' as const,
        reason: `no daemon in the fleet hosts ${this.name} classrooms`,
      };
    }
    if (this.online === 0) {
      const names = this.daemons
        .slice(0, 5)
        .map((d) => `${d.id} (${d.offlineReason ?? 'offline'})`)
        .join(', ');
      const more = this.daemons.length > 5 ? ` and ${this.daemons.length - 5} more` : '';
      return { code: 'fleet-offline' as const, reason: `no online ${this.name} daemon: ${names}${more}` };
    }
    if (this.onlineAtLeast[rank] === 0) {
      const largest = CAPACITY_CLASSES[this.onlineAtLeast.findLastIndex((n) => n > 0)] ?? 'none';
      return {
        code: 'over-capacity' as const,
        reason: `weight ${weight} exceeds every online daemon's effective class (largest: ${largest}); refused, not dropped`,
      };
    }
    if (this.usableAtLeast[rank] === 0) {
      const low = this.daemons
        .filter((d) => d.online && classRank(d.effectiveClass) >= rank)
        .slice(0, 5)
        .map((d) => `${d.id}: ${d.freeDiskBytes === undefined ? 'unknown' : gib(d.freeDiskBytes)}`)
        .join(', ');
      return {
        code: 'disk-floor' as const,
        reason: `free disk below the ${gib(input.limits.minFreeDiskBytes)} floor on every online daemon of class ≥ ${weight} (${low})`,
      };
    }
    const cls = CAPACITY_CLASSES[c]!;
    if (waves < input.time.maxWaves) {
      return {
        code: 'time-budget' as const,
        reason: `time budget: only ${waves} of ${input.time.maxWaves} wave(s) fit in the ${min(input.time.remainingMs)} left, and their ${this.capAtLeast[c]} slot(s) on class ≥ ${cls} are taken`,
      };
    }
    return {
      code: 'no-free-slot' as const,
      reason: `all ${this.capAtLeast[c]} free slot(s) this batch on daemons of class ≥ ${cls} are taken`,
    };
  }
}

function buildPools(input: AdmissionInput, waves: number): Record<PoolName, Pool> {
  const bot = input.daemons.filter((d) => d.classroom === 'bot');
  const worktree = input.daemons.filter((d) => d.classroom !== 'bot');
  return {
    worktree: new Pool('worktree', worktree, input.limits.minFreeDiskBytes, waves),
    bot: new Pool('bot', bot, input.limits.minFreeDiskBytes, waves),
  };
}

function min(ms: number): string {
  const m = ms / 60_000;
  return `${Number.isInteger(m) ? m : m.toFixed(1)} min`;
}

function gib(bytes: number): string {
  return `${(bytes / GiB).toFixed(1)} GiB`;
}
