import { parseRepository, type Repo } from '../config/repository.js';
import type {
  Author,
  CheckRun,
  Comment,
  CommitStatus,
  FeedbackPort,
  LineComment,
  PullState,
  RepoRole,
  Review,
} from '../feedback/port.js';
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
const sinceParam = (since: string | undefined) => (since ? { since } : {});
/** The list a response object holds under `key` (check runs, statuses). */
const listIn = (data: Raw, key: string) => (data[key] ?? []) as Raw[];

const toPull = (number: number, d: Raw): PullState => {
  const head = (d.head ?? {}) as Raw;
  const baseSha = str(((d.base ?? {}) as Raw).sha);
  return {
    number,
    state: d.state === 'closed' ? 'closed' : 'open',
    merged: d.merged === true || (typeof d.merged_at === 'string' && d.merged_at !== ''),
    headSha: str(head.sha),
    headRef: str(head.ref),
    ...(d.mergeable === true || d.mergeable === false || d.mergeable === null
      ? { mergeable: d.mergeable as boolean | null }
      : {}),
    ...(str(((d.base ?? {}) as Raw).ref) ? { baseRef: str(((d.base ?? {}) as Raw).ref) } : {}),
    ...(baseSha ? { baseSha } : {}),
  };
};

const toReview = (r: Raw): Review => ({
  id: Number(r.id),
  author: author(r.user, r.author_association),
  state: str(r.state),
  body: str(r.body),
  submittedAt: str(r.submitted_at),
});

export const toComment = (c: Raw): Comment => ({
  id: Number(c.id),
  author: author(c.user, c.author_association),
  body: str(c.body),
  updatedAt: str(c.updated_at),
});

const toLineComment = (c: Raw): LineComment => ({
  ...toComment(c),
  ...(typeof c.pull_request_review_id === 'number' ? { reviewId: c.pull_request_review_id } : {}),
  path: str(c.path),
  ...(typeof c.line === 'number' ? { line: c.line } : {}),
});

/** An Actions job's check run links to `…/actions/runs/<run id>/job/<job id>`: its workflow run. */
const runIdOf = (url: unknown) => {
  const m = /\/actions\/runs\/(\d+)\/job\/\d+/.exec(str(url));
  return m ? { runId: Number(m[1]) } : {};
};

const toCheckRun = (c: Raw): CheckRun => ({
  id: Number(c.id),
  name: str(c.name),
  status: str(c.status),
  conclusion: typeof c.conclusion === 'string' ? c.conclusion : null,
  ...(typeof (c.app as Raw | undefined)?.slug === 'string' ? { app: (c.app as Raw).slug as string } : {}),
  ...runIdOf(c.details_url),
  ...(str(c.head_sha) ? { headSha: str(c.head_sha) } : {}),
});

const ROLES: readonly RepoRole[] = ['admin', 'maintain', 'write', 'triage', 'read', 'none'];

/** `role_name` (admin, maintain, write, triage, read, or a custom role's base) else `permission`. */
function toRole(d: Raw): RepoRole {
  const named = ROLES.find((r) => r === d.role_name);
  if (named) return named;
  return ROLES.find((r) => r === d.permission) ?? 'none';
}

const STATUS_STATES = ['error', 'failure', 'pending', 'success'] as const;
const toStatus = (c: Raw): CommitStatus => ({
  context: str(c.context),
  state: STATUS_STATES.find((x) => x === c.state) ?? 'pending',
  description: str(c.description),
  targetUrl: str(c.target_url),
});

/** A job log arrives as text or as bytes; anything else is no log. */
const logText = (d: unknown): string | undefined =>
  typeof d === 'string' ? d : d instanceof ArrayBuffer ? Buffer.from(d).toString('utf8') : undefined;

/** Requests in one repository, each counted: one object, or every page of a list. */
class Requests {
  count = 0;
  constructor(
    private readonly client: GitHubClient,
    readonly repo: Repo,
  ) {}

