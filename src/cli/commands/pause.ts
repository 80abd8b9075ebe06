import { resolveConfig } from '../../config/load.js';
import { ConfigError, CorruptStateError, message } from '../../errors.js';
import { clearPause, pauseSchool } from '../../dispatch/gates/pause.js';
import { readSchool } from '../../dispatch/logs/school-log.js';
import { pauseLines } from '../../board/terminal.js';
import { pauseFacts } from '../../board/view.js';
import { readRegistry } from '../../dispatch/logs/registry.js';
import { redactText } from '../../security/redact.js';
import { StateLayout } from '../../state/layout.js';
import { parseVerb, verbOptions } from '../args.js';
import type { Command } from '../commands.js';

const OPTIONS = verbOptions(['reason', 'config', 'state-dir'], ['clear', 'status']);

const HELP = `Usage: school pause --reason TEXT     pause new launches (running crews finish)
       school pause --clear [--reason TEXT]  lift every recorded pause
       school pause --status            show whether launches are paused and why
Options: --config FILE (default school.yml), --state-dir DIR (default: stateDir from the config)
`;

/**
 * Seed 002: a usage/credit limit or service overload pauses new launches; after the cause is
 * resolved, `--clear` permits a new launch check, and an unresolved condition pauses again (the next
 * crew that reports it records a new pause).
 */
export const pauseCommand: Command = {
  summary: 'pause --reason TEXT | --clear | --status: pause, resume or inspect new crew launches',
  async run(argv) {
    const values = parseVerb('pause', argv, OPTIONS, HELP);
    if (!values) return 0;
    const modes = [values.clear, values.status, !values.clear && values.reason !== undefined].filter(Boolean);
    if (modes.length !== 1) {
      throw new ConfigError(
        'school pause: choose exactly one of --reason TEXT (pause), --clear or --status. Run `school pause --help`.',
      );
    }
    const config = resolveConfig(values.config);
    const layout = new StateLayout(values['state-dir'] ?? config.stateDir);

    if (values.status) {
      process.stdout.write(describe(layout));
      return 0;
    }
    if (values.clear) {
      let registry;
      try {
        registry = readRegistry(layout);
      } catch (e) {
        if (!(e instanceof CorruptStateError)) throw e;
        // Dispatch stays denied while the registry is quarantined; the pause can still be lifted.
        process.stderr.write(`school pause: ${redactText(message(e))}\n`);
      }
      const { cleared } = await clearPause(layout, values.reason ?? 'cleared by operator', registry);
      process.stdout.write(
        cleared.length === 0
          ? 'No pause was recorded; the next dispatch checks launches as usual.\n'
          : `Cleared ${cleared.length} pause(s). A condition that persists pauses again on its next report.\n`,
      );
      return 0;
    }
    await pauseSchool(layout, values.reason!);
    process.stdout.write(`Paused new launches: ${redactText(values.reason!.trim())}\n`);
    return 0;
  },
};

/** The lines `school status` prints for its pauses, from the same facts (src/board/view.ts `pauseFacts`). */
function describe(layout: StateLayout): string {
  return redactText(pauseLines(pauseFacts(readSchool(layout), new Date())).join('\n')) + '\n';
}
