import type { GitHubClient } from '../github/client.js';
import { listIssues, nextLink, parseRepo, type ListResult } from '../curriculum/github-source.js';

/**
 * What the feedback scan reads on GitHub (item 7): the conditional issues listing — pull requests
 * are in it, and their `updated_at` moves when a review or a comment arrives — and, only for a
 * delivered pull request that changed, its state, reviews, line comments, comments and check runs.
 * Every answer is reduced to the few fields the scan reads; `requests` counts what was asked.
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
}

export interface FeedbackPort {
  /** The issues listing (state all, sorted by update), conditional on `etag`. */
  listChanged(q: { since?: string; etag?: string }): Promise<ListResult>;
  pull(n: number): Promise<PullState>;
  reviews(n: number): Promise<Review[]>;
  lineComments(n: number, since?: string): Promise<LineComment[]>;
  comments(n: number, since?: string): Promise<Comment[]>;
  checkRuns(sha: string): Promise<CheckRun[]>;
  /** The failing job's log (needs `actions: read`); undefined when it cannot be read. */
  jobLog(jobId: number): Promise<string | undefined>;
  /** Requests made so far through this port (the listing's own count included). */
  readonly requests: number;
}

type Raw = Record<string, unknown>;

function author(raw: unknown, association: unknown): Author {
  const u = (raw ?? {}) as Raw;
  const login = typeof u.login === 'string' ? u.login : '';
  return {
    login,
    bot: u.type === 'Bot' || login.endsWith('[bot]'),
    association: typeof association === 'string' ? association : 'NONE',
  };
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

export function octokitFeedback(client: GitHubClient, repository: string): FeedbackPort {
  const repo = parseRepo(repository);
  const { owner, repo: name } = repo;
  let requests = 0;
  /** Every page of a list, following `link` (each page one request). */
  async function all(route: string, params: Record<string, unknown>): Promise<Raw[]> {
    const out: Raw[] = [];
    let url: string | undefined;
    for (;;) {
      requests++;
      const r = url
        ? await client.request({ method: 'GET', url })
        : await client.request(route, { owner, repo: name, per_page: 100, ...params });
      if (Array.isArray(r.data)) out.push(...(r.data as Raw[]));
      url = nextLink(r.headers.link);
      if (!url) return out;
    }
  }
  return {
    get requests() {
      return requests;
    },
    async listChanged(q) {
      const r = await listIssues(client, repo, {
        state: 'all',
        ...(q.since ? { since: q.since } : {}),
        ...(q.etag ? { etag: q.etag } : {}),
      });
      requests += r.requests;
      return r;
    },
    async pull(n) {
      requests++;
      const r = await client.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', {
        owner,
        repo: name,
        pull_number: n,
      });
      const d = r.data as unknown as Raw;
      const head = (d.head ?? {}) as Raw;
      return {
        number: n,
        state: d.state === 'closed' ? 'closed' : 'open',
        merged: d.merged === true || (typeof d.merged_at === 'string' && d.merged_at !== ''),
        headSha: str(head.sha),
        headRef: str(head.ref),
      };
    },
    async reviews(n) {
      const list = await all('GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', { pull_number: n });
      return list.map((r) => ({
        id: Number(r.id),
        author: author(r.user, r.author_association),
        state: str(r.state),
        body: str(r.body),
        submittedAt: str(r.submitted_at),
      }));
    },
    async lineComments(n, since) {
      const list = await all('GET /repos/{owner}/{repo}/pulls/{pull_number}/comments', {
        pull_number: n,
        ...(since ? { since } : {}),
      });
      return list.map((c) => ({
        id: Number(c.id),
        ...(typeof c.pull_request_review_id === 'number' ? { reviewId: c.pull_request_review_id } : {}),
        author: author(c.user, c.author_association),
        path: str(c.path),
        ...(typeof c.line === 'number' ? { line: c.line } : {}),
        body: str(c.body),
        updatedAt: str(c.updated_at),
      }));
    },
    async comments(n, since) {
      const list = await all('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        issue_number: n,
        ...(since ? { since } : {}),
      });
      return list.map((c) => ({
        id: Number(c.id),
        author: author(c.user, c.author_association),
        body: str(c.body),
        updatedAt: str(c.updated_at),
      }));
    },
    async checkRuns(sha) {
      requests++;
      const r = await client.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', {
        owner,
        repo: name,
        ref: sha,
        per_page: 100,
      });
      const runs = ((r.data as unknown as Raw).check_runs ?? []) as Raw[];
      return runs.map((c) => ({
        id: Number(c.id),
        name: str(c.name),
        status: str(c.status),
        conclusion: typeof c.conclusion === 'string' ? c.conclusion : null,
      }));
    },
    async jobLog(jobId) {
      requests++;
      try {
        const r = await client.request('GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs', {
          owner,
          repo: name,
          job_id: jobId,
        });
        const d: unknown = r.data;
        return typeof d === 'string'
          ? d
          : d instanceof ArrayBuffer
            ? Buffer.from(d).toString('utf8')
            : undefined;
      } catch {
        return undefined; // no actions: read, or the log expired: the run's name is the evidence
      }
    },
  };
}
