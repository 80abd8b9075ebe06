import type { GitHubClient } from '../github/client.js';
import { ConfigError } from '../errors.js';

/**
 * The pulls API as delivery needs it. Idempotent by construction: `ensure` finds an open pull
 * request by its head branch before creating one, and GitHub's 422 "A pull request already exists"
 * (a create that raced a find, or whose acknowledgement was lost) is success — the existing pull
 * request is looked up again and returned, never a second one opened.
 */
export interface PullRequestRef {
  number: number;
  url: string;
}

export interface PullsPort {
  defaultBranch(): Promise<string>;
  findOpen(head: string): Promise<PullRequestRef | undefined>;
  create(p: {
    head: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
  }): Promise<PullRequestRef>;
}

export function alreadyExists(e: unknown): boolean {
  const err = e as { status?: number; message?: string; response?: { data?: unknown } };
  if (err?.status !== 422) return false;
  const text = `${err.message ?? ''} ${JSON.stringify(err.response?.data ?? '')}`;
  return /a pull request already exists/i.test(text);
}

export async function ensurePullRequest(
  port: PullsPort,
  p: { head: string; base?: string; title: string; body: string; draft: boolean },
): Promise<PullRequestRef & { created: boolean }> {
  const found = await port.findOpen(p.head);
  if (found) return { ...found, created: false };
  const base = p.base ?? (await port.defaultBranch());
  try {
    return { ...(await port.create({ ...p, base })), created: true };
  } catch (e) {
    if (!alreadyExists(e)) throw e;
    const again = await port.findOpen(p.head);
    if (again) return { ...again, created: false };
    throw e;
  }
}

/** The port over Octokit (retry and throttling plugins from src/github/client.ts). */
export function octokitPulls(client: GitHubClient, repository: string): PullsPort {
  const [owner, repo] = repository.split('/');
  if (!owner || !repo) {
    throw new ConfigError(
      `repository: expected "owner/name", found "${repository}"; set repository in school.yml.`,
    );
  }
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
      return pr ? { number: pr.number, url: pr.html_url } : undefined;
    },
    async create(p) {
      const r = await client.rest.pulls.create({ owner, repo, ...p });
      return { number: r.data.number, url: r.data.html_url };
    },
  };
}
