import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getResponse, http, HttpResponse, type HttpHandler } from 'msw';
import { FakeMergeMachinery, graphqlHandlers } from './github-fake-graphql.js';

/**
 * An in-memory GitHub repository answered by msw 2 handlers that behave like the REST API where
 * school-core depends on it: `link` pagination, ETag / 304 (a 304 does not count against the rate
 * limit), `since` / `labels` / `state` / `sort` / `direction` / `per_page` on the issues list (which
 * includes pull requests, as GitHub's does), labels, comments, refs, 401 for a bad token, 403 for a
 * missing permission, and injectable faults (secondary rate limit 403 / 429 with `retry-after`, any
 * 5xx) on any route. Every request is logged for assertions.
 *
 * Use it in-process through `fake.fetch` (inject into createGitHubClient: no global is patched), or
 * from a subprocess through `startGitHubServer(fake)` and GITHUB_API_URL.
 */

export interface FakeLabel {
  name: string;
  color: string;
}

export interface FakeComment {
  id: number;
  body: string;
  user: string;
  created_at: string;
  /** Moves on an edit (PATCH); `since` on the comments list filters by it. */
  updated_at?: string;
  /** GitHub's author_association of the comment's author (default OWNER for people, NONE for bots). */
  author_association?: string;
  user_type?: 'User' | 'Bot';
}

/** A pull request review (`GET /pulls/{n}/reviews`) and its line comments (`GET /pulls/{n}/comments`). */
export interface FakeReview {
  id: number;
  user: string;
  user_type?: 'User' | 'Bot';
  author_association: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED';
  body: string;
  submitted_at: string;
  commit_id: string;
}
export interface FakeReviewComment {
  id: number;
  pull_request_review_id: number;
  user: string;
  author_association: string;
  path: string;
  line: number;
  body: string;
  created_at: string;
  updated_at: string;
}
/** A commit status, as CI outside GitHub Actions reports one (the Statuses API). */
export interface FakeStatus {
  sha: string;
  context: string;
  state: 'error' | 'failure' | 'pending' | 'success';
  description?: string;
  target_url?: string;
}

export interface FakeCheckRun {
  id: number;
  name: string;
  head_sha: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: 'success' | 'failure' | 'cancelled' | 'timed_out' | 'neutral' | 'skipped' | null;
  /** The Actions job behind the run: its log is `GET /actions/jobs/{id}/logs`. */
  log?: string;
  app?: string;
  /** The workflow run the job belongs to (its `details_url`); default 1: one run holds every job. */
  run_id?: number;
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  labels: string[];
  /** Present on pull requests: the issues list returns them too. */
  pull_request?: { url: string };
  user: string;
  created_at: string;
  updated_at: string;
  comments: FakeComment[];
}

export interface FakeRequest {
  method: string;
  /** Path without the origin, e.g. `/repos/o/r/issues`. */
  path: string;
  query: Record<string, string>;
  status: number;
  ifNoneMatch?: string;
  body?: unknown;
}

export interface Fault {
  /** HTTP method to match; any when absent. */
  method?: string;
  /** Matches the path (string: substring; RegExp: test). Any when absent. */
  path?: string | RegExp;
  /** 500-599, or 'secondary-403' / 'secondary-429' (GitHub's secondary rate limit answers). */
  kind: number | 'secondary-403' | 'secondary-429';
  /** `retry-after` seconds sent with a rate-limit answer. */
  retryAfter?: number;
  /** How many matching requests fail; then the fault is spent. Default 1. */
  times?: number;
}

export type Permission = 'none' | 'read' | 'write';

export interface FakeOptions {
  owner?: string;
  repo?: string;
  /** Tokens the fake accepts, with their `issues` permission. Default: { 'test-token': 'write' }. */
  tokens?: Record<string, Permission>;
  /** Clock for created_at / updated_at; defaults to a deterministic clock advancing 1 s per change. */
  now?: () => Date;
  rateLimit?: number;
  /**
   * The commit a branch points at, for a pull request's `head.sha`: GitHub reads it from the
   * repository, so a test with a real origin answers from it. Default: the `headSha` set on the pull.
   */
  branchHead?: (branch: string) => string | undefined;
}

const SECONDARY =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.';

export class GitHubFake {
  readonly owner: string;
  readonly repo: string;
  readonly tokens: Map<string, Permission>;
  readonly issues = new Map<number, FakeIssue>();
  readonly labels = new Map<string, FakeLabel>();
  /** Pull requests opened through the API (delivery): head and base branch names. */
  readonly pulls: Array<{
    number: number;
    head: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
    state: 'open' | 'closed';
    merged?: boolean;
    headSha?: string;
    /** The base branch's head (`base.sha`), where no repository answers `branchHead`. */
    baseSha?: string;
  }> = [];
  readonly reviews = new Map<number, FakeReview[]>();
  /**
   * Each collaborator's role (GitHub's collaborator permission). A login not set here answers as
   * GitHub would for what the fake showed of it: OWNER admin, MEMBER and COLLABORATOR write, anyone
   * else no collaborator (404). `setRole` makes a member read-only, say.
   */
  readonly roles = new Map<string, 'admin' | 'maintain' | 'write' | 'triage' | 'read'>();
  /** Collaborator-permission requests, by login (a run asks once per user). */
  readonly roleRequests: string[] = [];
  readonly reviewComments = new Map<number, FakeReviewComment[]>();
  readonly checkRuns: FakeCheckRun[] = [];
  /** Commit statuses in the order they were set; the latest of a context on a commit counts. */
  readonly statuses: FakeStatus[] = [];
  readonly refs = new Map<string, string>();
  readonly requests: FakeRequest[] = [];
  readonly faults: Fault[] = [];
  rateLimit: { limit: number; remaining: number; reset: number };
  private nextNumber = 1;
  /** Issues and pull requests share one number sequence, as on GitHub. */
  takeNumber(): number {
    return this.nextNumber++;
  }
  private nextCommentId = 1000;
  private tick = Date.parse('2026-01-01T00:00:00Z');
  private latest = 0;
  private readonly clock: () => Date;
  private readonly branchHead: ((branch: string) => string | undefined) | undefined;

  constructor(options: FakeOptions = {}) {
    this.branchHead = options.branchHead;
    this.owner = options.owner ?? 'octo';
    this.repo = options.repo ?? 'school';
    this.tokens = new Map(Object.entries(options.tokens ?? { 'test-token': 'write' }));
    this.clock = options.now ?? (() => new Date((this.tick += 1000)));
    const limit = options.rateLimit ?? 5000;
    this.rateLimit = { limit, remaining: limit, reset: Math.floor(Date.now() / 1000) + 3600 };
  }

