import { readFileSync } from 'node:fs';
import { http, HttpResponse, type HttpHandler } from 'msw';
import { GitHubFake, type FakeOptions } from '../support/github-fake.js';
import { git } from '../support/tmp.js';

/**
 * The GitHub fake plus what the loop's jobs ask of the Actions API: `GET
 * /repos/{owner}/{repo}/actions/runs/{run_id}/jobs`, answered from the jobs this test's runner
 * records as it executes (or skips) them, in GitHub's shape (display name, status, conclusion,
 * run_attempt, steps).
 */

export interface FakeJob {
  id: number;
  name: string;
  run_attempt: number;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: null | 'success' | 'failure' | 'cancelled' | 'skipped';
  started_at: string | null;
  completed_at: string | null;
  steps: Array<{ name: string; status: string; conclusion: string | null; number: number }>;
}

export class ActionsFake extends GitHubFake {
  readonly runs = new Map<number, FakeJob[]>();
  private nextJobId = 50_000;

  constructor(options: FakeOptions = {}) {
    super(options);
  }

  /** Loads `examples/issues.json` (GitHub's REST shape) as this repository's issues, in order. */
  loadIssues(file: string): void {
    const issues = JSON.parse(readFileSync(file, 'utf8')) as Array<{
      number: number;
      title: string;
      body: string | null;
      state: 'open' | 'closed';
      labels: Array<{ name: string }>;
      user: { login: string };
      pull_request?: unknown;
    }>;
    for (const i of issues.sort((a, b) => a.number - b.number)) {
      const fields = {
        title: i.title,
        body: i.body,
        state: i.state,
        labels: i.labels.map((l) => l.name),
        user: i.user.login,
      };
      const made = i.pull_request ? this.addPullRequest(fields) : this.addIssue(fields);
      if (made.number !== i.number) throw new Error(`issue ${i.number} became #${made.number}`);
    }
  }

  job(
    runId: number,
    name: string,
    status: FakeJob['status'],
    conclusion: FakeJob['conclusion'] = null,
  ): FakeJob {
    const jobs = this.runs.get(runId) ?? [];
    this.runs.set(runId, jobs);
    let job = jobs.find((j) => j.name === name);
    if (!job) {
      job = {
        id: this.nextJobId++,
        name,
        run_attempt: 1,
        status,
        conclusion,
        started_at: null,
        completed_at: null,
        steps: [],
      };
      jobs.push(job);
    }
    const at = this.now();
    job.status = status;
    job.conclusion = conclusion;
    if (status !== 'queued') job.started_at ??= at;
    if (status === 'completed') job.completed_at = at;
    return job;
  }

  override get handlers(): HttpHandler[] {
    const jobs = http.get('*/repos/:owner/:repo/actions/runs/:runId/jobs', ({ request, params }) => {
      const url = new URL(request.url);
      this.requests.push({
        method: 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        status: 200,
      });
      if (params.owner !== this.owner || params.repo !== this.repo || !this.tokens.has(bearer(request))) {
        return HttpResponse.json({ message: 'Not Found' }, { status: 404 });
      }
      const list = this.runs.get(Number(params.runId)) ?? [];
      return HttpResponse.json({
        total_count: list.length,
        jobs: list.map((j) => ({ ...j, run_id: Number(params.runId), head_branch: 'main' })),
      });
    });
    const run = http.get('*/repos/:owner/:repo/actions/runs/:runId', ({ request, params }) => {
      const url = new URL(request.url);
      this.requests.push({ method: 'GET', path: url.pathname, query: {}, status: 200 });
      const list = this.runs.get(Number(params.runId));
      if (
        !list ||
        params.owner !== this.owner ||
        params.repo !== this.repo ||
        !this.tokens.has(bearer(request))
      ) {
        return HttpResponse.json({ message: 'Not Found' }, { status: 404 });
      }
      // Like GitHub: a run is completed once every job of it is.
      const done = list.every((j) => j.status === 'completed');
      return HttpResponse.json({
        id: Number(params.runId),
        status: done ? 'completed' : 'in_progress',
        conclusion: done ? 'success' : null,
      });
    });
    return [jobs, run, ...super.handlers];
  }
}

function bearer(request: Request): string {
  return (request.headers.get('authorization') ?? '').replace(/^(token|bearer)\s+/i, '');
}

/**
 * An Actions fake for delivery through a bare `origin` (whose path is known only once it exists):
 * GitHub's clock is the school's, so the first feedback scan asks from the delivery's time, and a
 * pull request's head is its branch as it is on that repository.
 */
export function fakeOnOrigin(token: string, origin: () => string): ActionsFake {
  return new ActionsFake({
    tokens: { [token]: 'write' },
    now: () => new Date(),
    branchHead: (branch) => {
      try {
        return git(origin(), 'rev-parse', '--verify', '-q', `refs/heads/${branch}`) || undefined;
      } catch {
        return undefined;
      }
    },
  });
}
