#!/usr/bin/env node
import { message, ConfigError } from '../errors.js';
import { redactText } from '../security/redact.js';
import { commands, usage } from './commands.js';
import { VERSION } from './version.js';

/** `school <verb> …`: every action's job runnable locally, plus operator verbs. */
async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === 'help' || verb === '--help' || verb === '-h') {
    process.stdout.write(`${usage()}Run \`school --version\` for the toolkit's version.\n`);
    return verb ? 0 : 2;
  }
  if (verb === '--version' || verb === '-V' || verb === 'version') {
    process.stdout.write(`school-core ${VERSION}\n`);
    return 0;
  }
  const command = commands[verb];
  if (!command) {
    process.stderr.write(`school: unknown command "${verb}".\n\n${usage()}`);
    return 2;
  }
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`school: ${redactText(message(e))}\n`);
    process.exitCode = e instanceof ConfigError ? 2 : 1;
  },
);
