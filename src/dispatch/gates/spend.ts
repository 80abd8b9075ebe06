import { ConfigError, SchoolError } from '../../errors.js';
import { EventLog, event, type StateEvent } from '../../state/event-log.js';
import { foldLog, registerFold, type LogFold } from '../../state/fold.js';
import type { StateLayout } from '../../state/layout.js';

/**
 * The spend ledger, `spend.jsonl` (seed 003: the cap gate re-reads it before every batch, never
 * cached; a malformed row is a named abort). Events: `spend.recorded`, keyed `spend:<key>` so a
 * replayed usage report is counted once.
 */
export interface SpendRecorded {
  costUsd: number;
  /** What was reported when it was more than the row was allowed to hold (`recordSpend`'s `maxUsd`). */
  reportedUsd?: number;
  crewId?: string;
  issueNumber?: number;
  agent?: string;
  tokens?: { input?: number; output?: number; cachedInput?: number };
  /** `metered`: one API answer the crew's key proxy read and priced (src/agents/usage-meter.ts). */
  source?: 'metered';
  /** The crew's turn the row belongs to (0: the first, n: correction n). */
  turn?: number;
  /** A metered row: the model the answer named. */
  model?: string;
  /**
   * A turn row of a metered crew: the turn's metered spend (its own rows). The row holds only what
   * the turn reported beyond it, `reportedUsd` beside: the turn costs the larger of the two.
   */
  meteredUsd?: number;
}

export type SpendEvent = StateEvent<'spend.recorded', SpendRecorded>;

export interface SpendState {
  totalUsd: number;
  entries: number;
  /**
   * Spend per UTC day (`YYYY-MM-DD`, from the row's time) and, within the day, per agent the row
   * names: what the daily budgets count (./budgets.ts) and the board's trends. Absent in a state
   * folded before it was kept; a day older than SPEND_DAYS_KEPT before a compaction's horizon is dropped.
   */
  days?: Record<string, SpendDay>;
  /**
   * Spend per crew a row names, with the UTC day of its last row: a crew's budget, cost tables;
   * `meteredUsd`: the part the key proxy metered (absent: none).
   */
  crews?: Record<string, { usd: number; day: string; meteredUsd?: number }>;
}

export interface SpendDay {
  usd: number;
  agents: Record<string, number>;
}

/** Days of per-day and per-crew spend a compacted snapshot keeps before its horizon. */
export const SPEND_DAYS_KEPT = 35;

/** The UTC day of a time: `YYYY-MM-DD`. */
export function utcDay(at: Date | string): string {
  if (typeof at === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(at)) return at.slice(0, 10);
  const d = at instanceof Date ? at : new Date(at);
  return Number.isFinite(d.getTime()) ? d.toISOString().slice(0, 10) : '0000-00-00';
}

/** A ledger row that is well-formed JSON but not a usable amount: the cap cannot be judged. */
export class SpendLedgerError extends SchoolError {
  override readonly code = 'spend-ledger-corrupt';
  constructor(message: string) {
    super(message);
    this.name = 'SpendLedgerError';
  }
}

export const spendFold: LogFold<SpendState, SpendEvent> = registerFold<SpendState, SpendEvent>({
  file: 'spend',
  empty: () => ({ totalUsd: 0, entries: 0, days: {}, crews: {} }),
  apply(state, e) {
    if (e.type !== 'spend.recorded') return state;
    const cost = e.data?.costUsd;
    if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) {
      throw new SpendLedgerError(
        `spend ledger row ${JSON.stringify(e.key)} has costUsd ${JSON.stringify(cost)}; expected a finite number ≥ 0. ` +
          'Dispatch is halted until the row is repaired (the spend cap cannot be judged).',
      );
    }
    state.totalUsd += cost;
    state.entries += 1;
    const day = utcDay(e.at);
    const days = (state.days ??= {});
    const d = (days[day] ??= { usd: 0, agents: {} });
    d.usd += cost;
    const agent = e.data.agent;
    if (typeof agent === 'string') d.agents[agent] = (d.agents[agent] ?? 0) + cost;
    const crewId = e.data.crewId;
    if (typeof crewId === 'string') {
      const crews = (state.crews ??= {});
      const c = (crews[crewId] ??= { usd: 0, day });
      c.usd += cost;
      if (e.data.source === 'metered') c.meteredUsd = (c.meteredUsd ?? 0) + cost;
      if (day > c.day) c.day = day;
    }
    return state;
  },
  // The total stays whole (the school-wide cap); per-day and per-crew figures are kept for
  // SPEND_DAYS_KEPT days before the horizon, enough for a day's budget and the board's trends.
  prune(state, horizon) {
    const keep = utcDay(new Date(horizon.getTime() - SPEND_DAYS_KEPT * 86_400_000));
    const days = Object.fromEntries(Object.entries(state.days ?? {}).filter(([day]) => day >= keep));
    const crews = Object.fromEntries(Object.entries(state.crews ?? {}).filter(([, c]) => c.day >= keep));
    return { totalUsd: state.totalUsd, entries: state.entries, days, crews };
  },
  // One row per agent turn or review, recorded when it ends (a handoff's rows keep their time):
  // an old row can only come back as a stale copy, so a watermark suffices.
  dedup: 'watermark',
});

function spendLog(layout: StateLayout): EventLog<SpendEvent> {
  return new EventLog<SpendEvent>(layout.file('spend'));
}

/**
 * Records a usage report. Returns false when the same key was recorded before. `maxUsd` bounds the
 * row (what is left of the crew's budget): a report above it is written as `maxUsd`, the reported
 * amount kept beside it as `reportedUsd`, so one report cannot carry the ledger past the cap alone.
 */
export async function recordSpend(
  layout: StateLayout,
  key: string,
  entry: SpendRecorded,
  at = new Date(),
  o: { maxUsd?: number } = {},
): Promise<boolean> {
  if (!Number.isFinite(entry.costUsd) || entry.costUsd < 0) {
    throw new ConfigError(`spend: costUsd must be a finite number ≥ 0, found ${String(entry.costUsd)}.`);
  }
  const max = o.maxUsd !== undefined && Number.isFinite(o.maxUsd) ? Math.max(0, o.maxUsd) : undefined;
  const row = max !== undefined && entry.costUsd > max ? clampRow(entry, max) : entry;
  const appended = await spendLog(layout).append([event('spend.recorded', `spend:${key}`, row, at)]);
  return appended.length === 1;
}

function clampRow(entry: SpendRecorded, maxUsd: number): SpendRecorded {
  return { ...entry, costUsd: maxUsd, reportedUsd: entry.reportedUsd ?? entry.costUsd };
}

/**
 * Total recorded spend in USD, read fresh. Throws CorruptStateError (file quarantined) on a corrupt
 * line and SpendLedgerError on a row whose amount is unusable: callers fail closed.
 */
export function totalSpend(layout: StateLayout): number {
  return readSpend(layout).totalUsd;
}

/** The spend ledger folded, read fresh: totals, per day and agent, per crew. Fails like `totalSpend`. */
export function readSpend(layout: StateLayout): SpendState {
  return foldLog(spendFold, spendLog(layout).read());
}

/** The one loud line of a cap-frozen batch (seed 003), exactly. */
export function spendCapLine(spentUsd: number, capUsd: number, candidates: number): string {
  return `SPEND CAP REACHED (${usd(spentUsd)} >= ${usd(capUsd)}) — dispatch halted, 0/${candidates} placed`;
}

function usd(n: number): string {
  return n.toFixed(2);
}