  /** Timestamp of a change: the clock moves forward (1 s per change by default). */
  now(): string {
    const t = this.clock();
    this.latest = Math.max(this.latest, t.getTime());
    return t.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /** GitHub's clock as its `date` header shows it: never before the latest change. */
  serverTime(): Date {
    return new Date(Math.max(this.latest, this.tick));
  }

  /** Lets time pass without a change (the default clock only). */
  advance(ms: number): void {
    this.tick += ms;
  }

  addIssue(fields: Partial<Omit<FakeIssue, 'number' | 'comments'>> = {}): FakeIssue {
    const at = this.now();
    const number = this.nextNumber++;
    const issue: FakeIssue = {
      number,
      title: `Issue ${number}`,
      body: '',
      state: 'open',
      labels: [],
      user: 'octocat',
      created_at: at,
      updated_at: at,
      comments: [],
      ...fields,
    };
    for (const l of issue.labels) this.ensureLabel(l);
    this.issues.set(number, issue);
    return issue;
  }

  addPullRequest(fields: Partial<Omit<FakeIssue, 'number' | 'comments'>> = {}): FakeIssue {
    const pr = this.addIssue({ title: 'A pull request', ...fields });
    pr.pull_request = { url: `https://api.github.com/repos/${this.owner}/${this.repo}/pulls/${pr.number}` };
    return pr;
  }

  /** Changes an issue the way a person would: `updated_at` moves forward. */
  updateIssue(number: number, patch: Partial<Omit<FakeIssue, 'number' | 'comments'>>): FakeIssue {
    const issue = this.mustIssue(number);
    Object.assign(issue, patch, { updated_at: this.now() });
    for (const l of issue.labels) this.ensureLabel(l);
    return issue;
  }

  closeIssue(number: number): FakeIssue {
    return this.updateIssue(number, { state: 'closed' });
  }

  addComment(number: number, body: string, user = 'octocat'): FakeComment {
    const issue = this.mustIssue(number);
    const comment: FakeComment = { id: this.nextId(), body, user, created_at: this.now() };
    issue.comments.push(comment);
    issue.updated_at = comment.created_at;
    return comment;
  }

  /** A pull request opened the way delivery opens one, also present in the issues list. */
  openPull(p: {
    head: string;
    base?: string;
    title?: string;
    body?: string;
    headSha?: string;
    baseSha?: string;
  }): number {
    const issue = this.addPullRequest({
      title: p.title ?? 'A pull request',
      body: p.body ?? '',
      user: 'github-actions[bot]',
    });
    this.pulls.push({
      number: issue.number,
      head: p.head,
      base: p.base ?? 'main',
      title: issue.title,
      body: p.body ?? '',
      draft: false,
      state: 'open',
      ...(p.headSha ? { headSha: p.headSha } : {}),
      ...(p.baseSha ? { baseSha: p.baseSha } : {}),
    });
    return issue.number;
  }

  /** A pull request's head commit as GitHub reports it: its branch's, when the test has a repository. */
  headOf(p: GitHubFake['pulls'][number]): string {
    return this.branchHead?.(p.head) ?? this.originHead(p.head) ?? p.headSha ?? '0'.repeat(40);
  }

  /** The branch's commit in `origin` when the test has one (GitHub reads the head from the repository). */
  private originHead(branch: string): string | undefined {
    if (!this.origin) return undefined;
    try {
      return this.originGit('rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`) || undefined;
    } catch {
      return undefined;
    }
  }

  mustPull(number: number): GitHubFake['pulls'][number] {
    const pr = this.pulls.find((p) => p.number === number);
    if (!pr) throw new FakeHttpError(404, 'Not Found');
    return pr;
  }

  /** A review as a person submits one: the pull request's `updated_at` moves (the issues list shows it). */
  addReview(
    pr: number,
    r: {
      user?: string;
      association?: string;
      state: FakeReview['state'];
      body?: string;
      comments?: Array<{ path: string; line: number; body: string }>;
      userType?: 'User' | 'Bot';
    },
  ): FakeReview {
    const at = this.now();
    const user = r.user ?? 'octocat';
    const association = r.association ?? 'OWNER';
    const review: FakeReview = {
      id: this.nextId(),
      user,
      ...(r.userType ? { user_type: r.userType } : {}),
      author_association: association,
      state: r.state,
      body: r.body ?? '',
      submitted_at: at,
      commit_id: this.headOf(this.mustPull(pr)),
    };
    this.reviews.set(pr, [...(this.reviews.get(pr) ?? []), review]);
    const lines = this.reviewComments.get(pr) ?? [];
    for (const c of r.comments ?? [])
      lines.push({
        id: this.nextId(),
        pull_request_review_id: review.id,
        user,
        author_association: association,
        path: c.path,
        line: c.line,
        body: c.body,
        created_at: at,
        updated_at: at,
      });
    this.reviewComments.set(pr, lines);
    this.mustIssue(pr).updated_at = at;
    return review;
  }

  setRole(login: string, role: 'admin' | 'maintain' | 'write' | 'triage' | 'read'): void {
    this.roles.set(login.toLowerCase(), role);
  }

  /** A login's role: as set, else what the associations the fake showed for it imply. */
  roleOf(login: string): 'admin' | 'maintain' | 'write' | 'triage' | 'read' | undefined {
    const set = this.roles.get(login.toLowerCase());
    if (set) return set;
    if (login.toLowerCase() === this.owner.toLowerCase()) return 'admin';
    const shown = new Set<string>();
    for (const list of this.reviews.values())
      for (const r of list) if (r.user.toLowerCase() === login.toLowerCase()) shown.add(r.author_association);
    for (const i of this.issues.values())
      for (const c of i.comments)
        if (c.user.toLowerCase() === login.toLowerCase()) shown.add(c.author_association ?? 'OWNER');
    if (shown.has('OWNER')) return 'admin';
    if (shown.has('MEMBER') || shown.has('COLLABORATOR')) return 'write';
    return undefined;
  }

  /** A comment by someone with the given association (the issues list's `updated_at` moves). */
  addCommentAs(number: number, body: string, user: string, association: string, userType?: 'User' | 'Bot') {
    const c = this.addComment(number, body, user);
    c.author_association = association;
    if (userType) c.user_type = userType;
    return c;
  }

  /** A maintainer merges (or closes unmerged) a pull request. */
  settlePull(number: number, how: 'merged' | 'closed'): void {
    const pr = this.mustPull(number);
    pr.state = 'closed';
    pr.merged = how === 'merged';
    this.updateIssue(number, { state: 'closed' });
  }

  addCheckRun(run: Omit<FakeCheckRun, 'id'>): FakeCheckRun {
    const r = { id: this.nextId(), ...run };
    this.checkRuns.push(r);
    return r;
  }

  setStatus(status: FakeStatus): void {
    this.statuses.push(status);
  }

  injectFault(fault: Fault): void {
    this.faults.push({ times: 1, ...fault });
  }

  /** Requests that reached the fake, optionally only those whose path contains `path`. */
  requestsTo(path?: string, method?: string): FakeRequest[] {
    return this.requests.filter(
      (r) => (!path || r.path.includes(path)) && (!method || r.method === method.toUpperCase()),
    );
  }

  nextId(): number {
    return this.nextCommentId++;
  }

  resetLog(): void {
    this.requests.length = 0;
  }

  // ---- Failed CI: reruns of Actions jobs and the base's checks (docs/delivery.md, "Failed CI") ----
  // `POST /actions/runs/{id}/rerun-failed-jobs` and `POST /actions/jobs/{id}/rerun` start a new
  // attempt: a new check run (a new id) of the same name on the same commit, which the check-runs
  // list shows in place of the failed one (GitHub's `filter=latest`). They need `actions: write`.
  /** Each token's `actions` permission; a token not listed has its issues permission. */
  readonly actionsPermission = new Map<string, Permission>();
  /**
   * How a rerun attempt ends: a conclusion, or `pending` (it stays in progress; the test completes
   * it). Default: as the failed attempt did — a real failure fails again.
   */
  rerunResult: (run: FakeCheckRun) => FakeCheckRun['conclusion'] | 'pending' = (run) => run.conclusion;
  /** Reruns asked and accepted, as the request named them. */
  readonly reruns: Array<{ runId?: number; jobId?: number }> = [];

  /** The newest check run of each name on a commit (what `filter=latest` lists). */
  latestCheckRuns(sha: string): FakeCheckRun[] {
    const latest = new Map<string, FakeCheckRun>();
    for (const r of this.checkRuns)
      if (r.head_sha === sha && (latest.get(r.name)?.id ?? -1) < r.id) latest.set(r.name, r);
    return [...latest.values()];
  }

  /** A new attempt of a failed check run, ended as `rerunResult` says. */
  rerunCheck(run: FakeCheckRun): FakeCheckRun {
    const result = this.rerunResult(run);
    const { id: _old, ...rest } = run;
    return this.addCheckRun({
      ...rest,
      status: result === 'pending' ? 'in_progress' : 'completed',
      conclusion: result === 'pending' ? null : result,
    });
  }

  /**
   * The commit a ref names, as the commits endpoints read `{ref}`: a SHA, or a branch's head (the
   * test's repository, else `refs`). Failed CI asks the base's checks by the branch's name.
   */
  resolveRef(ref: string): string {
    if (/^[0-9a-f]{40}$/.test(ref)) return ref;
    const branch = ref.replace(/^(refs\/)?heads\//, '');
    return this.branchHead?.(branch) ?? this.refs.get(`heads/${branch}`) ?? ref;
  }

  /** A pull request's base head as GitHub reports it (`base.sha`). */
  baseOf(p: GitHubFake['pulls'][number]): string {
    return this.branchHead?.(p.base) ?? p.baseSha ?? this.refs.get(`heads/${p.base}`) ?? '0'.repeat(40);
  }

  // ---- Base drift: `GET /compare/{base}...{head}` and moving a base branch (refresh crews) ----
  // GitHub answers a comparison from the repository; a test with a real origin (a bare repository)
  // sets `origin`, and the fake asks git there, as GitHub would: `behind_by` is the base's commits
  // the head lacks, `ahead_by` the head's the base lacks. `moveBranch` is someone pushing to the
  // base: a real commit on origin, after which GitHub computes each open pull request's
  // mergeability again (a conflict found by git's own merge).
  /** The bare repository GitHub's answers about commits are read from. */
  origin?: string;

  private originGit(...args: string[]): string {
    if (!this.origin) throw new FakeHttpError(404, 'Not Found');
    return execFileSync('git', args, {
      cwd: this.origin,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  }

  /** `GET /compare/{base}...{head}` as GitHub answers it, from `origin`. */
  compareJson(base: string, head: string): Record<string, unknown> {
    const sha = (ref: string) => {
      try {
        return this.originGit('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
      } catch {
        throw new FakeHttpError(404, 'Not Found');
      }
    };
    const b = sha(base);
    const h = sha(head);
    const behind = Number(this.originGit('rev-list', '--count', `${h}..${b}`));
    const ahead = Number(this.originGit('rev-list', '--count', `${b}..${h}`));
    const status =
      behind === 0 && ahead === 0
        ? 'identical'
        : behind === 0
          ? 'ahead'
          : ahead === 0
            ? 'behind'
            : 'diverged';
    return {
      status,
      ahead_by: ahead,
      behind_by: behind,
      total_commits: ahead,
      base_commit: { sha: b },
      merge_base_commit: { sha: this.originGit('merge-base', b, h) },
    };
  }

  /**
   * Someone pushes a commit to `branch` on origin writing `files`; every open pull request based on
   * it is computed again (`mergeable: null` at the next read, then whether git's merge conflicts).
   * Returns the new commit.
   */
  moveBranch(branch: string, files: Record<string, string>, message = 'Move the base'): string {
    const dir = mkdtempSync(join(tmpdir(), 'fake-origin-'));
    const run = (...args: string[]) =>
      execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    try {
      run('clone', '-q', '--branch', branch, this.origin ?? '', '.');
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      run('add', '-A');
      run('-c', 'user.name=Someone', '-c', 'user.email=someone@example.test', 'commit', '-q', '-m', message);
      run('push', '-q', 'origin', `HEAD:refs/heads/${branch}`);
      const sha = run('rev-parse', 'HEAD');
      for (const p of this.pulls) if (p.state === 'open' && p.base === branch) this.remeasure(p.number);
      return sha;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** GitHub computes a pull request's mergeability again, by git's merge of its head and base. */
  remeasure(pr: number): void {
    const p = this.mustPull(pr);
    let conflict = false;
    try {
      this.originGit('merge-tree', '--write-tree', `refs/heads/${p.base}`, this.headOf(p));
    } catch {
      conflict = true; // exit 1: the merge has conflicts
    }
    this.conflictPull(pr, conflict);
  }

  // ---- Merging: `PUT /pulls/{n}/merge`, `mergeable` while GitHub computes it, branch protection ----
  // GitHub computes a pull request's mergeability in the background: the first `GET /pulls/{n}`
  // after a push (or after it opens) answers `mergeable: null`, `mergeable_state: unknown`; the next
  // one the result. The merge endpoint refuses as GitHub does: 409 when `sha` is not the head, 405
  // when the pull request cannot be merged (a conflict, a draft, approvals branch protection asks
  // for), 422 when a required check is not green.
  /** Per pull request: whether it conflicts with its base, and whether GitHub is still computing. */
  readonly merging = new Map<number, { conflict: boolean; computing: boolean }>();
  /** Branch protection of every base: approving reviews and check names required to merge. */
  protection: { approvals: number; checks: string[] } = { approvals: 0, checks: [] };
  /** Merge requests answered 200 (pull request, the `sha` asked, the method). */
  readonly merges: Array<{ pr: number; sha?: string; method: string }> = [];

  private mergingOf(pr: number): { conflict: boolean; computing: boolean } {
    let m = this.merging.get(pr);
    if (!m) this.merging.set(pr, (m = { conflict: false, computing: true }));
    return m;
  }

  /**
   * Someone else pushes to a pull request's branch: its head moves (`sha`, for a test without a
   * repository behind `branchHead`; with one, push to it first), its `updated_at` moves and GitHub
   * computes its mergeability again.
   */
  pushToPull(pr: number, sha?: string): void {
    const p = this.mustPull(pr);
    if (sha) p.headSha = sha;
    this.mergingOf(pr).computing = true;
    this.mustIssue(pr).updated_at = this.now();
  }

  /** The base moved under the pull request so that it conflicts (or no longer does). */
  conflictPull(pr: number, conflict = true): void {
    const m = this.mergingOf(pr);
    m.conflict = conflict;
    m.computing = true;
  }

  /** Branch protection: `approvals` approving reviews and these checks green before a merge. */
  protect(p: { approvals?: number; checks?: string[] }): void {
    this.protection = { approvals: p.approvals ?? 0, checks: p.checks ?? [] };
  }

  /** The mergeability fields of `GET /pulls/{n}`: null once after a change, then computed. */
  mergeableJson(p: GitHubFake['pulls'][number]): Record<string, unknown> {
    if (p.state === 'closed') return { mergeable: null, mergeable_state: 'unknown' };
    const m = this.mergingOf(p.number);
    if (m.computing) {
      m.computing = false;
      return { mergeable: null, mergeable_state: 'unknown' };
    }
    if (m.conflict) return { mergeable: false, mergeable_state: 'dirty' };
    if (p.draft) return { mergeable: true, mergeable_state: 'draft' };
    return { mergeable: true, mergeable_state: this.mergeBlock(p) ? 'blocked' : 'clean' };
  }

  /** What branch protection still asks of a pull request, as GitHub's refusal says it. */
  mergeBlock(p: GitHubFake['pulls'][number]): { status: 405 | 422; message: string } | undefined {
    const approved = (this.reviews.get(p.number) ?? []).filter((r) => r.state === 'APPROVED').length;
    if (approved < this.protection.approvals)
      return {
        status: 405,
        message: `At least ${this.protection.approvals} approving review${this.protection.approvals > 1 ? 's are' : ' is'} required by reviewers with write access.`,
      };
    const head = this.headOf(p);
    for (const name of this.protection.checks) {
      const run = this.checkRuns.filter((r) => r.head_sha === head && r.name === name).at(-1);
      const status = this.statuses.filter((x) => x.sha === head && x.context === name).at(-1);
      const green =
        (run?.status === 'completed' && ['success', 'neutral', 'skipped'].includes(run.conclusion ?? '')) ||
        status?.state === 'success';
      if (!green)
        return {
          status: 422,
          message: `Required status check "${name}" is ${run || status ? 'not successful' : 'expected'}.`,
        };
    }
    return undefined;
  }

  /** GitHub's auto-merge and merge queue, and its GraphQL endpoint (./github-fake-graphql.ts). */
  readonly machinery: FakeMergeMachinery = new FakeMergeMachinery(this);

  get handlers(): HttpHandler[] {
    return [...graphqlHandlers(this, this.machinery), ...githubHandlers(this)];
  }

  /** A fetch answered by the handlers: inject it as `createGitHubClient({ fetch })`. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let request = input instanceof Request ? input : new Request(input, init);
    // Redirects are followed as fetch follows them: GET, and no credentials to another origin.
    for (let hops = 0; ; hops++) {
      const response = (await getResponse(this.handlers, request)) ?? notFound();
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || !location || request.redirect === 'manual' || hops >= 20)
        return response;
      const next = new URL(location, request.url);
      const headers = new Headers(request.headers);
      if (next.origin !== new URL(request.url).origin) headers.delete('authorization');
      request = new Request(next, { method: 'GET', headers });
    }
  };

  // ---- internals shared with the handlers ----

  mustIssue(number: number): FakeIssue {
    const issue = this.issues.get(number);
    if (!issue) throw new FakeHttpError(404, 'Not Found');
    return issue;
  }

  ensureLabel(name: string): FakeLabel {
    const key = name.toLowerCase();
    let label = this.labels.get(key);
    if (!label) {
      label = { name, color: 'ededed' };
      this.labels.set(key, label);
    }
    return label;
  }

  takeFault(method: string, path: string): Fault | undefined {
    const i = this.faults.findIndex(
      (f) =>
        (!f.method || f.method.toUpperCase() === method) &&
        (!f.path || (typeof f.path === 'string' ? path.includes(f.path) : f.path.test(path))),
    );
    if (i === -1) return undefined;
    const fault = this.faults[i]!;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) this.faults.splice(i, 1);
    return fault;
  }

  issueJson(issue: FakeIssue, origin: string): Record<string, unknown> {
    const api = `${origin}/repos/${this.owner}/${this.repo}`;
    return {
      id: 100_000 + issue.number,
      node_id: `I_${issue.number}`,
      url: `${api}/issues/${issue.number}`,
      html_url: `https://github.com/${this.owner}/${this.repo}/${issue.pull_request ? 'pull' : 'issues'}/${issue.number}`,
      number: issue.number,
      title: issue.title,
      body: issue.body,
      state: issue.state,
      locked: false,
      user: { login: issue.user, id: 1, type: 'User' },
      labels: issue.labels.map((l) => ({ name: this.ensureLabel(l).name, color: this.ensureLabel(l).color })),
      comments: issue.comments.length,
      created_at: issue.created_at,
      updated_at: issue.updated_at,
      closed_at: issue.state === 'closed' ? issue.updated_at : null,
      author_association: 'OWNER',
      ...(issue.pull_request ? { pull_request: issue.pull_request } : {}),
    };
  }
}

export class FakeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'FakeHttpError';
  }
}

function notFound(): Response {
  return HttpResponse.json(
    { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' },
    { status: 404 },
  );
}

export function etagOf(body: string): string {
  return `W/"${createHash('sha256').update(body).digest('hex')}"`;
}

/** Serves the fake on a loopback port, so a subprocess can reach it through GITHUB_API_URL. */
export async function startGitHubServer(fake: GitHubFake): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    void bridge(fake, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}

async function bridge(fake: GitHubFake, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    }
    const method = req.method ?? 'GET';
    const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' || chunks.length === 0 ? undefined : Buffer.concat(chunks),
    });
    const response = (await getResponse(fake.handlers, request)) ?? notFound();
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => (out[k] = v));
    res.writeHead(response.status, out);
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (e) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: `fake server error: ${(e as Error).message}` }));
  }
}

// ---------------------------------------------------------------------------------------------
// Handlers

type Need = 'read' | 'write' | 'public';
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
type Resolver = (ctx: {
  request: Request;
  params: Record<string, string>;
  url: URL;
  origin: string;
}) => Promise<Response> | Response;

const RANK: Record<Permission, number> = { none: 0, read: 1, write: 2 };

function apiError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return HttpResponse.json(
    { message, documentation_url: 'https://docs.github.com/rest', status: String(status) },
    { status, headers },
  );
}

