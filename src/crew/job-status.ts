import type { GitHubClient } from '../github/client.js';
import type { LeaseOwner } from '../schemas/crew.js';
import type { JobAnswer, JobLiveness } from '../dispatch/lease.js';

/**
 * The `jobStatus` port backed by the REST API: `GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs`
 * (all attempts). An Actions owner is gone when its job is `completed`. The owner records the job
 * id in the workflow (GITHUB_JOB) while the API reports display names — a matrix job `crew` is
 * named `crew d1` or `crew (d1)` — so a job matches by equal name or by the `<job> ` / `<job> (`
 * prefix, and, when the owner names a daemon (the crew job expected to start a planned crew), only
 * a job whose name carries that daemon id as a word. When no job matches, the owner counts as gone
 * only if every job of that run attempt has completed (the run ended without such a job). Any API
 * failure is `unknown`: an owner we cannot check is treated as alive.
 */
export function actionsJobStatus(client: GitHubClient, repository: string): JobLiveness {
  const [owner, repo] = repository.split('/') as [string, string];
  return async (o: Extract<LeaseOwner, { kind: 'actions' }>): Promise<JobAnswer> => {
    try {
      const jobs = await client.paginate(client.rest.actions.listJobsForWorkflowRun, {
        owner,
        repo,
        run_id: Number(o.runId),
        filter: 'all',
        per_page: 100,
      });
      const attempt = jobs.filter((j) => String(j.run_attempt ?? 1) === o.runAttempt);
      const mine = attempt.filter((j) => jobMatches(j.name, o));
      if (mine.length) {
        if (!mine.every((j) => j.status === 'completed')) return 'in_progress';
        const how = [...new Set(mine.map((j) => j.conclusion ?? 'completed'))].join(', ');
        return { done: `its job ${mine.map((j) => `"${j.name}"`).join(', ')} ended: ${how}` };
      }
      if (!attempt.length) return 'unknown';
      if (!attempt.every((j) => j.status === 'completed')) return 'in_progress';
      return { done: `the run attempt ended without a job "${o.job}${o.daemon ? ` ${o.daemon}` : ''}"` };
    } catch {
      return 'unknown';
    }
  };
}

export function jobMatches(name: string, o: { job: string; daemon?: string }): boolean {
  if (name !== o.job && !name.startsWith(`${o.job} `) && !name.startsWith(`${o.job}(`)) return false;
  if (o.daemon === undefined) return true;
  return name
    .slice(o.job.length)
    .split(/[^A-Za-z0-9-]+/)
    .includes(o.daemon);
}
