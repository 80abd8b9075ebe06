import type { ListResult } from '../curriculum/github-source.js';

/**
 * What the feedback scan reads on GitHub (item 7): the conditional issues listing — pull requests
 * are in it, and their `updated_at` moves when a review or a comment arrives — and, only for a
 * delivered pull request that changed, its state, reviews, line comments, comments and check runs.
 * Every answer is reduced to the few fields the scan reads; `requests` counts what was asked.
 * src/github/feedback-port.ts answers it over the REST API.
 */
export interface Author {
  login: string;
  bot: boolean;
  association: string;
}
export interface PullState {
  number: number;
  state: 'open' | 'closed';
  merged: boolean;
  headSha: string;
  headRef: string;
  /**
   * Whether GitHub can merge it into its base (`mergeable`): false is a conflict, null that GitHub is
   * still computing it (ask again later). Absent where the port does not know it.
   */
  mergeable?: boolean | null;
  /** The branch it targets (`base.ref`). */
  baseRef?: string;
  /**
   * The head of the branch the pull request targets (`base.sha`): failed CI is compared with the
   * same check there (src/feedback/ci-checks.ts). Absent where the port does not know it.
   */
  baseSha?: string;
}
export interface Review {
  id: number;
  author: Author;
  state: string;
  body: string;
  submittedAt: string;
}
export interface LineComment {
  id: number;
  reviewId?: number;
  author: Author;
  path: string;
  line?: number;
  body: string;
  updatedAt: string;
}
export interface Comment {
  id: number;
  author: Author;
  body: string;
  updatedAt: string;
}
export interface CheckRun {
  id: number;
  name: string;
  status: string;
  conclusion: string | null;
  /** The app that posted it (`github-actions` for the repository's own workflows). */
  app?: string;
  /** The workflow run of an Actions job (from its `details_url`): failed jobs are rerun per run. */
  runId?: number;
  /** The commit it ran on (`head_sha`): asked by branch name, the branch's head. */
  headSha?: string;
}

/**
 * A user's role on the repository, as the collaborator-permission endpoint names it; `none` for
 * someone who is no collaborator.
 */
export type RepoRole = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

/** How a head compares with its base (`GET /compare/{base}...{head}`): commits each lacks. */
export interface Comparison {
  /** The base's commits the head does not have. */
  behindBy: number;
  /** The head's commits the base does not have. */
  aheadBy: number;
  /** `identical`, `ahead`, `behind` or `diverged`. */
  status: string;
}

/** A commit status (the Statuses API, which CI outside GitHub Actions often reports through). */
export interface CommitStatus {
  context: string;
  state: 'error' | 'failure' | 'pending' | 'success';
  description: string;
  targetUrl: string;
}

export interface FeedbackPort {
  /** The issues listing (state all, sorted by update), conditional on `etag`. */
  listChanged(q: { since?: string; etag?: string }): Promise<ListResult>;
  pull(n: number): Promise<PullState>;
  reviews(n: number): Promise<Review[]>;
  lineComments(n: number, since?: string): Promise<LineComment[]>;
  comments(n: number, since?: string): Promise<Comment[]>;
  checkRuns(sha: string): Promise<CheckRun[]>;
  /** The latest status of each context on a commit (the combined status). */
  statuses(sha: string): Promise<CommitStatus[]>;
  /** The failing job's log (needs `actions: read`); undefined when it cannot be read. */
  jobLog(jobId: number): Promise<string | undefined>;
  /**
   * Reruns the failed jobs of an Actions check once (needs `actions: write`): its workflow run's
   * failed jobs when the run is known, else the job alone. Throws GitHub's refusal (403 without the
   * permission). Absent where nothing can be rerun (a local school).
   */
  rerunFailed?(check: CheckRun): Promise<void>;
  /**
   * The user's role on the repository (GitHub's collaborator permission), asked once per user per
   * port (a port lives for one run). Absent where there is no such record (a local school).
   */
  role?(login: string): Promise<RepoRole>;
  /**
   * How `head` compares with `base` (commit ids or branch names): base drift (src/feedback/drift.ts).
   * Absent where there is no such answer (a local school).
   */
  compare?(base: string, head: string): Promise<Comparison>;
  /** Requests made so far through this port (the listing's own count included). */
  readonly requests: number;
}
