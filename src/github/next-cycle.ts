import type { Logger } from '../log.js';
import { createGitHubClient } from './client.js';
import type { RunContext } from '../process/run-context.js';

/**
 * Starts the workflow this run belongs to again: `POST /repos/{owner}/{repo}/actions/workflows/
 * {file}/dispatches` on the ref it ran from. Inside a reusable workflow GITHUB_WORKFLOW_REF names the
 * calling workflow (`owner/repo/.github/workflows/school.yml@refs/heads/main`), which is what runs
 * the loop again with its own inputs; it must have a `workflow_dispatch` trigger. A
 * `workflow_dispatch` created with the job's GITHUB_TOKEN does start a run (unlike other events it
 * creates); the job needs `actions: write`.
 */
export interface WorkflowTarget {
  owner: string;
  repo: string;
  /** The workflow file's name under .github/workflows/. */
  file: string;
  ref: string;
}

export function workflowTarget(context: Pick<RunContext, 'run'>): WorkflowTarget | string {
  const ref = context.run?.workflowRef ?? '';
  const m = /^([^/]+)\/([^/]+)\/\.github\/workflows\/([^/@]+)@(.+)$/.exec(ref);
  if (!m) return `GITHUB_WORKFLOW_REF does not name a workflow file ("${ref}")`;
  return { owner: m[1]!, repo: m[2]!, file: m[3]!, ref: m[4]! };
}

export function workflowDispatcher(
  token: string,
  logger: Logger,
  fetchImpl?: typeof fetch,
): (target: WorkflowTarget) => Promise<void> {
  const client = createGitHubClient({ token, logger, fetch: fetchImpl });
  return async (t) => {
    await client.rest.actions.createWorkflowDispatch({
      owner: t.owner,
      repo: t.repo,
      workflow_id: t.file,
      ref: t.ref,
    });
  };
}
