import { createHash } from 'node:crypto';

/**
 * The guarded merge (docs/delivery.md, "Merging"; `delivery.merge: when-green`). A verdict is about
 * one commit: the school merges a delivered pull request only while its head is still that commit,
 * only once every check on that commit is complete and green, and it names the commit in the merge
 * call (`PUT /pulls/{n}/merge` with `sha`), so GitHub itself refuses (409) if the head moved between
 * the read and the merge. Approvals and required checks are branch protection's: GitHub answers 405
 * or 422, and that answer is reported and kept with what it was about (the fingerprint): the school
 * asks again only once something changed — a new head, a new verdict, the checks, or the pull
 * request itself (a review, a label: its `updated_at`). `mergeable: null` is GitHub still computing:
 * asked again next cycle, not an error.
 *
 * `delivery.merge: queue` hands the judged commit to GitHub's own machinery instead (GraphQL, with
 * `expectedHeadOid` = the judged commit): `enqueuePullRequest` where the base branch has a merge
 * queue, else `enablePullRequestAutoMerge`; GitHub merges once branch protection's requirements are
 * met. GitHub refuses auto-merge on a pull request it could merge now ("… is in clean status"): the
 * guarded REST merge above merges it instead. A handed-over pull request the school's state no longer
 * holds ready — its head moved, feedback came, a crew of its issue runs — is taken back
 * (`disablePullRequestAutoMerge`, `dequeuePullRequest`): GitHub keeps auto-merge on across a push by
 * anyone with write access, so the school cannot leave it to GitHub.
 *
 * This module decides for one pull request from what the port reads; src/feedback/merge-gate.ts
 * says which pull requests the school's own state holds ready and records the outcome.
 */
export interface MergeablePull {
  number: number;
  /** The GraphQL id (`node_id`): GitHub's auto-merge and merge queue take it. */
  nodeId: string;
  state: 'open' | 'closed';
  merged: boolean;
  draft: boolean;
  headSha: string;
  /** Null while GitHub computes it (after a push, or right after the pull request opened). */
  mergeable: boolean | null;
  mergeableState: string;
  updatedAt: string;
}

export interface CommitChecks {
  runs: ReadonlyArray<{ id: number; name: string; status: string; conclusion: string | null }>;
  statuses: ReadonlyArray<{ context: string; state: string }>;
}

/** GitHub's answer to a merge: merged, or refused with its status (405, 409, 422) and words. */
export type MergeAnswer = { merged: true; sha: string } | { merged: false; status: number; message: string };

/** How a pull request is handed to GitHub: its auto-merge, or its base branch's merge queue. */
export type HandOverVia = 'auto-merge' | 'merge-queue';

/** What GitHub says of a pull request's merge machinery (GraphQL). */
export interface HandOverState {
  /** The base branch has a merge queue (`isMergeQueueEnabled`). */
  mergeQueue: boolean;
  /** It is in the merge queue now (`isInMergeQueue`). */
  inQueue: boolean;
  /** Auto-merge is enabled on it now (`autoMergeRequest`). */
  autoMerge: boolean;
}

/** GitHub's answer to a GraphQL mutation: done, or its error (`type`, as `UNPROCESSABLE`, and words). */
export type GraphqlAnswer = { ok: true } | { ok: false; type: string; message: string };

/** The pulls API as the guarded merge needs it (src/github/pulls-port.ts `octokitMerge`). */
export interface MergePort {
  pull(n: number): Promise<MergeablePull>;
  checks(sha: string): Promise<CommitChecks>;
  /** Refusals (405, 409, 422) are answers, not errors; anything else throws. */
  merge(n: number, p: { sha: string; method: 'merge' | 'squash' | 'rebase' }): Promise<MergeAnswer>;
  /** `delivery.merge: queue` (GraphQL): the pull request's merge queue and auto-merge. */
  handOverState?(nodeId: string): Promise<HandOverState>;
  /** `enqueuePullRequest` or `enablePullRequestAutoMerge` with `expectedHeadOid: sha`; errors are answers. */
  handOver?(p: {
    nodeId: string;
    sha: string;
    method: 'merge' | 'squash' | 'rebase';
    via: HandOverVia;
  }): Promise<GraphqlAnswer>;
  /** `dequeuePullRequest` or `disablePullRequestAutoMerge`; errors are answers. */
  takeBack?(p: { nodeId: string; via: HandOverVia }): Promise<GraphqlAnswer>;
}

export interface MergeCandidate {
  issue: number;
  pr: number;
  /** The commit the judges accepted and the school delivered. */
  sha: string;
  /** The accepted crew whose commit it is (a new verdict is a new crew). */
  crewId: string;
  /** When the commit was pushed: a commit with no checks yet may still get some. */
  deliveredAt?: string;
  /** Why the school's own state holds it back (feedback since, a revision under way), if it does. */
  notReady?: string;
  /** The last refusal of a merge of this pull request, with what it was about. */
  refused?: { fingerprint: string; status?: number; message?: string };
  /** `queue`: the judged commit was handed to GitHub's auto-merge or merge queue, not taken back. */
  handedOver?: { via: HandOverVia; nodeId: string };
}

