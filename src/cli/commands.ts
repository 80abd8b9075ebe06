import { configCommand } from './commands/config.js';
import { fetchCommand } from './commands/fetch.js';
import { deadLettersCommand } from './commands/dead-letters.js';
import { drainCommand } from './commands/drain.js';
import { dispatchCommand } from './commands/dispatch.js';
import { pauseCommand } from './commands/pause.js';
import { simulateCommand } from './commands/simulate.js';

export interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

/** The verb table. Each verb lives in ./commands/<verb>.ts. */
export const commands: Record<string, Command> = {
  config: configCommand,
  fetch: fetchCommand,
  drain: drainCommand,
  'dead-letters': deadLettersCommand,
  dispatch: dispatchCommand,
  pause: pauseCommand,
  simulate: simulateCommand,
};

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((k) => k.length));
  const lines = Object.entries(commands).map(([k, c]) => `  ${k.padEnd(width)}  ${c.summary}`);
  return `Usage: school <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun \`school <command> --help\` for a command's options.\n`;
}
