import { ZERO, type CostTally, type Tally } from './posterior.js';

/**
 * An agent's record per (agent, domain, difficulty): what the school chooses agents by, and what
 * the board's cost table shows (docs/dispatch.md, "Choosing an agent"). Nothing writes it: it is a
 * fold of what is already recorded.
 *
 * - from the score ledger (`scores.jsonl`, kept whole by compaction): graded crews and accepted
 *   ones (`score.applied`), merged and closed-unmerged pull requests (`human.judged`);
 * - from the crew registry and the spend ledger (what the compaction window keeps): finished crews,
 *   their minutes and spend (`spend.recorded` rows that name the crew), revision rounds, and
 *   delivered crews when the caller knows them (the outbox).
 *
 * The judges' verdict is the early signal; a merge or an unmerged close settles it (`tallyOf`).
 * A contest (`contest.decided`) adds who was chosen: a win is the winner's ordinary record, and an
 * accepted crew the judges did not choose is a weak failure, never a rejection.
 * Folders speak only through the structural types below, so the dispatch
 * office reads no other folder's module.
 */
export interface CellRecord {
  agent: string;
  domain: string;
  difficulty: number;
  /** Finished crews the registry still holds. */
  crews: number;
  graded: number;
  accepted: number;
  delivered: number;
  merged: number;
  closedUnmerged: number;
  /** Contests a crew of the agent won, and lost (whatever its own verdict). */
  contestsWon: number;
  contestsLost: number;
  /** Lost contests whose crew the judges accepted: accepted work that will never be delivered. */
  notChosen: number;
  revisionRounds: number;
  spendUsd: number;
  minutes: number;
  /**
   * Crews that really ran an agent to an end (succeeded, failed, timed out; not an interruption nor
   * an abort before the agent) and whose issue had a size estimate: what run-time predictions are
   * calibrated by (./predict.ts).
   */
  sizedCrews: number;
  /** Σ ln(minutes ÷ estimate) over those crews, and Σ of its squares: how far the estimates miss. */
  sizedLog: number;
  sizedLogSq: number;
}

/**
 * What one crew weighs as evidence, whatever its outcome: a merged pull request is one success; a
 * closed-unmerged one, and a crew the judges rejected (rejected work is never delivered), one failure.
 * A weight that depended on the outcome would bias the estimate toward the heavier outcome.
 */
export const CREW_WEIGHT = 1;

/** The score ledger's counts, as its fold keeps them (src/grading/ledger.ts `LedgerState`). */
export interface LedgerCounts {
  cells: Readonly<
    Record<string, { agent: string; domain: string; difficulty: number; count: number; accepted: number }>
  >;
  human?: {
    cells: Readonly<
      Record<string, { agent: string; domain: string; difficulty: number; count: number; accepted: number }>
    >;
  };
  /** Contests decided, by id (`contests.decided`). */
  contests?: { decided: Readonly<Record<string, ContestRecord>> };
}

type Entrant = { agent: string; domain: string; difficulty: number };

/** A decided contest as the ledger keeps it (src/grading/ledger.ts `ContestDecided`). */
export interface ContestRecord {
  winner?: Entrant;
  losers: ReadonlyArray<Entrant & { reason: string; accepted?: boolean }>;
}

/** Decisions recorded before losers carried `accepted` say it in their reason only. */
const ACCEPTED_LOSER = 'accepted, not chosen';

/** A crew as the registry holds it (src/dispatch/logs/registry.ts `CrewRecord`). */
export interface RecordCrew {
  crewId: string;
  issueNumber: number;
  agent: string;
  status: string;
  startedAt?: string;
  finishedAt?: string;
  revision?: unknown;
  /** The cell recorded when it was planned (`crew.planned` `choice`), when it was. */
  choice?: { domain: string; difficulty: number };
  /** The issue's cell and size estimate when it was planned (`crew.planned` `cell`), when recorded. */
  cell?: { domain: string; difficulty: number; size: number };
  /** How the crew ended, and whether it ended before its agent ran (the registry's flags). */
  outcome?: string;
  preVerify?: boolean;
  infra?: boolean;
  /** No agent turn ran (a clean refresh): none of the agent's work. */
  noTurn?: boolean;
}

/** Outcomes of a crew whose agent ran to an end: the ones whose minutes say how long work takes. */
const RAN_OUTCOMES: readonly string[] = ['succeeded', 'failed', 'timed_out'];

export interface RecordInputs {
  ledger?: LedgerCounts;
  crews?: Iterable<RecordCrew>;
  /** Spend rows: only those naming a crew count toward a cell. */
  spend?: Iterable<{ crewId?: string; costUsd: number }>;
  /**
   * The cell of an issue, for crews planned before `choice` was recorded (the curriculum), and its
   * size estimate in minutes when known (for the run-time calibration).
   */
  cellOf?: (issueNumber: number) => { domain: string; difficulty: number; size?: number } | undefined;
  /** Crews whose work was delivered (a branch or pull request). */
  delivered?: ReadonlySet<string>;
}