  async one(route: string, params: Record<string, unknown>): Promise<Raw> {
    this.count++;
    const r = await this.client.request(route, { owner: this.repo.owner, repo: this.repo.repo, ...params });
    return r.data as unknown as Raw;
  }

  /** Every page of a list, following `link` (each page one request). */
  async all(route: string, params: Record<string, unknown>): Promise<Raw[]> {
    const out: Raw[] = [];
    let url: string | undefined;
    for (;;) {
      this.count++;
      const r = url
        ? await this.client.request({ method: 'GET', url })
        : await this.client.request(route, {
            owner: this.repo.owner,
            repo: this.repo.repo,
            per_page: 100,
            ...params,
          });
      if (Array.isArray(r.data)) out.push(...(r.data as Raw[]));
      url = nextLink(r.headers.link);
      if (!url) return out;
    }
  }
}

export function octokitFeedback(client: GitHubClient, repository: string): FeedbackPort {
  const api = new Requests(client, parseRepository(repository));
  // One question per user per run: a busy pull request asks about its reviewers once.
  const roles = new Map<string, Promise<RepoRole>>();
  const PULL = 'GET /repos/{owner}/{repo}/pulls/{pull_number}';
  const COMMIT = 'GET /repos/{owner}/{repo}/commits/{ref}';
  return {
    get requests() {
      return api.count;
    },
    async listChanged(q) {
      const r = await listIssues(client, api.repo, {
        state: 'all',
        since: q.since,
        etag: q.etag,
      });
      api.count += r.requests;
      return r;
    },
    pull: async (n) => toPull(n, await api.one(PULL, { pull_number: n })),
    reviews: async (n) => (await api.all(`${PULL}/reviews`, { pull_number: n })).map(toReview),
    lineComments: async (n, since) =>
      (await api.all(`${PULL}/comments`, { pull_number: n, ...sinceParam(since) })).map(toLineComment),
    comments: async (n, since) =>
      (
        await api.all('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
          issue_number: n,
          ...sinceParam(since),
        })
      ).map(toComment),
    checkRuns: async (sha) =>
      listIn(await api.one(`${COMMIT}/check-runs`, { ref: sha, per_page: 100 }), 'check_runs').map(
        toCheckRun,
      ),
    // The combined status lists the latest status of each context (100 per page at most).
    statuses: async (sha) =>
      listIn(await api.one(`${COMMIT}/status`, { ref: sha, per_page: 100 }), 'statuses').map(toStatus),
    role(login) {
      const key = login.toLowerCase();
      let known = roles.get(key);
      if (!known) {
        known = api
          .one('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { username: login })
          .then(toRole, (e: unknown) => {
            // 404: no collaborator (or no such user): no role. Anything else is not an answer.
            if ((e as { status?: number }).status === 404) return 'none' as const;
            roles.delete(key);
            throw e;
          });
        roles.set(key, known);
      }
      return known;
    },
    // A rerun of a whole run's failed jobs: rerunning one job of a run starts a new attempt of the
    // run, and a second job's rerun while it runs is refused; one call reruns them all.
    async rerunFailed(check) {
      if (check.runId !== undefined)
        await api.one('POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs', {
          run_id: check.runId,
        });
      else await api.one('POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun', { job_id: check.id });
    },
    async compare(base, head) {
      const d = await api.one('GET /repos/{owner}/{repo}/compare/{basehead}', {
        basehead: `${base}...${head}`,
        per_page: 1,
      });
      return { behindBy: Number(d.behind_by ?? 0), aheadBy: Number(d.ahead_by ?? 0), status: str(d.status) };
    },
    async jobLog(jobId) {
      try {
        return logText(
          await api.one('GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs', { job_id: jobId }),
        );
      } catch {
        return undefined; // no actions: read, or the log expired: the run's name is the evidence
      }
    },
  };
}