/** The msw handlers of a fake. Any origin matches, so GITHUB_API_URL may point anywhere. */
export function githubHandlers(fake: GitHubFake): HttpHandler[] {
  const route = (
    method: 'get' | 'post' | 'patch' | 'put' | 'delete',
    path: string,
    need: Need,
    fn: Resolver,
  ) =>
    http[method](`*${path}`, async ({ request, params }) => {
      const url = new URL(request.url);
      const entry: FakeRequest = {
        method: request.method.toUpperCase(),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        status: 0,
        ifNoneMatch: request.headers.get('if-none-match') ?? undefined,
      };
      fake.requests.push(entry);
      const response = await answer(fake, request, url, params as Record<string, string>, need, fn, entry);
      entry.status = response.status;
      return response;
    });

  return [
    route('get', '/rate_limit', 'public', () =>
      HttpResponse.json({ resources: { core: { ...fake.rateLimit, used: 0 } }, rate: fake.rateLimit }),
    ),
    route('get', '/repos/:owner/:repo', 'read', () =>
      HttpResponse.json({
        full_name: `${fake.owner}/${fake.repo}`,
        name: fake.repo,
        owner: { login: fake.owner },
        default_branch: 'main',
        private: false,
      }),
    ),
    route('get', '/repos/:owner/:repo/issues', 'read', ({ request, url, origin }) =>
      listIssues(fake, request, url, origin),
    ),
    route('get', '/repos/:owner/:repo/issues/:number', 'read', ({ params, origin }) =>
      HttpResponse.json(fake.issueJson(fake.mustIssue(Number(params.number)), origin)),
    ),
    route('patch', '/repos/:owner/:repo/issues/:number', 'write', async ({ request, params, origin }) => {
      const body = (await request.json()) as Partial<Pick<FakeIssue, 'title' | 'body' | 'state' | 'labels'>>;
      const patch: Partial<FakeIssue> = {};
      if (body.title !== undefined) patch.title = body.title;
      if (body.body !== undefined) patch.body = body.body;
      if (body.state !== undefined) patch.state = body.state;
      if (body.labels !== undefined)
        patch.labels = body.labels.map((l) =>
          typeof l === 'string' ? l : String((l as { name: string }).name),
        );
      return HttpResponse.json(fake.issueJson(fake.updateIssue(Number(params.number), patch), origin));
    }),
    route('get', '/repos/:owner/:repo/labels', 'read', () => HttpResponse.json([...fake.labels.values()])),
    route('post', '/repos/:owner/:repo/labels', 'write', async ({ request }) => {
      const body = (await request.json()) as Partial<FakeLabel>;
      if (!body.name) return apiError(422, 'Validation Failed: name is missing');
      if (fake.labels.has(body.name.toLowerCase())) return apiError(422, 'Validation Failed: already_exists');
      const label = fake.ensureLabel(body.name);
      if (body.color) label.color = body.color;
      return HttpResponse.json(label, { status: 201 });
    }),
    route('post', '/repos/:owner/:repo/issues/:number/labels', 'write', async ({ request, params }) => {
      const raw = (await request.json()) as { labels?: unknown[] } | unknown[];
      const wanted = (Array.isArray(raw) ? raw : (raw.labels ?? [])).map((l) =>
        typeof l === 'string' ? l : String((l as { name: string }).name),
      );
      const issue = fake.mustIssue(Number(params.number));
      const have = new Set(issue.labels.map((l) => l.toLowerCase()));
      const labels = [...issue.labels, ...wanted.filter((l) => !have.has(l.toLowerCase()))];
      fake.updateIssue(issue.number, { labels });
      return HttpResponse.json(labels.map((l) => fake.ensureLabel(l)));
    }),
    route('delete', '/repos/:owner/:repo/issues/:number/labels/:name', 'write', ({ params }) => {
      const issue = fake.mustIssue(Number(params.number));
      const name = decodeURIComponent(params.name ?? '').toLowerCase();
      if (!issue.labels.some((l) => l.toLowerCase() === name)) return apiError(404, 'Label does not exist');
      fake.updateIssue(issue.number, { labels: issue.labels.filter((l) => l.toLowerCase() !== name) });
      return HttpResponse.json(issue.labels.map((l) => fake.ensureLabel(l)));
    }),
    // As GitHub: `permission` (admin, write, read, none) and `role_name` (admin, maintain, write,
    // triage, read); 404 for someone who is no collaborator.
    route('get', '/repos/:owner/:repo/collaborators/:user/permission', 'read', ({ params }) => {
      const login = String(params.user);
      fake.roleRequests.push(login);
      const role = fake.roleOf(login);
      if (!role) return apiError(404, `${login} is not a user`);
      const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : role;
      return HttpResponse.json({ permission, role_name: role, user: { login, type: 'User' } });
    }),
    route('get', '/repos/:owner/:repo/issues/:number/comments', 'read', ({ request, url, params }) => {
      const issue = fake.mustIssue(Number(params.number));
      const since = sinceOf(url);
      if (since === 'invalid') return apiError(422, 'Validation Failed: since');
      const list = issue.comments.filter(
        (c) => since === undefined || Date.parse(c.updated_at ?? c.created_at) >= since,
      );
      return paginated(request, url, list.map(commentJson));
    }),
    // Edits a comment in place, as GitHub does: 404 for an id that is not a comment of this repository.
    route('patch', '/repos/:owner/:repo/issues/comments/:id', 'write', async ({ request, params }) => {
      const body = (await request.json()) as { body?: unknown };
      if (typeof body.body !== 'string' || body.body === '')
        return apiError(422, 'Validation Failed: body is missing');
      const id = Number(params.id);
      for (const issue of fake.issues.values()) {
        const c = issue.comments.find((x) => x.id === id);
        if (!c) continue;
        c.body = body.body;
        c.updated_at = fake.now();
        issue.updated_at = c.updated_at;
        return HttpResponse.json(commentJson(c));
      }
      return apiError(404, 'Not Found');
    }),
    route('get', '/repos/:owner/:repo/pulls/:number', 'read', ({ params }) => {
      const pr = fake.mustPull(Number(params.number));
      // Only the single pull request carries its mergeability, as on GitHub (the list does not).
      return HttpResponse.json({
        ...pullJson(fake, pr),
        updated_at: fake.mustIssue(pr.number).updated_at,
        ...fake.mergeableJson(pr),
      });
    }),
    // Merging (the block of GitHubFake above): 409 a stale `sha`, 405 not mergeable, 422 checks.
    route('put', '/repos/:owner/:repo/pulls/:number/merge', 'write', async ({ request, params }) => {
      const pr = fake.mustPull(Number(params.number));
      const b = ((await request.json().catch(() => ({}))) ?? {}) as { sha?: unknown; merge_method?: unknown };
      const method = b.merge_method ?? 'merge';
      if (method !== 'merge' && method !== 'squash' && method !== 'rebase')
        return apiError(422, 'Validation Failed: merge_method');
      if (pr.state === 'closed') return apiError(405, 'Pull Request is not mergeable');
      if (b.sha !== undefined && b.sha !== fake.headOf(pr))
        return apiError(409, 'Head branch was modified. Review and try the merge again.');
      const m = fake.merging.get(pr.number);
      if (pr.draft || m?.conflict) return apiError(405, 'Pull Request is not mergeable');
      const block = fake.mergeBlock(pr);
      if (block) return apiError(block.status, block.message);
      const sha = createHash('sha1')
        .update(`merge:${pr.number}:${fake.headOf(pr)}`)
        .digest('hex');
      fake.merges.push({ pr: pr.number, ...(typeof b.sha === 'string' ? { sha: b.sha } : {}), method });
      pr.state = 'closed';
      pr.merged = true;
      fake.updateIssue(pr.number, { state: 'closed' });
      return HttpResponse.json({ sha, merged: true, message: 'Pull Request successfully merged' });
    }),
    route('get', '/repos/:owner/:repo/pulls/:number/reviews', 'read', ({ request, url, params }) => {
      fake.mustPull(Number(params.number));
      return paginated(request, url, (fake.reviews.get(Number(params.number)) ?? []).map(reviewJson));
    }),
    route('get', '/repos/:owner/:repo/pulls/:number/comments', 'read', ({ request, url, params }) => {
      fake.mustPull(Number(params.number));
      const since = sinceOf(url);
      if (since === 'invalid') return apiError(422, 'Validation Failed: since');
      const list = (fake.reviewComments.get(Number(params.number)) ?? []).filter(
        (c) => since === undefined || Date.parse(c.updated_at) >= since,
      );
      return paginated(
        request,
        url,
        list.map((c) => ({ ...c, user: { login: c.user, type: 'User' } })),
      );
    }),
    // As GitHub: `filter=latest` (the default) lists the newest run of each name, so a rerun's
    // attempt replaces the failed one; `filter=all` lists every attempt.
    route('get', '/repos/:owner/:repo/commits/:ref/check-runs', 'read', ({ url, params }) => {
      const sha = fake.resolveRef(decodeURIComponent(String(params.ref)));
      const runs =
        url.searchParams.get('filter') === 'all'
          ? fake.checkRuns.filter((r) => r.head_sha === sha)
          : fake.latestCheckRuns(sha);
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30) || 30);
      return HttpResponse.json({
        total_count: runs.length,
        check_runs: runs.slice(0, perPage).map((r) => ({
          id: r.id,
          name: r.name,
          head_sha: r.head_sha,
          status: r.status,
          conclusion: r.conclusion,
          details_url: `https://github.com/${fake.owner}/${fake.repo}/actions/runs/${r.run_id ?? 1}/job/${r.id}`,
          app: { slug: r.app ?? 'github-actions' },
        })),
      });
    }),
    // As GitHub's combined status: the latest status of each context, state `pending` when there
    // are none at all (so a reader must look at the statuses, not only the combined state).
    route('get', '/repos/:owner/:repo/commits/:ref/status', 'read', ({ params }) => {
      const sha = fake.resolveRef(decodeURIComponent(String(params.ref)));
      const latest = new Map<string, FakeStatus>();
      for (const st of fake.statuses) if (st.sha === sha) latest.set(st.context, st);
      const list = [...latest.values()];
      const state = list.some((x) => x.state === 'failure' || x.state === 'error')
        ? 'failure'
        : list.length > 0 && list.every((x) => x.state === 'success')
          ? 'success'
          : 'pending';
      return HttpResponse.json({
        state,
        sha,
        total_count: list.length,
        statuses: list.map((x, i) => ({
          id: i + 1,
          context: x.context,
          state: x.state,
          description: x.description ?? null,
          target_url: x.target_url ?? null,
        })),
      });
    }),
    // As GitHub: a 302 to a short-lived download URL of the plain-text log (no token needed there).
    route('get', '/repos/:owner/:repo/actions/jobs/:id/logs', 'read', ({ params, origin }) => {
      const run = fake.checkRuns.find((r) => r.id === Number(params.id));
      if (!run?.log) return apiError(404, 'Not Found');
      return new HttpResponse(null, {
        status: 302,
        headers: { location: `${origin}/_blobs/job-logs/${run.id}?sig=fake&se=${Date.now() + 60_000}` },
      });
    }),
    route('get', '/_blobs/job-logs/:id', 'public', ({ params }) => {
      const run = fake.checkRuns.find((r) => r.id === Number(params.id));
      if (!run?.log) return new HttpResponse('BlobNotFound', { status: 404 });
      return new HttpResponse(run.log, {
        status: 200,
        headers: { 'content-type': 'application/octet-stream' },
      });
    }),
    // ---- Failed CI: reruns (see the class's block). 403 without `actions: write`, as GitHub. ----
    route('post', '/repos/:owner/:repo/actions/runs/:id/rerun-failed-jobs', 'read', ({ request, params }) => {
      if (!canRerun(fake, request)) return apiError(403, 'Resource not accessible by integration');
      const runId = Number(params.id);
      const jobs = fake.checkRuns.filter(
        (r) => (r.run_id ?? 1) === runId && (r.app ?? 'github-actions') === 'github-actions',
      );
      if (jobs.length === 0) return apiError(404, 'Not Found');
      const failed = [...new Set(jobs.map((r) => r.head_sha))]
        .flatMap((sha) => fake.latestCheckRuns(sha))
        .filter((r) => (r.run_id ?? 1) === runId && RERUNNABLE.has(r.conclusion ?? ''));
      fake.reruns.push({ runId });
      for (const r of failed) fake.rerunCheck(r);
      return HttpResponse.json({}, { status: 201 });
    }),
    route('post', '/repos/:owner/:repo/actions/jobs/:id/rerun', 'read', ({ request, params }) => {
      if (!canRerun(fake, request)) return apiError(403, 'Resource not accessible by integration');
      const job = fake.checkRuns.find(
        (r) => r.id === Number(params.id) && (r.app ?? 'github-actions') === 'github-actions',
      );
      if (!job) return apiError(404, 'Not Found');
      fake.reruns.push({ jobId: job.id });
      fake.rerunCheck(job);
      return HttpResponse.json({}, { status: 201 });
    }),
    route('post', '/repos/:owner/:repo/issues/:number/comments', 'write', async ({ request, params }) => {
      const body = (await request.json()) as { body?: unknown };
      if (typeof body.body !== 'string' || body.body === '')
        return apiError(422, 'Validation Failed: body is missing');
      const issue = fake.mustIssue(Number(params.number));
      const comment: FakeComment = {
        id: fake.nextId(),
        body: body.body,
        user: 'github-actions[bot]',
        created_at: fake.now(),
      };
      issue.comments.push(comment);
      issue.updated_at = comment.created_at;
      return HttpResponse.json(commentJson(comment), { status: 201 });
    }),
    // Pulls as GitHub lists and validates them: `head` filters by `owner:branch`; a second open pull
    // request for the same head and base is a 422 "A pull request already exists".
    route('get', '/repos/:owner/:repo/pulls', 'read', ({ url }) => {
      const head = url.searchParams.get('head');
      const state = url.searchParams.get('state') ?? 'open';
      const list = fake.pulls.filter(
        (p) => (!head || `${fake.owner}:${p.head}` === head) && (state === 'all' || p.state === state),
      );
      return HttpResponse.json(list.map((p) => pullJson(fake, p)));
    }),
    route('post', '/repos/:owner/:repo/pulls', 'write', async ({ request }) => {
      const b = (await request.json()) as {
        head?: string;
        base?: string;
        title?: string;
        body?: string;
        draft?: boolean;
      };
      if (!b.head || !b.base || !b.title)
        return apiError(422, 'Validation Failed: head, base and title are required');
      if (fake.pulls.some((p) => p.state === 'open' && p.head === b.head && p.base === b.base))
        return apiError(422, `Validation Failed: A pull request already exists for ${fake.owner}:${b.head}.`);
      // A pull request is an issue too: it shows in the issues list, as on GitHub.
      const issue = fake.addPullRequest({ title: b.title, body: b.body ?? '', user: 'github-actions[bot]' });
      const pr = {
        number: issue.number,
        head: b.head,
        base: b.base,
        title: b.title,
        body: b.body ?? '',
        draft: b.draft ?? false,
        state: 'open' as const,
      };
      fake.pulls.push(pr);
      return HttpResponse.json(pullJson(fake, pr), { status: 201 });
    }),
    // Edits a pull request's title, body or state, as GitHub does; the issue it is shows the same.
    route('patch', '/repos/:owner/:repo/pulls/:number', 'write', async ({ request, params }) => {
      const pr = fake.mustPull(Number(params.number));
      const b = (await request.json()) as { title?: unknown; body?: unknown; state?: unknown };
      if (b.title !== undefined && (typeof b.title !== 'string' || b.title === ''))
        return apiError(422, 'Validation Failed: title');
      if (b.body !== undefined && typeof b.body !== 'string') return apiError(422, 'Validation Failed: body');
      if (b.state !== undefined && b.state !== 'open' && b.state !== 'closed')
        return apiError(422, 'Validation Failed: state');
      if (typeof b.title === 'string') pr.title = b.title;
      if (typeof b.body === 'string') pr.body = b.body;
      if (b.state === 'open' || b.state === 'closed') pr.state = b.state;
      fake.updateIssue(pr.number, {
        title: pr.title,
        body: pr.body,
        state: pr.state,
      });
      return HttpResponse.json(pullJson(fake, pr));
    }),
    // Octokit sends `heads/x` in one path segment or percent-encoded: read the ref from the URL.
    route('get', '/repos/:owner/:repo/git/ref/*', 'read', ({ url }) => {
      const ref = refFrom(url, '/git/ref/');
      const sha = fake.refs.get(ref);
      return sha ? HttpResponse.json(refJson(ref, sha)) : apiError(404, 'Not Found');
    }),
    route('post', '/repos/:owner/:repo/git/refs', 'write', async ({ request }) => {
      const body = (await request.json()) as { ref?: string; sha?: string };
      const ref = (body.ref ?? '').replace(/^refs\//, '');
      if (!ref || !body.sha) return apiError(422, 'Validation Failed: ref and sha are required');
      if (fake.refs.has(ref)) return apiError(422, 'Reference already exists');
      fake.refs.set(ref, body.sha);
      return HttpResponse.json(refJson(ref, body.sha), { status: 201 });
    }),
    route('patch', '/repos/:owner/:repo/git/refs/*', 'write', async ({ request, url }) => {
      const body = (await request.json()) as { sha?: string };
      const ref = refFrom(url, '/git/refs/');
      if (!fake.refs.has(ref)) return apiError(422, 'Reference does not exist');
      if (!body.sha) return apiError(422, 'Validation Failed: sha is required');
      fake.refs.set(ref, body.sha);
      return HttpResponse.json(refJson(ref, body.sha));
    }),
    // Base drift (the block of GitHubFake above): a comparison answered from origin.
    route('get', '/repos/:owner/:repo/compare/:basehead', 'read', ({ params }) => {
      const m = /^(.+?)\.\.\.(.+)$/.exec(decodeURIComponent(params.basehead ?? ''));
      if (!m) return apiError(404, 'Not Found');
      return HttpResponse.json(fake.compareJson(m[1]!, m[2]!));
    }),
  ];
}

