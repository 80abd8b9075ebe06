import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGit, type GitOptions } from '../process/git.js';
import { indexFiles } from '../process/patch-files.js';
import { DeliveredTreeError, DeliveryError } from './errors.js';
import { refreshParents } from './refresh-base.js';

/**
 * The delivered branch: one commit on the crew's base holding its patch, made with git plumbing on a
 * private index (the repository's working tree, index and HEAD are never touched), then pointed to
 * by `refs/heads/school/issue-<N>`. Author and committer dates are the crew's finish time, so the
 * same crew always yields the same commit: a retried delivery is a no-op, never a second commit.
 * Every command goes through the hardened git wrapper (no hooks, no filters, no token in argv).
 * The patch is applied as the bytes collected from the student's worktree, and the tree made is
 * checked against them: each file's blob must be the one the patch names as its post-image.
 */
export interface CommitInput {
  repoPath: string;
  baseSha: string;
  /** The collected patch, applied byte for byte. */
  diff: string | Buffer;
  message: string;
  author: { name: string; email: string };
  /** ISO time: the crew's finish. */
  date: string;
  /** GIT_CONFIG_* with an http.extraheader, for fetching a base the checkout lacks. */
  auth?: Readonly<Record<string, string>>;
}

export function branchName(issueNumber: number): string {
  return `school/issue-${issueNumber}`;
}

async function gitOut(args: string[], o: GitOptions): Promise<string> {
  const r = await runGit(args, o);
  if (r.exitCode !== 0 || r.spawnError) {
    throw new DeliveryError(
      `git ${args.find((a) => !a.startsWith('-')) ?? ''} failed in ${o.cwd}: ${(r.spawnError ?? r.stderr.toString('utf8')).trim().slice(0, 500)}`,
    );
  }
  return r.stdout.toString('utf8').trim();
}

async function hasCommit(repoPath: string, sha: string): Promise<boolean> {
  const r = await runGit(['cat-file', '-e', `${sha}^{commit}`], { cwd: repoPath });
  return r.exitCode === 0;
}

/** Makes (or finds again) the delivery commit; returns its sha. */
export async function commitPatch(c: CommitInput): Promise<string> {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(c.baseSha)) {
    throw new DeliveryError(`the bookbag's baseSha "${c.baseSha.slice(0, 80)}" is not a commit id`);
  }
  if (!(await hasCommit(c.repoPath, c.baseSha))) {
    // A shallow checkout (the grade job's) may lack the crew's base: fetch exactly that commit.
    await gitOut(['fetch', '--no-tags', '--depth=1', 'origin', c.baseSha], {
      cwd: c.repoPath,
      auth: c.auth,
    });
  }
  const dir = mkdtempSync(join(tmpdir(), 'school-delivery-'));
  const env = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    await gitOut(['read-tree', c.baseSha], { cwd: c.repoPath, env });
    // An empty change (a clean refresh's, the only one delivered: ./deliver.ts) is the base's tree.
    if (c.diff.toString().trim() !== '')
      await gitOut(['apply', '--cached', '--binary', '--whitespace=nowarn', '-'], {
        cwd: c.repoPath,
        env,
        input: c.diff,
      });
    // Host git never enters a nested repository, so a crew's collected change holds no gitlink; one
    // here would make the delivered commit point a submodule at any commit: refused.
    const listed = await indexFiles(c.repoPath, c.baseSha, env);
    if (!listed.ok)
      throw new DeliveryError(`could not list the patch's changes: ${listed.output.trim().slice(0, 300)}`);
    const links = listed.files.filter((f) => f.gitlink).map((f) => f.path);
    if (links.length)
      throw new DeliveryError(
        `the patch adds or changes submodule(s) (gitlink, mode 160000): ${links.slice(0, 10).join(', ')}; a crew's change never holds one, so it is not delivered`,
      );
    const tree = await gitOut(['write-tree'], { cwd: c.repoPath, env });
    await sameAsWorktree(c.repoPath, c.baseSha, tree, c.diff);
    // A refresh crew started from the school's merge of the base into the head: its commit is that
    // merge, completed — parents [head, base], the crew's tree — so the branch contains the new base
    // and moves as a fast-forward of its head (./refresh-base.ts).
    const parents = (await refreshParents(c.repoPath, c.baseSha)) ?? [c.baseSha];
    return await gitOut(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'], {
      cwd: c.repoPath,
      input: c.message,
      env: {
        GIT_AUTHOR_NAME: c.author.name,
        GIT_AUTHOR_EMAIL: c.author.email,
        GIT_AUTHOR_DATE: c.date,
        GIT_COMMITTER_NAME: c.author.name,
        GIT_COMMITTER_EMAIL: c.author.email,
        GIT_COMMITTER_DATE: c.date,
      },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Byte identity with the student's worktree: `git diff --binary` writes each changed file's full
 * post-image blob id (`index <old>..<new>`), hashed from the worktree when the patch was collected.
 * Every one of them must be the blob the delivered tree holds at a path the commit changed — so the
 * delivered file is the student's file, byte for byte. (A pure rename or mode change names no blob;
 * a patch written by hand may name none: nothing to compare then.)
 */
