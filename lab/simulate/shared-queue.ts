import { claimOrder } from '../../src/dispatch/leases/claims.js';
import type { CrewRecord, CrewRegistry } from '../../src/dispatch/logs/registry.js';
import { AGENT, crewIdOf } from './office-adapter.js';
import type { ReadyItem } from './policy.js';

/**
 * One GitHub run's shared standby crews (docs/dispatch.md, "One queue per run"), held as the crew
 * registry holds them: each `crew.planned` with `queued: true`, its planned daemon and the daemons
 * whose crew jobs may claim it (`eligible`, the planned one first), in plan order. Which crew a job
 * takes next is the real rule, src/dispatch/leases/claims.ts `claimOrder`: its own first, then the other
 * daemons', each in plan order, skipping what it may not run or what is taken. A claim here always
 * wins: the simulation's events are sequential, so two jobs never race for one crew (the artifact
 * name does that on GitHub).
 */
export class RunQueue {
  private readonly registry: CrewRegistry = { crews: {}, leases: {} };
  private readonly items = new Map<string, ReadyItem>();

  /** Plans `item` on standby for `daemon`, claimable by `eligible` (`daemon` first). */
  add(item: ReadyItem, daemon: string, eligible: readonly string[]): void {
    const crewId = crewIdOf(item);
    const record: CrewRecord = {
      crewId,
      issueNumber: item.issue.number,
      daemon,
      agent: AGENT.id,
      weight: item.issue.weight,
      fences: [],
      repair: item.repair,
      attempt: item.attempt,
      queued: true,
      eligible: [daemon, ...eligible.filter((d) => d !== daemon)],
      status: 'planned',
      plannedAt: '',
    };
    this.registry.crews[crewId] = record;
    this.items.set(crewId, item);
  }

  /** The crew `daemon`'s job claims next (`claimOrder`'s first), taken out of the queue. */
  claim(daemon: string): ReadyItem | undefined {
    const [crewId] = claimOrder(this.registry, daemon);
    if (crewId === undefined) return undefined;
    // A claimed crew leaves the queue (the fold marks it `claimed`; nothing else here reads it).
    delete this.registry.crews[crewId];
    const item = this.items.get(crewId)!;
    this.items.delete(crewId);
    return item;
  }

  get size(): number {
    return this.items.size;
  }

  /** The crews no job claimed, in plan order. */
  unclaimed(): ReadyItem[] {
    return [...this.items.values()];
  }

  /** Empties the queue (the run ended): what it held, in plan order. */
  drain(): ReadyItem[] {
    const out = this.unclaimed();
    this.items.clear();
    this.registry.crews = {};
    return out;
  }
}
