import type { SchoolConfig } from '../config/schema.js';
import { guardedMerge, type MergeCandidate, type MergePort, type MergeStep } from '../delivery/merge.js';
import { readRegistry } from '../dispatch/logs/registry.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { boundError } from '../security/bound.js';
import { audit } from '../state/audit.js';
import { event } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import { feedbackLog, readFeedback, type FeedbackState, type MergeAttempt } from './log.js';
import { deliveredPullRequests } from './watch.js';

/**
 * Which delivered pull requests the guarded merge may try (`delivery.merge: when-green` or `queue`,
 * src/delivery/merge.ts decides each), and what became of each. It runs in the grade job's step
 * after grading, after the outbox delivered: the job that holds the delivery token (`contents:
 * write`) and runs no untrusted code; the plan job holds no write token for contents.
 *
 * The school's own state holds a pull request back before GitHub is asked anything: a head the
 * scan saw move off the judged commit (judged again first), trusted feedback recorded after the
 * judged commit was delivered (the commit does not answer it), or a crew of the issue planned or
 * running (a revision or a refresh on its way). A merge or a refusal is recorded (`pr.merge` in
 * `feedback.jsonl`) with what it was about; a refusal is an alert on the board and is asked again
 * only once something changed. Never throws: a GitHub failure is a warning, the next cycle asks.
 */
export interface MergeGateResult {
  steps: Array<{ issue: number; pr: number; step: MergeStep }>;
}

export async function mergeDelivered(o: {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  port: MergePort;
  now?: Date;
}): Promise<MergeGateResult> {
  const r: MergeGateResult = { steps: [] };
  if (o.config.delivery.merge === 'off') return r;
  const now = o.now ?? new Date();
  let candidates: MergeCandidate[];
  try {
    candidates = mergeCandidates(o.layout, readFeedback(o.layout));
  } catch (e) {
    o.logger.warning(`guarded merge skipped: the state could not be read (${message(e)})`);
    return r;
  }
  for (const c of candidates) {
    let step: MergeStep;
    try {
      step = await guardedMerge(o.port, c, {
        method: o.config.delivery.mergeMethod,
        now,
        mode: o.config.delivery.merge === 'queue' ? 'queue' : 'when-green',
      });
    } catch (e) {
      o.logger.warning(
        `pull request #${c.pr} not merged: ${boundError(message(e))}; the next cycle asks again`,
      );
      continue;
    }
    r.steps.push({ issue: c.issue, pr: c.pr, step });
    await record(o, c, step, now);
  }
  return r;
}

/** Open delivered pull requests, each with what the school's state says of its readiness. */
export function mergeCandidates(layout: StateLayout, feedback: FeedbackState): MergeCandidate[] {
  const { delivered } = deliveredPullRequests(layout);
  const active = new Set(
    Object.values(readRegistry(layout).crews)
      .filter((c) => c.status === 'planned' || c.status === 'running')
      .map((c) => c.issueNumber),
  );
  const received = Object.values(feedback.received ?? {});
  const out: MergeCandidate[] = [];
  for (const d of delivered) {
    if (feedback.settled[d.pr]) continue;
    const moved = feedback.heads?.[d.pr];
    const since = received.filter(
      (f) => f.pr === d.pr && d.deliveredAt !== undefined && f.at > d.deliveredAt,
    );
    const notReady =
      moved && moved.judged === d.sha
        ? `its head moved to ${moved.sha.slice(0, 12)}, which has not been judged`
        : since.length
          ? `feedback came after the judged commit (${since.map((f) => f.id).join(', ')})`
          : active.has(d.issue)
            ? 'a crew of its issue is planned or running'
            : undefined;
    const last = feedback.merges?.[d.pr];
    out.push({
      issue: d.issue,
      pr: d.pr,
      sha: d.sha,
      crewId: d.crewId,
      ...(d.deliveredAt ? { deliveredAt: d.deliveredAt } : {}),
      ...(notReady ? { notReady } : {}),
      ...(last && last.outcome === 'handed-over' && last.sha === d.sha && last.via && last.nodeId
        ? { handedOver: { via: last.via, nodeId: last.nodeId } }
        : {}),
      ...(last && last.outcome === 'refused'
        ? {
            refused: {
              fingerprint: last.fingerprint,
              ...(last.status !== undefined ? { status: last.status } : {}),
              ...(last.message ? { message: last.message } : {}),
            },
          }
        : {}),
    });
  }
  return out;
}

async function record(
  o: { layout: StateLayout; logger: Logger },
  c: MergeCandidate,
  step: MergeStep,
  now: Date,
): Promise<void> {
  const where = `pull request #${c.pr} (issue #${c.issue})`;
  if (step.kind === 'wait' || step.kind === 'not-ready' || step.kind === 'held') {
    o.logger.info(`${where} not merged: ${step.reason}`);
    return;
  }
  const base = { pr: c.pr, issue: c.issue, sha: c.sha };
  const how = (via: 'auto-merge' | 'merge-queue') =>
    via === 'merge-queue' ? 'the merge queue' : 'auto-merge';
  if (step.kind === 'handed-over' || step.kind === 'taken-back') {
    const nodeId = step.kind === 'handed-over' ? step.nodeId : c.handedOver?.nodeId;
    const attempt: MergeAttempt = {
      ...base,
      outcome: step.kind,
      via: step.via,
      ...(nodeId ? { nodeId } : {}),
      ...(step.kind === 'taken-back' && step.answer ? { message: boundError(step.answer) } : {}),
      // A take-back is about the moment the verdict stopped holding.
      fingerprint:
        step.kind === 'handed-over' ? step.fingerprint : `taken-back:${c.sha}:${now.toISOString()}`,
    };
    await feedbackLog(o.layout).append([
      event('pr.merge', `merge:${c.pr}:${step.kind}:${attempt.fingerprint}`, attempt, now),
    ]);
    o.logger.info(
      step.kind === 'handed-over'
        ? `${where} handed to GitHub's ${how(step.via)} at the judged commit ${c.sha.slice(0, 12)}${step.already ? ' (it already was)' : ''}: GitHub merges it once branch protection's requirements are met`
        : `${where} taken back from GitHub's ${how(step.via)}: ${step.reason}${step.answer ? ` (GitHub: ${boundError(step.answer)})` : ''}`,
    );
    return;
  }
  const attempt: MergeAttempt =
    step.kind === 'merged'
      ? { ...base, outcome: 'merged', fingerprint: step.fingerprint, mergeSha: step.mergeSha }
      : {
          ...base,
          outcome: 'refused',
          ...(step.status !== undefined ? { status: step.status } : {}),
          ...(step.type ? { type: step.type } : {}),
          message: boundError(step.message),
          fingerprint: step.fingerprint,
        };
  await feedbackLog(o.layout).append([event('pr.merge', `merge:${c.pr}:${step.fingerprint}`, attempt, now)]);
  if (step.kind === 'merged') {
    o.logger.info(
      `${where} merged at the judged commit ${c.sha.slice(0, 12)} (merge ${step.mergeSha.slice(0, 12)})`,
    );
    return;
  }
  const detail = `GitHub refused to merge ${where} at the judged commit ${c.sha.slice(0, 12)} (${step.status ?? step.type}): ${attempt.message}; asked again once its head, its verdict, its checks or the pull request change`;
  o.logger.warning(detail);
  await audit(o.layout, 'crew.alert', { kind: 'merge-refused', issueNumber: c.issue, detail });
}
