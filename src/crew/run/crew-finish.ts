import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { message } from '../../errors.js';
import type { CrewOutcome } from '../../schemas/crew.js';
import type { CurriculumItem } from '../../schemas/curriculum.js';
import { event } from '../../state/event-log.js';
import { boundText, MAX_FINISHED_REASON } from '../../security/bound.js';
import { crewEventLog, readCrewState } from '../../dispatch/leases/lease.js';
import { pauseForOutcome } from '../../dispatch/gates/pause.js';
import { enqueueGradingJob } from '../../grading/enqueue.js';
import { GRADED_OUTCOMES } from '../../agents/outcome.js';
import type { UpstreamLimit } from '../../sandbox/index.js';
import { pruneFinishedRuntime, sweepFinishedRuntimes } from '../machine/runtime-prune.js';
import type { CrewPlace } from './crew-place.js';

/**
 * The crew's end: `crew.finished` with the lease's release in one append, the pause a usage limit
 * calls for, the grading job of a graded outcome, and the runtime directory pruned.
 */

/** How the crew ended, as the crew log records it. */
export interface CrewEnd {
  outcome: CrewOutcome;
  reason: string;
  /** N4.1: a dirty slot is not the agent's fault; the finished event says so (history skips it). */
  preVerify?: boolean;
  /** The agent never started (missing CLI, refused credentials): an alert, not the agent's failure. */
  infra?: boolean;
  /** No agent turn ran: a clean refresh's merge passed verification as it stood. */
  noTurn?: boolean;
  /** N7.1: the classroom lost the crew before its student finished: not the student's failed run. */
  orphaned?: boolean;
  /** The reset time a usage limit named. */
  resetAt?: Date | undefined;
  /** The API's own answer behind a usage limit or overload: a usage limit then pauses the school. */
  upstream?: UpstreamLimit | undefined;
  /** A claimed usage limit the school confirmed itself (src/dispatch/leases/limit-probe.ts). */
  confirmed?: 'probe' | 'crews' | undefined;
  /** A person stopped the crew (./control.ts): who, as `crew.finished` records it. */
  stoppedBy?: string | undefined;
}

export interface FinishInput {
  log: Logger;
  item: CurriculumItem | undefined;
  agent: AgentConfig | undefined;
  slot: number;
  alerts: string[];
  /** When the crew started (monotonic ms). */
  started: number;
  end: CrewEnd;
}

export interface CrewResult {
  crewId: string;
  outcome: CrewOutcome;
  reason: string;
  slot?: number;
  alerts: string[];
  durationMs: number;
}

/** Appends `crew.finished` with the lease's release, pauses on a usage limit, enqueues grading. */
export async function finishCrew(place: CrewPlace, f: FinishInput): Promise<CrewResult> {
  const { spec, crew, layout } = place;
  const { alerts, end } = f;
  const { outcome } = end;
  if (alerts.length) end.reason = `${end.reason}; alerts: ${alerts.join(' | ')}`;
  // The finished line must stay well under what a handoff import takes (src/handoff/import.ts).
  const reason = (end.reason = boundText(end.reason, MAX_FINISHED_REASON));
  const durationMs = performance.now() - f.started;
  await crewEventLog(layout).append([
    event('crew.finished', `finished:${spec.crewId}`, {
      crewId: spec.crewId,
      issueNumber: crew.issueNumber,
      outcome,
      reason,
      durationMs,
      ...(end.preVerify && outcome === 'aborted' ? { preVerify: true } : {}),
      ...(end.infra && outcome === 'aborted' ? { infra: true } : {}),
      ...(end.noTurn && outcome === 'succeeded' ? { noTurn: true } : {}),
      ...(end.orphaned && outcome === 'aborted' ? { orphaned: true } : {}),
      ...(end.upstream ? { upstream: end.upstream } : {}),
      ...(end.confirmed && outcome === 'usage_limit' ? { confirmed: end.confirmed } : {}),
      ...(end.stoppedBy && outcome === 'cancelled' ? { stoppedBy: end.stoppedBy } : {}),
    }),
    event('lease.released', `released:${spec.crewId}`, { crewId: spec.crewId, reason: `crew ${outcome}` }),
  ]);
  // Seed 002: a usage limit pauses new launches (until its reset time when the tool named one); it
  // is not a failed run. An overload is an interruption: the issue is simply tried again later.
  // Only the API's own answer (the key proxy's record) pauses the school; the student's word, the
  // CLI's envelope included, pauses its agent alone.
  await pauseForOutcome(
    layout,
    {
      crewId: spec.crewId,
      issueNumber: crew.issueNumber,
      outcome,
      reason,
      agent: crew.agent,
      ...(end.upstream ? { upstream: end.upstream } : {}),
      ...(end.confirmed ? { confirmed: end.confirmed } : {}),
      ...(end.resetAt ? { until: end.resetAt } : {}),
    },
    new Date(),
    spec.config.dispatch.agentPauseMaxMinutes * 60_000,
  );
  await enqueueGrading(place, f);
  // Finished, its bookbag written: what the student could grow here goes (./runtime-prune.ts).
  try {
    pruneFinishedRuntime(place.scratch, spec.config.dispatch.logMaxBytes);
    // And the directories of crews that finished long ago go whole (a daemon runs for months).
    sweepFinishedRuntimes(
      join(spec.runtimeDir, 'crews'),
      () =>
        new Set(
          Object.values(readCrewState(layout).registry.crews)
            .filter((c) => c.status === 'finished')
            .map((c) => c.crewId),
        ),
    );
  } catch (e) {
    f.log.warning(`crew ${spec.crewId}: runtime directory not pruned: ${message(e)}`);
  }
  return { crewId: spec.crewId, outcome, reason, slot: f.slot, alerts, durationMs };
}

/** A graded outcome with a finished bookbag becomes a grading job. */
async function enqueueGrading(
  { spec, crew, layout }: CrewPlace,
  { item, agent, end }: FinishInput,
): Promise<void> {
  if (
    GRADED_OUTCOMES.includes(end.outcome) &&
    item &&
    agent &&
    existsSync(join(layout.bookbag(spec.crewId), 'done.flag'))
  ) {
    await enqueueGradingJob(layout, {
      issueNumber: crew.issueNumber,
      crewId: spec.crewId,
      agent: agent.id,
      domain: item.domain,
      difficulty: item.difficulty,
      fences: crew.fences,
      bookbag: `bookbags/${spec.crewId}`,
    });
  }
}
