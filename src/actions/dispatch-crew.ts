import * as core from '@actions/core';
import { hideCredentials } from '../github/credentials.js';
import { z } from 'zod';
import { resolveConfig } from '../config/load.js';
import { actionsJobStatus } from '../crew/job-status.js';
import { beatDaemon, planStep, progressLine, runStep } from '../loop/steps.js';
import { runCrewFromSpec } from '../crew/runner.js';
import { clearPause } from '../dispatch/pause.js';
import { heartbeatTtlSeconds, rosterProblem } from '../dispatch/fleet.js';
import { configuredJobTimeout, jobTimeoutNote, ttlFromSchedule } from '../dispatch/job-settings.js';
import { readRegistry } from '../dispatch/registry.js';
import { ConfigError, CorruptStateError } from '../errors.js';
import { createGitHubClient } from '../github/client.js';
import { boardSummary } from './board-summary.js';
import { booleanInput, wholeNumberInput } from '../github/inputs.js';
import { actionsLogger, optionalInput, runAction, secretInput, writeSummary } from '../github/runtime.js';
import { StateLayout } from '../state/layout.js';
import { join } from 'node:path';
import { markHandoff, writeHandoff } from '../handoff/handoff.js';
import { importHandoffs } from '../handoff/import.js';
import { handoffSummary } from '../handoff/summary.js';

/**
 * dispatch-crew: thin entry (STYLE). `mode: plan` plans a batch and outputs the daemon matrix
 * (identifiers only); `mode: run` runs one daemon's planned crews with its K slots; `mode:
 * heartbeat` only records this runner's roster heartbeat. The same bundle
 * is the crew runner: the driver starts `node <this bundle> __run-crew <spec>` in its own session.
 */

const inputsSchema = z.object({
  mode: z.enum(['plan', 'run', 'heartbeat', 'import'], {
    message: 'mode: expected "plan", "run", "heartbeat" or "import"',
  }),
  daemon: z.string().optional(),
  config: z.string().optional(),
  stateDir: z.string().optional(),
  maxCrews: wholeNumberInput('max-crews'),
  jobTimeoutMinutes: wholeNumberInput('job-timeout-minutes'),
  clearPause: z.string().optional(),
  bookbagsPath: z.string().optional(),
  handoffPath: z.string().optional(),
  jobStartedAt: z.iso
    .datetime({ message: 'job-started-at: expected an ISO time, e.g. 2026-01-01T00:00:00Z' })
    .optional(),
  dryRun: booleanInput('dry-run'),
  token: z.string().optional(),
});

function parseInputs() {
  const r = inputsSchema.safeParse({
    mode: optionalInput('mode') ?? 'plan',
    daemon: optionalInput('daemon'),
    config: optionalInput('config'),
    stateDir: optionalInput('state-dir'),
    maxCrews: optionalInput('max-crews'),
    jobTimeoutMinutes: optionalInput('job-timeout-minutes'),
    clearPause: optionalInput('clear-pause'),
    bookbagsPath: optionalInput('bookbags-path'),
    handoffPath: optionalInput('handoff-path'),
    jobStartedAt: optionalInput('job-started-at'),
    dryRun: optionalInput('dry-run'),
    token: secretInput('token'),
  });
  if (!r.success)
    throw new ConfigError(`dispatch-crew inputs: ${r.error.issues.map((i) => i.message).join('; ')}`);
  if (r.data.mode === 'import' && !r.data.handoffPath)
    throw new ConfigError(
      'dispatch-crew: mode import needs the handoff-path input (the downloaded handoffs).',
    );
  if ((r.data.mode === 'run' || r.data.mode === 'heartbeat') && !r.data.daemon)
    throw new ConfigError(
      `dispatch-crew: mode ${r.data.mode} needs the daemon input (the fleet daemon id this runner is).`,
    );
  return r.data;
}

