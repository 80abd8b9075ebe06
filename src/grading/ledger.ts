import { readdirSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { CorruptStateError, SchoolError } from '../errors.js';
import { writeJsonAtomic } from '../state/atomic.js';
import { EventLog, event, type StateEvent } from '../state/event-log.js';
import { byCodePoint, foldLog, registerFold, type LogFold } from '../state/fold.js';
import type { AppendOptions, Warn } from '../state/jsonl.js';
import type { StateLayout } from '../state/layout.js';
import { withLock } from '../state/lock.js';

/**
 * The score ledger (docs/architecture.md, N2.3, N5.2): one `score.applied` event per crew, key
 * `score:<crewId>`, in `scores.jsonl`. The EMAs per agent and per (agent, domain, difficulty) are a
 * fold of those events, so a replayed grade is a no-op by construction rather than a second EMA
 * step. The EMA weight travels in each event: the fold does not depend on today's config.
 */
export interface ScoreApplied {
  crewId: string;
  jobKey: string;
  agent: string;
  domain: string;
  difficulty: number;
  accepted: boolean;
  score: number;
  alpha: number;
}
/**
 * The last judge (item 5): a delivered pull request merged (1) or closed unmerged (0) by a person,
 * once per pull request, key `human:<pr>`. Folded into a separate EMA per agent and per (agent,
 * domain, difficulty), beside the graders' — never mixed into it.
 */
export interface HumanJudged {
  pr: number;
  issue: number;
  crewId: string;
  agent: string;
  domain: string;
  difficulty: number;
  merged: boolean;
  alpha: number;
}
/**
 * A contest decided (./contest.ts, docs/grading.md "Contests"), once per contest, key
 * `contest:<id>`: the crew the judges picked (none when no crew was accepted) and why, and every
 * other crew as a loser with why. Folded into wins and losses per (agent, domain, difficulty): a
 * loss is not-chosen, never a rejection.
 */
export interface ContestDecided {
  contestId: string;
  issueNumber: number;
  winner?: ContestEntrantRecord;
  /** Why the winner won, or why there is none: one sentence. */
  why: string;
  /** `accepted`: the judges accepted it (not chosen); absent in decisions recorded before it. */
  losers: Array<ContestEntrantRecord & { reason: string; accepted?: boolean }>;
  /** When it was decided (the outbox's watermark is compared with it after a crash). */
  decidedAt?: string;
}
export interface ContestEntrantRecord {
  crewId: string;
  agent: string;
  domain: string;
  difficulty: number;
}
export type ScoreEvent =
  | StateEvent<'score.applied', ScoreApplied>
  | StateEvent<'human.judged', HumanJudged>
  | StateEvent<'contest.decided', ContestDecided>;

export interface Ema {
  ema: number;
  count: number;
  accepted: number;
}
export interface CellScore extends Ema {
  agent: string;
  domain: string;
  difficulty: number;
}
export interface LedgerState {
  agents: Record<string, Ema>;
  /** Keyed `<agent>|<domain>|<difficulty>`. */
  cells: Record<string, CellScore>;
  /** Acceptance by humans (merged = 1, closed unmerged = 0); absent until the first settles. */
  human?: { agents: Record<string, Ema>; cells: Record<string, CellScore> };
  /** Contests decided (by id) and each cell's wins and losses; absent until the first is decided. */
  contests?: { decided: Record<string, ContestDecided>; cells: Record<string, ContestCell> };
}
export interface ContestCell {
  agent: string;
  domain: string;
  difficulty: number;
  won: number;
  /** Crews of the agent that were not chosen (accepted or not): information, not failures. */
  lost: number;
}

export function cellKey(agent: string, domain: string, difficulty: number): string {
  return `${agent}|${domain}|${difficulty}`;
}

function step(prev: Ema | undefined, score: number, accepted: boolean, alpha: number): Ema {
  // The first score seeds the average; later ones move it by alpha.
  if (!prev) return { ema: score, count: 1, accepted: accepted ? 1 : 0 };
  return {
    ema: alpha * score + (1 - alpha) * prev.ema,
    count: prev.count + 1,
    accepted: prev.accepted + (accepted ? 1 : 0),
  };
}

export const ledgerFold: LogFold<LedgerState, ScoreEvent> = registerFold<LedgerState, ScoreEvent>({
  file: 'scores',
  empty: () => ({ agents: {}, cells: {} }),
  apply(state, e) {
    if (e.type === 'contest.decided') {
      const d = e.data;
      const contests = (state.contests ??= { decided: {}, cells: {} });
      if (contests.decided[d.contestId]) return state;
      contests.decided[d.contestId] = d;
      const count = (c: ContestEntrantRecord, won: boolean) => {
        const k = cellKey(c.agent, c.domain, c.difficulty);
        const cell = (contests.cells[k] ??= {
          agent: c.agent,
          domain: c.domain,
          difficulty: c.difficulty,
          won: 0,
          lost: 0,
        });
        if (won) cell.won++;
        else cell.lost++;
      };
      if (d.winner) count(d.winner, true);
      for (const l of d.losers) count(l, false);
      return state;
    }
    if (e.type === 'human.judged') {
      const h = e.data;
      const human = (state.human ??= { agents: {}, cells: {} });
      const score = h.merged ? 1 : 0;
      human.agents[h.agent] = step(human.agents[h.agent], score, h.merged, h.alpha);
      const k = cellKey(h.agent, h.domain, h.difficulty);
      const cell = step(human.cells[k], score, h.merged, h.alpha);
      human.cells[k] = { agent: h.agent, domain: h.domain, difficulty: h.difficulty, ...cell };
      return state;
    }
    if (e.type !== 'score.applied') return state;
    const d = e.data;
    state.agents[d.agent] = step(state.agents[d.agent], d.score, d.accepted, d.alpha);
    const k = cellKey(d.agent, d.domain, d.difficulty);
    const cell = step(state.cells[k], d.score, d.accepted, d.alpha);
    state.cells[k] = { agent: d.agent, domain: d.domain, difficulty: d.difficulty, ...cell };
    return state;
  },
  // Scores are the aggregate itself: nothing in them is history to drop.
  prune: (state) => state,
  // `score:<crewId>` is written once, by the drain that grades the crew's job: an old one can only
  // come back as a stale copy, which the watermark recognises.
  dedup: 'watermark',
});

/** The ledger was quarantined: grading stops until a person restores it (N5.2: never re-seeded). */
export class LedgerCorruptError extends SchoolError {
  override readonly code = 'ledger-corrupt';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LedgerCorruptError';
  }
}

