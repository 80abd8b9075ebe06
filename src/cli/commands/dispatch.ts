import { resolveConfig } from '../../config/load.js';
import { consoleLogger } from '../../log.js';
import {
  beatDaemons,
  onScratch,
  planCrews,
  progressLine,
  runStep,
  type RunStepResult,
} from '../../loop/steps.js';
import { runStages } from '../../loop/stages.js';
import { runCrewFromSpec } from '../../crew/run/runner.js';
import type { PlanResult } from '../../dispatch/plan.js';
import { StateLayout } from '../../state/layout.js';
import { ConfigError } from '../../errors.js';
import { parseVerb, verbOptions } from '../args.js';
import type { Command } from '../commands.js';
import { deniedBy, EXIT } from '../exit.js';
import { cliContext } from '../context.js';
import { auditActor } from '../../process/run-context.js';
import { redactText } from '../../security/redact.js';

const OPTIONS = verbOptions(['daemon', 'config'], ['plan-only', 'no-refill', 'run-only', 'dry-run']);

const HELP = `Usage: school dispatch [--plan-only] [--daemon ID] [--config school.yml] [--dry-run]

Plans a batch of crews from the curriculum (admission, order, assignment) and runs them locally:
every daemon of the fleet runs on this machine, each with its K worktree slots, and a progress line
is printed as crews start and finish. A freed slot takes the next admissible crew at once (refill,
the same admission under the crew log's lock) until nothing admissible is left. Bookbags land in
<stateDir>/bookbags.

  --plan-only   plan and print the plan; run nothing
  --daemon ID   run only this daemon's planned crews (plans first unless --run-only)
  --run-only    skip planning: run the crews already planned (and refill)
  --no-refill   run only the planned crews; freed slots wait for the next plan
  --dry-run     plan on a scratch copy of the state: nothing is recorded, nothing runs
  --config F    school.yml (default: ./school.yml when present, else the defaults)
`;

export const dispatchCommand: Command = {
  summary:
    'dispatch [--plan-only] [--daemon ID] [--config FILE]: plan crews and run them here, with progress',
  async run(argv) {
    // The crew runner: the driver starts `school dispatch __run-crew <spec>` in its own session.
    if (argv[0] === '__run-crew') {
      if (!argv[1]) throw new ConfigError('school dispatch __run-crew: the spec path is missing.');
      return runCrewFromSpec(argv[1], cliContext());
    }
    const values = parseVerb('dispatch', argv, OPTIONS, HELP);
    if (!values) return 0;
    const config = resolveConfig(values.config);
    const context = cliContext();
    const layout = new StateLayout(config.stateDir, auditActor(context));
    const logger = consoleLogger();
    const ids = config.fleet.daemons.map((d) => d.id);
    if (values.daemon && !ids.includes(values.daemon)) {
      throw new ConfigError(
        `--daemon: "${values.daemon}" is not in fleet.daemons (known: ${ids.join(', ')}).`,
      );
    }
    const daemons = values.daemon ? [values.daemon] : ids;
    const dryRun = values['dry-run'] ?? false;
    // Every daemon is local here: one driver each, side by side (each holds its own driver lock).
    const launcher = [process.execPath, ...process.execArgv, process.argv[1]!, 'dispatch', '__run-crew'];
    let denied: string | undefined;
    let results: Array<{ daemon: string; r: RunStepResult }> = [];
    // A dry run beats and plans on a scratch copy of the state (nothing recorded), and runs nothing.
    await onScratch(layout, dryRun, (state) =>
      runStages(
        'school dispatch',
        {
          beat: () => beatDaemons(state, config, daemons),
          plan: async () => {
            const plan = await planCrews({ config, layout: state, logger, context });
            process.stdout.write(describePlan(plan));
            denied = deniedBy(plan);
          },
          run: async () => {
            if (denied || values['plan-only'] || dryRun) return;
            results = await Promise.all(
              daemons.map((daemon) =>
                runStep({
                  config,
                  layout,
                  daemon,
                  logger,
                  launch: { launcher },
                  context,
                  office: { refill: !values['no-refill'] },
                  onProgress: (p) => process.stdout.write(progressLine(daemon, p) + '\n'),
                }).then((r) => ({ daemon, r })),
              ),
            );
          },
        },
        // --run-only: the crews an earlier plan left (the run beats each daemon itself).
        { skip: values['run-only'] ? ['beat', 'plan'] : [] },
      ),
    );
    if (denied) {
      process.stderr.write(`school dispatch: dispatch was denied: ${denied}\n`);
      return EXIT.denied;
    }
    if (values['plan-only'] || dryRun) return EXIT.done;
    let lost = 0;
    // A daemon whose sandbox check refused the runner, or whose crew could not run here (a program
    // missing), did nothing of its work: the environment failed, not the plan (./exit.ts).
    const failed: string[] = [];
    for (const { daemon, r } of results) {
      if (r.refused) failed.push(`${daemon}: the sandbox check refused this runner: ${r.refused}`);
      if (r.infraStopped)
        failed.push(`${daemon}: ${r.infraStopped}; school doctor says what this runner lacks`);
      const outcomes = r.finished.map((f) => `${f.crewId} ${f.outcome}`).join(', ') || 'none';
      process.stdout.write(
        `${daemon}: finished ${r.finished.length} (${outcomes}); refilled ${r.refilled.length}; adopted ${r.adopted.length}; lost ${r.lost.length}\n`,
      );
      for (const s of r.skipped) process.stdout.write(`${daemon}: not started ${s.crewId}: ${s.reason}\n`);
      if (r.paused) process.stdout.write(`${daemon}: ${r.paused}\n`);
      lost += r.lost.length;
    }
    if (lost)
      process.stderr.write(
        `school dispatch: ${lost} crew(s) lost; launches are paused until \`school pause --clear\`\n`,
      );
    for (const line of failed) process.stderr.write(`school dispatch: ${redactText(line)}\n`);
    return lost || failed.length ? EXIT.failed : EXIT.done;
  },
};

export function describePlan(plan: PlanResult): string {
  const lines: string[] = [];
  if (plan.loud) lines.push(plan.loud);
  if (plan.blocked) lines.push(`blocked: ${plan.blocked}`);
  if (plan.paused) lines.push(plan.paused);
  if (plan.review && (plan.review.waiting > 0 || plan.review.full || plan.review.agents.some((a) => a.full)))
    lines.push(plan.review.line);
  lines.push(`planned ${plan.assignments.length} crew(s)`);
  for (const a of plan.assignments) {
    lines.push(
      `  ${a.crewId}  #${a.issueNumber} → ${a.daemon} (${a.agent}, ${a.weight}${a.repair ? ', repair' : ''})`,
    );
  }
  if (plan.refused.length) lines.push(`refused ${plan.refused.length}:`);
  for (const r of plan.refused) lines.push(`  #${r.issue}: ${r.reason}`);
  for (const d of plan.fleet) lines.push(`  daemon ${d.id}: ${d.assigned} assigned, ${d.busy} busy before`);
  return lines.join('\n') + '\n';
}
