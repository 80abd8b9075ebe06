import { consoleLogger } from '../../log.js';
import { resolveConfig } from '../../config/load.js';
import { recoverQuarantined } from '../../checkpoint/recover.js';
import { parseCheckpointInputs, runCheckpoint } from '../../checkpoint/run.js';
import { cliContext } from '../context.js';
import { textReport } from '../../checkpoint/summary.js';
import { parseVerbWords, verbOptions } from '../args.js';
import type { Command } from '../commands.js';

const OPTIONS = verbOptions(['dir', 'branch', 'remote', 'state-dir', 'config'], ['dry-run', 'debug']);

const USAGE = `Usage: school checkpoint restore|save [options]
       school checkpoint recover [--state-dir PATH] [--config FILE]

Restore the state directory from a checkpoint, or save it as one. "recover" merges each quarantined
copy of a corrupt state file (<file>.corrupt-<time>) back into its log: every record that still
parses is kept (each applied once, by its key), only the broken lines are dropped, and the copy is
kept as <file>.recovered-<time>. Run it after "school checkpoint restore" when the checkpoint may hold
records this machine lost.

  --dir PATH          use a local checkpoint directory (no git, no GitHub)
  --branch NAME       state branch (default: checkpoint.branch in school.yml, "school-state")
  --remote URL|NAME   remote holding the state branch (default: origin of this repository)
  --state-dir PATH    state directory (default: stateDir in school.yml, ".school/state")
  --config FILE       school.yml to read
  --dry-run           choose, verify and report; write nothing
`;

export const checkpointCommand: Command = {
  summary:
    'checkpoint restore|save|recover [--dir PATH | --branch NAME --remote URL]: restore or save the state, or recover a corrupt file',
  async run(argv) {
    const parsed = parseVerbWords('checkpoint', argv, OPTIONS, USAGE);
    if (!parsed) return 0;
    const { values, positionals } = parsed;
    const mode = positionals[0];
    if (mode === 'recover' && positionals.length === 1) return recover(values);
    if ((mode !== 'restore' && mode !== 'save') || positionals.length > 1) {
      process.stderr.write(
        mode
          ? `school checkpoint: unknown subcommand "${positionals.join(' ')}"; use restore, save or recover.\n\n${USAGE}`
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

/** `school checkpoint recover`: the quarantined copies merged back (src/state/recover.ts). */
async function recover(values: { 'state-dir'?: string; config?: string }): Promise<number> {
  const config = resolveConfig(values.config, values['state-dir'] ? { stateDir: values['state-dir'] } : {});
  const done = await recoverQuarantined(config.stateDir);
  if (done.length === 0) {
    process.stdout.write(`nothing to recover: no quarantined state file in ${config.stateDir}\n`);
    return 0;
  }
  for (const r of done)
    process.stdout.write(
      `recovered ${r.file}: ${r.kept} record(s) of ${r.from} merged back (${r.total} in the log now)` +
        (r.dropped.length ? `; dropped unreadable line(s) ${r.dropped.slice(0, 20).join(', ')}` : '') +
        `; the copy is kept as ${r.keptAs}\n`,
    );
  return 0;
}