export type MergeStep =
  | { kind: 'merged'; mergeSha: string; fingerprint: string }
  /** GitHub refused: a REST status (405, 409, 422), or a GraphQL error's type. */
  | { kind: 'refused'; status?: number; type?: string; message: string; fingerprint: string }
  /** `queue`: handed to GitHub's auto-merge or merge queue; GitHub merges it when its rules allow. */
  | { kind: 'handed-over'; via: HandOverVia; nodeId: string; fingerprint: string; already?: boolean }
  /** `queue`: taken back from GitHub's auto-merge or merge queue (the verdict no longer holds). */
  | { kind: 'taken-back'; via: HandOverVia; reason: string; answer?: string }
  /** Refused before, and nothing it was about changed: not asked again. */
  | { kind: 'held'; reason: string }
  /** Not yet: GitHub computing mergeability, checks running or not started. Asked next cycle. */
  | { kind: 'wait'; reason: string }
  /** Not mergeable as it stands: the head moved, a check failed, it conflicts, it is a draft. */
  | { kind: 'not-ready'; reason: string };

/** How long after delivery a commit without any check may still get its first (as the scan). */
export const CI_START_MS = 15 * 60_000;
const GREEN = new Set(['success', 'neutral', 'skipped']);

const short = (sha: string) => sha.slice(0, 12);

/**
 * The checks of a commit as a merge reads them: the latest run of each name (a rerun replaces the
 * run it reran) and the latest status of each context. Green when every one is complete and
 * green; a commit with none is green once CI has had time to start (a repository without CI).
 */
export function checksVerdict(
  c: CommitChecks,
  young: boolean,
): { state: 'green' } | { state: 'pending'; reason: string } | { state: 'red'; failed: string[] } {
  const runs = latestRuns(c);
  if (runs.length === 0 && c.statuses.length === 0 && young)
    return { state: 'pending', reason: 'no check has started on it yet' };
  const running = [
    ...runs.filter((r) => r.status !== 'completed').map((r) => r.name),
    ...c.statuses.filter((s) => s.state === 'pending').map((s) => s.context),
  ];
  if (running.length) return { state: 'pending', reason: `checks still running: ${running.join(', ')}` };
  const failed = [
    ...runs.filter((r) => !GREEN.has(r.conclusion ?? '')).map((r) => `${r.name} (${r.conclusion})`),
    ...c.statuses.filter((s) => s.state !== 'success').map((s) => `${s.context} (${s.state})`),
  ];
  return failed.length ? { state: 'red', failed } : { state: 'green' };
}

function latestRuns(c: CommitChecks): CommitChecks['runs'] {
  const byName = new Map<string, CommitChecks['runs'][number]>();
  for (const r of c.runs) {
    const prev = byName.get(r.name);
    if (!prev || r.id > prev.id) byName.set(r.name, r);
  }
  return [...byName.values()];
}

/**
 * What a merge attempt is about: the head, the verdict (its crew), the pull request's last change
 * (a review or a label moves it) and the checks on the head. A refusal holds while it is the same.
 */
export function mergeFingerprint(pull: MergeablePull, crewId: string, c: CommitChecks): string {
  const checks = [
    ...latestRuns(c).map((r) => `run:${r.name}:${r.id}:${r.status}:${r.conclusion ?? ''}`),
    ...c.statuses.map((s) => `status:${s.context}:${s.state}`),
  ].sort();
  return createHash('sha256')
    .update(JSON.stringify([pull.headSha, crewId, pull.updatedAt, checks]))
    .digest('hex')
    .slice(0, 24);
}

