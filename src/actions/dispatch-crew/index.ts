import * as core from '@actions/core';
import { runCrewFromSpec } from '../../crew/runner.js';
import { actionsClaimPort } from '../../github/actions-services.js';
import { hideCredentials } from '../../github/credentials.js';
import { jobStatusFor } from '../../github/job-status.js';
import { actionsLogger, runAction } from '../../github/runtime.js';
import { writeBlocks } from '../../github/summary-blocks.js';
import { dispatchJob } from '../../loop/dispatch-job.js';
import { workflowDispatcher } from '../../github/next-cycle.js';
import { boardSummary } from '../board-summary.js';
import { readInputs } from './inputs.js';
import { dispatchNotices, dispatchOutputs, dispatchSummary } from './summary.js';

/**
 * dispatch-crew: parse the inputs, run the job (src/loop/dispatch-job.ts), report the result. Modes:
 * `plan` plans a batch and outputs the daemon matrix (identifiers only); `run` runs one daemon's
 * planned crews with its K slots; `heartbeat` records this runner's roster heartbeat; `import`
 * validates crew jobs' handoffs. The same bundle is the crew runner: the driver starts
 * `node <this bundle> __run-crew <spec>` in its own session.
 */
async function main(): Promise<void> {
  const { token, jobStartedAt, ...inputs } = readInputs();
  // The token is in `inputs` now; children and /proc/<pid>/environ never see it again.
  hideCredentials();
  const logger = actionsLogger();
  const { config, layout, result } = await dispatchJob(
    {
      ...inputs,
      ...(jobStartedAt ? { jobStartedAt: new Date(jobStartedAt) } : {}),
      launcher: [process.execPath, process.argv[1]!, '__run-crew'],
      // Whether another job still runs is asked of the Actions API: the planner cancels crews whose
      // crew job never started, and a runner reclaims an expired lease only once its job has ended.
      jobLiveness: jobStatusFor(token, logger),
      // The shared standby queue: a crew job claims with the runner's runtime token, lent to the
      // artifact client for each call only (hideCredentials above); the grade job's import lists the
      // run's claims with it.
      ...(inputs.mode === 'run' || inputs.mode === 'import' ? { claimPort: actionsClaimPort } : {}),
      // Mode plan reads the feedback on delivered pull requests before planning (read-only).
      ...(token ? { token } : {}),
      // Mode next-cycle: the run starts the next one with this job's token (actions: write).
      ...(inputs.mode === 'next-cycle' && token ? { startWorkflow: workflowDispatcher(token, logger) } : {}),
    },
    logger,
  );
  const notices = dispatchNotices(result);
  for (const e of notices.errors) core.error(e);
  for (const n of notices.notices ?? []) core.notice(n);
  for (const line of notices.info) logger.info(line);
  for (const [name, value] of Object.entries(dispatchOutputs(result))) core.setOutput(name, value);
  const run = result.mode === 'plan' || result.mode === 'run';
  await writeBlocks(
    dispatchSummary(result, run ? boardSummary('dispatch-crew', layout, config, logger) : undefined),
    logger,
  );
  if (notices.failure) core.setFailed(notices.failure);
}

if (process.argv[2] === '__run-crew') {
  runCrewFromSpec(process.argv[3] ?? '').then(
    (code) => (process.exitCode = code),
    () => (process.exitCode = 1),
  );
} else {
  void runAction(main);
}
