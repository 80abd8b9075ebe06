import { crewLog } from '../../src/dispatch/logs/registry.js';
import type { CrewEvent, CrewFinished, CrewPlanned, CrewStarted } from '../../src/schemas/crew.js';
import { event } from '../../src/state/event-log.js';
import type { StateLayout } from '../../src/state/layout.js';

const owner = { kind: 'local', host: 'h', pid: 1 } as const;

/**
 * A crew's `crew.planned` as the plan records it: a first run (attempt 1, no fences, no repair) of
 * agent `alpha` on daemon `d1`, standard weight. `over` names what a test cares about.
 */
export function plannedEvent(
  crewId: string,
  issue: number,
  over: Partial<CrewPlanned> = {},
  at?: Date,
  key = `planned:${crewId}`,
): CrewEvent {
  return event(
    'crew.planned',
    key,
    {
      crewId,
      issueNumber: issue,
      daemon: 'd1',
      agent: 'alpha',
      weight: 'standard',
      fences: [],
      repair: false,
      attempt: 1,
      ...over,
    },
    at,
  ) as CrewEvent;
}

/** A crew's `crew.started` in slot 0 of daemon `d1`, owned by a local process. */
export function startedEvent(crewId: string, over: Partial<CrewStarted> = {}, at?: Date): CrewEvent {
  return event(
    'crew.started',
    `started:${crewId}`,
    { crewId, daemon: 'd1', slot: 0, worktree: '/w', owner: owner as never, ...over },
    at,
  ) as CrewEvent;
}

/** A crew's `crew.finished`: succeeded unless `over` says otherwise. */
export function finishedEvent(
  crewId: string,
  issue: number,
  over: Partial<CrewFinished> = {},
  at?: Date,
  key = `finished:${crewId}`,
): CrewEvent {
  return event(
    'crew.finished',
    key,
    { crewId, issueNumber: issue, outcome: 'succeeded', reason: 'done', ...over },
    at,
  ) as CrewEvent;
}

/** A crew that was planned (`planned`: what differs from `plannedEvent`'s defaults) and succeeded. */
export async function crewSucceeded(
  layout: StateLayout,
  crewId: string,
  issue: number,
  planned: Partial<CrewPlanned> = {},
): Promise<void> {
  await crewLog(layout).append([plannedEvent(crewId, issue, planned), finishedEvent(crewId, issue)]);
}

/**
 * One step of a crew of agent `alpha` on daemon `local`, as the crew log records it: planned,
 * started, or finished (succeeded).
 */
export async function crewAt(
  layout: StateLayout,
  e: 'planned' | 'started' | 'finished',
  crewId: string,
  issue: number,
) {
  const at = new Date();
  const local = { daemon: 'local' };
  const one =
    e === 'planned'
      ? plannedEvent(crewId, issue, { ...local, weight: 'light' }, at)
      : e === 'started'
        ? startedEvent(crewId, local, at)
        : finishedEvent(crewId, issue, {}, at);
  await crewLog(layout).append([one]);
}
