import { http, HttpResponse, type HttpHandler } from 'msw';
import type { FakeRequest, GitHubFake } from './github-fake.js';

/**
 * GitHub's merge machinery in the fake, answered as GitHub's GraphQL API answers it (`POST /graphql`;
 * GHES: `/api/graphql`): the repository's auto-merge setting, a merge queue per base branch, and the
 * four mutations the guarded merge's `queue` mode uses — `enablePullRequestAutoMerge`,
 * `enqueuePullRequest` (both checking `expectedHeadOid` against the head), `disablePullRequestAutoMerge`
 * and `dequeuePullRequest` — plus the pull request's `isMergeQueueEnabled`, `isInMergeQueue` and
 * `autoMergeRequest` read through `node(id:)`.
 *
 * Errors come as GitHub sends them: HTTP 200 with `data` and `errors: [{ type, path, locations,
 * message }]`; a bad token is HTTP 401. GitHub's words where they are known: "Auto merge is not
 * allowed for this repository"; "Pull request Pull request is in clean status" (and `unstable`,
 * `dirty`, `draft`: auto-merge is refused unless something is still to wait for); "Head branch was
 * modified. Review and try the merge again." for an `expectedHeadOid` that is not the head.
 *
 * GitHub then merges on its own: at the next request after branch protection is met (approvals, the
 * required checks green on the head, no conflict), an auto-merge or a merge-queue entry is merged
 * with its method. A push by someone with write access leaves auto-merge enabled (GitHub disables it
 * only for a push by someone without), so the new head is merged once its checks pass — unless it
 * is taken back; a merge-queue entry whose head moved is dropped from the queue, as GitHub does.
 * A REST merge on a branch with a merge queue is refused 405, as GitHub refuses it.
 */
export class FakeMergeMachinery {
  /** The repository's "Allow auto-merge" setting (`allow_auto_merge`; off by default, as on GitHub). */
  autoMergeAllowed = false;
  /** Base branches with a merge queue (a ruleset's "Require merge queue"). */
  readonly mergeQueues = new Set<string>();
  /** Auto-merge enabled, by pull request. */
  readonly autoMerge = new Map<number, { method: string; enabledAt: string }>();
  /** The merge queue, in order: the pull request and the head it was queued at. */
  readonly queue: Array<{ pr: number; sha: string }> = [];
  /** Merges GitHub made on its own (auto-merge or the merge queue), with the head it merged. */
  readonly merged: Array<{ pr: number; sha: string; method: string; via: 'auto-merge' | 'merge-queue' }> = [];
  /** Every GraphQL operation asked: the field, its variables, and the error type if refused. */
  readonly operations: Array<{ field: string; variables: Record<string, unknown>; error?: string }> = [];

  constructor(private readonly fake: GitHubFake) {}

  /** GitHub's merge state of a pull request (`mergeStateStatus`, lower case). */
  mergeState(p: GitHubFake['pulls'][number]): 'draft' | 'dirty' | 'blocked' | 'unstable' | 'clean' {
    if (p.draft) return 'draft';
    if (this.fake.merging.get(p.number)?.conflict) return 'dirty';
    if (this.fake.mergeBlock(p)) return 'blocked';
    const head = this.fake.headOf(p);
    const runs = this.fake.latestCheckRuns(head);
    const green = (c: string | null) => ['success', 'neutral', 'skipped'].includes(c ?? '');
    const latest = new Map<string, string>();
    for (const s of this.fake.statuses) if (s.sha === head) latest.set(s.context, s.state);
    const unstable =
      runs.some((r) => r.status !== 'completed' || !green(r.conclusion)) ||
      [...latest.values()].some((s) => s !== 'success');
    return unstable ? 'unstable' : 'clean';
  }

