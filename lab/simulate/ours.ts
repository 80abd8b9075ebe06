import { CAPACITY_CLASSES, type CapacityClass } from '../../src/config/schema.js';
import { classRank } from './options.js';
import { SimulationError } from './engine.js';
import { tailGuardThreshold } from '../../src/dispatch/choice/order.js';
import type { DecideContext, Launch, NextStep, PolicyFactory, ReadyItem, SimPolicy } from './policy.js';
import type { RunOutcome, SimSlot, Workload } from './workload.js';

/**
 * Our policy: every time a slot frees, the dispatch office decides what to admit and where it runs
 * (seed 002: repairs first, smallest first, immediate refill; seed 003: capacity classes packed
 * best-fit-decreasing). The decision itself is delegated to an `Office` — the adapter over the real
 * dispatch code (office-adapter.ts); this module only feeds it and maps its answer onto slots.
 */
export interface FreeDaemon {
  id: string;
  class: CapacityClass;
  /** Free slots on this daemon now. */
  free: number;
  /** Slots busy on this daemon now (for least-loaded choice). */
  busy: number;
}

export interface Office {
  /** Orders items as the dispatch office would admit them. */
  order(items: readonly ReadyItem[]): ReadyItem[];
  /**
   * Admits and assigns candidates onto the free daemons; returns item id → daemon id. `paused` is
   * the pause reason while a usage-limit pause is in force: the office must place nothing then.
   */
  place(
    now: number,
    candidates: readonly ReadyItem[],
    daemons: readonly FreeDaemon[],
    paused?: string,
    /** Estimated work in the backlog in total (the candidates may be a window of it). */
    backlogSize?: number,
  ): Map<string, string>;
  /** What follows a run: the office's history rules (repair, stop, retry). */
  afterRun?(item: ReadyItem, outcome: RunOutcome, now: number): NextStep;
}

/**
 * Feeding the office the whole backlog on every freed slot would make 1,000-student runs
 * quadratic. The office's order of fresh issues never changes (priority, size and number are fixed),
 * so it is computed once by the office and kept per weight class; each decision passes every
 * repair and retry plus the first `window` fresh items of each class. With F free slots at most F
 * items of a class can be placed, so a window of F per class holds every item the office could pick
 * from the whole backlog. Should an office ever take every item of a cut-off class and still leave slots
 * free, the window doubles.
 */
export interface OfficePolicyOptions {
  /**
   * The office orders with `dispatch.order: tail-guard` (src/dispatch/choice/order.ts): the window must
   * then also show the items large enough to be promoted, from the tail of each class.
   */
  tailGuard?: boolean;
  /**
   * Tail-guard's quick cut (order.ts `quickCut`), as given to the office: once a class has no quick
   * item left, its longest items are the ones the office wants, so the window shows its tail.
   */
  quickMinutes?: number;
  name?: string;
}

export function officePolicy(office: Office, options: OfficePolicyOptions = {}): PolicyFactory {
  return (workload) => new OfficeBacklog(office, options, workload);
}

/** Our policy over one workload: the backlog, ordered once per class, shown to the office in windows. */
class OfficeBacklog implements SimPolicy {
  readonly name: string;
  readonly consultWhilePaused = true;
  readonly afterRun?: SimPolicy['afterRun'];
  private readonly byClass = CAPACITY_CLASSES.map(() => ({ items: [] as ReadyItem[], head: 0, tail: -1 }));
  private backlogSize = 0;
  private readonly launched = new Set<string>();
  /** Repairs and usage-limit retries. */
  private readonly side = new Map<string, ReadyItem>();
  private prepared = false;
  private pending: ReadyItem[] = [];
  private inBacklog = 0;

  constructor(
    private readonly office: Office,
    private readonly options: OfficePolicyOptions,
    private readonly workload: Workload,
  ) {
    this.name = options.name ?? 'ours';
    if (office.afterRun) this.afterRun = office.afterRun.bind(office);
  }

  add(item: ReadyItem): void {
    this.inBacklog++;
    this.backlogSize += item.issue.size;
    if (!this.prepared && item.run === 0) this.pending.push(item);
    else this.side.set(item.id, item);
  }

  backlog(): number {
    return this.inBacklog;
  }

