import { resolveConfig } from '../../config/load.js';
import { drain, type DrainResult } from '../../grading/drain.js';
import { installedDependencies, verifyOnCleanCheckout } from '../../crew/checkout/clean-checkout.js';
import { afterGrading, withOutbox, type AfterGradingResult } from '../../loop/after-grading.js';
import { runStages } from '../../loop/stages.js';
import { gradingPorts } from '../../loop/github-ports.js';
import { drainProgress } from '../../grading/progress.js';
import { ScoreLedger, leaderboard } from '../../grading/ledger.js';
import { countsLine, leaderboardTable, renderText, verdictTable } from '../../grading/report.js';
import { consoleLogger } from '../../log.js';
import { EXIT } from '../exit.js';
import { redactText } from '../../security/redact.js';
import { StateLayout } from '../../state/layout.js';
import { intOption, parseVerb, verbOptions } from '../args.js';
import type { Command } from '../commands.js';
import { cliContext } from '../context.js';
import { statusLinks } from '../../feedback/status.js';
import { auditActor } from '../../process/run-context.js';

const OPTIONS = verbOptions(['max-workers', 'max-attempts', 'config', 'state-dir'], ['json']);

const HELP = `Usage: school drain [--max-workers N] [--max-attempts N] [--config FILE] [--state-dir DIR] [--json]

Grades one snapshot of the pending grading jobs in waves of at most N workers (capped at the fleet's
worktree count). GitHub labels and comments are delivered when GITHUB_TOKEN is set and a repository
is configured; otherwise they wait in the outbox. Exit code 1 when grading stopped (corrupt ledger).
`;

export const drainCommand: Command = {
  summary: 'drain [--max-workers N] [--max-attempts N]: grade pending jobs (judges, ledger, outbox)',
  async run(argv) {
    const values = parseVerb('drain', argv, OPTIONS, HELP);
    if (!values) return 0;
    const maxWorkers = intOption('max-workers', values['max-workers']);
    const maxAttempts = intOption('max-attempts', values['max-attempts']);
    const config = resolveConfig(values.config, values['state-dir'] ? { stateDir: values['state-dir'] } : {});
    const context = cliContext();
    const layout = new StateLayout(config.stateDir, auditActor(context));
    const logger = consoleLogger({ debug: !!context.host.SCHOOL_DEBUG });
    // Labels, comments, delivery and the guarded merge with GITHUB_TOKEN (src/loop/github-ports.ts).
    const { github, delivery, merge } = gradingPorts({
      config,
      layout,
      logger,
      actions: false,
      repository: config.repository ?? context.repository,
      token: context.host.GITHUB_TOKEN,
    });
    if (!github) logger.info('no GITHUB_TOKEN or repository: labels and comments stay in the outbox');
    let drained!: DrainResult;
    let after!: AfterGradingResult;
    await runStages('school drain', {
      drain: async () => {
        drained = await drain({
          config,
          layout,
          logger,
          deliver: !!delivery,
          limits: { maxWorkers, maxAttempts },
          judging: { verifyOnCleanCheckout, installedDependencies },
          worker: { context },
          // On stderr, as the logger writes: `--json` keeps stdout to the result alone.
          observe: { progress: drainProgress({ logger }) },
        });
      },
      // Labels, pull requests, the guarded merge and the status comments go out.
      'after-grading': async () => {
        after = await afterGrading({
          config,
          layout,
          logger,
          links: statusLinks(context),
          github,
          delivery,
          merge,
        });
      },
    });
    const result = withOutbox(drained, after);
    if (values.json) {
      process.stdout.write(redactText(JSON.stringify(result, null, 2)) + '\n');
    } else {
      process.stdout.write(`${countsLine(result)}\n`);
      if (result.verdicts.length > 0)
        process.stdout.write('\n' + redactText(renderText(verdictTable(result))));
      if (!result.fatal) {
        const rows = leaderboard(new ScoreLedger(layout).state());
        if (rows.length > 0) process.stdout.write('\nLeaderboard\n' + renderText(leaderboardTable(rows)));
      }
    }
    if (result.fatal) {
      process.stderr.write(`school drain: ${redactText(result.fatal)}\n`);
      return EXIT.failed;
    }
    if (result.failed > 0) {
      const first = result.errors[0];
      process.stderr.write(
        `school drain: ${result.failed} grading job(s) failed${first ? ` (${first.jobKey}: ${redactText(first.error)})` : ''}; the next drain tries them again, and after grading.maxAttempts they are dead letters (school dead-letters list)\n`,
      );
      return EXIT.failed;
    }
    return EXIT.done;
  },
};
