import type { CrewRegistry } from '../dispatch/logs/registry.js';
import { RecordBook, recordKey, type LedgerCounts, type RecordCrew } from '../dispatch/choice/record.js';
import type { SpendState } from '../dispatch/gates/spend.js';
import type { FeedbackState } from '../feedback/log.js';
import type { QueueState } from '../grading/queue.js';
import { byCodePoint } from '../state/fold.js';
import type { BoardIssue, CostRow, CostTable, CostWindow } from './model.js';

/**
 * What each agent's work cost, per domain (issue 36, item 1): crews, accepted crews, merged pull
 * requests, spend, and spend per accepted crew and per merged pull request, with the trend (crews
 * finished in the last TREND_DAYS days against the TREND_DAYS before). One record book
 * (src/dispatch/choice/record.ts), the one the learning choice reads, folded over the crews the state
 * holds: finished crews the registry keeps (compaction drops older ones), their verdicts from the
 * grading queue, their settled pull requests and their spend (the crew's turns and its reviews).
 * Every figure of a row counts the same crews, so spend / accepted is what an accepted crew cost,
 * failed runs included.
 */
export const TREND_DAYS = 7;
const DAY_MS = 86_400_000;

export interface CostInputs {
  registry?: CrewRegistry;
  grading?: QueueState;
  feedback?: FeedbackState;
  spend?: SpendState;
  curriculum?: readonly BoardIssue[];
  now: Date;
}

/** Where a crew's work belongs: its recorded choice, its grading job, else its issue in the curriculum. */
type Cell = { domain: string; difficulty: number };
const UNKNOWN: Cell = { domain: '—', difficulty: 0 };

export function costTable(i: CostInputs): CostTable {
  const finished = Object.values(i.registry?.crews ?? {}).filter((c) => c.status === 'finished');
  const jobs = new Map<string, { cell?: Cell; accepted?: boolean }>();
  for (const j of Object.values(i.grading?.jobs ?? {})) {
    const cell =
      typeof j.job.domain === 'string' && Number.isFinite(j.job.difficulty)
        ? { domain: j.job.domain, difficulty: j.job.difficulty }
        : undefined;
    jobs.set(j.job.crewId, {
      cell,
      ...(j.status === 'graded' && j.verdict ? { accepted: j.verdict.accepted } : {}),
    });
  }
  const issues = new Map<number, Cell>();
  for (const item of i.curriculum ?? [])
    if (typeof item.domain === 'string')
      issues.set(item.number, { domain: item.domain, difficulty: finite(item.difficulty) });
  const settled = new Map<string, boolean>();
  for (const s of Object.values(i.feedback?.settled ?? {})) settled.set(s.crewId, s.merged);
  const spend = Object.entries(i.spend?.crews ?? {}).map(([crewId, c]) => ({ crewId, costUsd: c.usd }));

  const crews: Array<RecordCrew & { finished: number }> = finished.map((c) => {
    const job = jobs.get(c.crewId);
    const cell = c.choice ?? job?.cell ?? issues.get(c.issueNumber) ?? UNKNOWN;
    return {
      crewId: c.crewId,
      issueNumber: c.issueNumber,
      agent: c.agent,
      status: c.status,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      choice: { domain: cell.domain, difficulty: cell.difficulty },
      finished: Date.parse(c.finishedAt ?? ''),
    };
  });
  const book = (subset: RecordCrew[]) =>
    new RecordBook({ crews: subset, spend, ledger: ledgerOf(subset, jobs, settled) });
  const now = i.now.getTime();
  const within = (from: number, to: number) =>
    crews.filter(
      (c) =>
        Number.isFinite(c.finished) && c.finished > now - to * DAY_MS && c.finished <= now - from * DAY_MS,
    );
  const all = book(crews);
  const recent = book(within(0, TREND_DAYS));
  const before = book(within(TREND_DAYS, 2 * TREND_DAYS));
  // What the crews' key proxies metered of that spend (src/agents/usage-meter.ts), per agent and domain.
  const metered = new Map<string, number>();
  for (const c of crews) {
    const m = i.spend?.crews?.[c.crewId]?.meteredUsd;
    const k = `${c.agent}\u0000${c.choice!.domain}`;
    if (m) metered.set(k, (metered.get(k) ?? 0) + m);
  }
  const rows: CostRow[] = all
    .list('domain')
    .filter((r) => r.crews > 0)
    .map((r) => ({
      agent: r.agent,
      domain: r.domain,
      ...window(r),
      ...meteredPart(metered.get(`${r.agent}\u0000${r.domain}`)),
      trend: {
        recent: window(recent.of(r.agent, r.domain)),
        before: window(before.of(r.agent, r.domain)),
      },
    }))
    .sort((a, b) => byCodePoint(a.agent, b.agent) || byCodePoint(a.domain, b.domain));
  const oldest = crews.reduce<number>(
    (m, c) => (Number.isFinite(c.finished) && c.finished < m ? c.finished : m),
    Infinity,
  );
  return {
    trendDays: TREND_DAYS,
    ...(Number.isFinite(oldest) ? { since: new Date(oldest).toISOString() } : {}),
    rows,
  };
}

/** The verdicts and settlements of exactly these crews, as the ledger's counts. */
function ledgerOf(
  crews: readonly RecordCrew[],
  jobs: ReadonlyMap<string, { accepted?: boolean }>,
  settled: ReadonlyMap<string, boolean>,
): LedgerCounts {
  type Counts = { agent: string; domain: string; difficulty: number; count: number; accepted: number };
  const cells: Record<string, Counts> = {};
  const human: Record<string, Counts> = {};
  const bump = (m: Record<string, Counts>, c: RecordCrew, yes: boolean) => {
    const { domain, difficulty } = c.choice!;
    const k = recordKey(c.agent, domain, difficulty);
    const r = (m[k] ??= { agent: c.agent, domain, difficulty, count: 0, accepted: 0 });
    r.count += 1;
    if (yes) r.accepted += 1;
  };
  for (const c of crews) {
    const accepted = jobs.get(c.crewId)?.accepted;
    if (accepted !== undefined) bump(cells, c, accepted);
    const merged = settled.get(c.crewId);
    if (merged !== undefined) bump(human, c, merged);
  }
  return { cells, human: { cells: human } };
}

function window(
  r: { crews: number; accepted: number; merged: number; spendUsd: number } | undefined,
): CostWindow {
  const crews = r?.crews ?? 0;
  const accepted = r?.accepted ?? 0;
  const merged = r?.merged ?? 0;
  const spendUsd = round(r?.spendUsd ?? 0);
  return {
    crews,
    accepted,
    merged,
    spendUsd,
    ...(accepted > 0 ? { costPerAcceptedUsd: round(spendUsd / accepted) } : {}),
    ...(merged > 0 ? { costPerMergedUsd: round(spendUsd / merged) } : {}),
  };
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;
const meteredPart = (usd: number | undefined) => (usd ? { meteredUsd: round(usd) } : {});
const finite = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
