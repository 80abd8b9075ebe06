import type { RevisionBrief } from '../../agents/brief.js';
import { readBookbag } from '../../bookbag/store.js';
import { message } from '../../errors.js';
import { feedbackFor } from '../../feedback/revisions.js';
import type { RefreshPlan, RevisionPlan } from '../../schemas/crew.js';
import { ensureRefreshBase } from '../../delivery/refresh-base.js';
import type { StateLayout } from '../../state/layout.js';
import { runGit } from '../../process/git.js';

/**
 * What a revision crew's brief is written from (src/agents/brief.ts `RevisionBrief`): the delivered
 * crew's diff, read through the scoped reader with its digests checked (what the graders accepted
 * and delivery committed, not whatever lies in the directory), and the feedback the plan named, from
 * `feedback.jsonl`. A diff that cannot be read is said so in the brief; the worktree holds the
 * change anyway (it starts from the branch head).
 */
export async function revisionBrief(
  layout: StateLayout,
  crewId: string,
  plan: RevisionPlan,
): Promise<RevisionBrief> {
  let diff: string;
  try {
    diff = (await readBookbag(layout, plan.revises, { role: 'revision', crewId, revises: plan.revises }))
      .diff;
  } catch (e) {
    diff = `(the delivered change of crew ${plan.revises} could not be read: ${message(e).slice(0, 300)}; it is in the worktree)`;
  }
  return {
    round: plan.round,
    of: plan.of,
    pr: plan.pr,
    branch: plan.branch,
    headSha: plan.headSha,
    revises: plan.revises,
    ...(plan.refresh ? { refresh: plan.refresh } : {}),
    diff,
    feedback: feedbackFor(layout, plan.feedback).map((f) => ({
      kind: f.kind,
      id: f.id,
      author: f.author,
      text: f.text,
      ...(f.lines ? { lines: f.lines } : {}),
    })),
  };
}

/**
 * A revision starts from the pull request's head, which a shallow checkout (the crew job's on GitHub
 * Actions) may not hold: fetch exactly that commit, without a token (a crew job holds none). Returns
 * why the crew cannot start when the commit cannot be had, in words that say what to do.
 */
export async function ensureRevisionBase(
  repoPath: string,
  sha: string,
  refresh?: { plan: RefreshPlan; author: { name: string; email: string } },
): Promise<string | undefined> {
  // A refresh starts from the school's merge of the base into the head, which no remote holds: a
  // checkout without it makes it again from the two (src/delivery/refresh-base.ts).
  if (refresh) return ensureRefreshBase(repoPath, sha, refresh.plan, refresh.author);
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha))
    return `the revision's head "${sha.slice(0, 80)}" is not a commit id`;
  const has = async () =>
    (await runGit(['cat-file', '-e', `${sha}^{commit}`], { cwd: repoPath })).exitCode === 0;
  if (await has()) return undefined;
  const r = await runGit(['fetch', '--no-tags', '--depth=1', 'origin', sha], { cwd: repoPath });
  if (r.exitCode === 0 && (await has())) return undefined;
  const err = (r.spawnError ?? r.stderr.toString('utf8')).trim().slice(0, 300);
  return `the revision starts from ${sha}, the head of its pull request, which is not in ${repoPath} and could not be fetched from origin${err ? ` (${err})` : ''}: check out the repository with that commit (for the workflow's crew job: a checkout with enough history, e.g. fetch-depth: 0) and the next cycle plans the revision again`;
}
