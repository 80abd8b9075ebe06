import type { CrewOutcome, RefreshPlan, RevisionPlan } from '../schemas/crew.js';
import type { CrewRecord, CrewRegistry } from './logs/registry.js';

/**
 * Revision crews (docs/delivery.md, "Revisions"): trusted feedback on a delivered pull request that
 * is still open — a review requesting changes, a `/school` comment, failed CI — plans one crew for
 * the agent that delivered it, starting from the branch head, at most `delivery.revisions` rounds per
 * pull request. The feedback is read by the feedback scan (src/feedback/) and handed in as a
 * `RevisionRequest`; what the registry says (rounds run, feedback answered) is decided here, under
 * the crews-log lock like every other plan.
 */
export interface RevisionRequest {
  issue: number;
  pr: number;
  branch: string;
  /** The crew whose commit the pull request now holds (the latest delivery of the issue). */
  revises: string;
  /** The commit that delivery pushed. */
  deliveredSha: string;
  /**
   * Trusted feedback recorded for the pull request: id, when it was read, the head then. Base drift
   * (`drift:…`, src/feedback/drift.ts) carries its refresh: its head is the school's merge of the
   * base into the pull request's head.
   */
  feedback: ReadonlyArray<{ id: string; at: string; headSha: string; refresh?: RefreshPlan }>;
}

export type RevisionDecision =
  | { kind: 'plan'; agent: string; revision: RevisionPlan }
  | { kind: 'stopped'; reason: string }
  | { kind: 'none' };

/** Endings that are interruptions, not answers: the round is not used and the feedback stays open. */
const INTERRUPTED: readonly CrewOutcome[] = ['usage_limit', 'overloaded', 'cancelled'];

function interrupted(c: CrewRecord): boolean {
  return (
    c.status === 'finished' && ((c.outcome && INTERRUPTED.includes(c.outcome)) || !!c.preVerify || !!c.infra)
  );
}

/** Revision crews of a pull request that used a round (running, or ended other than by an interruption). */
export function revisionRounds(registry: CrewRegistry, pr: number): CrewRecord[] {
  return Object.values(registry.crews).filter((c) => c.revision?.pr === pr && !interrupted(c));
}

/**
 * What the registry makes of a request: a revision to plan (the next round, the delivered crew's
 * agent, the head to start from), the bound reached, or nothing (all feedback answered).
 */
export function decideRevision(
  registry: CrewRegistry,
  req: RevisionRequest,
  bound: number,
): RevisionDecision {
  if (bound <= 0) return { kind: 'none' };
  const rounds = revisionRounds(registry, req.pr);
  const answered = new Set(rounds.flatMap((c) => c.revision?.feedback ?? []));
  const delivered = registry.crews[req.revises];
  // Drift measured before the delivered crew finished speaks of a head the branch no longer has: its
  // merge would not build on the branch. The next drift check measures the new head.
  const stale = (f: RequestFeedback) =>
    !!f.refresh && delivered?.finishedAt !== undefined && f.at <= delivered.finishedAt;
  const open = req.feedback.filter((f) => !answered.has(f.id) && !stale(f));
  if (open.length === 0) return { kind: 'none' };
  if (rounds.length >= bound)
    return {
      kind: 'stopped',
      reason: `${rounds.length} revision round(s) of pull request #${req.pr} ran (delivery.revisions: ${bound}); the school does not revise it again — a person takes it from here`,
    };
  if (!delivered) return { kind: 'none' };
  // Feedback read before the delivered crew finished speaks of an older head: the branch now holds
  // that crew's commit, so the revision starts there.
  const latest = newest(open)!;
  // A refresh starts from its merge of the base into the head (the newest drift's): feedback read on
  // that head is answered there too, with the base brought in.
  const refresh = newest(open, true);
  const headSha = refresh
    ? refresh.headSha
    : delivered.finishedAt !== undefined && latest.at <= delivered.finishedAt
      ? req.deliveredSha
      : latest.headSha;
  return {
    kind: 'plan',
    agent: delivered.agent,
    revision: {
      round: rounds.length + 1,
      of: bound,
      pr: req.pr,
      branch: req.branch,
      headSha,
      revises: req.revises,
      feedback: open.map((f) => f.id).sort(),
      ...(refresh?.refresh ? { refresh: refresh.refresh } : {}),
    },
  };
}

type RequestFeedback = RevisionRequest['feedback'][number];

/** The newest feedback (of the refreshes only, with `refresh`), by when it was read. */
function newest(fs: readonly RequestFeedback[], refresh = false): RequestFeedback | undefined {
  return [...fs]
    .filter((f) => !refresh || f.refresh)
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))[0];
}
