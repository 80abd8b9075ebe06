import { writeJsonAtomic } from '../../state/atomic.js';
import type { StateLayout } from '../../state/layout.js';
import { withLock } from '../../state/lock.js';
import { readRegistry } from './registry.js';

/**
 * `views/crew_runs.json`: the crew registry materialized for people (the seed's name). Code folds the
 * events instead. The log is re-read under the view's own lock, so concurrent refreshes can only
 * replace the view with a fold at least as new as the one they replace.
 */
export async function writeCrewRunsView(layout: StateLayout, now = new Date()): Promise<void> {
  const path = layout.view('crew_runs.json');
  await withLock(path, () => {
    const registry = readRegistry(layout);
    const crews = Object.values(registry.crews).sort(
      (a, b) => a.plannedAt.localeCompare(b.plannedAt) || a.crewId.localeCompare(b.crewId),
    );
    writeJsonAtomic(path, { generatedAt: now.toISOString(), crews, leases: registry.leases });
  });
}
