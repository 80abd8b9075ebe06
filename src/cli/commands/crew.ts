import { userInfo } from 'node:os';
import { resolveConfig } from '../../config/load.js';
import { ConfigError } from '../../errors.js';
import { controlEvents, controlLog, type ControlCommand } from '../../dispatch/logs/control-log.js';
import { readRegistry } from '../../dispatch/logs/registry.js';
import { STOP_POLL_MS } from '../../crew/run/control.js';
import { StateLayout } from '../../state/layout.js';
import { parseVerbWords, verbOptions } from '../args.js';
import type { Command } from '../commands.js';
import { EXIT } from '../exit.js';

const HELP = `Usage: school crew stop ISSUE [--reason TEXT]
       school crew steer ISSUE TEXT
Tells the crew planned or running for an issue what a person decided (docs/crews.md, "Steering and
stopping a crew"), as \`/school stop\` and \`/school steer\` do on GitHub:
  stop   ends the crew: its student is stopped, its slot freed, it ends cancelled "stopped by
         <you>" (not the agent's failure, no score). The issue is not planned again until
         \`school requeue ISSUE\`.
  steer  hands TEXT to the crew's next turn (a correction turn, or a resumed session's), quoted as
         your words. A crew with no further turn records it as not delivered.
The command is recorded in the state; the crew's runner reads it within about a second.
Exit codes: 0 recorded; 2 a wrong command line; 3 no crew is planned or running for the issue.
Options: --reason TEXT (stop), --as NAME (who you are in the record; default: your user name),
--config FILE (default school.yml), --state-dir DIR (default: stateDir from the config)
`;

export const crewCommand: Command = {
  summary: 'crew stop|steer ISSUE …: stop the running crew of an issue, or hand it a message',
  async run(argv) {
    const parsed = parseVerbWords('crew', argv, verbOptions(['reason', 'as', 'config', 'state-dir']), HELP);
    if (!parsed) return EXIT.done;
    const { values, positionals } = parsed;
    const [verb, issueWord, ...words] = positionals;
    if (verb !== 'stop' && verb !== 'steer')
      throw new ConfigError(
        `school crew: expected \`stop\` or \`steer\`, found ${verb === undefined ? 'nothing' : `"${verb.slice(0, 40)}"`}. Run \`school crew --help\`.`,
      );
    if (!issueWord || !/^#?\d+$/.test(issueWord))
      throw new ConfigError(`school crew ${verb}: give the issue number, e.g. \`school crew ${verb} 42\`.`);
    const issue = Number(issueWord.replace('#', ''));
    let cmd: ControlCommand;
    if (verb === 'stop') {
      if (words.length)
        throw new ConfigError(
          'school crew stop: the reason goes in --reason, e.g. `school crew stop 42 --reason "wrong approach"`.',
        );
      cmd = { verb: 'stop', reason: values.reason ?? '' };
    } else {
      if (values.reason !== undefined)
        throw new ConfigError(
          'school crew steer: --reason is for stop; the message follows the issue number.',
        );
      const text = words.join(' ').trim();
      if (!text)
        throw new ConfigError(
          'school crew steer: give the message after the issue number, e.g. `school crew steer 42 "keep the public API"`.',
        );
      cmd = { verb: 'steer', text };
    }
    const login = (values.as ?? process.env.USER ?? userInfo().username).trim();
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,38}$/.test(login))
      throw new ConfigError(
        `school crew: --as: expected a name of letters, digits, ".", "_" or "-", found "${login.slice(0, 40)}".`,
      );
    const config = resolveConfig(values.config);
    const layout = new StateLayout(values['state-dir'] ?? config.stateDir);
    const r = controlEvents(readRegistry(layout), issue, cmd, { login, source: 'local' }, new Date());
    await controlLog(layout).append(r.events);
    if (r.refused) {
      process.stderr.write(`school crew ${verb}: not recorded for a crew: ${r.refused}.\n`);
      return EXIT.denied;
    }
    const what = verb === 'stop' ? 'Stop' : 'Steer';
    const next =
      verb === 'stop'
        ? `its runner ends it within about ${STOP_POLL_MS / 1000} s; issue #${issue} then waits for \`school requeue ${issue}\``
        : "it goes into the crew's next turn; `school status` shows whether it was delivered";
    process.stdout.write(`${what} recorded for crew ${r.crews.join(', ')} (issue #${issue}): ${next}.\n`);
    return EXIT.done;
  },
};
