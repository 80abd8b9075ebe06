import { CAPACITY_CLASSES } from '../../src/config/schema.js';
import { classRank } from './options.js';
import type { DecideContext, Launch, PolicyFactory, ReadyItem, SimPolicy } from './policy.js';
import type { SimSlot } from './workload.js';

/**
 * The two baselines a user would otherwise run. Both respect capacity classes (a job only runs on
 * a runner of its class or larger, as a matrix `runs-on` label would force) so the comparison
 * isolates the scheduling policy, not class-awareness.
 */

/** One FIFO queue per weight class: "oldest item this slot can run" in O(classes). */
class ClassQueues {
  private readonly queues = CAPACITY_CLASSES.map(() => ({ items: [] as ReadyItem[], head: 0 }));
  private count = 0;

  push(item: ReadyItem): void {
    this.queues[classRank(item.issue.weight)]!.items.push(item);
    this.count++;
  }

  get size(): number {
    return this.count;
  }

  /** Removes and returns the oldest item whose class fits a slot of `slotClass`. */
  takeOldestFitting(slot: SimSlot): ReadyItem | undefined {
    let best: { items: ReadyItem[]; head: number } | undefined;
    for (let c = 0; c <= classRank(slot.class); c++) {
      const q = this.queues[c]!;
      const head = q.items[q.head];
      if (head && (!best || head.seq < best.items[best.head]!.seq)) best = q;
    }
    if (!best) return undefined;
    const item = best.items[best.head++]!;
    if (best.head > 1024 && best.head * 2 > best.items.length) {
      best.items.splice(0, best.head); // keep memory bounded on long runs
      best.head = 0;
    }
    this.count--;
    return item;
  }
}

/** Free slots smallest class first, so a light slot takes light work before a big slot does. */
function fill(queues: ClassQueues, free: readonly SimSlot[]): Launch[] {
  const launches: Launch[] = [];
  const order = [...free].sort((a, b) => classRank(a.class) - classRank(b.class) || a.index - b.index);
  for (const slot of order) {
    const item = queues.takeOldestFitting(slot);
    if (item) launches.push({ item, slot });
  }
  return launches;
}

/** FIFO with immediate refill: a freed slot takes the oldest item of the backlog it can run. */
export const fifoPolicy: PolicyFactory = () => {
  const queues = new ClassQueues();
  return {
    name: 'fifo',
    add: (item) => queues.push(item),
    decide: (ctx: DecideContext) => fill(queues, ctx.free),
    backlog: () => queues.size,
  } satisfies SimPolicy;
};

/**
 * Batch-synchronous: what a plain matrix workflow does. A batch of up to one item per slot starts
 * together; the next batch waits until every job of the previous one has finished. Repairs join
 * the backlog's tail like any other item.
 */
export const batchPolicy: PolicyFactory = () => {
  const queues = new ClassQueues();
  return {
    name: 'batch',
    add: (item) => queues.push(item),
    decide: (ctx: DecideContext) => (ctx.running > 0 ? [] : fill(queues, ctx.free)),
    backlog: () => queues.size,
  } satisfies SimPolicy;
};
