import type { IssuesPort } from '../outbox/outbox.js';
import { parseRepository } from '../config/repository.js';
import { type GitHubClient } from './client.js';

/**
 * The outbox's `IssuesPort` (src/outbox/outbox.ts) over Octokit (docs/architecture.md: the client
 * from ./client.ts carries retry and throttling). `retries` caps the retry plugin per request; the
 * outbox retries across drains anyway, so a drain does not sit out long backoffs on a failing GitHub.
 */
export function octokitPort(
  client: GitHubClient,
  repository: string,
  o: { retries?: number } = {},
): IssuesPort {
  const { owner, repo } = parseRepository(repository, 'repository', 'Set repository in school.yml.');
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