/** One pull request: read it and its checks, and merge it with the judged commit when all holds. */
export async function guardedMerge(
  port: MergePort,
  c: MergeCandidate,
  o: { method: 'merge' | 'squash' | 'rebase'; now: Date; mode?: 'when-green' | 'queue' },
): Promise<MergeStep> {
  // A verdict that no longer holds takes back what was handed to GitHub on its strength.
  const notReady = (reason: string): Promise<MergeStep> | MergeStep =>
    c.handedOver ? takeBack(port, c.handedOver, reason) : { kind: 'not-ready', reason };
  if (c.notReady) return notReady(c.notReady);
  const pull = await port.pull(c.pr);
  if (pull.state === 'closed')
    return { kind: 'not-ready', reason: pull.merged ? 'it is merged' : 'it is closed' };
  if (pull.headSha !== c.sha)
    return notReady(
      `its head ${short(pull.headSha)} is not the judged commit ${short(c.sha)}: it is judged again first`,
    );
  if (pull.draft)
    return notReady('it is a draft, and GitHub does not merge a draft (mark it ready for review)');
  if (c.handedOver)
    return {
      kind: 'wait',
      reason: `${c.handedOver.via === 'merge-queue' ? 'it is in the merge queue' : 'auto-merge is enabled'} at the judged commit ${short(c.sha)}: GitHub merges it once branch protection's requirements are met`,
    };
  if (pull.mergeable === null)
    return { kind: 'wait', reason: 'GitHub is still computing whether it can be merged' };
  const young = c.deliveredAt !== undefined && o.now.getTime() - Date.parse(c.deliveredAt) < CI_START_MS;
  const checks = await port.checks(c.sha);
  const verdict = checksVerdict(checks, young);
  const queue = o.mode === 'queue';
  // Handed over, GitHub waits for the checks itself; the guarded REST merge waits here.
  if (verdict.state === 'pending' && !queue) return { kind: 'wait', reason: verdict.reason };
  if (verdict.state === 'red')
    return {
      kind: 'not-ready',
      reason: `checks on ${short(c.sha)} are not green: ${verdict.failed.join(', ')}`,
    };
  if (pull.mergeable === false)
    return {
      kind: 'not-ready',
      reason: `GitHub says it cannot be merged (${pull.mergeableState || 'not mergeable'}): it conflicts with its base`,
    };
  const fingerprint = mergeFingerprint(pull, c.crewId, checks);
  if (c.refused?.fingerprint === fingerprint)
    return {
      kind: 'held',
      reason: `GitHub refused its merge${c.refused.status ? ` (${c.refused.status})` : ''}: ${c.refused.message ?? ''}; nothing changed since, so it is not asked again`,
    };
  if (queue) {
    const step = await handOver(port, pull, c, o.method, fingerprint);
    if (step) return step;
    // GitHub could merge it now, so it enables no auto-merge: the guarded merge below does it.
    if (verdict.state === 'pending') return { kind: 'wait', reason: verdict.reason };
  }
  const answer = await port.merge(c.pr, { sha: c.sha, method: o.method });
  return answer.merged
    ? { kind: 'merged', mergeSha: answer.sha, fingerprint }
    : { kind: 'refused', status: answer.status, message: answer.message, fingerprint };
}

/** GitHub's refusal of auto-merge on a pull request it could merge at once (GraphQL `UNPROCESSABLE`). */
const CLEAN = /is in clean status/i;
/** … and on one whose checks GitHub does not count as passed yet: asked again next cycle. */
const UNSTABLE = /is in unstable status/i;

/**
 * `queue`: the judged commit handed to GitHub — its base branch's merge queue when it has one, else
 * auto-merge — with `expectedHeadOid`, so GitHub refuses if the head is no longer that commit.
 * Undefined when GitHub says it could merge it now (the guarded REST merge does).
 */
async function handOver(
  port: MergePort,
  pull: MergeablePull,
  c: MergeCandidate,
  method: 'merge' | 'squash' | 'rebase',
  fingerprint: string,
): Promise<MergeStep | undefined> {
  if (!port.handOverState || !port.handOver)
    throw new Error('delivery.merge is queue, but this GitHub port has no GraphQL client');
  const state = await port.handOverState(pull.nodeId);
  // Someone queued it or enabled auto-merge at the judged head already: GitHub's from here on.
  if (state.inQueue || state.autoMerge)
    return {
      kind: 'handed-over',
      via: state.inQueue ? 'merge-queue' : 'auto-merge',
      nodeId: pull.nodeId,
      fingerprint,
      already: true,
    };
  const via: HandOverVia = state.mergeQueue ? 'merge-queue' : 'auto-merge';
  const answer = await port.handOver({ nodeId: pull.nodeId, sha: c.sha, method, via });
  if (answer.ok) return { kind: 'handed-over', via, nodeId: pull.nodeId, fingerprint };
  if (via === 'auto-merge' && CLEAN.test(answer.message)) return undefined;
  if (via === 'auto-merge' && UNSTABLE.test(answer.message))
    return { kind: 'wait', reason: `GitHub enables no auto-merge yet: ${answer.message}` };
  return { kind: 'refused', type: answer.type, message: answer.message, fingerprint };
}

/** Takes the judged commit back from GitHub's auto-merge or merge queue; GitHub's error is an answer. */
async function takeBack(
  port: MergePort,
  h: { via: HandOverVia; nodeId: string },
  reason: string,
): Promise<MergeStep> {
  if (!port.takeBack) throw new Error('delivery.merge is queue, but this GitHub port has no GraphQL client');
  const answer = await port.takeBack({ nodeId: h.nodeId, via: h.via });
  return {
    kind: 'taken-back',
    via: h.via,
    reason,
    ...(answer.ok ? {} : { answer: `${answer.type}: ${answer.message}` }),
  };
}
