import { resolveConfig } from '../../config/load.js';
import { ConfigError } from '../../errors.js';
import { issueStates } from '../../dispatch/logs/history.js';
import { requeueIssue } from '../../dispatch/gates/pause.js';
import { readRegistry } from '../../dispatch/logs/registry.js';
import { readSchool } from '../../dispatch/logs/school-log.js';
import { redactText } from '../../security/redact.js';
import { StateLayout } from '../../state/layout.js';
import { parseVerbWords, verbOptions } from '../args.js';
import type { Command } from '../commands.js';

const HELP = `Usage: school requeue ISSUE --reason TEXT
Re-admits an issue stopped after two failed runs (repair-stopped-after-two-failures) or after its
classroom lost its crews repeatedly (stopped-after-orphanings). The reason is recorded in the state;
the runs before the requeue no longer count toward either stop.
Options: --config FILE (default school.yml), --state-dir DIR (default: stateDir from the config)
`;

export const requeueCommand: Command = {
  summary: 'requeue ISSUE --reason TEXT: re-admit an issue stopped after two failed runs',
  async run(argv) {
    const parsed = parseVerbWords('requeue', argv, verbOptions(['reason', 'config', 'state-dir']), HELP);
    if (!parsed) return 0;
    const { values, positionals } = parsed;
    if (positionals.length !== 1 || !/^#?\d+$/.test(positionals[0]!)) {
      throw new ConfigError(
        'school requeue: give exactly one issue number, e.g. `school requeue 42 --reason "fixed the flaky test"`.',
      );
    }
    const issue = Number(positionals[0]!.replace('#', ''));
    if (values.reason === undefined)
      throw new ConfigError('school requeue: --reason TEXT is required (it is recorded).');
    const config = resolveConfig(values.config);
    const layout = new StateLayout(values['state-dir'] ?? config.stateDir);
    const state = issueStates(readRegistry(layout), undefined, readSchool(layout).requeues, {
      maxUnconfirmedLimitClaims: config.dispatch.maxUnconfirmedLimitClaims,
    }).get(issue);
    if (state?.kind !== 'stopped') {
      const now = state ? state.kind : 'never dispatched';
      throw new ConfigError(
        `school requeue: issue #${issue} is not stopped (it is ${now}); only a stopped issue is requeued.`,
      );
    }
    await requeueIssue(layout, issue, values.reason);
    process.stdout.write(
      `Requeued issue #${issue} (${redactText(values.reason.trim())}); the next plan admits it as a first attempt.\n`,
    );
    return 0;
  },
};
