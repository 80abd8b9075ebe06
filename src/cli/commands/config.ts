import { NO_AGENTS } from '../../dispatch/choice/assign.js';
import { configJsonSchema, loadConfig } from '../../config/load.js';
import { configVisibilityProblems } from '../../config/sandbox-policy.js';
import { parse } from '../args.js';
import type { Command } from '../commands.js';

export const configCommand: Command = {
  summary:
    'config schema | config check [--config FILE]: print the JSON Schema of school.yml or validate one',
  async run(argv) {
    const { values, positionals } = parse(
      'config',
      argv,
      { config: { type: 'string' }, help: { type: 'boolean' } },
      true,
    );
    const sub = positionals[0];
    if (values.help || !sub) {
      process.stdout.write('Usage: school config schema\n       school config check [--config school.yml]\n');
      return values.help ? 0 : 2;
    }
    if (sub === 'schema') {
      process.stdout.write(JSON.stringify(configJsonSchema(), null, 2) + '\n');
      return 0;
    }
    if (sub === 'check') {
      const path = values.config ?? 'school.yml';
      const config = loadConfig(path);
      // A passEnv naming a host path the sandbox does not show is refused here; what depends on
      // this machine alone (PATH entries left out, a login file not there yet) is `school doctor`'s.
      const problems = configVisibilityProblems(config, process.env).filter((p) => p.severity === 'error');
      if (problems.length) {
        process.stderr.write(
          `${path}: ${problems.length} problem(s) with what the sandbox shows:\n` +
            problems.map((p) => `  - ${p.field}: ${p.detail}.\n    fix: ${p.fix}\n`).join(''),
        );
        return 1;
      }
      process.stdout.write(
        `${path}: valid. ${config.fleet.daemons.length} daemon(s), ${config.agents.length} agent(s), max ${config.dispatch.maxCrews} crew(s).\n`,
      );
      if (config.agents.length === 0) process.stdout.write(`warning: ${NO_AGENTS}\n`);
      if (!config.dispatch.verify && config.agents.some((a) => a.roles.includes('coding')))
        process.stdout.write(
          "warning: dispatch.verify is not set, so nothing checks that a code change works: every coding crew is rejected verification_unavailable. Set it to the repository's test command (e.g. verify: [npm, test]).\n",
        );
      return 0;
    }
    process.stderr.write(`school config: unknown subcommand "${sub}"; use "schema" or "check".\n`);
    return 2;
  },
};
