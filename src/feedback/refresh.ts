import type { SchoolConfig } from '../config/schema.js';
import { readRegistry } from '../dispatch/logs/registry.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { Outbox, type IssuesPort } from '../outbox/outbox.js';
import { GradingQueue } from '../grading/queue.js';
import { ScoreLedger } from '../grading/ledger.js';
import { decideRevision } from '../dispatch/revision.js';
import { controlLines, type ControlLine } from '../dispatch/logs/control-lines.js';
import { byCodePoint } from '../state/fold.js';
import { excusedDetail } from './ci-alerts.js';
import { readFeedback, type FeedbackState } from './log.js';
import { revisionRequests } from './revisions.js';
import { issueStatuses, statusComment, type DecidedContest, type StatusNotes } from './status.js';

/**
 * Refreshes the status comments (item 4): renders every worked-on issue's status from the state and
 * records, in the outbox, the bodies that changed since the last refresh. Delivery is the outbox's
 * (N7.2): after the grade is durable, with retry, idempotent, never blocking a grade. Off with
 * `grading.comment: false`. Never throws: a status that cannot be rendered now is rendered by the
 * next refresh.
 */
export interface RefreshOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  now?: Date;
  /** The link to the run that renders the statuses (`statusLinks` of the run context); none locally. */
  runUrl?: string;
  /** `<server>/<owner>/<repo>`, for the links to the runs crews were planned in; none locally. */
  repoUrl?: string;
  /** Only these issues (an event-driven cycle); all when absent. */
  only?: ReadonlySet<number>;
}

export async function refreshStatuses(o: RefreshOptions): Promise<number[]> {
  if (!o.config.grading.comment) return [];
  try {
    const outbox = new Outbox(o.layout);
    const verdicts = new Map<string, { accepted: boolean; code: string; reason?: string; proof?: string }>();
    for (const j of Object.values(new GradingQueue(o.layout).state().jobs)) {
      if (j.status !== 'graded' || !j.verdict) continue;
      const reason = j.verdict.reasons[0];
      verdicts.set(j.job.crewId, {
        accepted: j.verdict.accepted,
        code: j.verdict.code,
        ...(reason ? { reason } : {}),
        ...(j.verdict.proof ? { proof: j.verdict.proof } : {}),
      });
    }
    const { runUrl, repoUrl } = o;
    const deliveries = outbox.deliveries();
    // A settlement speaks of the pull request delivered for the issue now (the same crew's).
    const settled = new Map<number, 'merged' | 'closed'>();
    const feedback = readFeedback(o.layout);
    for (const s of Object.values(feedback.settled))
      if (deliveries.get(s.issue)?.crewId === s.crewId) settled.set(s.issue, s.merged ? 'merged' : 'closed');
    // A head that moved off the judged commit, and a refused guarded merge of it (the status says so).
    const headsMoved = new Map<number, string>();
    const mergeRefusals = new Map<number, { status?: number; message?: string }>();
    for (const [issue, d] of deliveries) {
      const pr = d.pullRequest?.number;
      if (pr === undefined) continue;
      const moved = feedback.heads?.[pr];
      if (moved && moved.judged === d.sha) headsMoved.set(issue, moved.sha);
      const m = feedback.merges?.[pr];
      if (m && m.outcome === 'refused' && m.sha === d.sha)
        mergeRefusals.set(issue, {
          ...(m.status !== undefined ? { status: m.status } : {}),
          ...(m.message ? { message: m.message } : {}),
        });
    }
    const registry = readRegistry(o.layout);
    // A revision whose commit was not pushed (the branch moved under it), and feedback past the bound.
    const notMoved = new Set<string>();
    for (const i of Object.values(outbox.state().items))
      if (
        i.entry.kind === 'delivery' &&
        i.status === 'delivered' &&
        i.result?.updated === false &&
        i.entry.crewId
      )
        notMoved.add(i.entry.crewId);
    const revisionStops = new Map<number, string>();
    for (const r of revisionRequests(o.layout, feedback)) {
      const d = decideRevision(registry, r, o.config.delivery.revisions);
      if (d.kind === 'stopped') revisionStops.set(r.issue, d.reason);
    }
    // Without the ledger the statuses are rendered without the contests' decisions.
    let contests: Record<string, DecidedContest> | undefined;
    try {
      contests = new ScoreLedger(o.layout).state().contests?.decided;
    } catch (e) {
      o.logger.warning(`status comments without contest decisions: ${message(e)}`);
    }
    const statuses = issueStatuses({
      registry,
      verdicts,
      contests,
      deliveries,
      settled,
      notMoved,
      revisionStops,
      headsMoved,
      mergeRefusals,
      runUrl,
      repoUrl,
    });
    const notes = statusNotes(o.layout, feedback, deliveries);
    const bodies = new Map<number, string>();
    for (const [issue, s] of statuses) {
      if (o.only && !o.only.has(issue)) continue;
      bodies.set(issue, statusComment(issue, s, notes.get(issue)));
    }
    return await outbox.recordStatuses(bodies, o.now ?? new Date());
  } catch (e) {
    o.logger.warning(`status comments not refreshed: ${message(e)}; the next cycle refreshes them`);
    return [];
  }
}

/**
 * Per issue, what its status comment says beside its state: the commands people gave its crews, as
 * the board reads them (src/dispatch/logs/control-lines.ts), and the failed checks of its delivered commit the
 * school excused (flaky, or red on the base too), in the words of their alert (./ci-alerts.ts).
 */
function statusNotes(
  layout: StateLayout,
  feedback: FeedbackState,
  deliveries: ReturnType<Outbox['deliveries']>,
): Map<number, StatusNotes> {
  const out = new Map<number, { controls: ControlLine[]; ci: string[] }>();
  const note = (issue: number) => {
    const n = out.get(issue) ?? { controls: [], ci: [] };
    out.set(issue, n);
    return n;
  };
  for (const c of controlLines(layout, Number.POSITIVE_INFINITY)) note(c.issue).controls.push(c);
  const excused = Object.values(feedback.excused ?? {}).sort(
    (a, b) => byCodePoint(a.at, b.at) || byCodePoint(a.check, b.check),
  );
  for (const x of excused)
    if (deliveries.get(x.issue)?.sha === x.sha) note(x.issue).ci.push(excusedDetail(x));
  return out;
}

/** Records the statuses and delivers the outbox's status entries now (the loop after planning). */
export async function publishStatuses(
  o: RefreshOptions & { github?: IssuesPort },
): Promise<{ recorded: number[]; delivered: number }> {
  const recorded = await refreshStatuses(o);
  if (!o.github || recorded.length === 0) return { recorded, delivered: 0 };
  try {
    const d = await new Outbox(o.layout).deliver(o.github, {
      logger: o.logger,
      now: () => new Date(),
      kinds: ['status'],
    });
    return { recorded, delivered: d.delivered };
  } catch (e) {
    o.logger.warning(`status comments not delivered: ${message(e)}; they stay in the outbox`);
    return { recorded, delivered: 0 };
  }
}
