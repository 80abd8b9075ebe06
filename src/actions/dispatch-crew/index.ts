import * as core from '@actions/core';
import { deniedBy } from '../../cli/exit.js';
import { redactText } from '../../security/redact.js';
import { runCrewFromSpec } from '../../crew/run/runner.js';
import { actionsClaimPort } from '../../github/actions-services.js';
import { createGitHubClient } from '../../github/client.js';
import { octokitControl } from '../../github/control-port.js';
import { hideCredentials } from '../../github/credentials.js';
import { jobStatusFor } from '../../github/job-status.js';
import { actionsLogger, runAction } from '../../github/runtime.js';
import { writeBlocks } from '../../github/summary-blocks.js';
import { dispatchJob, type DispatchJobInput } from '../../loop/dispatch-job.js';
import type { Logger } from '../../log.js';
import { workflowDispatcher } from '../../github/next-cycle.js';
import { boardSummary } from '../board-summary.js';
import { runContextFrom } from '../../process/run-context.js';
import { readInputs, type DispatchInputs } from './inputs.js';
import { dispatchNotices, dispatchOutputs, dispatchSummary } from './summary.js';

/**
 * dispatch-crew: parse the inputs, run the job (src/loop/dispatch-job.ts), report the result. Modes:
 * `plan` plans a batch and outputs the daemon matrix (identifiers only); `run` runs one daemon's
 * planned crews with its K slots; `heartbeat` records this runner's roster heartbeat; `import`
 * validates crew jobs' handoffs; `next-cycle` starts the next run when work is waiting. Each mode
 * has its own parsed input (./inputs.ts). The same bundle is the crew runner: the driver starts
 * `node <this bundle> __run-crew <spec>` in its own session.
 */
async function main(): Promise<void> {
  const inputs = readInputs((w) => core.warning(w));
  // The token is in `inputs` now; children and /proc/<pid>/environ never see it again.
  hideCredentials();
  const logger = actionsLogger();
  const { config, layout, result } = await dispatchJob(
    withPorts(inputs, logger),
    logger,
    runContextFrom(process.env),
  );
  const notices = dispatchNotices(result);
  for (const e of notices.errors) core.error(e);
  // A plan a gate denied (a pause, the spend cap, corrupt state, no daemon online…) is said as an
  // error on the run's page, as `school dispatch` exits 3 for it. The step itself does not fail:
  // the roster jobs must still beat and the state still be saved for the run that follows the gate.
  // The first cycle, before any heartbeat, plans nothing by design (its roster jobs beat): no error.
  const firstCycle = result.mode === 'plan' && result.notes.roster && !result.notes.roster.loud;
  const denied = result.mode === 'plan' && !firstCycle ? deniedBy(result.plan) : undefined;
  if (denied && !notices.errors.includes(denied))
    core.error(redactText(`no crew was planned: dispatch was denied: ${denied}`), {
      title: 'school dispatch denied',
    });
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

/** The mode's input with what the job talks to on GitHub (the Actions API, the artifact service). */
function withPorts(inputs: DispatchInputs, logger: Logger): DispatchJobInput {
  switch (inputs.mode) {
    case 'plan':
      // Whether another job still runs is asked of the Actions API: the planner cancels crews whose
      // crew job never started. The token also reads the feedback on delivered pull requests.
      return { ...inputs, jobLiveness: jobStatusFor(inputs.token, logger) };
    case 'run': {
      const { token, controlToken, ...run } = inputs;
      return {
        ...run,
        ports: {
          // `/school stop|steer` for the crews this job runs, read with the job's read-only token.
          // The client lives in this driver only: the token never reaches a crew runner, a student,
          // a spec or the state (src/feedback/crew-job-control.ts).
          control: controlToken
            ? (repository: string) =>
                octokitControl(
                  // No waiting inside a request: the poll backs off itself and says so.
                  createGitHubClient({ token: controlToken, logger, rateLimitRetries: 0 }),
                  repository,
                )
            : undefined,
          launcher: [process.execPath, process.argv[1]!, '__run-crew'],
          // A runner reclaims an expired lease only once the job holding it has ended.
          jobLiveness: jobStatusFor(token, logger),
          // The shared standby queue: a crew job claims with the runner's runtime token, lent to the
          // artifact client for each call only (hideCredentials above).
          claimPort: actionsClaimPort,
        },
      };
    }
    case 'import':
      // The grade job's import lists the run's claims with the runtime token.
      return { ...inputs, claimPort: actionsClaimPort };
    case 'next-cycle': {
      const { token, ...next } = inputs;
      // The run starts the next one with this job's token (actions: write).
      return { ...next, startWorkflow: token ? workflowDispatcher(token, logger) : undefined };
    }
    case 'heartbeat':
      return inputs;
  }
}

if (process.argv[2] === '__run-crew') {
  runCrewFromSpec(process.argv[3] ?? '', runContextFrom(process.env)).then(
    (code) => (process.exitCode = code),
    () => (process.exitCode = 1),
  );
} else {
  void runAction(main);
}
