#!/usr/bin/env node
import { message, ConfigError, SchoolError } from '../errors.js';
import { redactText } from '../security/redact.js';
import { commands, usage } from './commands.js';
import { VERSION } from './version.js';
import { EXIT } from './exit.js';

/** Verbs that became a command of their own: what to run instead. */
const MOVED: Record<string, string> = {
  simulate:
    'the simulator is a command of its own now: run `school-simulate` with the same options (installed with school-core: `npx school-simulate --help`; docs/simulate.md).',
};

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
  if (!command && Object.hasOwn(MOVED, verb)) {
    process.stderr.write(`school: ${MOVED[verb]}\n`);
    return EXIT.config;
  }
  if (!command) {
    process.stderr.write(`school: unknown command "${verb}".\n\n${usage()}`);
    return 2;
  }
  return command.run(rest);
}

/**
 * A file the school may not write (the state directory made by another user, a read-only mount):
 * the path and the fix in one sentence instead of the system call's words.
 */
function permissionHint(e: unknown): string | undefined {
  // The system's error itself, or the one a wrapper (a lock, a state write) names as its cause.
  let err = e as (NodeJS.ErrnoException & { cause?: unknown }) | undefined;
  // A school error has a code of its own (`lock`): look past it to the system's.
  const wrapper = (x: typeof err) => x instanceof SchoolError || !x?.code;
  for (let i = 0; err && wrapper(err) && err.cause && i < 3; i++) err = err.cause as typeof err;
  if (!err || !['EACCES', 'EPERM', 'EROFS'].includes(err.code ?? '') || !err.path) return undefined;
  return (
    `cannot write ${err.path} (${err.code}${err.syscall ? ` on ${err.syscall}` : ''}): the user running school ` +
    `(uid ${process.getuid?.() ?? '?'}) needs write access to it — fix its owner or mode, or point stateDir ` +
    '(or --state-dir) at a directory this user owns; `school doctor` checks it.'
  );
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`school: ${redactText(permissionHint(e) ?? message(e))}\n`);
    process.exitCode = e instanceof ConfigError ? EXIT.config : EXIT.failed;
  },
);
