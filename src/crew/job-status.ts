import type { GitHubClient } from '../github/client.js';
import type { LeaseOwner } from '../schemas/crew.js';
import type { JobStatus } from './lease.js';

/**
 * The `jobStatus` port backed by the REST API: `GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs`
 * (all attempts). An Actions lease owner is gone when its job is `completed`. The owner records
 * GITHUB_JOB (the job id in the workflow), while the API reports display names — a matrix job of
 * `run` is named `run (d1)` — so a job matches by equal name or by the `<job> (` prefix. When no job
 * matches, the owner counts as gone only if every job of that run attempt has completed. Any API
 * failure is `unknown`: an owner we cannot check is treated as alive.
 */
export function actionsJobStatus(client: GitHubClient, repository: string): JobStatus {
  const [owner, repo] = repository.split('/') as [string, string];
  return async (o: Extract<LeaseOwner, { kind: 'actions' }>) => {
    try {
      const jobs = await client.paginate(client.rest.actions.listJobsForWorkflowRun, {
        owner,
        repo,
        run_id: Number(o.runId),
        filter: 'all',
        per_page: 100,
      });
      const attempt = jobs.filter((j) => String(j.run_attempt ?? 1) === o.runAttempt);
      const mine = attempt.filter((j) => j.name === o.job || j.name.startsWith(`${o.job} (`));
      const judged = mine.length ? mine : attempt;
      if (!judged.length) return 'unknown';
      return judged.every((j) => j.status === 'completed') ? 'done' : 'in_progress';
    } catch {
      return 'unknown';
    }
  };
}