/** Conclusions whose jobs `rerun-failed-jobs` reruns. */
const RERUNNABLE = new Set(['failure', 'timed_out', 'cancelled']);

/** Whether the request's token may rerun jobs (`actions: write`). */
function canRerun(fake: GitHubFake, request: Request): boolean {
  const token = (request.headers.get('authorization') ?? '').replace(/^(token|bearer)\s+/i, '');
  const permission = fake.actionsPermission.get(token) ?? fake.tokens.get(token) ?? 'none';
  return permission === 'write';
}

function pullJson(fake: GitHubFake, p: GitHubFake['pulls'][number]) {
  return {
    number: p.number,
    node_id: `PR_${p.number}`,
    state: p.state,
    draft: p.draft,
    title: p.title,
    body: p.body,
    html_url: `https://github.com/${fake.owner}/${fake.repo}/pull/${p.number}`,
    head: { ref: p.head, label: `${fake.owner}:${p.head}`, sha: fake.headOf(p) },
    base: { ref: p.base, sha: fake.baseOf(p) },
    merged: p.merged ?? false,
    merged_at: p.merged ? new Date(0).toISOString() : null,
  };
}

async function answer(
  fake: GitHubFake,
  request: Request,
  url: URL,
  params: Record<string, string>,
  need: Need,
  fn: Resolver,
  entry: FakeRequest,
): Promise<Response> {
  const fault = fake.takeFault(entry.method, entry.path);
  if (fault) return faultResponse(fake, fault);
  const auth = request.headers.get('authorization') ?? '';
  const token = auth.replace(/^(token|bearer)\s+/i, '');
  const permission = token ? fake.tokens.get(token) : undefined;
  if (need !== 'public' && permission === undefined) return apiError(401, 'Bad credentials');
  if (params.owner !== undefined && (params.owner !== fake.owner || params.repo !== fake.repo)) {
    return apiError(404, 'Not Found');
  }
  if (need !== 'public' && RANK[permission!] < RANK[need]) {
    return withRate(fake, apiError(403, 'Resource not accessible by integration'), true);
  }
  if (need !== 'public' && fake.rateLimit.remaining <= 0) {
    return withRate(fake, apiError(403, 'API rate limit exceeded for installation.'), false);
  }
  if (entry.method !== 'GET') {
    try {
      entry.body = await request.clone().json();
    } catch {
      /* not JSON */
    }
  }
  let response: Response;
  try {
    response = await fn({ request, params, url, origin: url.origin });
  } catch (e) {
    if (e instanceof FakeHttpError) response = apiError(e.status, e.message);
    else throw e;
  }
  // A 304 is free (GitHub: conditional requests answered 304 do not count against the limit).
  return withRate(fake, response, need !== 'public' && response.status !== 304);
}

