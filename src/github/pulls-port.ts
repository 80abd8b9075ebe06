import type { PullsPort } from '../delivery/pull-request.js';
import type { Logger } from '../log.js';
import { parseRepository } from '../config/repository.js';
import { createGitHubClient, type GitHubClient } from './client.js';

/**
 * Delivery's pulls port over Octokit (retry and throttling plugins from ./client.ts). GitHub's 422
 * "A pull request already exists" answers `create` with undefined: delivery looks it up again.
 */
export function octokitPulls(client: GitHubClient, repository: string): PullsPort {
  const { owner, repo } = parseRepository(repository, 'repository', 'Set repository in school.yml.');
  return {
    async defaultBranch() {
      const r = await client.rest.repos.get({ owner, repo });
      return r.data.default_branch;
    },
    async findOpen(head) {
      const r = await client.rest.pulls.list({
        owner,
        repo,
        head: `${owner}:${head}`,
        state: 'open',
        per_page: 10,
      });
      const pr = r.data[0];
      return pr ? { number: pr.number, url: pr.html_url, body: pr.body ?? '' } : undefined;
    },
    async updateBody(number, body) {
      await client.rest.pulls.update({ owner, repo, pull_number: number, body });
    },
    async create(p) {
      try {
        const r = await client.rest.pulls.create({ owner, repo, ...p });
        return { number: r.data.number, url: r.data.html_url };
      } catch (e) {
        if (alreadyExists(e)) return undefined;
        throw e;
      }
    },
  };
}

/** `octokitPulls` for the repository delivery resolves (`deliveryFor`), over a client for `token`. */
export function pullsFor(token: string, logger: Logger): (repository: string) => PullsPort {
  return (repository) => octokitPulls(createGitHubClient({ token, logger }), repository);
}

export function alreadyExists(e: unknown): boolean {
  const err = e as { status?: number; message?: string; response?: { data?: unknown } };
  if (err?.status !== 422) return false;
  const text = `${err.message ?? ''} ${JSON.stringify(err.response?.data ?? '')}`;
  return /a pull request already exists/i.test(text);
}