async function sameAsWorktree(repoPath: string, baseSha: string, tree: string, diff: string | Buffer) {
  const text = typeof diff === 'string' ? diff : diff.toString('latin1');
  const named = [...text.matchAll(/^index [0-9a-f]{7,64}\.\.([0-9a-f]{7,64})(?: [0-7]{6})?$/gm)]
    .map((m) => m[1]!)
    .filter((id) => !/^0+$/.test(id));
  if (!named.length) return;
  const raw = await runGit(
    ['diff-tree', '-r', '--raw', '-z', '--no-renames', '--full-index', baseSha, tree],
    {
      cwd: repoPath,
    },
  );
  if (raw.exitCode !== 0)
    throw new DeliveryError(
      `git diff-tree failed in ${repoPath}: ${raw.stderr.toString('utf8').trim().slice(0, 300)}`,
    );
  const held = new Set<string>();
  const fields = raw.stdout.toString('utf8').split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, , , to, status] = fields[i]!.split(' ');
    if (to && status !== 'D') held.add(to);
  }
  const missing = named.filter((id) => ![...held].some((h) => h.startsWith(id)));
  if (missing.length)
    throw new DeliveredTreeError(
      `the delivery commit does not hold the student's change byte for byte: ${missing.length} file(s) of the patch (blob ${missing[0]!.slice(0, 12)}…) are not in the tree made from it; nothing is pushed`,
    );
}

/** The commit `ref` names: its committer time (Unix seconds) and whether delivery made it. */
async function refHead(repoPath: string, ref: string): Promise<{ time: number; ours: boolean } | undefined> {
  const r = await runGit(['log', '-1', '--format=%ct%n%B', ref, '--'], { cwd: repoPath });
  if (r.exitCode !== 0) return undefined;
  const [time, ...body] = r.stdout.toString('utf8').split('\n');
  return { time: Number(time), ours: body.some((l) => l.startsWith('School-Crew: ')) };
}

/**
 * Whether a delivered branch may move to a crew's commit `sha` dated `date`:
 * - always as a fast-forward: the current head is an ancestor of the new commit (a revision crew
 *   starts from the branch head, the delivered commit or one someone pushed there);
 * - otherwise only over an older commit delivery made: not over a later crew's commit (a retried
 *   older crew must not undo a newer accepted repair), and never over a commit delivery did not
 *   make (someone built on the branch, or pushed while a revision ran: their work is kept).
 */
async function mayMove(
  repoPath: string,
  ref: string,
  sha: string,
  date: string,
): Promise<'forward' | 'replace' | false> {
  const head = await refHead(repoPath, ref);
  if (!head) return 'forward';
  if (await isAncestor(repoPath, ref, sha)) return 'forward';
  return head.ours && !(head.time > Math.floor(Date.parse(date) / 1000)) ? 'replace' : false;
}

async function isAncestor(repoPath: string, ref: string, sha: string): Promise<boolean> {
  const r = await runGit(['merge-base', '--is-ancestor', ref, sha], { cwd: repoPath });
  return r.exitCode === 0;
}

/** Points `ref` at `sha` when `mayMove` allows it. Returns whether the ref now names `sha`. */
export async function updateRef(repoPath: string, ref: string, sha: string, date: string): Promise<boolean> {
  const current = await git1(repoPath, ref);
  if (current === sha) return true;
  if (!(await mayMove(repoPath, ref, sha, date))) return false;
  // Compare-and-swap: a ref someone moved meanwhile is not overwritten.
  await gitOut(['update-ref', ref, sha, ...(current ? [current] : [])], { cwd: repoPath });
  return true;
}

async function git1(repoPath: string, ref: string): Promise<string | undefined> {
  const r = await runGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: repoPath });
  return r.exitCode === 0 ? r.stdout.toString('utf8').trim() : undefined;
}

/**
 * Pushes `sha` to `refs/heads/<branch>` on origin. The remote branch is fetched first and kept when
 * `mayMove` says so (a later crew's commit, or someone's work on it that the commit does not build
 * on). The token reaches git only through `auth`.
 */
export async function pushBranch(o: {
  repoPath: string;
  branch: string;
  sha: string;
  date: string;
  auth?: Readonly<Record<string, string>>;
}): Promise<boolean> {
  const auth = o.auth ? { auth: o.auth } : {};
  const tracking = `refs/school-delivery/${o.branch}`;
  // Missing remote branch: nothing to compare against (the fetch fails, and that is fine; a
  // tracking ref left by an earlier run must not stand in for it).
  await runGit(['update-ref', '-d', tracking], { cwd: o.repoPath });
  try {
    await runGit(['fetch', '--no-tags', 'origin', `+refs/heads/${o.branch}:${tracking}`], {
      cwd: o.repoPath,
      ...auth,
    });
    const seen = await git1(o.repoPath, tracking);
    if (seen === o.sha) return true;
    const move = await mayMove(o.repoPath, tracking, o.sha, o.date);
    if (!move) return false;
    // A fast-forward needs no force. Replacing an older delivery commit is forced only over exactly
    // the commit seen (`--force-with-lease`): a commit someone pushed since is never overwritten.
    const force = move === 'replace' && seen ? [`--force-with-lease=refs/heads/${o.branch}:${seen}`] : [];
    await gitOut(['push', ...force, '--no-verify', 'origin', `${o.sha}:refs/heads/${o.branch}`], {
      cwd: o.repoPath,
      ...auth,
    });
    return true;
  } finally {
    // The tracking ref is only for this comparison: leave no ref behind in the user's repository.
    await runGit(['update-ref', '-d', tracking], { cwd: o.repoPath });
  }
}
