import { childEnv } from '../process/env.js';
import { runProcess } from '../process/run.js';
import type { Finding } from './finding.js';

/**
 * Orca reachable, for a daemon whose classroom is orca: one call, `<binary> <args> status --json`,
 * and its `runtime.reachable`. Anything else the Orca classroom does is its own business.
 */
export async function checkOrca(
  daemon: string,
  orca: { binary: string; args: readonly string[] },
  o: { cwd: string; timeoutMs: number },
): Promise<Finding> {
  const check = `orca:${daemon}`;
  const argv = [orca.binary, ...orca.args, 'status', '--json'];
  const shown = argv.join(' ');
  const r = await runProcess(argv, { cwd: o.cwd, env: childEnv(), timeoutMs: o.timeoutMs });
  if (r.spawnError)
    return {
      check,
      status: 'blocker',
      detail: `${orca.binary} could not be started (${r.spawnError})`,
      fix: `install the Orca CLI on this machine, or set fleet.daemons[].orca.binary for ${daemon} to its path`,
    };
  if (r.timedOut || r.exitCode !== 0)
    return {
      check,
      status: 'blocker',
      detail: `\`${shown}\` ${r.timedOut ? 'did not answer in time' : `exited ${r.exitCode}: ${r.stderr.toString('utf8').trim().slice(0, 200)}`}`,
      fix: 'start the Orca daemon on this machine and check `orca status`',
    };
  let reachable: unknown;
  try {
    reachable = (JSON.parse(r.stdout.toString('utf8')) as { runtime?: { reachable?: unknown } }).runtime
      ?.reachable;
  } catch {
    return {
      check,
      status: 'blocker',
      detail: `\`${shown}\` printed no JSON`,
      fix: 'install an Orca release whose `status --json` reports runtime.reachable',
    };
  }
  return reachable === true
    ? { check, status: 'ok', detail: 'the Orca runtime is reachable' }
    : {
        check,
        status: 'blocker',
        detail: `\`${shown}\` says runtime.reachable is ${JSON.stringify(reachable)}`,
        fix: "start the Orca runtime (crews of this daemon cannot run until it answers), or move the daemon's classroom to worktree",
      };
}
