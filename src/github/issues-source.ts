import type { CurriculumSource } from '../curriculum/fetch.js';
import type { ListQuery, ListResult } from '../curriculum/github-source.js';
import type { Repo } from '../config/repository.js';
import { rawIssueSchema, type RawIssue } from '../curriculum/issue-shape.js';
import type { GitHubClient } from './client.js';
import { SchoolError } from '../errors.js';

/**
 * Listing issues from the REST API (docs/architecture.md). `GET /repos/{owner}/{repo}/issues` with
 * per_page=100, following the `link` header; pull requests come back in the same list and are
 * dropped by the caller. Conditional requests carry `If-None-Match`; GitHub answers an unchanged
 * page with 304, which does not count against the rate limit.
 */
const PER_PAGE = 100;

/** The curriculum's GitHub source: `repo`'s issues through `client`. */
export function githubSource(client: GitHubClient, repo: Repo): CurriculumSource {
  return { kind: 'github', repo, list: (query) => listIssues(client, repo, query) };
}

export async function listIssues(client: GitHubClient, repo: Repo, query: ListQuery): Promise<ListResult> {
  const params = {
    owner: repo.owner,
    repo: repo.repo,
    state: query.state,
    sort: 'updated' as const,
    direction: 'desc' as const,
    per_page: PER_PAGE,
    ...(query.labels?.length ? { labels: query.labels.join(',') } : {}),
    ...(query.since ? { since: query.since } : {}),
  };
  const issues: RawIssue[] = [];
  let etag: string | undefined;
  let serverDate: Date | undefined;
  let pages = 0;
  let requests = 0;
  let url: string | undefined;
  while (true) {
    requests++;
    let response: Awaited<ReturnType<GitHubClient['request']>>;
    try {
      response = url
        ? await client.request({ method: 'GET', url })
        : await client.request('GET /repos/{owner}/{repo}/issues', {
            ...params,
            headers: query.etag ? { 'if-none-match': query.etag } : {},
          });
    } catch (e) {
      if (!url && (e as { status?: number }).status === 304) return { status: 'not-modified', requests };
      throw e;
    }
    pages++;
    if (!url) {
      etag = response.headers.etag;
      const date = response.headers.date ? new Date(response.headers.date) : undefined;
      serverDate = date && Number.isFinite(date.getTime()) ? date : undefined;
    }
    const data: unknown = response.data;
    if (!Array.isArray(data))
      throw new SchoolError(`GitHub answered the issues list with ${typeof data}, not a list`, {
        code: 'github-answer',
      });
    for (const [i, raw] of data.entries()) {
      const parsed = rawIssueSchema.safeParse(raw);
      if (!parsed.success) {
        throw new SchoolError(
          `GitHub issue #${(raw as { number?: unknown })?.number ?? i} has an unexpected shape: ${parsed.error.issues[0]?.message}`,
          { code: 'github-answer' },
        );
      }
      issues.push(parsed.data);
    }
    url = nextLink(response.headers.link);
    if (!url) break;
  }
  return { status: 'ok', issues, etag, serverDate, pages, requests };
}

/** The `rel="next"` target of a `link` header. */
export function nextLink(link: string | undefined): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?([^";]+)"?/.exec(part.trim());
    if (m && m[2]!.split(/\s+/).includes('next')) return m[1];
  }
  return undefined;
}
