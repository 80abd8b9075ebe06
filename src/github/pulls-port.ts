import type { PullsPort } from '../delivery/pull-request.js';
import type { CommitChecks, GraphqlAnswer, MergePort } from '../delivery/merge.js';
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

/**
 * The guarded merge's port (src/delivery/merge.ts) over Octokit, with the delivery token (a merge
 * needs `contents: write`). A refusal GitHub answers 405 (not mergeable, approvals missing), 409
 * (the head is not the `sha` asked) or 422 (a required check, a method the repository does not
 * allow) is an answer with GitHub's words; anything else throws and the next cycle asks again.
 */
export function octokitMerge(client: GitHubClient, repository: string): MergePort {
  const { owner, repo } = parseRepository(repository, 'repository', 'Set repository in school.yml.');
  return {
    async pull(n) {
      const { data: d } = await client.rest.pulls.get({ owner, repo, pull_number: n });
      return {
        number: d.number,
        nodeId: d.node_id,
        state: d.state === 'closed' ? 'closed' : 'open',
        merged: d.merged === true || !!d.merged_at,
        draft: d.draft === true,
        headSha: d.head.sha,
        mergeable: typeof d.mergeable === 'boolean' ? d.mergeable : null,
        mergeableState: d.mergeable_state ?? '',
        updatedAt: d.updated_at ?? '',
      };
    },
    async checks(sha): Promise<CommitChecks> {
      const runs = await client.rest.checks.listForRef({ owner, repo, ref: sha, per_page: 100 });
      const status = await client.rest.repos.getCombinedStatusForRef({
        owner,
        repo,
        ref: sha,
        per_page: 100,
      });
      return {
        runs: runs.data.check_runs.map((c) => ({
          id: c.id,
          name: c.name,
          status: c.status,
          conclusion: c.conclusion ?? null,
        })),
        statuses: status.data.statuses.map((s) => ({ context: s.context, state: s.state })),
      };
    },
    async merge(n, p) {
      try {
        const r = await client.rest.pulls.merge({
          owner,
          repo,
          pull_number: n,
          sha: p.sha,
          merge_method: p.method,
          // A refusal is an answer: asked once (the retry plugin would repeat a 405 or 409).
          request: { retries: 0 },
        });
        return { merged: true, sha: r.data.sha };
      } catch (e) {
        const err = e as { status?: number; message?: string; response?: { data?: { message?: unknown } } };
        if (err?.status !== 405 && err?.status !== 409 && err?.status !== 422) throw e;
        const said = err.response?.data?.message;
        return {
          merged: false,
          status: err.status,
          message: typeof said === 'string' ? said : (err.message ?? ''),
        };
      }
    },
    // `delivery.merge: queue`: GitHub's auto-merge and merge queue are GraphQL only (`POST /graphql`;
    // on GHES octokit turns the `/api/v3` base into `/api/graphql`).
    async handOverState(nodeId) {
      const r = await client.graphql<{
        node: {
          isMergeQueueEnabled?: boolean;
          isInMergeQueue?: boolean;
          autoMergeRequest?: { enabledAt: string | null } | null;
        } | null;
      }>(
        `query($id: ID!) { node(id: $id) { ... on PullRequest { isMergeQueueEnabled isInMergeQueue autoMergeRequest { enabledAt } } } }`,
        { id: nodeId },
      );
      const n = r.node;
      if (!n) throw new Error(`GitHub knows no pull request with the id ${nodeId}`);
      return {
        mergeQueue: n.isMergeQueueEnabled === true,
        inQueue: n.isInMergeQueue === true,
        autoMerge: !!n.autoMergeRequest,
      };
    },
    async handOver(p) {
      return mutation(
        client,
        p.via === 'merge-queue'
          ? `mutation($id: ID!, $oid: GitObjectID!) { enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $oid }) { mergeQueueEntry { position } } }`
          : `mutation($id: ID!, $oid: GitObjectID!, $mergeMethod: PullRequestMergeMethod!) { enablePullRequestAutoMerge(input: { pullRequestId: $id, expectedHeadOid: $oid, mergeMethod: $mergeMethod }) { pullRequest { autoMergeRequest { enabledAt } } } }`,
        {
          id: p.nodeId,
          oid: p.sha,
          // `method` is octokit's own option: not a variable name.
          ...(p.via === 'auto-merge' ? { mergeMethod: p.method.toUpperCase() } : {}),
        },
      );
    },
    async takeBack(p) {
      return mutation(
        client,
        p.via === 'merge-queue'
          ? `mutation($id: ID!) { dequeuePullRequest(input: { id: $id }) { mergeQueueEntry { id } } }`
          : `mutation($id: ID!) { disablePullRequestAutoMerge(input: { pullRequestId: $id }) { pullRequest { number } } }`,
        { id: p.nodeId },
      );
    },
  };
}

/**
 * A GraphQL mutation, asked once (a refusal is an answer; the retry plugin would repeat it). GitHub
 * answers a refusal with HTTP 200 and `errors: [{ type, message, path }]`; octokit throws it as a
 * GraphqlResponseError, returned here as the answer. Anything else (a 401, a network failure) throws.
 */
async function mutation(
  client: GitHubClient,
  query: string,
  variables: Record<string, string>,
): Promise<GraphqlAnswer> {
  try {
    await client.graphql(query, { ...variables, request: { retries: 0 } });
    return { ok: true };
  } catch (e) {
    const errors = (e as { name?: string; errors?: unknown }).errors;
    if (!Array.isArray(errors) || errors.length === 0) throw e;
    const first = errors[0] as { type?: unknown; message?: unknown };
    return {
      ok: false,
      type: typeof first.type === 'string' ? first.type : 'ERROR',
      message: errors
        .map((x: { message?: unknown }) => (typeof x.message === 'string' ? x.message : ''))
        .filter(Boolean)
        .join('; '),
    };
  }
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
