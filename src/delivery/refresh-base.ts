import { SchoolError } from '../errors.js';
import { runGit, type GitOptions } from '../process/git.js';
import type { RefreshPlan, RevisionPlan } from '../schemas/crew.js';

/**
 * The commit a refresh crew starts from (docs/delivery.md, "Refresh"): the pull request's head and
 * its base's new commit merged by git (`merge-tree --write-tree`: no working tree, index or HEAD of
 * the repository is touched), with the conflicts git cannot resolve left in the files as markers
 * (`<<<<<<<`, `=======`, `>>>>>>>`) for the crew to resolve. It is never pushed: the crew's change is
 * measured against it (so the judges see the crew's resolution, not the base's own changes), and
 * delivery commits the crew's tree with this commit's two parents, [head, base] (src/delivery/branch.ts
 * `refreshParents`): the delivered commit is a merge that contains the new base.
 *
 * The commit is made the same way wherever it is made — the plan's machine, the crew job's checkout,
 * the grade job's — from the same two commits, the delivery author and the base commit's date, so it
 * has the same id: a checkout that lacks it makes it again (`ensureRefreshBase`).
 */
export interface RefreshBase {
  sha: string;
  /** Paths left with conflict markers; empty when the base merged in cleanly. */
  conflicts: string[];
}

/**
 * A clean refresh: a round whose only work is bringing the base in (every feedback it answers is
 * base drift, `drift:…`) and whose merge left no conflict. It needs no student: the crew verifies
 * the school's merge before any turn (src/agents/session.ts `verifyFirst`) and, when it passes,
 * hands back an empty change on it — which the rubric accepts and delivery commits as the merge
 * (src/grading/judges.ts, src/delivery/deliver.ts). Only what the plan recorded decides it.
 */
export function cleanRefresh(revision: Pick<RevisionPlan, 'feedback' | 'refresh'> | undefined): boolean {
  return (
    !!revision?.refresh &&
    revision.refresh.conflicts.length === 0 &&
    revision.feedback.length > 0 &&
    revision.feedback.every((id) => id.startsWith('drift:'))
  );
}

/** The trailer that marks a refresh base, naming the base branch and its commit. */
export const REFRESH_TRAILER = 'School-Refresh:';

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** A refresh base that cannot be made here: a commit missing from the checkout, or git refusing. */
export class RefreshBaseError extends SchoolError {
  override readonly code = 'refresh-base';
  constructor(message: string) {
    super(message);
    this.name = 'RefreshBaseError';
  }
}

async function out(args: string[], o: GitOptions, ok: readonly number[] = [0]): Promise<string> {
  const r = await runGit(args, o);
  if (r.spawnError || r.exitCode === null || !ok.includes(r.exitCode))
    throw new RefreshBaseError(
      `git ${args[0]} failed in ${o.cwd}: ${(r.spawnError ?? r.stderr.toString('utf8')).trim().slice(0, 300)}`,
    );
  return r.stdout.toString('utf8');
}

async function hasCommit(repoPath: string, sha: string): Promise<boolean> {
  return (await runGit(['cat-file', '-e', `${sha}^{commit}`], { cwd: repoPath })).exitCode === 0;
}

/** Fetches commits the checkout lacks from origin, with the history their merge base needs. */
async function ensureCommits(
  repoPath: string,
  shas: readonly string[],
  auth?: Readonly<Record<string, string>>,
) {
  const missing: string[] = [];
  for (const s of shas) if (!(await hasCommit(repoPath, s))) missing.push(s);
  if (!missing.length) return;
  // A merge needs the commits' common ancestor: the whole history of both, not one commit each.
  const shallow = (await out(['rev-parse', '--is-shallow-repository'], { cwd: repoPath })).trim() === 'true';
  await out(['fetch', '--no-tags', ...(shallow ? ['--unshallow'] : []), 'origin', ...missing], {
    cwd: repoPath,
    auth,
  });
}

/**
 * Merges `refresh.baseSha` into `refresh.head` as a commit (see above). Throws RefreshBaseError when
 * a commit cannot be had or git refuses.
 */
