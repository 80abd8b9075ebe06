import { checkpointCommand } from './commands/checkpoint.js';
import { compactCommand } from './commands/compact.js';
import { configCommand } from './commands/config.js';
import { crewCommand } from './commands/crew.js';
import { fetchCommand } from './commands/fetch.js';
import { initCommand } from './commands/init.js';
import { requeueCommand } from './commands/requeue.js';
import { deadLettersCommand } from './commands/dead-letters.js';
import { drainCommand } from './commands/drain.js';
import { dispatchCommand } from './commands/dispatch.js';
import { doctorCommand } from './commands/doctor.js';
import { loopCommand } from './commands/loop.js';
import { pauseCommand } from './commands/pause.js';
import { reportCommand } from './commands/report.js';
import { statusCommand } from './commands/status.js';

export interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

/** The verb table. Each verb lives in ./commands/<verb>.ts. */
export const commands: Record<string, Command> = {
  init: initCommand,
  loop: loopCommand,
  fetch: fetchCommand,
  dispatch: dispatchCommand,
  drain: drainCommand,
  checkpoint: checkpointCommand,
  compact: compactCommand,
  status: statusCommand,
  report: reportCommand,
  pause: pauseCommand,
  requeue: requeueCommand,
  'dead-letters': deadLettersCommand,
  crew: crewCommand,
  config: configCommand,
  doctor: doctorCommand,
};

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((k) => k.length));
  const lines = Object.entries(commands).map(([k, c]) => `  ${k.padEnd(width)}  ${c.summary}`);
  return `Usage: school <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun \`school <command> --help\` for a command's options.\n`;
}