export function recordKey(agent: string, domain: string, difficulty: number): string {
  return `${agent}|${domain}|${difficulty}`;
}

/** The records, and their sums per agent and per (agent, domain). */
export class RecordBook {
  readonly cells = new Map<string, CellRecord>();
  private readonly domains = new Map<string, CellRecord>();
  private readonly difficulties = new Map<string, CellRecord>();
  private readonly agents = new Map<string, CellRecord>();
  private readonly byAgent = new Map<string, CellRecord[]>();
  /** School-wide finished crews and spend: the cost prior of an agent with no spend of its own. */
  readonly school: CostTally = { crews: 0, spendUsd: 0 };
  /**
   * How much evidence the ledger holds (graded crews + settled pull requests): part of the choice
   * seed, so new evidence draws afresh while the same state draws the same.
   */
  readonly generation: number;

  constructor(inputs: RecordInputs = {}) {
    const spendBy = new Map<string, number>();
    for (const s of inputs.spend ?? []) {
      if (typeof s.crewId !== 'string' || !Number.isFinite(s.costUsd) || s.costUsd < 0) continue;
      spendBy.set(s.crewId, (spendBy.get(s.crewId) ?? 0) + s.costUsd);
    }
    let generation = 0;
    for (const c of Object.values(inputs.ledger?.cells ?? {})) {
      const r = this.cell(c.agent, c.domain, c.difficulty);
      r.graded += c.count;
      r.accepted += c.accepted;
      generation += c.count;
    }
    for (const c of Object.values(inputs.ledger?.human?.cells ?? {})) {
      const r = this.cell(c.agent, c.domain, c.difficulty);
      r.merged += c.accepted;
      r.closedUnmerged += c.count - c.accepted;
      generation += c.count;
    }
    for (const d of Object.values(inputs.ledger?.contests?.decided ?? {})) {
      if (d.winner) this.cell(d.winner.agent, d.winner.domain, d.winner.difficulty).contestsWon += 1;
      for (const l of d.losers) {
        const r = this.cell(l.agent, l.domain, l.difficulty);
        r.contestsLost += 1;
        if (l.accepted ?? l.reason.startsWith(ACCEPTED_LOSER)) r.notChosen += 1;
      }
      generation += 1;
    }
    this.generation = generation;
    for (const crew of inputs.crews ?? []) {
      // A crew that ran no agent turn (a clean refresh) is none of its agent's cost or time.
      if (crew.status !== 'finished' || crew.noTurn) continue;
      // The cell and estimate as planned; the curriculum's for crews planned before they were recorded.
      const issue = crew.cell ?? inputs.cellOf?.(crew.issueNumber);
      const where = crew.choice ?? issue;
      if (!where) continue;
      const r = this.cell(crew.agent, where.domain, where.difficulty);
      r.crews += 1;
      r.spendUsd += spendBy.get(crew.crewId) ?? 0;
      if (crew.revision) r.revisionRounds += 1;
      if (inputs.delivered?.has(crew.crewId)) r.delivered += 1;
      const ms = Date.parse(crew.finishedAt ?? '') - Date.parse(crew.startedAt ?? '');
      if (Number.isFinite(ms) && ms > 0) {
        r.minutes += ms / 60_000;
        const size = issue?.size;
        const ran = RAN_OUTCOMES.includes(crew.outcome ?? '') && !crew.preVerify && !crew.infra;
        if (ran && !crew.revision && typeof size === 'number' && Number.isFinite(size) && size > 0) {
          r.sizedCrews += 1;
          const log = Math.log(ms / 60_000 / size);
          r.sizedLog += log;
          r.sizedLogSq += log * log;
        }
      }
      this.school.crews += 1;
      this.school.spendUsd += spendBy.get(crew.crewId) ?? 0;
    }
    for (const r of this.cells.values()) {
      add(this.sum(this.domains, `${r.agent}|${r.domain}`, r.agent, r.domain), r);
      add(this.sum(this.difficulties, `${r.agent}|${r.difficulty}`, r.agent, '*', r.difficulty), r);
      add(this.sum(this.agents, r.agent, r.agent, '*'), r);
      const list = this.byAgent.get(r.agent) ?? [];
      list.push(r);
      this.byAgent.set(r.agent, list);
    }
  }

  private cell(agent: string, domain: string, difficulty: number): CellRecord {
    const k = recordKey(agent, domain, difficulty);
    let r = this.cells.get(k);
    if (!r) this.cells.set(k, (r = empty(agent, domain, difficulty)));
    return r;
  }

  private sum(
    map: Map<string, CellRecord>,
    k: string,
    agent: string,
    domain: string,
    difficulty = 0,
  ): CellRecord {
    let r = map.get(k);
    if (!r) map.set(k, (r = empty(agent, domain, difficulty)));
    return r;
  }

  /**
   * The record at a level: a cell, an agent in a domain (no difficulty), an agent at a difficulty
   * (no domain: `of(agent, undefined, 3)`), or an agent overall.
   */
  of(agent: string, domain?: string, difficulty?: number): CellRecord | undefined {
    if (domain !== undefined && difficulty !== undefined)
      return this.cells.get(recordKey(agent, domain, difficulty));
    if (domain !== undefined) return this.domains.get(`${agent}|${domain}`);
    if (difficulty !== undefined) return this.difficulties.get(`${agent}|${difficulty}`);
    return this.agents.get(agent);
  }