  /** GitHub merging on its own: what auto-merge and the merge queue may merge now, merged. */
  settle(): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const e = this.queue[i]!;
      const p = this.fake.pulls.find((x) => x.number === e.pr);
      // A push to a queued pull request's head drops it from the queue.
      if (!p || p.state !== 'open' || this.fake.headOf(p) !== e.sha) this.queue.splice(i, 1);
    }
    for (const e of [...this.queue]) {
      const p = this.fake.mustPull(e.pr);
      if (this.mergeState(p) === 'clean' || this.mergeState(p) === 'unstable') {
        this.queue.splice(this.queue.indexOf(e), 1);
        this.mergeNow(p, 'merge', 'merge-queue');
      }
    }
    for (const [pr, a] of [...this.autoMerge]) {
      const p = this.fake.mustPull(pr);
      if (p.state !== 'open') {
        this.autoMerge.delete(pr);
        continue;
      }
      const state = this.mergeState(p);
      if (state !== 'clean' && state !== 'unstable') continue;
      this.autoMerge.delete(pr);
      this.mergeNow(p, a.method, 'auto-merge');
    }
  }

  private mergeNow(p: GitHubFake['pulls'][number], method: string, via: 'auto-merge' | 'merge-queue'): void {
    const sha = this.fake.headOf(p);
    this.merged.push({ pr: p.number, sha, method, via });
    p.state = 'closed';
    p.merged = true;
    this.fake.updateIssue(p.number, { state: 'closed' });
  }

  /** One GraphQL request: the operation its field names, answered as GitHub answers it. */
  answer(query: string, variables: Record<string, unknown>, write: boolean): Record<string, unknown> {
    const field =
      /\b(enablePullRequestAutoMerge|disablePullRequestAutoMerge|enqueuePullRequest|dequeuePullRequest|node)\s*\(/.exec(
        query,
      )?.[1];
    if (!field) return { errors: [{ message: 'The fake answers no such GraphQL operation', locations: [] }] };
    const op: (typeof this.operations)[number] = { field, variables };
    this.operations.push(op);
    const fail = (type: string, message: string) => {
      op.error = type;
      return {
        data: { [field]: null },
        errors: [{ type, path: [field], locations: [{ line: 1, column: 1 }], message }],
      };
    };
    const input = (variables.input ?? variables) as Record<string, unknown>;
    const id = String(input.pullRequestId ?? input.id ?? '');
    const p = this.fake.pulls.find((x) => `PR_${x.number}` === id);
    if (!p) return fail('NOT_FOUND', `Could not resolve to a node with the global id of '${id}'.`);
    if (field === 'node')
      return {
        data: {
          node: {
            isMergeQueueEnabled: this.mergeQueues.has(p.base),
            isInMergeQueue: this.queue.some((e) => e.pr === p.number),
            autoMergeRequest: this.autoMerge.has(p.number)
              ? { enabledAt: this.autoMerge.get(p.number)!.enabledAt }
              : null,
          },
        },
      };
    if (!write) return fail('FORBIDDEN', 'Resource not accessible by integration');
    const head = this.fake.headOf(p);
    const oid = input.expectedHeadOid;
    if (field === 'enablePullRequestAutoMerge') {
      if (!this.autoMergeAllowed)
        return fail('UNPROCESSABLE', 'Auto merge is not allowed for this repository');
      if (p.state !== 'open') return fail('UNPROCESSABLE', 'Pull request is not open');
      if (oid !== undefined && oid !== head)
        return fail('UNPROCESSABLE', 'Head branch was modified. Review and try the merge again.');
      const state = this.mergeState(p);
      if (state !== 'blocked')
        return fail('UNPROCESSABLE', `Pull request Pull request is in ${state} status`);
      const method = String(input.mergeMethod ?? 'MERGE').toLowerCase();
      this.autoMerge.set(p.number, { method, enabledAt: this.fake.now() });
      return {
        data: {
          [field]: {
            pullRequest: { autoMergeRequest: { enabledAt: this.autoMerge.get(p.number)!.enabledAt } },
          },
        },
      };
    }
    if (field === 'enqueuePullRequest') {
      if (!this.mergeQueues.has(p.base))
        return fail('UNPROCESSABLE', `The base branch ${p.base} does not have a merge queue`);
      if (p.state !== 'open') return fail('UNPROCESSABLE', 'Pull request is not open');
      if (oid !== undefined && oid !== head)
        return fail('UNPROCESSABLE', 'Head branch was modified. Review and try the merge again.');
      const state = this.mergeState(p);
      if (state === 'draft' || state === 'dirty')
        return fail('UNPROCESSABLE', `Pull request Pull request is in ${state} status`);
      if (!this.queue.some((e) => e.pr === p.number)) this.queue.push({ pr: p.number, sha: head });
      return { data: { [field]: { mergeQueueEntry: { position: this.queue.length } } } };
    }
    if (field === 'disablePullRequestAutoMerge') {
      if (!this.autoMerge.delete(p.number))
        return fail('UNPROCESSABLE', 'Auto merge is not enabled on this pull request');
      return { data: { [field]: { pullRequest: { number: p.number } } } };
    }
    const at = this.queue.findIndex((e) => e.pr === p.number);
    if (at === -1) return fail('UNPROCESSABLE', 'Pull request is not in the merge queue');
    this.queue.splice(at, 1);
    return { data: { [field]: { mergeQueueEntry: { id: `MQE_${p.number}` } } } };
  }
}

/**
 * The handlers the fake puts before its REST ones: GitHub merging on its own before any request is
 * answered, the GraphQL endpoint, and the REST merge refused on a branch with a merge queue.
 */
export function graphqlHandlers(fake: GitHubFake, machinery: FakeMergeMachinery): HttpHandler[] {
  const log = (request: Request, status: number, body?: unknown): void => {
    const url = new URL(request.url);
    const entry: FakeRequest = {
      method: request.method.toUpperCase(),
      path: url.pathname,
      query: {},
      status,
    };
    if (body !== undefined) entry.body = body;
    fake.requests.push(entry);
  };
  return [
    // No answer: the request goes on to the handler that answers it.
    http.all('*', () => {
      machinery.settle();
    }),
    http.post('*/graphql', async ({ request }) => {
      const token = (request.headers.get('authorization') ?? '').replace(/^(token|bearer)\s+/i, '');
      const permission = token ? fake.tokens.get(token) : undefined;
      const body = (await request.json().catch(() => ({}))) as { query?: unknown; variables?: unknown };
      if (permission === undefined) {
        log(request, 401, body);
        return HttpResponse.json(
          { message: 'Bad credentials', documentation_url: 'https://docs.github.com/graphql' },
          { status: 401 },
        );
      }
      const answer = machinery.answer(
        typeof body.query === 'string' ? body.query : '',
        (body.variables ?? {}) as Record<string, unknown>,
        permission === 'write',
      );
      log(request, 200, body);
      return HttpResponse.json(answer);
    }),
    http.put('*/repos/:owner/:repo/pulls/:number/merge', ({ request, params }) => {
      const p = fake.pulls.find((x) => x.number === Number(params.number));
      if (!p || !machinery.mergeQueues.has(p.base)) return undefined;
      log(request, 405);
      return HttpResponse.json(
        {
          message: 'Changes must be made through the merge queue',
          documentation_url: 'https://docs.github.com/rest',
        },
        { status: 405 },
      );
    }),
  ];
}
