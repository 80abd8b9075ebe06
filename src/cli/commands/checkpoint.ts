import { consoleLogger } from '../../log.js';
import { parseCheckpointInputs, runCheckpoint } from '../../checkpoint/run.js';
import { cliContext } from '../context.js';
import { textReport } from '../../checkpoint/summary.js';
import { parseVerbWords, verbOptions } from '../args.js';
import type { Command } from '../commands.js';

const OPTIONS = verbOptions(['dir', 'branch', 'remote', 'state-dir', 'config'], ['dry-run', 'debug']);

const USAGE = `Usage: school checkpoint restore|save [options]

Restore the state directory from a checkpoint, or save it as one.

  --dir PATH          use a local checkpoint directory (no git, no GitHub)
  --branch NAME       state branch (default: checkpoint.branch in school.yml, "school-state")
  --remote URL|NAME   remote holding the state branch (default: origin of this repository)
  --state-dir PATH    state directory (default: stateDir in school.yml, ".school/state")
  --config FILE       school.yml to read
  --dry-run           choose, verify and report; write nothing
`;

export const checkpointCommand: Command = {
  summary: 'checkpoint restore|save [--dir PATH | --branch NAME --remote URL]: restore or save the state',
  async run(argv) {
    const parsed = parseVerbWords('checkpoint', argv, OPTIONS, USAGE);
    if (!parsed) return 0;
    const { values, positionals } = parsed;
    const mode = positionals[0];
    if ((mode !== 'restore' && mode !== 'save') || positionals.length > 1) {
      process.stderr.write(
        mode
          ? `school checkpoint: unknown subcommand "${positionals.join(' ')}"; use restore or save.\n\n${USAGE}`
          : USAGE,
      );
      return 2;
    }
    if (values.dir && (values.branch || values.remote)) {
      process.stderr.write(
        'school checkpoint: --dir and --branch/--remote pick different sources; use one or the other.\n',
      );
      return 2;
    }
    const logger = consoleLogger({ debug: values.debug });
    const report = await runCheckpoint(
      parseCheckpointInputs({
        mode,
        stateDir: values['state-dir'],
        branch: values.branch,
        remote: values.remote,
        directory: values.dir,
        sources: values.dir ? 'directory' : 'branch',
        config: values.config,
        dryRun: values['dry-run'] === true,
      }),
      { logger, workspace: process.cwd(), context: cliContext() },
    );
    process.stdout.write(textReport(report));
    return 0;
  },
};