  /** An agent's cells (agent × domain × difficulty) that hold anything. */
  cellsOf(agent: string): readonly CellRecord[] {
    return this.byAgent.get(agent) ?? [];
  }

  /** Every agent with a record. */
  agentIds(): string[] {
    return [...this.agents.keys()];
  }

  /** Every record of one level, for tables. */
  list(level: 'cell' | 'domain' | 'difficulty' | 'agent'): CellRecord[] {
    const m =
      level === 'cell'
        ? this.cells
        : level === 'domain'
          ? this.domains
          : level === 'difficulty'
            ? this.difficulties
            : this.agents;
    return [...m.values()];
  }
}

function empty(agent: string, domain: string, difficulty: number): CellRecord {
  return {
    agent,
    domain,
    difficulty,
    crews: 0,
    graded: 0,
    accepted: 0,
    delivered: 0,
    merged: 0,
    closedUnmerged: 0,
    contestsWon: 0,
    contestsLost: 0,
    notChosen: 0,
    revisionRounds: 0,
    spendUsd: 0,
    minutes: 0,
    sizedCrews: 0,
    sizedLog: 0,
    sizedLogSq: 0,
  };
}

function add(to: CellRecord, r: CellRecord): void {
  to.crews += r.crews;
  to.graded += r.graded;
  to.accepted += r.accepted;
  to.delivered += r.delivered;
  to.merged += r.merged;
  to.closedUnmerged += r.closedUnmerged;
  to.contestsWon += r.contestsWon;
  to.contestsLost += r.contestsLost;
  to.notChosen += r.notChosen;
  to.revisionRounds += r.revisionRounds;
  to.spendUsd += r.spendUsd;
  to.minutes += r.minutes;
  to.sizedCrews += r.sizedCrews;
  to.sizedLog += r.sizedLog;
  to.sizedLogSq += r.sizedLogSq;
}

/**
 * The share of an open accepted crew's success an accepted crew a contest did not choose keeps: the
 * judges preferred another crew's work on the same issue, weak evidence that this work was the
 * less mergeable, and none that it was wrong.
 */
export const NOT_CHOSEN_SHARE = 0.5;

/**
 * The evidence of a record, one crew one CREW_WEIGHT. Merged: a success; closed unmerged or rejected
 * by the judges: a failure. An accepted crew whose pull request is still open is the early signal:
 * it is split by `mergeRate`, how often this agent's accepted work was merged once a person settled
 * it (`mergeRateOf`), because judges pass work people will not merge. A merge settles it: its
 * fraction of a success becomes a whole one (an unmerged close, a whole failure).
 *
 * Contests: a winner's crew counts as any crew (its verdict, then its merge). An accepted crew that
 * was not chosen is never delivered, so never settled: it counts mergeRate × NOT_CHOSEN_SHARE of a
 * success and the rest a failure — a weak failure, between open accepted work and a rejection. A
 * loser the judges rejected is its rejection alone: the loss adds nothing to it.
 */
export function tallyOf(r: CellRecord | undefined, mergeRate = 1): Tally {
  if (!r) return ZERO;
  const settled = r.merged + r.closedUnmerged;
  const open = Math.max(0, r.accepted - settled);
  const notChosen = Math.min(r.notChosen, open);
  const pending = open - notChosen;
  const rejected = Math.max(0, r.graded - r.accepted);
  const kept = mergeRate * NOT_CHOSEN_SHARE;
  return {
    successes: CREW_WEIGHT * (pending * mergeRate + notChosen * kept + r.merged),
    failures:
      CREW_WEIGHT * (rejected + pending * (1 - mergeRate) + notChosen * (1 - kept) + r.closedUnmerged),
  };
}

/** Pseudo-counts the agent's overall merge rate lends its rate in one domain. */
const MERGE_RATE_STRENGTH = 4;

/**
 * How often accepted work was merged once a person settled it: (merged + 1) / (settled + 2) for
 * the agent overall, so an agent nothing of which was settled yet counts an accepted crew as half a
 * success; with `inDomain`, the domain's own settled pull requests shrunk toward that by 4 of them
 * (work an agent does well is merged more often once accepted).
 */
export function mergeRateOf(r: CellRecord | undefined, inDomain?: CellRecord): number {
  const overall = ((r?.merged ?? 0) + 1) / ((r?.merged ?? 0) + (r?.closedUnmerged ?? 0) + 2);
  if (!inDomain) return overall;
  const settled = inDomain.merged + inDomain.closedUnmerged;
  return (inDomain.merged + MERGE_RATE_STRENGTH * overall) / (settled + MERGE_RATE_STRENGTH);
}

export function costOf(r: CellRecord | undefined): CostTally {
  return r ? { crews: r.crews, spendUsd: r.spendUsd } : { crews: 0, spendUsd: 0 };
}