function withRate(fake: GitHubFake, response: Response, counts: boolean): Response {
  if (counts) fake.rateLimit.remaining = Math.max(0, fake.rateLimit.remaining - 1);
  const { limit, remaining, reset } = fake.rateLimit;
  response.headers.set('x-ratelimit-limit', String(limit));
  response.headers.set('x-ratelimit-remaining', String(remaining));
  response.headers.set('x-ratelimit-reset', String(reset));
  response.headers.set('x-ratelimit-resource', 'core');
  response.headers.set('date', fake.serverTime().toUTCString());
  return response;
}

function faultResponse(fake: GitHubFake, fault: Fault): Response {
  if (fault.kind === 'secondary-403' || fault.kind === 'secondary-429') {
    const status = fault.kind === 'secondary-403' ? 403 : 429;
    return withRate(
      fake,
      apiError(status, SECONDARY, { 'retry-after': String(fault.retryAfter ?? 60) }),
      false,
    );
  }
  return apiError(fault.kind, fault.kind === 502 ? 'Server Error' : 'Internal Server Error');
}

function listIssues(fake: GitHubFake, request: Request, url: URL, origin: string): Response {
  const q = url.searchParams;
  const state = q.get('state') ?? 'open';
  if (!['open', 'closed', 'all'].includes(state)) return apiError(422, `Validation Failed: state "${state}"`);
  const labels = (q.get('labels') ?? '')
    .split(',')
    .map((l) => l.trim().toLowerCase())
    .filter(Boolean);
  const sinceRaw = q.get('since');
  const since = sinceRaw === null ? undefined : Date.parse(sinceRaw);
  if (since !== undefined && Number.isNaN(since))
    return apiError(422, `Validation Failed: since "${sinceRaw}"`);
  const sort = q.get('sort') ?? 'created';
  const direction = q.get('direction') ?? 'desc';
  const items = [...fake.issues.values()].filter(
    (i) =>
      (state === 'all' || i.state === state) &&
      labels.every((l) => i.labels.some((have) => have.toLowerCase() === l)) &&
      (since === undefined || Date.parse(i.updated_at) >= since),
  );
  const key = (i: FakeIssue) =>
    sort === 'updated'
      ? Date.parse(i.updated_at)
      : sort === 'comments'
        ? i.comments.length
        : Date.parse(i.created_at);
  items.sort((a, b) => (key(a) - key(b) || a.number - b.number) * (direction === 'asc' ? 1 : -1));
  return paginated(
    request,
    url,
    items.map((i) => fake.issueJson(i, origin)),
  );
}