async function main(): Promise<void> {
  const inputs = parseInputs();
  // The token is in `inputs` now; children and /proc/<pid>/environ never see it again.
  hideCredentials();
  const started = performance.now();
  // The crew job's timeout-minutes, when the workflow passes it, is the one job limit: admission plans
  // only the waves that fit in it, and the crew runner stops launching before GitHub kills the job.
  const dispatch = {
    ...(inputs.maxCrews ? { maxCrews: inputs.maxCrews } : {}),
    ...(inputs.jobTimeoutMinutes ? { jobTimeoutMinutes: inputs.jobTimeoutMinutes } : {}),
  };
  const ttl = ttlFromSchedule(
    resolveConfig(inputs.config, {
      ...(inputs.stateDir ? { stateDir: inputs.stateDir } : {}),
      ...(Object.keys(dispatch).length ? { dispatch } : {}),
    }),
  );
  const config = ttl.config;
  const layout = new StateLayout(config.stateDir);
  const logger = actionsLogger();
  if (ttl.problem) logger.warning(`dispatch-crew: ${ttl.problem}`);
  const jobNote = inputs.jobTimeoutMinutes
    ? jobTimeoutNote(configuredJobTimeout(inputs.config), inputs.jobTimeoutMinutes)
    : undefined;
  if (jobNote) logger.warning(`dispatch-crew: ${jobNote}`);
  const jobStartedAt = inputs.jobStartedAt ? new Date(inputs.jobStartedAt) : undefined;
  // Whether another job still runs is asked of the Actions API: the planner cancels crews whose
  // crew job never started, and a runner reclaims an expired lease only once its job has ended.
  const repo = config.repository ?? process.env.GITHUB_REPOSITORY;
  const status =
    inputs.token && repo
      ? actionsJobStatus(createGitHubClient({ token: inputs.token, logger }), repo)
      : undefined;
  if (inputs.mode === 'plan') {
    const cleared = inputs.clearPause?.trim()
      ? await clearPauses(layout, inputs.clearPause, inputs.dryRun)
      : undefined;
    if (cleared) logger.info(`dispatch-crew: ${cleared}`);
    const plan = await logger.group('Plan crews', () =>
      planStep({
        config,
        layout,
        logger,
        dryRun: inputs.dryRun,
        ...(jobStartedAt ? { jobStartedAt } : {}),
        ...(status ? { jobStatus: status } : {}),
      }),
    );
    if (plan.loud) core.error(plan.loud);
    const roster = rosterProblem(plan.fleet, heartbeatTtlSeconds(config));
    if (roster?.loud) core.error(roster.text);
    else if (roster) logger.info(`dispatch-crew: ${roster.text}`);
    // docs/architecture.md: identifiers only in outputs — daemon ids, labels from school.yml, crew ids.
    core.setOutput(
      'matrix',
      JSON.stringify(
        plan.matrix.map((m) => ({ daemon: m.daemon, labels: m.labels, assignments: m.assignments })),
      ),
    );
    // Every configured daemon's id, work or not: the roster job beats each one (docs/workflows.md).
    core.setOutput('fleet', JSON.stringify(plan.fleet.map((d) => d.id)));
    core.setOutput('admitted', String(plan.assignments.length));
    core.setOutput('refused', String(plan.refused.length));
    const board = boardSummary('dispatch-crew', layout, config, logger);
    await writeSummary((s) => {
      s.addHeading('dispatch-crew: plan', 2);
      if (plan.loud) s.addRaw(`**${plan.loud}**`, true);
      if (roster) s.addRaw(roster.loud ? `**${roster.text}**` : roster.text, true);
      if (plan.blocked) s.addRaw(`Blocked: ${plan.blocked}`, true);
      if (cleared) s.addRaw(cleared, true);
      if (ttl.note) s.addRaw(ttl.note, true);
      if (jobNote) s.addRaw(`**${jobNote}**`, true);
      s.addRaw(`Crew job limit: ${config.dispatch.jobTimeoutMinutes} minutes.`, true);
      if (plan.paused) s.addRaw(plan.paused, true);
      s.addRaw(
        `Admitted ${plan.assignments.length}, refused ${plan.refused.length}${inputs.dryRun ? ' (dry run: nothing recorded)' : ''}.`,
        true,
      );
      s.addTable([
        [
          { data: 'crew', header: true },
          { data: 'issue', header: true },
          { data: 'daemon', header: true },
          { data: 'agent', header: true },
        ],
        ...plan.assignments.map((a) => [a.crewId, `#${a.issueNumber}`, a.daemon, a.agent]),
      ]);
      if (plan.refused.length) {
        s.addTable([
          [
            { data: 'issue', header: true },
            { data: 'refused because', header: true },
          ],
          ...plan.refused.map((r) => [`#${r.issue}`, r.reason]),
        ]);
      }
      s.addTable([
        [
          { data: 'daemon', header: true },
          { data: 'online', header: true },
          { data: 'slots', header: true },
          { data: 'busy', header: true },
          { data: 'assigned', header: true },
        ],
        ...plan.fleet.map((d) => [
          d.id,
          d.online ? 'yes' : `no (${d.offlineReason ?? 'offline'})`,
          String(d.slots),
          String(d.busy),
          String(d.assigned),
        ]),
      ]);
      if (board) s.addRaw(board, true);
    }, logger);
    return;
  }
  if (inputs.dryRun) {
    logger.info(`dispatch-crew: dry run — nothing recorded in mode ${inputs.mode}.`);
    return;
  }
  if (inputs.mode === 'import') {
    const r = await logger.group("Import the crew jobs' handoffs", () =>
      importHandoffs(layout, inputs.handoffPath!, { config, logger }),
    );
    core.setOutput('imported', String(r.dirs.reduce((n, d) => n + d.accepted, 0)));
    core.setOutput('refused', String(r.refused.length));
    await writeSummary((s) => s.addRaw(handoffSummary(r), true), logger);
    return;
  }
  const daemon = inputs.daemon!;
  // Safe outputs: a job that runs students saves no state; it hands on what it appended.
  const marks = inputs.handoffPath ? markHandoff(layout) : undefined;
  const handOn = () => {
    if (marks) writeHandoff(layout, marks, inputs.handoffPath!, daemon);
  };
  if (inputs.mode === 'heartbeat') {
    // A runner beats the roster so the next plan may assign to it (a silent daemon is offline).
    await beatDaemon(layout, config, daemon);
    handOn();
    logger.info(`dispatch-crew: heartbeat recorded for daemon ${daemon}`);
    return;
  }
  const budgetMs =
    config.dispatch.jobTimeoutMinutes * 60_000 -
    (jobStartedAt ? Math.max(0, Date.now() - jobStartedAt.getTime()) : 0);
  const bookbagsPath =
    inputs.bookbagsPath ?? (inputs.handoffPath ? join(inputs.handoffPath, 'bookbags') : undefined);
  // Handed on also when the run fails: finished crews and released leases must not be lost.
  const result = await logger
    .group(`Run the crews of daemon ${daemon}`, () =>
      runStep({
        config,
        layout,
        daemon,
        logger,
        launcher: [process.execPath, process.argv[1]!, '__run-crew'],
        ...(bookbagsPath ? { bookbagsPath } : {}),
        // N3.3: the job's remaining time, measured in-process on the monotonic clock (N3.2).
        remainingMs: () => budgetMs - (performance.now() - started),
        ...(status ? { jobStatus: status } : {}),
        onProgress: (p) => logger.info(progressLine(daemon, p)),
      }),
    )
    .finally(handOn);
  core.setOutput('finished', String(result.finished.length));
  core.setOutput('lost', String(result.lost.length));
  core.setOutput('paused', result.paused ? 'true' : 'false');
  const board = boardSummary('dispatch-crew', layout, config, logger);
  await writeSummary((s) => {
    s.addHeading(`dispatch-crew: daemon ${daemon}`, 2);
    if (result.paused) s.addRaw(`**${result.paused}**`, true);
    s.addTable([
      [
        { data: 'crew', header: true },
        { data: 'outcome', header: true },
        { data: 'reason', header: true },
      ],
      ...result.finished.map((f) => [f.crewId, f.outcome, f.reason]),
      ...result.lost.map((id) => [id, 'lost', 'unexplained exit: launches paused']),
      ...result.skipped.map((k) => [k.crewId, 'not started', k.reason]),
    ]);
    if (board) s.addRaw(board, true);
  }, logger);
  if (result.lost.length)
    core.setFailed(`${result.lost.length} crew(s) lost; launches are paused until \`school pause --clear\``);
}

/** Lifts every launch pause with the given reason (the workflow input clear-pause). */
async function clearPauses(layout: StateLayout, reason: string, dryRun: boolean): Promise<string> {
  if (dryRun) return `dry run: the pauses are not cleared (reason given: ${reason.trim()}).`;
  let registry;
  try {
    registry = readRegistry(layout);
  } catch (e) {
    if (!(e instanceof CorruptStateError)) throw e;
    // Dispatch stays denied while the registry is quarantined; the pause can still be lifted.
  }
  const { cleared } = await clearPause(layout, reason, registry);
  return cleared.length === 0
    ? 'clear-pause: no pause was in force.'
    : `clear-pause: lifted ${cleared.length} pause(s), reason recorded: ${reason.trim()}`;
}

if (process.argv[2] === '__run-crew') {
  runCrewFromSpec(process.argv[3] ?? '').then(
    (code) => (process.exitCode = code),
    () => (process.exitCode = 1),
  );
} else {
  void runAction(main);
}
