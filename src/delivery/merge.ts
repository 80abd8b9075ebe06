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
 * This module decides for one pull request from what the port reads; src/feedback/merge-gate.ts
 * says which pull requests the school's own state holds ready and records the outcome.
 */
export interface MergeablePull {
  number: number;
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

/** The pulls API as the guarded merge needs it (src/github/pulls-port.ts `octokitMerge`). */
export interface MergePort {
  pull(n: number): Promise<MergeablePull>;
  checks(sha: string): Promise<CommitChecks>;
  /** Refusals (405, 409, 422) are answers, not errors; anything else throws. */
  merge(n: number, p: { sha: string; method: 'merge' | 'squash' | 'rebase' }): Promise<MergeAnswer>;
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
}

export type MergeStep =
  | { kind: 'merged'; mergeSha: string; fingerprint: string }
  | { kind: 'refused'; status: number; message: string; fingerprint: string }
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
  o: { method: 'merge' | 'squash' | 'rebase'; now: Date },
): Promise<MergeStep> {
  if (c.notReady) return { kind: 'not-ready', reason: c.notReady };
  const pull = await port.pull(c.pr);
  if (pull.state === 'closed')
    return { kind: 'not-ready', reason: pull.merged ? 'it is merged' : 'it is closed' };
  if (pull.headSha !== c.sha)
    return {
      kind: 'not-ready',
      reason: `its head ${short(pull.headSha)} is not the judged commit ${short(c.sha)}: it is judged again first`,
    };
  if (pull.draft)
    return {
      kind: 'not-ready',
      reason: 'it is a draft, and GitHub does not merge a draft (mark it ready for review)',
    };
  if (pull.mergeable === null)
    return { kind: 'wait', reason: 'GitHub is still computing whether it can be merged' };
  const young = c.deliveredAt !== undefined && o.now.getTime() - Date.parse(c.deliveredAt) < CI_START_MS;
  const checks = await port.checks(c.sha);
  const verdict = checksVerdict(checks, young);
  if (verdict.state === 'pending') return { kind: 'wait', reason: verdict.reason };
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
  const answer = await port.merge(c.pr, { sha: c.sha, method: o.method });
  return answer.merged
    ? { kind: 'merged', mergeSha: answer.sha, fingerprint }
    : { kind: 'refused', status: answer.status, message: answer.message, fingerprint };
}
