import { ConfigError } from '../errors.js';
import type { GitHubClient } from './client.js';

/**
 * What the grading outbox asks of GitHub's issues API. The outbox declares the port it needs
 * (`GitHubPort` in src/grading/outbox.ts, a layer above this one); this is the same shape, so the
 * Octokit implementation can live here with the rest of the REST knowledge.
 */
export interface IssuesPort {
  addLabels(issue: number, labels: string[]): Promise<void>;
  listComments(issue: number): Promise<Array<{ id?: number; body?: string | null }>>;
  /** Returns the new comment's id. */
  createComment(issue: number, body: string): Promise<{ id: number }>;
  /** PATCH an issue comment (the status comment is edited in place); rejects with status 404 when gone. */
  updateComment(commentId: number, body: string): Promise<void>;
}

/**
 * The outbox's GitHub port over Octokit (docs/architecture.md: the client from ./client.ts carries
 * retry and throttling). `retries` caps the retry plugin per request; the outbox retries across
 * drains anyway, so a drain does not sit out long backoffs on a failing GitHub.
 */
export function octokitPort(
  client: GitHubClient,
  repository: string,
  o: { retries?: number } = {},
): IssuesPort {
  const [owner, repo] = repository.split('/');
  if (!owner || !repo) {
    throw new ConfigError(
      `repository: expected "owner/name", found "${repository}"; set repository in school.yml.`,
    );
  }
  const request = o.retries === undefined ? {} : { request: { retries: o.retries } };
  return {
    async addLabels(issue, labels) {
      await client.rest.issues.addLabels({ owner, repo, issue_number: issue, labels, ...request });
    },
    async listComments(issue) {
      return client.paginate(client.rest.issues.listComments, {
        owner,
        repo,
        issue_number: issue,
        per_page: 100,
        ...request,
      });
    },
    async createComment(issue, body) {
      const r = await client.rest.issues.createComment({
        owner,
        repo,
        issue_number: issue,
        body,
        ...request,
      });
      return { id: r.data.id };
    },
    async updateComment(commentId, body) {
      await client.rest.issues.updateComment({ owner, repo, comment_id: commentId, body, ...request });
    },
  };
}
