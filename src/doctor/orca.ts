import type { DaemonConfig } from '../config/schema.js';
import { orcaUnavailable } from '../crew/orca/classroom.js';
import { orcaSettings } from '../crew/orca/cli.js';
import type { Finding } from './finding.js';

/**
 * Orca reachable, for a daemon whose classroom is orca: the classroom's own preflight probe (the
 * binary found and not GNOME's screen reader, `status --json` read as Orca's JSON envelope, a
 * reachable and ready runtime with an id), so the doctor and the crews judge Orca the same way.
 */
export function checkOrca(daemon: DaemonConfig, path?: string): Finding {
  const check = `orca:${daemon.id}`;
  const binary = orcaSettings(daemon).binary;
  let why: string | undefined;
  try {
    why = orcaUnavailable({ daemon, path });
  } catch (e) {
    why = e instanceof Error ? e.message : String(e);
  }
  if (!why) return { check, status: 'ok', detail: `the Orca runtime is reachable through ${binary}` };
  const missing = /not found on PATH|Node script/.test(why);
  return {
    check,
    status: 'blocker',
    detail: why,
    fix: missing
      ? `install the Orca CLI on this machine (on Linux it is \`orca-ide\`), or set fleet.daemons[].orca.binary for ${daemon.id} to its path`
      : "start Orca as this runner's user (`orca-ide serve` on a headless runner), then run `school doctor` again",
  };
}
