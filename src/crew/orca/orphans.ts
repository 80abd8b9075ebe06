import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SchoolConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { crewEventLog, readCrewState } from '../../dispatch/leases/lease.js';
import { localLiveness } from '../../dispatch/leases/liveness.js';
import type { CrewRecord } from '../../dispatch/logs/registry.js';
import { groupAlive, killGroup } from '../../process/group.js';
import { audit } from '../../state/audit.js';
import { event } from '../../state/event-log.js';
import type { StateLayout } from '../../state/layout.js';
import { message } from '../../errors.js';
import { createClassroom } from '../classroom.js';
import { collectCrew } from '../run/crew.js';
import { baselinePath, readBaseline, restoreBaseline } from '../checkout/git-guard.js';
import { resetAdminDir, slotGitDirs } from '../checkout/git.js';
import { processesWithMarker } from '../machine/host.js';
import { crewRuntimeDir, readSpec, type CrewSpec } from '../spec.js';
import { finishedTurn } from './terminal.js';
import { hostEnvOf } from '../../process/env.js';
import type { RunContext } from '../../process/run-context.js';

/**
 * N7.1 at daemon start (the driver calls this before it adopts crews): a crew of an orca daemon whose
 * runner is gone left its student in an Orca terminal, which outlives the runner (the machine, the
 * runner or Orca crashed). What its files say decides:
 *
 * - its student finished its first turn (`exit-code` written by the launch script): the crew is
 *   **collected** like any crew (collectCrew): what it left running is stopped, its change frozen and
 *   verified on a clean checkout, its bookbag written, `crew.finished` recorded with its real outcome,
 *   its grading job enqueued, its lease released. Nothing about the crash is held against it.
 * - otherwise it is an **orphan**: its processes are killed, its terminals closed, the shared git
 *   directory and the slot put back and checked clean, and the crew recorded `aborted` with
 *   `orphaned: true`: not the student's failed run, and not a runner that vanished unexplained (no
 *   `lost`, no pause). The issue is planned again; `MAX_ORPHANINGS` in a row stop it
 *   (src/dispatch/logs/history.ts). Its half-made change is never graded.
 *
 * A crew that never reached an Orca terminal is left to the driver (`lost`, like any runner that vanished).
 */
export interface OrphanOptions {
  config: SchoolConfig;
  layout: StateLayout;
  daemon: string;
  runtimeDir: string;
  worktreeRoot: string;
  baseSha: string;
  logger: Logger;
  /** The run that collects (the lease passes to it); a local run by default. */
  context?: RunContext;
}

export async function reclaimOrcaOrphans(
  o: OrphanOptions,
): Promise<{ collected: string[]; orphaned: string[] }> {
  const out = { collected: [] as string[], orphaned: [] as string[] };
  const daemon = o.config.fleet.daemons.find((d) => d.id === o.daemon);
  if (daemon?.classroom !== 'orca') return out;
  const { registry, processes } = readCrewState(o.layout);
  for (const c of Object.values(registry.crews)) {
    if (c.status !== 'running' || c.daemon !== o.daemon) continue;
    const p = processes.get(c.crewId);
    if (p && localLiveness(p) !== 'gone') continue; // adopted: its runner still keeps it
    const dir = crewRuntimeDir(o.runtimeDir, c.crewId);
    if (!existsSync(join(dir, 'orca'))) continue;
    // Nothing of the crew runs on while it is collected or swept (its student finished, or is stopped).
    const killed = stopTurns(join(dir, 'orca'), c.crewId);
    const spec = crewSpec(dir);
    const turn = finishedTurn(dir);
    let uncollected: string | undefined;
    if (spec && turn === 1) {
      try {
        const r = await collectCrew(spec, { logger: o.logger, context: o.context });
        o.logger.info(
          `crew ${c.crewId}: collected after its runner died (its student had finished${killed ? `; ${killed} process(es) it left running stopped` : ''}): ${r.outcome}`,
        );
        out.collected.push(c.crewId);
        continue;
      } catch (e) {
        // Not collected (its record moved on, or it could not be taken over): swept below if still running.
        uncollected = message(e);
        o.logger.warning(`crew ${c.crewId}: could not be collected: ${uncollected}`);
        if (readCrewState(o.layout).registry.crews[c.crewId]?.status !== 'running') continue;
      }
    }
    const why =
      turn === undefined
        ? 'its student had not finished'
        : !spec
          ? 'its student had finished, but the crew spec it ran with is gone'
          : uncollected !== undefined
            ? `its student had finished, but it could not be collected (${uncollected})`
            : `its student had finished correction turn ${turn - 1}, whose session died with its runner`;
    await sweep(
      o,
      c,
      spec?.baseSha ?? o.baseSha,
      `${why}; ${killed} process(es) left in its Orca terminal stopped`,
    );
    out.orphaned.push(c.crewId);
  }
  return out;
}

/** The orphan's slot put back, its lease released, and the crew recorded orphaned (never `lost`). */
async function sweep(o: OrphanOptions, c: CrewRecord, base: string, why: string): Promise<void> {
  const daemon = o.config.fleet.daemons.find((d) => d.id === o.daemon)!;
  const remaining: string[] = [];
  const restored: string[] = [];
  if (c.slot !== undefined) {
    const room = createClassroom({
      daemon,
      repoPath: o.config.repoPath,
      root: o.worktreeRoot,
      path: hostEnvOf(o.context).PATH ?? '',
    });
    try {
      room.preflight();
      // What its student may have changed in the shared git directory and its slot's own, put back
      // before the toolkit's git runs there (as a crew's teardown does).
      const guard = readBaseline(baselinePath(o.runtimeDir, o.daemon));
      if (guard) restored.push(...(await restoreBaseline(guard)));
      const dir = room.workdir(c.slot);
      if (existsSync(join(dir, '.git'))) {
        const { admin } = await slotGitDirs(dir);
        restored.push(...(await resetAdminDir(dir, admin, base)));
      }
      remaining.push(...(await room.teardown(c.slot, base)));
    } catch (e) {
      remaining.push(`could not reset the slot: ${message(e)}`);
    }
  }
  const detail =
    `orphaned: its runner is gone and ${why}; the slot was reset` +
    `${restored.length ? `; put back in git: ${restored.slice(0, 5).join(', ')}` : ''}` +
    `${remaining.length ? `; remaining: ${remaining.slice(0, 5).join('; ')}` : ''}`;
  const reason = `interrupted: ${detail}; its unfinished change is not graded (the issue is tried again)`;
  await crewEventLog(o.layout).append([
    event('lease.released', `released:${c.crewId}`, { crewId: c.crewId, reason: 'orphaned' }),
    event('crew.finished', `finished:${c.crewId}`, {
      crewId: c.crewId,
      issueNumber: c.issueNumber,
      outcome: 'aborted' as const,
      reason,
      orphaned: true,
    }),
  ]);
  o.logger.warning(`crew ${c.crewId}: ${detail}`);
  await audit(o.layout, 'crew.alert', {
    crewId: c.crewId,
    issueNumber: c.issueNumber,
    kind: 'orphaned',
    detail,
  });
}

function crewSpec(dir: string): CrewSpec | undefined {
  try {
    return readSpec(join(dir, 'spec.json'));
  } catch {
    return undefined;
  }
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
