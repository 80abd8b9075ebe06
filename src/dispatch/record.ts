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
 * The judges' verdict is the early signal; a merge or an unmerged close settles it and weighs
 * more (`SETTLED_WEIGHT`). Folders speak only through the structural types below, so the dispatch
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
  revisionRounds: number;
  spendUsd: number;
  minutes: number;
}

/** How much one settled pull request weighs against one judges' verdict. */
export const JUDGE_WEIGHT = 1;
export const SETTLED_WEIGHT = 2;

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
}

/** A crew as the registry holds it (src/dispatch/registry.ts `CrewRecord`). */
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
}

export interface RecordInputs {
  ledger?: LedgerCounts;
  crews?: Iterable<RecordCrew>;
  /** Spend rows: only those naming a crew count toward a cell. */
  spend?: Iterable<{ crewId?: string; costUsd: number }>;
  /** The cell of an issue, for crews planned before `choice` was recorded (the curriculum). */
  cellOf?: (issueNumber: number) => { domain: string; difficulty: number } | undefined;
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
  private readonly agents = new Map<string, CellRecord>();
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
    this.generation = generation;
    for (const crew of inputs.crews ?? []) {
      if (crew.status !== 'finished') continue;
      const where = crew.choice ?? inputs.cellOf?.(crew.issueNumber);
      if (!where) continue;
      const r = this.cell(crew.agent, where.domain, where.difficulty);
      r.crews += 1;
      r.spendUsd += spendBy.get(crew.crewId) ?? 0;
      if (crew.revision) r.revisionRounds += 1;
      if (inputs.delivered?.has(crew.crewId)) r.delivered += 1;
      const ms = Date.parse(crew.finishedAt ?? '') - Date.parse(crew.startedAt ?? '');
      if (Number.isFinite(ms) && ms > 0) r.minutes += ms / 60_000;
      this.school.crews += 1;
      this.school.spendUsd += spendBy.get(crew.crewId) ?? 0;
    }
    for (const r of this.cells.values()) {
      add(this.sum(this.domains, `${r.agent}|${r.domain}`, r.agent, r.domain), r);
      add(this.sum(this.agents, r.agent, r.agent, '*'), r);
    }
  }

  private cell(agent: string, domain: string, difficulty: number): CellRecord {
    const k = recordKey(agent, domain, difficulty);
    let r = this.cells.get(k);
    if (!r) this.cells.set(k, (r = empty(agent, domain, difficulty)));
    return r;
  }

  private sum(map: Map<string, CellRecord>, k: string, agent: string, domain: string): CellRecord {
    let r = map.get(k);
    if (!r) map.set(k, (r = empty(agent, domain, 0)));
    return r;
  }

  /** The record at a level: a cell, an agent in a domain (no difficulty), or an agent overall. */
  of(agent: string, domain?: string, difficulty?: number): CellRecord | undefined {
    if (domain !== undefined && difficulty !== undefined)
      return this.cells.get(recordKey(agent, domain, difficulty));
    if (domain !== undefined) return this.domains.get(`${agent}|${domain}`);
    return this.agents.get(agent);
  }

  /** Every record of one level, for tables. */
  list(level: 'cell' | 'domain' | 'agent'): CellRecord[] {
    const m = level === 'cell' ? this.cells : level === 'domain' ? this.domains : this.agents;
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
    revisionRounds: 0,
    spendUsd: 0,
    minutes: 0,
  };
}

function add(to: CellRecord, r: CellRecord): void {
  to.crews += r.crews;
  to.graded += r.graded;
  to.accepted += r.accepted;
  to.delivered += r.delivered;
  to.merged += r.merged;
  to.closedUnmerged += r.closedUnmerged;
  to.revisionRounds += r.revisionRounds;
  to.spendUsd += r.spendUsd;
  to.minutes += r.minutes;
}

/**
 * The weighted evidence of a record. A settled pull request counts at SETTLED_WEIGHT: merged, a
 * success; closed unmerged, a failure. A rejected crew is a judges' failure (rejected work is never
 * delivered). An accepted crew whose pull request is still open is the early signal: it counts at
 * JUDGE_WEIGHT, split by `mergeRate`, how often this agent's accepted work was merged once settled
 * (`mergeRateOf`), because judges pass work people will not merge.
 */
export function tallyOf(r: CellRecord | undefined, mergeRate = 1): Tally {
  if (!r) return ZERO;
  const settled = r.merged + r.closedUnmerged;
  const pending = Math.max(0, r.accepted - settled);
  const rejected = Math.max(0, r.graded - r.accepted);
  return {
    successes: JUDGE_WEIGHT * pending * mergeRate + SETTLED_WEIGHT * r.merged,
    failures: JUDGE_WEIGHT * (rejected + pending * (1 - mergeRate)) + SETTLED_WEIGHT * r.closedUnmerged,
  };
}

/**
 * How often accepted work was merged once a person settled it: (merged + 1) / (settled + 2), so an
 * agent nothing of which was settled yet counts an accepted crew as half a success.
 */
export function mergeRateOf(r: CellRecord | undefined): number {
  return ((r?.merged ?? 0) + 1) / ((r?.merged ?? 0) + (r?.closedUnmerged ?? 0) + 2);
}

export function costOf(r: CellRecord | undefined): CostTally {
  return r ? { crews: r.crews, spendUsd: r.spendUsd } : { crews: 0, spendUsd: 0 };
}
