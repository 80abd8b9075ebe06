import { parseRepository } from '../config/repository.js';
import type { Author, FeedbackPort } from '../feedback/port.js';
import type { GitHubClient } from './client.js';
import { listIssues, nextLink } from './issues-source.js';

/** The feedback scan's port (src/feedback/port.ts) over Octokit: each answer cut to what the scan reads. */
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
  const repo = parseRepository(repository);
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
    async statuses(sha) {
      // The combined status lists the latest status of each context (100 per page at most).
      requests++;
      const r = await client.request('GET /repos/{owner}/{repo}/commits/{ref}/status', {
        owner,
        repo: name,
        ref: sha,
        per_page: 100,
      });
      const list = ((r.data as unknown as Raw).statuses ?? []) as Raw[];
      const states = ['error', 'failure', 'pending', 'success'] as const;
      return list.map((c) => ({
        context: str(c.context),
        state: states.find((x) => x === c.state) ?? 'pending',
        description: str(c.description),
        targetUrl: str(c.target_url),
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
