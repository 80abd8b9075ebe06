import { CAPACITY_CLASSES } from '../../src/config/schema.js';
import { classRank } from './options.js';
import type { DecideContext, Launch, PolicyFactory, ReadyItem, SimPolicy } from './policy.js';

/**
 * A reference, not a policy anyone can run: longest-processing-time-first using the TRUE run
 * durations, which no scheduler knows in advance. It shows how close to the lower bound a schedule
 * can get on the same workload, so the gap of a real policy splits into "price of not knowing
 * durations / of ordering smallest first" and "slack in the bound".
 */
const durationOf = (item: ReadyItem) => item.issue.runs[item.run]!.duration;

export const oraclePolicy: PolicyFactory = () => {
  // Per class, ascending by duration so the longest is popped from the end in O(1).
  const queues = CAPACITY_CLASSES.map(() => [] as ReadyItem[]);
  let count = 0;
  return {
    name: 'lpt-oracle',
    add(item) {
      const q = queues[classRank(item.issue.weight)]!;
      const d = durationOf(item);
      let lo = 0;
      let hi = q.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (durationOf(q[mid]!) < d) lo = mid + 1;
        else hi = mid;
      }
      q.splice(lo, 0, item);
      count++;
    },
    backlog: () => count,
    decide(ctx: DecideContext): Launch[] {
      const launches: Launch[] = [];
      // Big slots first, each preferring work only it can host, then the longest smaller item.
      const order = [...ctx.free].sort(
        (a, b) => classRank(b.class) - classRank(a.class) || a.index - b.index,
      );
      for (const slot of order) {
        const rank = classRank(slot.class);
        let pick = queues[rank]!.length ? rank : -1;
        if (pick < 0) {
          for (let c = 0; c < rank; c++) {
            const q = queues[c]!;
            if (q.length && (pick < 0 || durationOf(q.at(-1)!) > durationOf(queues[pick]!.at(-1)!))) pick = c;
          }
        }
        if (pick < 0) continue;
        launches.push({ item: queues[pick]!.pop()!, slot });
        count--;
      }
      return launches;
    },
  } satisfies SimPolicy;
};
