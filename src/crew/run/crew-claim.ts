import { mkdirSync } from 'node:fs';
import type { Logger } from '../../log.js';
import { message } from '../../errors.js';
import { audit } from '../../state/audit.js';
import type { StateLayout } from '../../state/layout.js';
import { claimSlot, startHeartbeat, takeOverCrew, type JobLiveness } from '../../dispatch/leases/lease.js';
import { localIdentity, selfOwner } from '../../dispatch/leases/liveness.js';
import { LOCAL_RUN, type RunContext } from '../../process/run-context.js';
import { baselinePath, readBaseline, type GitControlBaseline } from '../checkout/git-guard.js';
import { outOfService } from '../checkout/slot-reset.js';
import type { Classroom } from '../classroom.js';
import type { CrewSpec } from '../spec.js';

/**
 * The claim, the first phase of a crew's life: a slot of the daemon's worktrees leased to this
 * process (or, for a collected crew, taken over from its dead runner), the lease's heartbeat, and
 * the shared git directory's baseline read into this process's memory.
 */
export interface ClaimInput {
  spec: CrewSpec;
  layout: StateLayout;
  classroom: Classroom;
  log: Logger;
  /** The crew's runtime directory (made here once the slot is claimed). */
  scratch: string;
  jobStatus?: JobLiveness;
  context?: RunContext;
}

export interface Claimed {
  slot: number;
  /** Stops the lease's heartbeat. */
  stopBeat: () => void;
  guard: GitControlBaseline | undefined;
}

/** Claims a slot, audits reclaimed leases, starts the heartbeat, reads the git baseline. */
export async function claimCrewSlot(i: ClaimInput): Promise<Claimed> {
  const { spec, layout, classroom } = i;
  const daemon = spec.config.fleet.daemons.find((d) => d.id === spec.daemonId)!;
  const leaseMs = spec.config.dispatch.leaseSeconds * 1000;
  const claim = await claimSlot(layout, {
    crewId: spec.crewId,
    daemon: spec.daemonId,
    slots: daemon.worktrees,
    owner: selfOwner(i.context ?? LOCAL_RUN),
    process: { crewId: spec.crewId, ...localIdentity(process.pid) },
    leaseMs,
    worktreeFor: (slot) => classroom.workdir(slot),
    outOfService: (slot) => outOfService(classroom.workdir(slot)),
    jobStatus: i.jobStatus,
  });
  for (const l of claim.reclaimed) {
    await audit(layout, 'lease.reclaimed', {
      crewId: l.crewId,
      daemon: l.daemon,
      slot: l.slot,
      by: spec.crewId,
    });
  }
  const stopBeat = startHeartbeat(layout, spec.crewId, leaseMs, (e) =>
    i.log.warning(`heartbeat: ${message(e)}`),
  );
  // The shared git directory's baseline, read once, before the student runs: a copy in this
  // process's memory is one no student can edit between its turns and the restore.
  const guard = readBaseline(baselinePath(spec.runtimeDir, spec.daemonId));
  mkdirSync(i.scratch, { recursive: true });
  return { slot: claim.slot, stopBeat, guard };
}

/**
 * collectCrew's claim: the running crew's slot passes to this process (its runner is gone), the
 * heartbeat starts, the git baseline is read, and the classroom is told to read the finished turn back.
 */
export async function takeOverCrewSlot(i: ClaimInput): Promise<Claimed> {
  const { spec, layout } = i;
  const leaseMs = spec.config.dispatch.leaseSeconds * 1000;
  const taken = await takeOverCrew(layout, {
    crewId: spec.crewId,
    daemon: spec.daemonId,
    owner: selfOwner(i.context ?? LOCAL_RUN),
    process: { crewId: spec.crewId, ...localIdentity(process.pid) },
    leaseMs,
  });
  const stopBeat = startHeartbeat(
    layout,
    spec.crewId,
    leaseMs,
    (e) => i.log.warning(`heartbeat: ${message(e)}`),
    `collect-${process.pid}-`,
  );
  const guard = readBaseline(baselinePath(spec.runtimeDir, spec.daemonId));
  const turn = { crewId: spec.crewId, slot: taken.slot, dir: i.scratch };
  if (!i.classroom.resumeFinished?.(turn)) {
    stopBeat();
    throw new Error(`crew ${spec.crewId}: no finished turn to collect`);
  }
  return { slot: taken.slot, stopBeat, guard };
}