export async function makeRefreshBase(
  repoPath: string,
  r: Pick<RefreshPlan, 'base' | 'baseSha' | 'head'>,
  author: { name: string; email: string },
  auth?: Readonly<Record<string, string>>,
): Promise<RefreshBase> {
  for (const s of [r.head, r.baseSha])
    if (!SHA.test(s)) throw new RefreshBaseError(`"${s.slice(0, 80)}" is not a commit id`);
  await ensureCommits(repoPath, [r.head, r.baseSha], auth);
  // Exit 1: the merge has conflicts; the tree holds them marked. `--name-only`: one path a line.
  const merged = await out(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', r.head, r.baseSha],
    { cwd: repoPath },
    [0, 1],
  );
  const [tree, ...rest] = merged.split('\n');
  if (!tree || !SHA.test(tree.trim()))
    throw new RefreshBaseError(`git merge-tree gave no tree: ${merged.slice(0, 200)}`);
  const conflicts = [...new Set(rest.map((l) => l.trim()).filter(Boolean))].sort();
  // The base commit's own date: the same inputs make the same commit, wherever it is made.
  const date = (await out(['log', '-1', '--format=%cI', r.baseSha], { cwd: repoPath })).trim();
  const message = [
    `Merge ${r.base} (${r.baseSha.slice(0, 12)}) into the delivered change, for a refresh crew`,
    '',
    conflicts.length
      ? `Conflicts left marked for the crew: ${conflicts.slice(0, 20).join(', ')}${conflicts.length > 20 ? ', …' : ''}`
      : 'The base merged in without conflicts.',
    '',
    `${REFRESH_TRAILER} ${r.base} ${r.baseSha}`,
    '',
  ].join('\n');
  const sha = (
    await out(['commit-tree', tree.trim(), '-p', r.head, '-p', r.baseSha, '-F', '-'], {
      cwd: repoPath,
      input: message,
      env: {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: author.name,
        GIT_COMMITTER_EMAIL: author.email,
        GIT_COMMITTER_DATE: date,
      },
    })
  ).trim();
  return { sha, conflicts };
}

/**
 * A refresh crew's start commit in a checkout that may not hold it (the crew job's, the grade job's):
 * made again from the plan's head and base. Returns why it cannot be had, in words that say what to
 * do; undefined when the commit is there.
 */
export async function ensureRefreshBase(
  repoPath: string,
  sha: string,
  refresh: RefreshPlan,
  author: { name: string; email: string },
  auth?: Readonly<Record<string, string>>,
): Promise<string | undefined> {
  if (SHA.test(sha) && (await hasCommit(repoPath, sha))) return undefined;
  try {
    const made = await makeRefreshBase(repoPath, refresh, author, auth);
    if (made.sha === sha) return undefined;
    return `the refresh starts from ${sha}, the merge of ${refresh.head} with ${refresh.base} at ${refresh.baseSha}, but merging them here made ${made.sha} (a different git, or a changed delivery.author): the next drift check plans the refresh again`;
  } catch (e) {
    return `the refresh starts from the merge of ${refresh.head} with ${refresh.base} at ${refresh.baseSha}, which could not be made in ${repoPath} (${(e as Error).message}): check out the repository with its history (for the workflow's jobs: fetch-depth: 0)`;
  }
}

/**
 * The parents a delivered commit takes when its crew started from a refresh base: the base's own,
 * [head, base commit]; undefined for any other commit. Only a commit carrying the school's trailer
 * and two parents counts.
 */
export async function refreshParents(repoPath: string, sha: string): Promise<[string, string] | undefined> {
  const r = await runGit(['cat-file', 'commit', sha], { cwd: repoPath });
  if (r.exitCode !== 0) return undefined;
  const text = r.stdout.toString('utf8');
  const split = text.indexOf('\n\n');
  const header = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? '' : text.slice(split + 2);
  const parents = [...header.matchAll(/^parent ([0-9a-f]+)$/gm)].map((m) => m[1]!);
  if (parents.length !== 2 || !body.split('\n').some((l) => l.startsWith(`${REFRESH_TRAILER} `)))
    return undefined;
  return [parents[0]!, parents[1]!];
}

/**
 * Whether `sha` is a refresh base that merged cleanly: a commit carrying the school's trailer whose
 * tree is exactly what git merges its two parents into, without a conflict. An empty change on it is
 * that merge as it stands — what delivery commits for a clean refresh that needed no change
 * (./deliver.ts). Asked of git, not of any record: a base with conflict markers, or one whose tree is
 * not git's merge, is not.
 */
export async function isCleanMerge(repoPath: string, sha: string): Promise<boolean> {
  const parents = await refreshParents(repoPath, sha);
  if (!parents) return false;
  const merged = await runGit(['merge-tree', '--write-tree', '--no-messages', parents[0], parents[1]], {
    cwd: repoPath,
  });
  if (merged.exitCode !== 0) return false;
  const tree = await runGit(['rev-parse', '--verify', '-q', `${sha}^{tree}`], { cwd: repoPath });
  if (tree.exitCode !== 0) return false;
  return merged.stdout.toString('utf8').trim() === tree.stdout.toString('utf8').trim();
}
