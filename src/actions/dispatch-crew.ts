import * as core from '@actions/core';
import { actionsJobStatus } from '../crew/job-status.js';
import { runCrewFromSpec } from '../crew/runner.js';
import { createGitHubClient } from '../github/client.js';
import { hideCredentials } from '../github/credentials.js';
import { actionsLogger, optionalInput, runAction, secretInput } from '../github/runtime.js';
import { writeBlocks } from '../github/summary-blocks.js';
import { dispatchJob, dispatchOutputs, dispatchSummary, parseDispatchInputs } from '../loop/dispatch-job.js';
import { boardSummary } from './board-summary.js';

/**
 * dispatch-crew: parse the inputs, run the job (src/loop/dispatch-job.ts), render its summary. Modes:
 * `plan` plans a batch and outputs the daemon matrix (identifiers only); `run` runs one daemon's
 * planned crews with its K slots; `heartbeat` records this runner's roster heartbeat; `import`
 * validates crew jobs' handoffs. The same bundle is the crew runner: the driver starts
 * `node <this bundle> __run-crew <spec>` in its own session.
 */

/** Every input as the runner gives it (strings); parsing and validation live with the job. */
function rawInputs() {
  return {
    mode: optionalInput('mode') ?? 'plan',
    daemon: optionalInput('daemon'),
    config: optionalInput('config'),
    stateDir: optionalInput('state-dir'),
    maxCrews: optionalInput('max-crews'),
    jobTimeoutMinutes: optionalInput('job-timeout-minutes'),
    clearPause: optionalInput('clear-pause'),
    onlyIssues: optionalInput('only-issues'),
    bookbagsPath: optionalInput('bookbags-path'),
    handoffPath: optionalInput('handoff-path'),
    jobStartedAt: optionalInput('job-started-at'),
    dryRun: optionalInput('dry-run'),
    token: secretInput('token'),
  };
}

async function main(): Promise<void> {
  const { token, jobStartedAt, ...inputs } = parseDispatchInputs(rawInputs());
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
      jobLiveness: (repo) =>
        token && repo ? actionsJobStatus(createGitHubClient({ token, logger }), repo) : undefined,
    },
    logger,
  );
  if (result.mode === 'plan') {
    if (result.notes.loud) core.error(result.notes.loud);
    if (result.notes.roster?.loud) core.error(result.notes.roster.text);
  }
  if (result.mode === 'dry-run')
    logger.info(`dispatch-crew: dry run, nothing recorded in mode ${result.of}.`);
  if (result.mode === 'heartbeat')
    logger.info(`dispatch-crew: heartbeat recorded for daemon ${result.daemon}`);
  for (const [name, value] of Object.entries(dispatchOutputs(result))) core.setOutput(name, value);
  const board =
    result.mode === 'plan' || result.mode === 'run'
      ? boardSummary('dispatch-crew', layout, config, logger)
      : undefined;
  await writeBlocks(dispatchSummary(result, board), logger);
  if (result.mode === 'run' && result.run.lost.length)
    core.setFailed(
      `${result.run.lost.length} crew(s) lost; launches are paused until \`school pause --clear\``,
    );
}

if (process.argv[2] === '__run-crew') {
  runCrewFromSpec(process.argv[3] ?? '').then(
    (code) => (process.exitCode = code),
    () => (process.exitCode = 1),
  );
} else {
  void runAction(main);
}
