import type { SchoolConfig } from '../config/schema.js';
import type { Deliverer } from '../delivery/deliver.js';
import { message } from '../errors.js';
import type { FeedbackPort } from '../feedback/port.js';
import { publishStatuses } from '../feedback/refresh.js';
import type { MergePort } from '../delivery/merge.js';
import { mergeDelivered, type MergeGateResult } from '../feedback/merge-gate.js';
import type { StatusLinks } from '../feedback/status.js';
import { watchDeliveries, type WatchResult } from '../feedback/watch.js';
import type { DrainResult } from '../grading/drain.js';
import type { Logger } from '../log.js';
import { Outbox, type IssuesPort, type OutboxCounts } from '../outbox/outbox.js';
import type { StateLayout } from '../state/layout.js';

/**
 * The cycle's step after grading (docs/architecture.md, "One cycle"), run once per cycle by
 * `school loop`, `school drain` and the drain-grading job, after `drain` has recorded its verdicts
 * and their outbox entries:
 *
 * 1. the feedback watch, given a port: merged or closed delivered pull requests are the last judge
 *    (src/feedback/watch.ts). `school loop` watched before planning and passes none;
 * 2. the outbox delivery (N7.2): labels, comments, and accepted work as a branch or pull request;
 * 3. the guarded merge, given a merge port and `delivery.merge` other than `off`
 *    (src/feedback/merge-gate.ts): a delivered pull request whose head is still the judged commit, its
 *    checks green, merged with that commit as the merge's `sha` (`when-green`), or that commit handed
 *    to GitHub's auto-merge or merge queue (`queue`); a refusal recorded and reported;
 * 4. the status refresh, given a GitHub port: each issue's status comment, after the verdicts and
 *    the deliveries just made so it names the pull request, delivered at once. Without a port it
 *    records nothing (a status comment is a GitHub thing: entries would only pile up).
 *
 * Never throws: a GitHub or git failure is a warning and the entries stay pending for the next cycle.
 */
export interface AfterGradingOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  github?: IssuesPort;
  /** Delivers accepted work (src/delivery); absent: delivery entries wait for a run that has one. */
  delivery?: Deliverer;
  feedback?: FeedbackPort;
  /** The guarded merge's port (delivery token); absent or `delivery.merge: off`: nothing is merged. */
  merge?: MergePort;
  now?: () => Date;
  /** The status comments' links to this run (`statusLinks` of the run context); none locally. */
  links?: StatusLinks;
}

export interface AfterGradingResult extends OutboxCounts {
  /** The feedback watch's result, when it ran. */
  feedback?: WatchResult;
  /** The guarded merge's steps, when it ran. */
  merge?: MergeGateResult;
  /** Issues whose status comment changed and was recorded. */
  statuses: number[];
}

export async function afterGrading(o: AfterGradingOptions): Promise<AfterGradingResult> {
  const { config, layout, logger } = o;
  const now = o.now ?? (() => new Date());
  const outbox = new Outbox(layout);
  const r: AfterGradingResult = { outboxDelivered: 0, outboxPending: 0, statuses: [] };
  if (o.feedback)
    r.feedback = await watchDeliveries({ config, layout, logger, port: o.feedback, now: now() });
  try {
    if (o.github || o.delivery) {
      const d = await outbox.deliver(o.github, {
        logger,
        now,
        delivery: o.delivery,
      });
      r.outboxDelivered = d.delivered;
    }
    if (o.merge && config.delivery.merge !== 'off')
      r.merge = await mergeDelivered({ config, layout, logger, port: o.merge, now: now() });
    if (o.github) {
      const s = await publishStatuses({ config, layout, logger, github: o.github, now: now(), ...o.links });
      r.statuses = s.recorded;
      r.outboxDelivered += s.delivered;
    }
  } catch (e) {
    logger.warning(`GitHub outbox not delivered: ${message(e)}; entries stay pending for the next cycle`);
  }
  try {
    r.outboxPending = outbox.pending().length;
  } catch (e) {
    logger.warning(`outbox not read: ${message(e)}`);
  }
  return r;
}

/** A drain's result with the outbox counts of the step after it, as jobs report them. */
export function withOutbox(drained: DrainResult, after: OutboxCounts): DrainResult & OutboxCounts {
  return { ...drained, outboxDelivered: after.outboxDelivered, outboxPending: after.outboxPending };
}
