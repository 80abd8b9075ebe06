import type { FeedbackState } from '../feedback/log.js';
import type { LedgerState } from '../grading/ledger.js';
import type { QueueState } from '../grading/queue.js';

/**
 * What people did with the school's pull requests (item 5), for the board: how many delivered
 * pull requests were settled and merged, acceptance by humans (merged / settled), revisions per
 * merged pull request (accepted crews of its issue after the first) and the school's cost per
 * merged pull request (all spend divided by merges: what a merge costs, failures included).
 */
export interface HumanFigures {
  settled: number;
  merged: number;
  /** merged / settled; absent before the first settles. */
  acceptance?: number;
  revisionsPerMerged?: number;
  costPerMergedUsd?: number;
}

export function humanFigures(
  feedback: FeedbackState | undefined,
  grading: QueueState | undefined,
  spentUsd: number,
): HumanFigures {
  const settled = Object.values(feedback?.settled ?? {});
  const merged = settled.filter((s) => s.merged);
  const out: HumanFigures = { settled: settled.length, merged: merged.length };
  if (settled.length > 0) out.acceptance = merged.length / settled.length;
  if (merged.length > 0) {
    const accepted = new Map<number, number>();
    for (const j of Object.values(grading?.jobs ?? {}))
      if (j.status === 'graded' && j.verdict?.accepted)
        accepted.set(j.job.issueNumber, (accepted.get(j.job.issueNumber) ?? 0) + 1);
    const revisions = merged.reduce((n, s) => n + Math.max(0, (accepted.get(s.issue) ?? 1) - 1), 0);
    out.revisionsPerMerged = revisions / merged.length;
    out.costPerMergedUsd = spentUsd / merged.length;
  }
  return out;
}

/** The human-acceptance EMA of an agent overall, beside the graders' score on the leaderboard. */
export function humanScore(ledger: LedgerState, agent: string): { score: number; count: number } | undefined {
  const h = ledger.human?.agents[agent];
  return h ? { score: h.ema, count: h.count } : undefined;
}
