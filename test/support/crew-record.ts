import type { CrewRecord } from '../../src/dispatch/logs/registry.js';

/**
 * A crew as the registry holds it: `crewId`, a first run (no repair) for issue 1 on daemon d1 by
 * agent alpha, standard weight, no fences; `over` gives its status and plan time and may set anything.
 */
export function crewRecord(
  crewId: string,
  over: Pick<CrewRecord, 'status' | 'plannedAt'> & Partial<CrewRecord>,
): CrewRecord {
  return {
    crewId,
    issueNumber: 1,
    daemon: 'd1',
    agent: 'alpha',
    weight: 'standard',
    fences: [],
    repair: false,
    attempt: 1,
    ...over,
  };
}
