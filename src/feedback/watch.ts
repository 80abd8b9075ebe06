import type { SchoolConfig } from '../config/schema.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { ScoreLedger, type HumanJudged } from '../grading/ledger.js';
import { Outbox } from '../outbox/outbox.js';
import { GradingQueue } from '../grading/queue.js';
import { checkDrift } from './drift.js';
import { feedbackLog, readFeedback, type Settled } from './log.js';
import { recordControl, runningIssues } from './control-scan.js';
import { readCrewState } from '../dispatch/leases/lease.js';
import type { FeedbackPort } from './port.js';
import { event } from '../state/event-log.js';
import { ciAlerts } from './ci-alerts.js';
import { scanFeedback, type Delivered, type FeedbackItem, type IgnoredFeedback } from './scan.js';

/**
 * The last judge (item 5): each cycle, the delivered pull requests that changed are asked whether
 * a person merged them or closed them unmerged (src/feedback/scan.ts, one conditional request when
 * nothing changed). A settled pull request moves the human-acceptance EMA of its crew's agent ×
 * domain × difficulty in the score ledger (merged 1, closed 0), once per pull request, and is no
 * longer watched. The ledger is written before the scan's own record, so a crash between the two
 * only makes the next scan see the settlement again, which the ledger's key makes a no-op.
 * Never throws: a GitHub failure is a warning and the next cycle asks again.
 */
export interface WatchResult {
  settled: Settled[];
  /** Trusted feedback first seen by this scan (recorded as `feedback.received`). */
  received: FeedbackItem[];
  ignored: IgnoredFeedback[];
  requests: number;
  notModified: boolean;
}

export function deliveredPullRequests(layout: StateLayout): { delivered: Delivered[]; oldest?: string } {
  const outbox = new Outbox(layout);
  let oldest: string | undefined;
  // When each pull request was first delivered, and when each commit was pushed (our clock).
  const opened = new Map<number, string>();
  const pushed = new Map<string, string>();
  for (const e of outbox.log.read().events) {
    if (e.type !== 'outbox.delivered' || !e.data.result?.pullRequest) continue;
    if (!oldest || e.at < oldest) oldest = e.at;
    keepEarliest(opened, e.data.result.pullRequest.number, e.at);
    keepEarliest(pushed, e.data.result.sha, e.at);
  }
  const delivered: Delivered[] = [];
  for (const [issue, d] of outbox.deliveries()) {
    if (!d.pullRequest) continue;
    const deliveredAt = pushed.get(d.sha);
    const firstDeliveredAt = opened.get(d.pullRequest.number) ?? deliveredAt;
    delivered.push({
      issue,
      pr: d.pullRequest.number,
      crewId: d.crewId,
      sha: d.sha,
      ...(deliveredAt ? { deliveredAt } : {}),
      ...(firstDeliveredAt ? { firstDeliveredAt } : {}),
    });
  }
  return { delivered, ...(oldest ? { oldest } : {}) };
}

function keepEarliest<K>(m: Map<K, string>, key: K, at: string): void {
  const was = m.get(key);
  if (was === undefined || at < was) m.set(key, at);
}

export async function watchDeliveries(o: {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  port: FeedbackPort;
  now?: Date;
}): Promise<WatchResult> {
  const now = o.now ?? new Date();
  const empty: WatchResult = { settled: [], received: [], ignored: [], requests: 0, notModified: false };
  try {
    const { delivered, oldest } = deliveredPullRequests(o.layout);
    // Running crews' issues are read for `/school stop|steer` (./control-scan.ts).
    const running = runningIssues(readCrewState(o.layout).registry);
    if (delivered.length === 0 && running.length === 0) return empty;
    const first = [oldest, ...running.map((x) => x.since)].filter((t): t is string => !!t).sort()[0];
    const r = await scanFeedback({
      port: o.port,
      state: readFeedback(o.layout),
      delivered,
      // Always everything: the scan moves one shared cursor, so a scan that only asked about merges
      // would make every later scan miss the reviews and comments it skipped.
      collect: 'all',
      trust: o.config.curriculum.trust,
      bots: o.config.delivery.trustedBots,
      // Before the first delivery (by ten minutes: our clock is not GitHub's), so what happened on
      // the pull requests since is seen.
      ...(first ? { firstSince: new Date(Date.parse(first) - 600_000).toISOString() } : {}),
      now,
      running,
    });
    // Stops and steers first: a crew that runs now should hear of them soonest.
    if (r.control) await recordControl(o.layout, o.logger, r.control, now);
    if (r.settled.length > 0) {
      const jobs = new Map(
        Object.values(new GradingQueue(o.layout).state().jobs).map((j) => [j.job.crewId, j.job]),
      );
      const judged: HumanJudged[] = [];
      for (const s of r.settled) {
        const job = jobs.get(s.crewId);
        if (!job) {
          o.logger.warning(
            `pull request #${s.pr} settled, but crew ${s.crewId} has no grading job here: not scored`,
          );
          continue;
        }
        judged.push({
          pr: s.pr,
          issue: s.issue,
          crewId: s.crewId,
          agent: job.agent,
          domain: job.domain,
          difficulty: job.difficulty,
          merged: s.merged,
          alpha: o.config.grading.emaAlpha,
        });
      }
      await new ScoreLedger(o.layout).applyHuman(judged, now);
      for (const s of r.settled)
        o.logger.info(
          `pull request #${s.pr} for issue #${s.issue} ${s.merged ? 'merged' : 'closed unmerged'}`,
        );
    }
    for (const f of r.feedback)
      o.logger.info(
        `feedback on pull request #${f.pr} (issue #${f.issue}): ${f.kind} ${f.id} by ${f.author}`,
      );
    for (const f of r.ignored)
      o.logger.info(`feedback ${f.id} on pull request #${f.pr} ignored: ${f.reason}`);
    await feedbackLog(o.layout).append([
      ...r.events,
      ...r.feedback.map((f) => event('feedback.received', `received:${f.id}`, f, now)),
      ...r.ignored.map((f) => event('feedback.ignored', `ignored:${f.id}`, f, now)),
    ]);
    // Failed CI that is not the crew's, and reruns GitHub refused: the board's alerts.
    await ciAlerts(o.layout, o.logger, r);
    // The base moved under a pull request still open: a refresh (./drift.ts; never throws).
    const settledNow = new Set(r.settled.map((s) => s.pr));
    const drift = await checkDrift({
      config: o.config,
      layout: o.layout,
      logger: o.logger,
      port: o.port,
      delivered: delivered.filter((d) => !settledNow.has(d.pr)),
      now,
    });
    return {
      settled: r.settled,
      received: [...r.feedback, ...drift.refreshes],
      ignored: r.ignored,
      requests: o.port.requests,
      notModified: r.notModified,
    };
  } catch (e) {
    o.logger.warning(`delivered pull requests not checked: ${message(e)}; the next cycle asks again`);
    return { ...empty, requests: o.port.requests };
  }
}
