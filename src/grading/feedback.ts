import type { LedgerCounts, ScoreLookup, VerdictLookup } from '../dispatch/plan.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { blendedScore, ScoreLedger, type LedgerState } from './ledger.js';
import { GradingQueue } from './queue.js';

/**
 * What grading tells the dispatch office (docs/architecture.md "scores feed back into agent choice"; seed 002
 * two-failure stop). Both are read once per plan, from the same state directory:
 *
 * - `gradingVerdicts`: the grading queue's fold → per crew, `accepted` or `rejected` once graded.
 *   A succeeded crew that grading rejected counts as a failed run (history.ts): a repair, and two
 *   rejections stop the issue.
 * - `ledgerScores`: the score ledger → the EMA of an agent for the candidate's (domain,
 *   difficulty) cell, else its domain, else its overall EMA, averaged with the human-acceptance
 *   EMA (merged / closed-unmerged pull requests) where there is one; undefined for an agent never
 *   graded (the chooser then uses its neutral prior).
 *
 * Neither stops planning when its log cannot be read: the reason is logged and planning goes on
 * without that input (no verdicts: a succeeded crew stays done — nothing is re-dispatched on a
 * guess; no scores: agents are chosen by configuration order). The corrupt log itself is
 * quarantined by the reader and stops grading, which is where it must be repaired (N5.2).
 */
export function gradingVerdicts(layout: StateLayout, logger: Logger): VerdictLookup | undefined {
  try {
    const verdicts = new Map<string, 'accepted' | 'rejected'>();
    for (const j of Object.values(new GradingQueue(layout).state().jobs)) {
      if (j.status === 'graded' && j.verdict) {
        verdicts.set(j.job.crewId, j.verdict.accepted ? 'accepted' : 'rejected');
      }
    }
    return (crewId) => verdicts.get(crewId);
  } catch (e) {
    logger.warning(`planning without grading verdicts: ${message(e)}`);
    return undefined;
  }
}

export function ledgerScores(layout: StateLayout, logger: Logger): ScoreLookup | undefined {
  let state: LedgerState;
  try {
    state = new ScoreLedger(layout).state();
  } catch (e) {
    logger.warning(`planning without agent scores: ${message(e)}`);
    return undefined;
  }
  return scoresOf(state);
}

/**
 * The greedy choice's scores from a ledger's state (`blendedScore` per agent and cell); undefined
 * while nothing was graded (the chooser then keeps configuration order). The plan reads the state
 * from the state directory (`ledgerScores`); the simulator (lab/simulate) from the ledger it folds.
 */
export function scoresOf(state: LedgerState): ScoreLookup | undefined {
  if (Object.keys(state.agents).length === 0) return undefined;
  return (agent, { domain, difficulty }) => blendedScore(state, agent, domain, difficulty);
}

/**
 * The ledger's counts for the learning choice (src/dispatch/choice/record.ts): graded, accepted, merged
 * and closed-unmerged crews per cell. Undefined when the ledger cannot be read (the greedy rule then
 * chooses, without scores, as above).
 */
export function ledgerCounts(layout: StateLayout, logger: Logger): LedgerCounts | undefined {
  try {
    return new ScoreLedger(layout).state();
  } catch (e) {
    logger.warning(`planning without agent records: ${message(e)}`);
    return undefined;
  }
}