export interface LeaderboardRow {
  rank: number;
  agent: string;
  ema: number;
  count: number;
  accepted: number;
}

export class ScoreLedger {
  readonly log: EventLog<ScoreEvent, LedgerState>;
  private healthy?: { dev: number; ino: number };
  constructor(
    readonly layout: StateLayout,
    warn?: Warn,
  ) {
    this.log = new EventLog<ScoreEvent, LedgerState>(layout.file('scores'), warn, { incremental: true });
  }

  /**
   * Fails closed while a quarantined copy exists: an absent `scores.jsonl` next to a
   * `scores.jsonl.corrupt-*` means the ledger was moved aside, not that it is empty. Starting
   * from zero would be the leaderboard wipe of seed 001.
   */
  assertHealthy(): void {
    const path = this.log.path;
    // A quarantine renames the file away: while the same file is there, nothing was quarantined
    // since the last look, and the directory need not be listed again.
    const id = statSync(path, { throwIfNoEntry: false });
    if (id && this.healthy?.dev === id.dev && this.healthy.ino === id.ino) return;
    let names: string[] = [];
    try {
      names = readdirSync(dirname(path));
    } catch {
      return; // no state directory yet: nothing was ever recorded
    }
    const prefix = `${basename(path)}.corrupt-`;
    const quarantined = names.filter((n) => n.startsWith(prefix)).sort();
    if (quarantined.length > 0) {
      throw new LedgerCorruptError(
        `score ledger ${path} was quarantined to ${quarantined.map((n) => `${dirname(path)}/${n}`).join(', ')}; ` +
          'grading is stopped and the ledger will not be re-seeded. Run `school checkpoint recover`: it merges every ' +
          'score record of the quarantined copy that still parses back into the ledger (each applied once, by its key) ' +
          'and keeps the copy; then rerun. Never delete the quarantined copy: its scores would be lost.',
      );
    }
    this.healthy = id ? { dev: id.dev, ino: id.ino } : undefined;
  }

  private guard<T>(fn: () => T): T {
    this.assertHealthy();
    try {
      return fn();
    } catch (e) {
      if (e instanceof CorruptStateError) {
        throw new LedgerCorruptError(`score ledger is corrupt; grading is stopped. ${e.message}`, {
          cause: e,
        });
      }
      throw e;
    }
  }

  state(): LedgerState {
    // Incremental: a second call (the view after a drain's waves) parses only what was appended.
    return this.guard(() => foldLog(ledgerFold, this.log.readLatest()));
  }

  /** Throws LedgerCorruptError when the ledger is quarantined or does not parse (N5.2). */
  check(): void {
    this.guard(() => this.log.readLatest());
  }

  /**
   * Applies task scores (N5.2). A crew already in the ledger is skipped by key (N2.3). Returns the
   * crews applied now. `scores.jsonl` is written under the grading lock (`grading.jsonl`'s): a
   * drain applies a wave's scores in the same transaction that marks them graded (wave.ts).
   */
  async apply(items: readonly ScoreApplied[], now: Date): Promise<{ applied: string[] }> {
    if (items.length === 0) return { applied: [] };
    return withLock(this.layout.file('grading'), () => ({ applied: this.applyHeld(items, now) }));
  }

