import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SchoolConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { readCrewState } from '../../dispatch/lease.js';
import { localLiveness } from '../../dispatch/liveness.js';
import { groupAlive, killGroup } from '../../process/group.js';
import { audit } from '../../state/audit.js';
import type { StateLayout } from '../../state/layout.js';
import { message } from '../../errors.js';
import { createClassroom } from '../classroom.js';
import { processesWithMarker } from '../host.js';
import { crewRuntimeDir } from '../spec.js';

/**
 * N7.1 at daemon start (the driver calls this before it adopts crews): a crew of an orca daemon whose
 * runner is gone left its student in an Orca terminal, which outlives the runner. Its terminals are
 * closed, its processes (the terminal's group from the start marker, and every process carrying the
 * crew's marker) are killed, and its slot is reset and checked clean; the driver then records the
 * crew as it records any crew whose runner vanished (`lost`, counted in the issue's two attempts).
 * Nothing of it is graded: only its runner could have written the bookbag.
 */
export async function reclaimOrcaOrphans(o: {
  config: SchoolConfig;
  layout: StateLayout;
  daemon: string;
  runtimeDir: string;
  worktreeRoot: string;
  baseSha: string;
  logger: Logger;
}): Promise<string[]> {
  const daemon = o.config.fleet.daemons.find((d) => d.id === o.daemon);
  if (daemon?.classroom !== 'orca') return [];
  const { registry, processes } = readCrewState(o.layout);
  const reclaimed: string[] = [];
  for (const c of Object.values(registry.crews)) {
    if (c.status !== 'running' || c.daemon !== o.daemon) continue;
    const p = processes.get(c.crewId);
    if (p && localLiveness(p) !== 'gone') continue; // adopted: its runner still keeps it
    const turns = join(crewRuntimeDir(o.runtimeDir, c.crewId), 'orca');
    if (!existsSync(turns)) continue;
    const killed = stopTurns(turns, c.crewId);
    const remaining: string[] = [];
    if (c.slot !== undefined) {
      const room = createClassroom({ daemon, repoPath: o.config.repoPath, root: o.worktreeRoot });
      try {
        room.preflight();
        remaining.push(...(await room.teardown(c.slot, o.baseSha)));
      } catch (e) {
        remaining.push(`could not reset the slot: ${message(e)}`);
      }
    }
    const finished = readdirSync(turns).some((t) => existsSync(join(turns, t, 'exit-code')));
    const detail =
      `orphaned: its runner is gone; ${killed} process(es) left in its Orca terminal stopped, the slot reset` +
      `${finished ? ' (its student had finished, but no runner was left to verify and record it)' : ''}` +
      `${remaining.length ? `; remaining: ${remaining.slice(0, 5).join('; ')}` : ''}`;
    o.logger.warning(`crew ${c.crewId}: ${detail}`);
    await audit(o.layout, 'crew.alert', {
      crewId: c.crewId,
      issueNumber: c.issueNumber,
      kind: 'orphaned',
      detail,
    });
    reclaimed.push(c.crewId);
  }
  return reclaimed;
}

function stopTurns(turns: string, crewId: string): number {
  let killed = 0;
  for (const t of readdirSync(turns)) {
    let pgid = NaN;
    try {
      pgid = Number(readFileSync(join(turns, t, 'started'), 'utf8').trim());
    } catch {
      /* never started */
    }
    if (Number.isInteger(pgid) && pgid > 1 && groupAlive(pgid)) {
      killGroup(pgid, 'SIGKILL');
      killed++;
    }
  }
  for (const pid of processesWithMarker(crewId)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      /* gone */
    }
  }
  return killed;
}
