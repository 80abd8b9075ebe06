import { crewLog } from '../../src/dispatch/registry.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { event } from '../../src/state/event-log.js';
import type { StateLayout } from '../../src/state/layout.js';

const owner = { kind: 'local', host: 'h', pid: 1 } as const;

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
  const events: CrewEvent[] = [];
  if (e === 'planned')
    events.push(
      event(
        'crew.planned',
        `planned:${crewId}`,
        {
          crewId,
          issueNumber: issue,
          daemon: 'local',
          agent: 'alpha',
          weight: 'light',
          fences: [],
          repair: false,
          attempt: 1,
        },
        at,
      ) as CrewEvent,
    );
  if (e === 'started')
    events.push(
      event(
        'crew.started',
        `started:${crewId}`,
        {
          crewId,
          daemon: 'local',
          slot: 0,
          worktree: '/w',
          owner: owner as never,
        },
        at,
      ) as CrewEvent,
    );
  if (e === 'finished')
    events.push(
      event(
        'crew.finished',
        `finished:${crewId}`,
        {
          crewId,
          issueNumber: issue,
          outcome: 'succeeded',
          reason: 'done',
        },
        at,
      ) as CrewEvent,
    );
  await crewLog(layout).append(events);
}
