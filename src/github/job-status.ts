import type { JobLiveness } from '../dispatch/leases/lease.js';
import type { Logger } from '../log.js';
import { parseRepository } from '../config/repository.js';
import { createGitHubClient, type GitHubClient } from './client.js';

/** The loop's job that imports the crew jobs' handoffs into the state (`grade` in school-loop.yml). */
export const IMPORT_JOB = 'grade';

/**
 * The `jobStatus` port backed by the REST API: `GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs`
 * (all attempts). The owner records the job id in the workflow (GITHUB_JOB) while the API reports
 * display names — a matrix job `crew` is named `crew d1` or `crew (d1)`, and inside a reusable
 * workflow the caller's job name comes first (`school / crew d1`) — so a job matches on the last
 * ` / ` segment of its name, by equal name or by the `<job> ` / `<job>(` prefix, and, when the owner
 * names a daemon (the crew job expected to start a planned crew), only a job whose name carries that
 * daemon id as a word.
 *
 * An owner is gone when its job is `completed` **and what that job did has reached the state**: a
 * crew job hands its events on as an artifact that the run's `grade` job imports and saves, so until
 * that job has completed too, a crew the state still shows as planned may well have run. Cancelling it
 * then would plan its issue a second time. When no `grade` job is listed (not created yet, or a
 * workflow without one), the run itself must have completed. When no job matches the owner, it
 * counts as gone only once the run attempt has completed (the run ended without such a job). Any API
 * failure is `unknown`: an owner we cannot check is treated as alive.
 */
export function actionsJobStatus(client: GitHubClient, repository: string): JobLiveness {
  const { owner, repo } = parseRepository(repository, 'repository', 'Set repository in school.yml.');
  return async (o) => {
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
        const imports = attempt.filter((j) => jobMatches(j.name, { job: IMPORT_JOB }));
        if (imports.length ? !imports.every((j) => j.status === 'completed') : !(await runEnded(o)))
          return 'in_progress';
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

  async function runEnded(o: { runId: string }): Promise<boolean> {
    const { data } = await client.rest.actions.getWorkflowRun({ owner, repo, run_id: Number(o.runId) });
    return data.status === 'completed';
  }
}

export function jobMatches(fullName: string, o: { job: string; daemon?: string }): boolean {
  const cut = fullName.lastIndexOf(' / ');
  const name = cut >= 0 ? fullName.slice(cut + 3) : fullName;
  if (name !== o.job && !name.startsWith(`${o.job} `) && !name.startsWith(`${o.job}(`)) return false;
  if (o.daemon === undefined) return true;
  return name
    .slice(o.job.length)
    .split(/[^A-Za-z0-9-]+/)
    .includes(o.daemon);
}

/**
 * `actionsJobStatus` for whichever repository the configuration names, built on first use; none
 * without a token or a repository (an owner that cannot be checked counts as alive).
 */
export function jobStatusFor(
  token: string | undefined,
  logger: Logger,
): (repository: string | undefined) => JobLiveness | undefined {
  return (repository) =>
    token && repository ? actionsJobStatus(createGitHubClient({ token, logger }), repository) : undefined;
}
