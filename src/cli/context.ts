import { runContextFrom, type RunContext } from '../process/run-context.js';

/**
 * The run context of a `school` command: this process's environment, read here and passed down
 * (src/process/run-context.ts). A command run inside a GitHub Actions job is that job's run.
 */
export function cliContext(): RunContext {
  return runContextFrom(process.env);
}