  /** `apply` for a caller holding the grading lock: one append, fsynced unless `sync: false`. */
  applyHeld(items: readonly ScoreApplied[], at: Date, options: AppendOptions = {}): string[] {
    if (items.length === 0) return [];
    return this.guard(() =>
      this.log
        .transactHeld(
          () => ({
            append: items.map((d) => event('score.applied', `score:${d.crewId}`, d, at)),
            result: undefined,
          }),
          options,
        )
        .appended.map((e) => (e.data as ScoreApplied).crewId),
    );
  }

  /**
   * Applies what humans decided on delivered pull requests (item 5), once per pull request by key.
   * Under the grading lock, like every write to `scores.jsonl`. Returns the pull requests applied now.
   */
  async applyHuman(items: readonly HumanJudged[], now: Date): Promise<number[]> {
    if (items.length === 0) return [];
    return withLock(this.layout.file('grading'), () =>
      this.guard(() =>
        this.log
          .transactHeld(() => ({
            append: items.map((d) => event('human.judged', `human:${d.pr}`, d, now)),
            result: undefined,
          }))
          .appended.map((e) => (e.data as HumanJudged).pr),
      ),
    );
  }

  /** Records contest decisions, once per contest by key; for a caller holding the grading lock. */
  decideHeld(items: readonly ContestDecided[], at: Date, options: AppendOptions = {}): string[] {
    if (items.length === 0) return [];
    return this.guard(() =>
      this.log
        .transactHeld(
          () => ({
            append: items.map((d) => event('contest.decided', `contest:${d.contestId}`, d, at)),
            result: undefined,
          }),
          options,
        )
        .appended.map((e) => (e.data as ContestDecided).contestId),
    );
  }

  /** Writes `views/scores.json` for people and summaries; code folds the events instead. */
  writeView(state: LedgerState = this.state()): void {
    // A view is derived from the ledger: atomic for readers, not worth an fsync.
    writeJsonAtomic(
      this.layout.view('scores.json'),
      {
        generatedAt: new Date().toISOString(),
        leaderboard: leaderboard(state),
        cells: Object.values(state.cells).sort(
          (a, b) =>
            byCodePoint(a.agent, b.agent) || byCodePoint(a.domain, b.domain) || a.difficulty - b.difficulty,
        ),
      },
      { durable: false },
    );
  }
}

/** Agents by EMA (highest first), then by graded count, then by name. */
export function leaderboard(state: LedgerState): LeaderboardRow[] {
  return Object.entries(state.agents)
    .map(([agent, s]) => ({ agent, ...s }))
    .sort((a, b) => b.ema - a.ema || b.count - a.count || byCodePoint(a.agent, b.agent))
    .map((r, i) => ({ rank: i + 1, ...r }));
}

/**
 * The score the dispatch office uses to choose an agent: the (agent, domain, difficulty) cell when
 * both are given, a count-weighted mean over the agent's cells in a domain when only the domain is,
 * and the agent's overall EMA otherwise. Undefined when the agent has no graded work there.
 */
/** The human-acceptance EMA, at the same levels as `scoreOf`. */
export function humanScoreOf(
  state: LedgerState,
  agent: string,
  domain?: string,
  difficulty?: number,
): { ema: number; count: number } | undefined {
  const h = state.human;
  if (!h) return undefined;
  return scoreOf({ agents: h.agents, cells: h.cells }, agent, domain, difficulty);
}

export function scoreOf(
  state: LedgerState,
  agent: string,
  domain?: string,
  difficulty?: number,
): { ema: number; count: number } | undefined {
  if (domain !== undefined && difficulty !== undefined) {
    const c = state.cells[cellKey(agent, domain, difficulty)];
    return c ? { ema: c.ema, count: c.count } : undefined;
  }
  if (domain !== undefined) {
    const cells = Object.values(state.cells).filter((c) => c.agent === agent && c.domain === domain);
    const count = cells.reduce((n, c) => n + c.count, 0);
    if (count === 0) return undefined;
    return { ema: cells.reduce((s, c) => s + c.ema * c.count, 0) / count, count };
  }
  const a = state.agents[agent];
  return a ? { ema: a.ema, count: a.count } : undefined;
}

/**
 * The score the greedy choice ranks an agent by for a cell: the graders' EMA at the (domain,
 * difficulty) cell, else the domain, else overall, averaged with the human-acceptance EMA (merged /
 * closed-unmerged pull requests) at the same fallback levels where there is one. Undefined for an
 * agent never graded (the chooser then uses its neutral prior).
 */
export function blendedScore(
  state: LedgerState,
  agent: string,
  domain: string,
  difficulty: number,
): number | undefined {
  const graders = (
    scoreOf(state, agent, domain, difficulty) ??
    scoreOf(state, agent, domain) ??
    scoreOf(state, agent)
  )?.ema;
  // Item 5: what people merged is the last judge. Where humans settled this agent's pull requests
  // (at the same level, else coarser), their acceptance counts as much as the graders' score.
  const human = (
    humanScoreOf(state, agent, domain, difficulty) ??
    humanScoreOf(state, agent, domain) ??
    humanScoreOf(state, agent)
  )?.ema;
  if (graders === undefined || human === undefined) return graders ?? human;
  return (graders + human) / 2;
}
