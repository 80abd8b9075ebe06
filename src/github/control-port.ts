import { parseRepository } from '../config/repository.js';
import type { Comment } from '../feedback/port.js';
import type { ControlPort, ControlComments } from '../feedback/crew-job-control.js';
import { isRateLimit, type GitHubClient } from './client.js';
import { octokitFeedback, toComment } from './feedback-port.js';
import { nextLink } from './issues-source.js';

/**
 * What a crew job reads for `/school stop|steer` while its crews run (src/feedback/crew-job-control.ts),
 * over the REST API: an issue's (or a pull request's) comments `since` a time, conditional on the
 * ETag of the last answer — GitHub answers 304 when nothing changed, and a 304 does not count
 * against the rate limit — and a commenter's role (the collaborator-permission endpoint, once per
 * user). Both read: the token needs `issues: read` and `pull-requests: read`, nothing more.
 */
export function octokitControl(client: GitHubClient, repository: string): ControlPort {
  const repo = parseRepository(repository);
  // The feedback port's role lookup: the same rule, asked once per user for the job.
  const feedback = octokitFeedback(client, repository);
  let requests = 0;
  return {
    get requests() {
      return requests;
    },
    role: (login) => feedback.role!(login),
    async comments(n, q): Promise<ControlComments> {
      const out: Comment[] = [];
      let url: string | undefined;
      let etag: string | undefined;
      for (;;) {
        requests++;
        let r;
        try {
          r = url
            ? await client.request({ method: 'GET', url })
            : await client.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
                owner: repo.owner,
                repo: repo.repo,
                issue_number: n,
                since: q.since,
                per_page: 100,
                // Only the first page is conditional: its ETag says whether anything changed.
                headers: q.etag ? { 'if-none-match': q.etag } : {},
              });
        } catch (e) {
          const err = e as HttpError;
          if (!url && err.status === 304) return { status: 'not-modified' };
          if (isRateLimit(err)) return limited(err, Date.now());
          throw e;
        }
        etag ??= r.headers.etag;
        if (Array.isArray(r.data)) out.push(...(r.data as Array<Record<string, unknown>>).map(toComment));
        url = nextLink(r.headers.link);
        if (!url) return { status: 'ok', comments: out, ...(etag ? { etag } : {}) };
      }
    },
  };
}

interface HttpError {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | undefined> };
}

/** A rate limit's answer: how long GitHub asks to wait (`retry-after`, else the limit's reset). */
function limited(e: HttpError, now: number): ControlComments {
  const h = e.response?.headers ?? {};
  const retryAfter = Number(h['retry-after']);
  const reset = Number(h['x-ratelimit-reset']);
  const waitMs =
    Number.isFinite(retryAfter) && retryAfter > 0
      ? retryAfter * 1000
      : h['x-ratelimit-remaining'] === '0' && Number.isFinite(reset)
        ? Math.max(0, reset * 1000 - now)
        : undefined;
  return { status: 'limited', code: e.status ?? 0, ...(waitMs !== undefined ? { waitMs } : {}) };
}