/** One page of `all`, with GitHub's `link` header and a weak ETag over the body (304 on a match). */
function paginated(request: Request, url: URL, all: unknown[]): Response {
  const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30) || 30));
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(all.length / perPage));
  const body = JSON.stringify(all.slice((page - 1) * perPage, page * perPage));
  const etag = etagOf(body);
  const headers: Record<string, string> = { etag, vary: 'Accept, Authorization, Cookie' };
  const link = linkHeader(url, page, last);
  if (link) headers.link = link;
  const inm = request.headers.get('if-none-match');
  if (inm && inm.split(',').some((t) => t.trim() === etag)) {
    return new HttpResponse(null, { status: 304, headers });
  }
  return new HttpResponse(body, {
    status: 200,
    headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
  });
}

function linkHeader(url: URL, page: number, last: number): string | undefined {
  const at = (p: number) => {
    const u = new URL(url);
    u.searchParams.set('page', String(p));
    return u.toString();
  };
  const parts: string[] = [];
  if (page > 1) parts.push(`<${at(page - 1)}>; rel="prev"`);
  if (page < last) parts.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
  if (page > 1) parts.push(`<${at(1)}>; rel="first"`);
  return parts.length ? parts.join(', ') : undefined;
}

function commentJson(c: FakeComment): Record<string, unknown> {
  const bot = c.user_type === 'Bot' || c.user.endsWith('[bot]');
  return {
    id: c.id,
    body: c.body,
    user: { login: c.user, type: bot ? 'Bot' : 'User' },
    author_association: c.author_association ?? (bot ? 'NONE' : 'OWNER'),
    created_at: c.created_at,
    updated_at: c.updated_at ?? c.created_at,
  };
}

function reviewJson(r: FakeReview): Record<string, unknown> {
  return {
    id: r.id,
    user: { login: r.user, type: r.user_type ?? 'User' },
    author_association: r.author_association,
    state: r.state,
    body: r.body,
    submitted_at: r.submitted_at,
    commit_id: r.commit_id,
  };
}

function sinceOf(url: URL): number | undefined | 'invalid' {
  const raw = url.searchParams.get('since');
  if (raw === null) return undefined;
  const t = Date.parse(raw);
  return Number.isNaN(t) ? 'invalid' : t;
}

function refFrom(url: URL, marker: string): string {
  const path = url.pathname;
  return decodeURIComponent(path.slice(path.indexOf(marker) + marker.length));
}

function refJson(ref: string, sha: string): Record<string, unknown> {
  return { ref: `refs/${ref}`, object: { sha, type: 'commit' } };
}
