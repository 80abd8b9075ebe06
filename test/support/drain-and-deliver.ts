import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain, type DrainOptions, type DrainResult } from '../../src/grading/drain.js';
import { afterGrading, withOutbox, type AfterGradingOptions } from '../../src/loop/after-grading.js';
import type { OutboxCounts } from '../../src/outbox/outbox.js';
import { memoryLogger } from '../../src/log.js';
import { fastGrade } from '../grading/helpers.js';

/**
 * What `school drain` does (src/cli/commands/drain.ts): the drain, which records its verdicts and
 * their outbox entries, then the step after grading, which delivers them and refreshes the status
 * comments. Accepted work is recorded for delivery when a deliverer is given.
 */
export async function drainAndDeliver(
  o: Omit<DrainOptions, 'deliver'> & AfterGradingOptions,
): Promise<DrainResult & OutboxCounts> {
  // As school drain and school loop judge: the evidence judge runs added tests on a clean checkout.
  const judging = { verifyOnCleanCheckout, ...o.judging };
  const drained = await drain({ ...o, judging, deliver: !!o.delivery });
  return withOutbox(drained, await afterGrading(o));
}

/** `drainAndDeliver` with the fast grader (test/grading/helpers.ts) and, unless given, a fresh memory logger. */
export function drainFast(
  o: Omit<DrainOptions, 'deliver' | 'judging' | 'logger'> &
    Omit<AfterGradingOptions, 'logger'> & { logger?: DrainOptions['logger'] },
): Promise<DrainResult & OutboxCounts> {
  return drainAndDeliver({ logger: memoryLogger(), ...o, judging: { grade: fastGrade } });
}
