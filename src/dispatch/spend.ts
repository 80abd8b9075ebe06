import { ConfigError, SchoolError } from '../errors.js';
import { EventLog, event, type StateEvent } from '../state/event-log.js';
import { foldLog, registerFold, type LogFold } from '../state/fold.js';
import type { StateLayout } from '../state/layout.js';

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
}

export type SpendEvent = StateEvent<'spend.recorded', SpendRecorded>;

export interface SpendState {
  totalUsd: number;
  entries: number;
}

/** A ledger row that is well-formed JSON but not a usable amount: the cap cannot be judged. */
export class SpendLedgerError extends SchoolError {
  constructor(message: string) {
    super(message);
    this.name = 'SpendLedgerError';
  }
}

export const spendFold: LogFold<SpendState, SpendEvent> = registerFold<SpendState, SpendEvent>({
  file: 'spend',
  empty: () => ({ totalUsd: 0, entries: 0 }),
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
    return state;
  },
  prune: (state) => state,
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
  return foldLog(spendFold, spendLog(layout).read()).totalUsd;
}

/** The one loud line of a cap-frozen batch (seed 003), exactly. */
export function spendCapLine(spentUsd: number, capUsd: number, candidates: number): string {
  return `SPEND CAP REACHED (${usd(spentUsd)} >= ${usd(capUsd)}) — dispatch halted, 0/${candidates} placed`;
}

function usd(n: number): string {
  return n.toFixed(2);
}