  decide(ctx: DecideContext): Launch[] {
    if (!this.prepared) this.prepare();
    const freeByDaemon = new Map<string, SimSlot[]>();
    for (const s of ctx.free) {
      const list = freeByDaemon.get(s.daemon) ?? [];
      list.push(s);
      freeByDaemon.set(s.daemon, list);
    }
    const perDaemon = this.workload.options.fleet.slotsPerDaemon;
    const daemons: FreeDaemon[] = [...freeByDaemon].map(([id, slots]) => ({
      id,
      class: slots[0]!.class,
      free: slots.length,
      busy: perDaemon - slots.length,
    }));
    let window = ctx.free.length;
    for (;;) {
      const { list, cut } = this.candidates(window);
      this.critical(list, window);
      const placed = this.office.place(ctx.now, list, daemons, ctx.paused, this.backlogSize);
      // Widen only when the office took every item it was shown of a cut-off class and still
      // left slots free: it wanted more of that class than the window held.
      const wantedMore = cut.some((mine) => mine.every((i) => placed.has(i.id)));
      if (placed.size > 0 && placed.size < ctx.free.length && wantedMore) {
        window *= 2;
        continue;
      }
      return this.launch(list, placed, freeByDaemon);
    }
  }

  /** The office's placements as launches onto the free slots; they leave the backlog. */
  private launch(
    list: ReadyItem[],
    placed: Map<string, string>,
    freeByDaemon: Map<string, SimSlot[]>,
  ): Launch[] {
    const launches: Launch[] = [];
    for (const item of list) {
      const daemon = placed.get(item.id);
      if (!daemon) continue;
      const slot = freeByDaemon.get(daemon)?.shift();
      if (!slot) throw new SimulationError(`dispatch office over-filled daemon ${daemon}`);
      launches.push({ item, slot });
      this.launched.add(item.id);
      this.side.delete(item.id);
      this.inBacklog--;
      this.backlogSize -= item.issue.size;
    }
    return launches;
  }

  private prepare(): void {
    for (const item of this.office.order(this.pending))
      this.byClass[classRank(item.issue.weight)]!.items.push(item);
    for (const q of this.byClass) q.tail = q.items.length - 1;
    this.pending = [];
    this.prepared = true;
  }

  /** The side items plus up to `window` fresh items per class; `cut` lists the truncated classes. */
  private candidates(window: number): { list: ReadyItem[]; cut: ReadyItem[][] } {
    const list = [...this.side.values()];
    const cut: ReadyItem[][] = [];
    for (const q of this.byClass) {
      const mine: ReadyItem[] = [];
      let taken = 0;
      for (let i = q.head; i < q.items.length; i++) {
        const item = q.items[i]!;
        if (this.launched.has(item.id)) {
          if (i === q.head) q.head++;
          continue;
        }
        if (taken === window) {
          cut.push(mine);
          break;
        }
        list.push(item);
        mine.push(item);
        taken++;
      }
    }
    return { list, cut };
  }

  /**
   * Tail guard: items whose estimate ≥ β × backlog per slot, biggest of each class first; and every
   * item of a class with no quick item left (its head is above the quick cut), biggest first.
   */
  private critical(list: ReadyItem[], window: number): Set<string> {
    const promote = new Set<string>();
    if (!this.options.tailGuard) return promote;
    const threshold = tailGuardThreshold(this.backlogSize, this.workload.slots.length);
    const shown = new Set(list.map((i) => i.id));
    for (const i of list) if (!i.repair && i.issue.size >= threshold) promote.add(i.id);
    const quick = this.options.quickMinutes;
    for (const q of this.byClass) {
      let first = q.head;
      while (first <= q.tail && this.launched.has(q.items[first]!.id)) first++;
      const longHead = quick !== undefined && first <= q.tail && q.items[first]!.issue.size > quick;
      let taken = 0;
      for (let i = q.tail; i >= q.head && taken < window; i--) {
        const item = q.items[i]!;
        if (this.launched.has(item.id)) {
          if (i === q.tail) q.tail--;
          continue;
        }
        if (item.issue.size < threshold && !longHead) break;
        if (!shown.has(item.id)) list.push(item);
        promote.add(item.id);
        taken++;
      }
    }
    return promote;
  }
}
