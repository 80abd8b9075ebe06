import type { Logger } from '../../log.js';
import { audit } from '../../state/audit.js';
import { event } from '../../state/event-log.js';
import type { StateLayout } from '../../state/layout.js';
import { FAILURE_OUTCOMES } from '../../dispatch/logs/history.js';
import { pauseForOutcome } from '../../dispatch/gates/pause.js';
import type { CrewOutcome } from '../../schemas/crew.js';
import { crewEventLog, readCrewState, type CrewProcess } from '../../dispatch/leases/lease.js';
import { localLiveness } from '../../dispatch/leases/liveness.js';
import { RUNNER_EXIT } from '../run/runner.js';

/**
 * The driver's bookkeeping around a crew runner (driver.ts runs the slots): adopting runners that
 * outlived an earlier driver, settling a runner that exited, marking an unexplained exit `lost`, and
 * deciding whether refill may go on after a crew's end.
 */
export interface Progress {
  crewId: string;
  issueNumber?: number;
  slot?: number;
  phase: 'launched' | 'adopted' | 'running' | 'finished' | 'lost' | 'skipped' | 'waiting';
  /** Monotonic milliseconds since the driver launched or adopted the crew (N3.2). */
  elapsedMs: number;
  outcome?: CrewOutcome;
  detail?: string;
}

export interface Active {
  crewId: string;
  since: number;
  done: Promise<number | null>;
  /** Our own runner's pid (its process group); absent for an adopted crew. */
  pid?: number;
}

/** What settling needs of the driver's options and result. */
export interface SettleContext {
  layout: StateLayout;
  daemon: string;
  logger: Logger;
}

export interface SettleResult {
  adopted: string[];
  finished: Array<{ crewId: string; outcome: CrewOutcome; reason: string }>;
  lost: string[];
  skipped: Array<{ crewId: string; reason: string }>;
}

/** Polls an adopted runner (not our child) until its recorded identity is gone. */
export async function waitGone(
  p: CrewProcess,
  crewId: string,
  o: SettleContext,
  poll: number,
): Promise<number | null> {
  for (;;) {
    const finished = readCrewState(o.layout).registry.crews[crewId]?.status === 'finished';
    if (finished || localLiveness(p) === 'gone') return finished ? RUNNER_EXIT.done : null;
    await new Promise((r) => setTimeout(r, poll));
  }
}

export async function adopt(
  o: SettleContext,
  active: Map<string, Active>,
  result: SettleResult,
  poll: number,
  progress: (p: Progress) => void,
): Promise<void> {
  const { registry, processes } = readCrewState(o.layout);
  for (const c of Object.values(registry.crews)) {
    if (c.status !== 'running' || c.daemon !== o.daemon) continue;
    const p = processes.get(c.crewId);
    if (p && localLiveness(p) !== 'gone') {
      active.set(c.crewId, {
        crewId: c.crewId,
        since: performance.now(),
        done: waitGone(p, c.crewId, o, poll),
      });
      result.adopted.push(c.crewId);
      o.logger.info(
        `adopted crew ${c.crewId} (issue #${c.issueNumber}, slot ${c.slot}): its runner pid ${p.pid} is still alive`,
      );
      progress({
        crewId: c.crewId,
        issueNumber: c.issueNumber,
        slot: c.slot,
        phase: 'adopted',
        elapsedMs: 0,
      });
    } else {
      await markLost(
        o,
        c.crewId,
        c.issueNumber,
        'its runner process is gone and it never finished',
        result,
        progress,
      );
    }
  }
}

export async function settle(
  o: SettleContext,
  a: Active,
  code: number | null,
  result: SettleResult,
  progress: (p: Progress) => void,
): Promise<void> {
  const c = readCrewState(o.layout).registry.crews[a.crewId];
  const elapsedMs = performance.now() - a.since;
  if (c?.status === 'finished' && c.outcome) {
    result.finished.push({ crewId: a.crewId, outcome: c.outcome, reason: c.reason ?? '' });
    progress({
      crewId: a.crewId,
      issueNumber: c.issueNumber,
      slot: c.slot,
      phase: 'finished',
      elapsedMs,
      outcome: c.outcome,
      // Why a crew did not succeed, for the person watching: the school's own reason (never a student's words).
      ...(c.outcome !== 'succeeded' && c.reason ? { detail: c.reason } : {}),
    });
    return;
  }
  if (c?.status === 'planned' && code === RUNNER_EXIT.refused) {
    result.skipped.push({ crewId: a.crewId, reason: 'claim refused (see runner.log)' });
    progress({
      crewId: a.crewId,
      issueNumber: c.issueNumber,
      phase: 'skipped',
      elapsedMs,
      detail: 'claim refused',
    });
    return;
  }
  await markLost(
    o,
    a.crewId,
    c?.issueNumber ?? 0,
    `runner exited ${code ?? 'abnormally'} without recording an end`,
    result,
    progress,
  );
}

/**
 * Refill keeps going after a success or a counted failure (its repair is bounded at two runs by the
 * history). Any other end — a crew aborted by the pre-verify of a dirty slot (N4.1), orphaned by its
 * classroom (N7.1), cancelled, lost, stopped by a usage limit or overload — says the daemon or its slot needs a look: retrying at once
 * could abort the whole backlog on one dirty slot, so refill stops and the next plan decides.
 */
/** How a refill stop on an infra abort begins: the runner, not the work, failed. */
export const INFRA_STOP = 'this runner could not run crew';

export function refillStop(layout: StateLayout, crewId: string): string | undefined {
  const c = readCrewState(layout).registry.crews[crewId];
  if (!c) return `crew ${crewId} left no record`;
  // An infra abort (a program missing from the runner or the sandbox, an agent that could not start)
  // is the runner's, not the issue's: every crew refilled after it would end the same way.
  if (c.infra) return `${INFRA_STOP} ${crewId} (issue #${c.issueNumber}): ${c.reason ?? c.outcome}`;
  const counted =
    c.outcome === 'succeeded' || (FAILURE_OUTCOMES.includes(c.outcome!) && c.outcome !== 'lost');
  if (counted && !c.preVerify && !c.orphaned) return undefined;
  const where = c.preVerify
    ? ' at the pre-verify of its slot'
    : c.orphaned
      ? ', orphaned by its classroom'
      : '';
  return `crew ${crewId} (issue #${c.issueNumber}) ended ${c.outcome ?? c.status}${where}`;
}

/** An unexplained exit: the crew is `lost`, its lease released, and new launches pause (seed 002). */
export async function markLost(
  o: SettleContext,
  crewId: string,
  issueNumber: number,
  why: string,
  result: SettleResult,
  progress: (p: Progress) => void,
): Promise<void> {
  const reg = readCrewState(o.layout).registry;
  const c = reg.crews[crewId];
  if (c && c.status !== 'finished') {
    await crewEventLog(o.layout).append([
      event('lease.released', `released:${crewId}`, { crewId, reason: `lost: ${why}` }),
      event('crew.finished', `finished:${crewId}`, {
        crewId,
        issueNumber,
        outcome: 'lost' as const,
        reason: why,
      }),
    ]);
  }
  await audit(o.layout, 'crew.lost', { crewId, issueNumber, detail: why });
  await pauseForOutcome(o.layout, {
    crewId,
    issueNumber,
    outcome: 'lost',
    reason: `unexplained exit: ${why}`,
  });
  o.logger.warning(`crew ${crewId} lost (${why}); new launches are paused until \`school pause --clear\``);
  result.lost.push(crewId);
  progress({ crewId, issueNumber, phase: 'lost', elapsedMs: 0, detail: why });
}
