#!/usr/bin/env node
import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  VERSION,
  intOption,
  verbOptions
} from "../chunks/chunk-B3GU5SBH.js";
import {
  nextCycle
} from "../chunks/chunk-PCG3373D.js";
import {
  EXIT,
  Predictor
} from "../chunks/chunk-KCXG35WN.js";
import {
  admit,
  admitStandby,
  choiceRule,
  chooserFor,
  claimOrder,
  jobRepair,
  orderCandidates,
  quickCut,
  scoresOf,
  sharedEligible,
  tailGuardThreshold
} from "../chunks/chunk-HMUESIHY.js";
import {
  CAPACITY_CLASSES,
  ConfigError,
  DEFAULT_JOB_TIMEOUT_MINUTES,
  RecordBook,
  SchoolError,
  escapeHtml,
  event,
  issueStates,
  ledgerFold,
  message,
  parseConfig,
  sfc32,
  writeTextAtomic
} from "../chunks/chunk-RQKCS4ET.js";
import {
  __name
} from "../chunks/chunk-UEX66AHT.js";

// lab/simulate/command.ts
import { resolve } from "node:path";
import { parseArgs } from "node:util";

// lab/simulate/options.ts
var DEFAULT_SIM_OPTIONS = {
  issues: 240,
  historyIssues: 240,
  seed: 1,
  weightMix: [0.3, 0.5, 0.2, 0],
  fleet: { daemons: 3, slotsPerDaemon: 8, daemonClasses: ["heavy", "standard", "standard", "light"] },
  durations: { medianMinutes: 20, tailSigma: 0.8, estimateNoise: 0.3 },
  failures: { rate: 0.1, spread: 1 },
  pauses: { rate: 0, minutes: 30 }
};
function flatSimOptions(o) {
  return {
    issues: o.issues,
    daemons: o.fleet.daemons,
    slotsPerDaemon: o.fleet.slotsPerDaemon,
    seed: o.seed,
    medianMinutes: o.durations.medianMinutes,
    tailSigma: o.durations.tailSigma,
    estimateNoise: o.durations.estimateNoise,
    failureRate: o.failures.rate,
    failureSpread: o.failures.spread,
    historyIssues: o.historyIssues,
    pauseRate: o.pauses.rate,
    pauseMinutes: o.pauses.minutes,
    weightMix: o.weightMix,
    daemonClasses: o.fleet.daemonClasses
  };
}
__name(flatSimOptions, "flatSimOptions");
function check(ok, field, found, allowed) {
  if (!ok) throw new ConfigError(`simulate: ${field} must be ${allowed}; found ${JSON.stringify(found)}.`);
}
__name(check, "check");
function resolveSimOptions(partial = {}) {
  const d = DEFAULT_SIM_OPTIONS;
  const o = {
    ...d,
    ...partial,
    historyIssues: partial.historyIssues ?? partial.issues ?? d.issues,
    fleet: { ...d.fleet, ...partial.fleet },
    durations: { ...d.durations, ...partial.durations },
    failures: { ...d.failures, ...partial.failures },
    pauses: { ...d.pauses, ...partial.pauses }
  };
  const { fleet, durations: t, failures, pauses } = o;
  const int = /* @__PURE__ */ __name((v, min, max) => Number.isInteger(v) && v >= min && v <= max, "int");
  const num = /* @__PURE__ */ __name((v, min, max) => Number.isFinite(v) && v >= min && v <= max, "num");
  check(int(o.issues, 1, 1e6), "issues", o.issues, "a whole number from 1 to 1,000,000");
  check(int(fleet.daemons, 1, 1e4), "daemons", fleet.daemons, "a whole number from 1 to 10,000");
  check(
    int(fleet.slotsPerDaemon, 1, 64),
    "slots",
    fleet.slotsPerDaemon,
    "a whole number from 1 to 64 per daemon"
  );
  check(int(o.seed, 0, 4294967295), "seed", o.seed, "a whole number from 0 to 4294967295");
  check(num(t.medianMinutes, 0.01, 1e6) && t.medianMinutes > 0, "medianMinutes", t.medianMinutes, "> 0");
  check(num(t.tailSigma, 0, 3), "tail", t.tailSigma, "a log-normal sigma from 0 to 3");
  check(num(t.estimateNoise, 0, 3), "estimateNoise", t.estimateNoise, "a sigma from 0 to 3");
  check(num(failures.rate, 0, 0.9), "failure-rate", failures.rate, "a probability from 0 to 0.9");
  check(num(failures.spread, 0, 3), "failureSpread", failures.spread, "a spread from 0 to 3");
  check(
    int(o.historyIssues, 0, 1e6),
    "historyIssues",
    o.historyIssues,
    "a whole number from 0 to 1,000,000"
  );
  check(num(pauses.rate, 0, 0.5), "pause-rate", pauses.rate, "a probability from 0 to 0.5");
  check(num(pauses.minutes, 0, 1e6), "pauseMinutes", pauses.minutes, "minutes \u2265 0");
  check(
    o.weightMix.length === CAPACITY_CLASSES.length && o.weightMix.every((w) => num(w, 0, 1e9)) && o.weightMix.some((w) => w > 0),
    "weightMix",
    o.weightMix,
    `${CAPACITY_CLASSES.length} non-negative shares (${CAPACITY_CLASSES.join(", ")}), not all 0`
  );
  check(
    fleet.daemonClasses.length > 0 && fleet.daemonClasses.every((c) => CAPACITY_CLASSES.includes(c)),
    "daemonClasses",
    fleet.daemonClasses,
    `a non-empty list of ${CAPACITY_CLASSES.join(" | ")}`
  );
  const fleetMax = Math.max(
    ...Array.from(
      { length: fleet.daemons },
      (_, i) => classRank(fleet.daemonClasses[i % fleet.daemonClasses.length])
    )
  );
  const heaviest = o.weightMix.reduce((m, w, i) => w > 0 ? i : m, 0);
  check(
    heaviest <= fleetMax,
    "weightMix",
    o.weightMix,
    `no heavier than the largest daemon class (${CAPACITY_CLASSES[fleetMax]}) among the ${fleet.daemons} daemon(s)`
  );
  return o;
}
__name(resolveSimOptions, "resolveSimOptions");
function classRank(c) {
  return CAPACITY_CLASSES.indexOf(c);
}
__name(classRank, "classRank");

// lab/simulate/baselines.ts
var ClassQueues = class {
  static {
    __name(this, "ClassQueues");
  }
  queues = CAPACITY_CLASSES.map(() => ({ items: [], head: 0 }));
  count = 0;
  push(item) {
    this.queues[classRank(item.issue.weight)].items.push(item);
    this.count++;
  }
  get size() {
    return this.count;
  }
  /** Removes and returns the oldest item whose class fits a slot of `slotClass`. */
  takeOldestFitting(slot) {
    let best;
    for (let c = 0; c <= classRank(slot.class); c++) {
      const q = this.queues[c];
      const head = q.items[q.head];
      if (head && (!best || head.seq < best.items[best.head].seq)) best = q;
    }
    if (!best) return void 0;
    const item = best.items[best.head++];
    if (best.head > 1024 && best.head * 2 > best.items.length) {
      best.items.splice(0, best.head);
      best.head = 0;
    }
    this.count--;
    return item;
  }
};
function fill(queues, free) {
  const launches = [];
  const order = [...free].sort((a, b) => classRank(a.class) - classRank(b.class) || a.index - b.index);
  for (const slot of order) {
    const item = queues.takeOldestFitting(slot);
    if (item) launches.push({ item, slot });
  }
  return launches;
}
__name(fill, "fill");
var fifoPolicy = /* @__PURE__ */ __name(() => {
  const queues = new ClassQueues();
  return {
    name: "fifo",
    add: /* @__PURE__ */ __name((item) => queues.push(item), "add"),
    decide: /* @__PURE__ */ __name((ctx) => fill(queues, ctx.free), "decide"),
    backlog: /* @__PURE__ */ __name(() => queues.size, "backlog")
  };
}, "fifoPolicy");
var batchPolicy = /* @__PURE__ */ __name(() => {
  const queues = new ClassQueues();
  return {
    name: "batch",
    add: /* @__PURE__ */ __name((item) => queues.push(item), "add"),
    decide: /* @__PURE__ */ __name((ctx) => ctx.running > 0 ? [] : fill(queues, ctx.free), "decide"),
    backlog: /* @__PURE__ */ __name(() => queues.size, "backlog")
  };
}, "batchPolicy");

// lab/simulate/heap.ts
var MinHeap = class {
  static {
    __name(this, "MinHeap");
  }
  items = [];
  seq = 0;
  get size() {
    return this.items.length;
  }
  push(key, value) {
    const items = this.items;
    items.push({ key, seq: this.seq++, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = i - 1 >> 1;
      if (!this.less(i, parent)) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }
  peekKey() {
    return this.items[0]?.key;
  }
  pop() {
    const items = this.items;
    const top = items[0];
    if (!top) return void 0;
    const last = items.pop();
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return { key: top.key, value: top.value };
  }
  less(i, j) {
    const a = this.items[i];
    const b = this.items[j];
    return a.key < b.key || a.key === b.key && a.seq < b.seq;
  }
};

// lab/simulate/run-log.ts
var RunLog = class {
  constructor(pauseMinutes) {
    this.pauseMinutes = pauseMinutes;
  }
  pauseMinutes;
  static {
    __name(this, "RunLog");
  }
  timeline = [];
  results = /* @__PURE__ */ new Map();
  pauses = [];
  /** No launch before this minute (a usage limit; seed 002). */
  pausedUntil = -Infinity;
  /**
   * Records a run of `item` on `slot` from `start` to `now`. A usage limit pauses launches for the
   * workload's pause time, merged with a pause still going; `resumeAt` is then the new end of the
   * pause, when it moved. Any other outcome is a verdict: the issue's attempts and first verdict.
   */
  ended(slot, item, start, now) {
    const run2 = item.issue.runs[item.run];
    this.timeline.push({
      slot: slot.index,
      issue: item.issue.number,
      start,
      end: now,
      outcome: run2.outcome,
      attempt: item.attempt,
      repair: item.repair
    });
    const result = this.result(item.issue.number);
    if (run2.outcome !== "usage_limit") {
      result.attempts = item.attempt;
      result.firstVerdictAt ??= now;
      return { run: run2 };
    }
    const until = now + this.pauseMinutes;
    if (until <= this.pausedUntil) return { run: run2 };
    const last = this.pauses.at(-1);
    if (last && last.to >= now) last.to = until;
    else this.pauses.push({ from: now, to: until });
    this.pausedUntil = until;
    return { run: run2, resumeAt: until };
  }
  /** The issue's end, when the step after its run is not another run. */
  settle(issue, step) {
    const result = this.result(issue);
    result.status = step.kind;
    if (step.kind === "stopped") result.reason = step.reason;
  }
  /** The figures of a finished simulation. */
  summary(policy, decisions, backlog) {
    return {
      policy,
      makespan: this.timeline.reduce((m, t) => Math.max(m, t.end), 0),
      timeline: this.timeline,
      issues: [...this.results.values()].sort((a, b) => a.number - b.number),
      pauses: this.pauses,
      decisions,
      backlog
    };
  }
  result(n) {
    let result = this.results.get(n);
    if (!result) {
      result = { number: n, status: "done", attempts: 0 };
      this.results.set(n, result);
    }
    return result;
  }
};

// lab/simulate/engine.ts
var SimulationError = class extends SchoolError {
  static {
    __name(this, "SimulationError");
  }
  code = "simulation";
  constructor(message2) {
    super(message2);
    this.name = "SimulationError";
  }
};
function seedRule(item, outcome) {
  if (outcome === "success") return { kind: "done" };
  if (outcome === "usage_limit") return { kind: "backlog", attempt: item.attempt, repair: item.repair };
  return item.attempt >= 2 ? { kind: "stopped", reason: "repair-stopped-after-two-failures" } : { kind: "backlog", attempt: item.attempt + 1, repair: true };
}
__name(seedRule, "seedRule");
function simulate(workload, factory) {
  return new PolicyLoop(workload, factory(workload)).run();
}
__name(simulate, "simulate");
var PolicyLoop = class {
  constructor(workload, policy) {
    this.workload = workload;
    this.policy = policy;
    this.busy = new Array(workload.slots.length).fill(false);
    this.freeSet = new Set(workload.slots.map((s) => s.index));
    this.log = new RunLog(workload.options.pauses.minutes);
    for (const s of workload.slots) this.freeByClass[classRank(s.class)]++;
    for (const issue of workload.issues) this.addToBacklog({ issue, run: 0, attempt: 1, repair: false });
  }
  workload;
  policy;
  static {
    __name(this, "PolicyLoop");
  }
  events = new MinHeap();
  busy;
  /** Free slot indexes, kept incrementally: scanning 1,000 slots at every event would dominate. */
  freeSet;
  ready = /* @__PURE__ */ new Set();
  log;
  backlog = { available: 0, busy: 0 };
  /** Per class: items of that weight in the backlog, free slots of that class (for the backlog figure). */
  readyByClass = [0, 0, 0, 0];
  freeByClass = [0, 0, 0, 0];
  running = 0;
  seq = 0;
  decisions = 0;
  now = 0;
  run() {
    this.dispatch();
    while (this.events.size > 0) {
      this.advanceTo(this.events.peekKey());
      while (this.events.peekKey() === this.now) {
        const e = this.events.pop().value;
        if (e.kind === "finish") this.finish(e.slot, e.item, e.start);
      }
      this.dispatch();
    }
    if (this.ready.size > 0) {
      throw new SimulationError(
        `${this.policy.name} left ${this.ready.size} issue run(s) unplaced with every slot idle (${this.policy.backlog()} still in the policy's backlog): the policy refuses work it could run.`
      );
    }
    return this.log.summary(this.policy.name, this.decisions, this.backlog);
  }
  /** The state between two event times is constant: account the interval before moving on. */
  advanceTo(next) {
    if (this.now >= this.log.pausedUntil) {
      const idle = this.usableIdle();
      if (idle > 0) {
        this.backlog.available += (next - this.now) * (this.running + idle);
        this.backlog.busy += (next - this.now) * this.running;
      }
    }
    this.now = next;
  }
  usableIdle() {
    let lightest = this.readyByClass.findIndex((n) => n > 0);
    if (lightest < 0) return 0;
    let idle = 0;
    for (; lightest < this.freeByClass.length; lightest++) idle += this.freeByClass[lightest];
    return idle;
  }
  addToBacklog(item) {
    const full = { ...item, id: `${item.issue.number}#${item.run}`, seq: this.seq++ };
    this.ready.add(full.id);
    this.readyByClass[classRank(item.issue.weight)]++;
    this.policy.add(full);
  }
  /** Asks the policy to fill the free slots, and launches what it decides (checked). */
  dispatch() {
    const { policy, workload, now } = this;
    const paused = now < this.log.pausedUntil;
    if (paused && !policy.consultWhilePaused || this.running === workload.slots.length || this.ready.size === 0)
      return;
    const free = [...this.freeSet].sort((a, b) => a - b).map((i) => workload.slots[i]);
    this.decisions++;
    const reason = paused ? `usage limit reached; paused until minute ${this.log.pausedUntil.toFixed(1)}` : void 0;
    const launches = policy.decide({
      now,
      free,
      running: this.running,
      workload,
      ...reason ? { paused: reason } : {}
    });
    for (const { item, slot } of launches) {
      if (paused) throw new SimulationError(`${policy.name} launched ${item.id} while the school was paused`);
      this.launch(item, slot);
    }
  }
  launch(item, slot) {
    const name = this.policy.name;
    if (this.busy[slot.index]) throw new SimulationError(`${name} launched on busy slot ${slot.index}`);
    if (!this.ready.delete(item.id)) throw new SimulationError(`${name} launched ${item.id}, not ready`);
    this.readyByClass[classRank(item.issue.weight)]--;
    this.freeByClass[classRank(slot.class)]--;
    this.busy[slot.index] = true;
    this.freeSet.delete(slot.index);
    this.running++;
    this.events.push(this.now + item.issue.runs[item.run].duration, {
      kind: "finish",
      slot,
      item,
      start: this.now
    });
  }
  /** A run ends: its slot frees, it is recorded, and the policy (or seed 002's rule) says what follows. */
  finish(slot, item, start) {
    const { policy, now } = this;
    this.busy[slot.index] = false;
    this.freeSet.add(slot.index);
    this.freeByClass[classRank(slot.class)]++;
    this.running--;
    const { run: run2, resumeAt } = this.log.ended(slot, item, start, now);
    if (resumeAt !== void 0) this.events.push(resumeAt, { kind: "resume" });
    const n = item.issue.number;
    const step = policy.afterRun?.(item, run2.outcome, now) ?? seedRule(item, run2.outcome);
    const more = item.run + 1 < item.issue.runs.length;
    if (step.kind === "backlog") {
      if (!more) {
        throw new SimulationError(
          `${policy.name} put issue #${n} back in the backlog for attempt ${step.attempt} after ${item.issue.runs.length} run(s); the workload ends there (a success or the second consecutive failure)`
        );
      }
      this.addToBacklog({ issue: item.issue, run: item.run + 1, attempt: step.attempt, repair: step.repair });
    } else {
      if (more) throw new SimulationError(`${policy.name} ended issue #${n} (${step.kind}) with runs left`);
      this.log.settle(n, step);
    }
  }
};

// lab/simulate/office-adapter.ts
var AGENT = {
  id: "sim-student",
  kind: "command",
  command: ["true"],
  args: [],
  roles: ["coding", "research", "triage", "docs"],
  domains: [],
  maxDifficulty: 5,
  trust: "standard",
  passEnv: [],
  keyProxy: "auto"
};
var EPOCH = Date.UTC(2026, 0, 1);
var iso = /* @__PURE__ */ __name((minutes2) => new Date(EPOCH + minutes2 * 6e4).toISOString(), "iso");
var OUTCOME = {
  success: "succeeded",
  failure: "failed",
  usage_limit: "usage_limit"
};
function createOffice(options) {
  return new SimulatedOffice(options);
}
__name(createOffice, "createOffice");
var SimulatedOffice = class {
  constructor(options) {
    this.options = options;
    if (options.predictions) this.records = new SimRecords(options.predictions.history);
  }
  options;
  static {
    __name(this, "SimulatedOffice");
  }
  history = /* @__PURE__ */ new Map();
  records;
  order(items) {
    const byIssue = new Map(items.map((i) => [i.issue.number, i]));
    return orderCandidates(items.map((i) => this.candidate(i))).map((c) => byIssue.get(c.issueNumber));
  }
  /** An item as the office's candidate, with the predictions of the records when they are kept. */
  candidate(item) {
    const c = candidateOf(item);
    if (!this.records) return c;
    const p = this.records.predictor().predict(c.size, AGENT.id, c.domain, c.difficulty);
    if (p.minutes !== void 0) c.predicted = p.minutes;
    if (this.options.predictions?.risk && p.pFail !== void 0) c.pFail = p.pFail;
    return c;
  }
  place(_now, candidates, daemons, paused, backlogSize) {
    const byIssue = new Map(candidates.map((i) => [i.issue.number, i]));
    const decision = admit(this.admission(candidates, daemons, paused, backlogSize));
    const placed = /* @__PURE__ */ new Map();
    for (const a of decision.admitted) placed.set(byIssue.get(a.candidate.issueNumber).id, a.daemon);
    return placed;
  }
  planStandby(candidates, daemons, time, backlogSize) {
    const byIssue = new Map(candidates.map((i) => [i.issue.number, i]));
    const input = {
      ...this.admission(candidates, daemons, void 0, backlogSize),
      time: {
        remainingMs: time.jobMinutes * 6e4,
        crewTimeoutMs: time.crewTimeoutMinutes * 6e4,
        gradingReserveMs: time.gradingReserveMinutes * 6e4,
        maxWaves: 1
      }
    };
    const decision = admit(input);
    const standby = admitStandby(
      input,
      decision,
      time.typicalMinutes * 6e4,
      this.options.order ?? "smallest-first"
    );
    const ids = /* @__PURE__ */ __name((list) => new Map(list.map((a) => [byIssue.get(a.candidate.issueNumber).id, a.daemon])), "ids");
    const eligible = sharedEligible(input, decision, standby.standby);
    return {
      first: ids(decision.admitted),
      standby: ids(standby.standby),
      eligible: new Map(
        standby.standby.map((a, i) => [byIssue.get(a.candidate.issueNumber).id, eligible[i]])
      )
    };
  }
  admission(candidates, daemons, paused, backlogSize) {
    const { options } = this;
    const free = daemons.reduce((s, d) => s + d.free, 0);
    return {
      // With predictions the candidates are the whole backlog (the deployed loop passes it whole)
      // and the order sums their expected work itself; the caller's sum is of size estimates.
      candidates: orderCandidates(
        candidates.map((c) => this.candidate(c)),
        {
          order: options.order ?? "smallest-first",
          slots: options.totalSlots,
          ...backlogSize !== void 0 && !this.records ? { backlogSize } : {},
          ...options.quickMinutes !== void 0 ? { quickMinutes: options.quickMinutes } : {}
        }
      ),
      daemons: daemons.map((d) => admissionDaemon(d, options.slotsPerDaemon)),
      agents: [AGENT],
      limits: {
        maxCrews: options.totalSlots,
        activeCrews: options.totalSlots - free,
        minFreeDiskBytes: 0,
        maxFallbacks: 0
      },
      heldFences: [],
      time: { remainingMs: 2 * 6e4, crewTimeoutMs: 6e4, gradingReserveMs: 0, maxWaves: 1 },
      spend: { spentUsd: 0 },
      ...paused !== void 0 ? { holds: { paused } } : {}
    };
  }
  jobRepair(item) {
    const crews = this.history.get(item.issue.number) ?? {};
    return jobRepair({ crews, leases: {} }, crewIdOf(item)) !== void 0;
  }
  /** Records the run as a finished crew and lets the office's history say what follows. */
  afterRun(item, outcome, now) {
    const n = item.issue.number;
    const crews = this.history.get(n) ?? {};
    this.history.set(n, crews);
    const crewId = crewIdOf(item);
    crews[crewId] = {
      crewId,
      issueNumber: n,
      daemon: "sim",
      agent: AGENT.id,
      weight: item.issue.weight,
      fences: [],
      attempt: item.attempt,
      repair: item.repair,
      status: "finished",
      plannedAt: iso(now),
      finishedAt: iso(now),
      outcome: OUTCOME[outcome],
      // The simulator's usage limits are the API's (they pause the school): the key proxy saw them.
      ...outcome === "usage_limit" ? { upstream: { status: 429, at: iso(now) } } : {}
    };
    this.records?.ended(item.issue, item.run, now);
    const state = issueStates({ crews, leases: {} }).get(n);
    switch (state?.kind) {
      case "done":
        return { kind: "done" };
      case "stopped":
        return { kind: "stopped", reason: "repair-stopped-after-two-failures" };
      case "repair":
        return { kind: "backlog", attempt: state.attempt, repair: true };
      case "ready":
        return { kind: "backlog", attempt: 1, repair: false };
      default:
        throw new Error(
          `dispatch history reports issue #${n} as ${state?.kind ?? "unknown"} after its run ended`
        );
    }
  }
};
var SimRecords = class {
  static {
    __name(this, "SimRecords");
  }
  cells = {};
  crews = [];
  issues = /* @__PURE__ */ new Map();
  cached;
  constructor(history) {
    for (const issue of history) {
      let end = -issue.runs.reduce((s, r) => s + r.duration, 0);
      for (let run2 = 0; run2 < issue.runs.length; run2++) {
        end += issue.runs[run2].duration;
        this.ended(issue, run2, end);
      }
    }
  }
  ended(issue, run2, at) {
    const r = issue.runs[run2];
    this.issues.set(issue.number, issue);
    const cell = cellOf(issue);
    const crewId = `c${issue.number}-${String(run2).padStart(8, "0")}`;
    this.crews.push({
      crewId,
      issueNumber: issue.number,
      agent: AGENT.id,
      status: "finished",
      startedAt: iso(at - r.duration),
      finishedAt: iso(at),
      outcome: OUTCOME[r.outcome],
      choice: cell
    });
    if (r.outcome !== "usage_limit") {
      const k = `${AGENT.id}|${cell.domain}|${cell.difficulty}`;
      const c = this.cells[k] ??= { agent: AGENT.id, ...cell, count: 0, accepted: 0 };
      c.count += 1;
      if (r.outcome === "success") c.accepted += 1;
    }
    this.cached = void 0;
  }
  predictor() {
    this.cached ??= new Predictor(
      new RecordBook({
        ledger: { cells: this.cells },
        crews: this.crews,
        cellOf: /* @__PURE__ */ __name((n) => {
          const issue = this.issues.get(n);
          return issue ? { ...cellOf(issue), size: issue.size } : void 0;
        }, "cellOf")
      })
    );
    return this.cached;
  }
};
function cellOf(issue) {
  return { domain: issue.domain ?? "general", difficulty: issue.difficulty ?? 2 };
}
__name(cellOf, "cellOf");
function crewIdOf(item) {
  return `c${item.issue.number}-${String(item.run).padStart(8, "0")}`;
}
__name(crewIdOf, "crewIdOf");
function candidateOf(item) {
  return {
    issueNumber: item.issue.number,
    role: "coding",
    ...cellOf(item.issue),
    weight: item.issue.weight,
    fences: [],
    priority: item.issue.priority,
    size: item.issue.size,
    repair: item.repair,
    attempt: item.repair ? 2 : 1
  };
}
__name(candidateOf, "candidateOf");
function admissionDaemon(d, slots) {
  return {
    id: d.id,
    labels: [],
    slots,
    classroom: "worktree",
    declaredClass: d.class,
    effectiveClass: d.class,
    online: true,
    freeDiskBytes: Number.MAX_SAFE_INTEGER,
    busy: d.busy
  };
}
__name(admissionDaemon, "admissionDaemon");

// lab/simulate/shared-queue.ts
var RunQueue = class {
  static {
    __name(this, "RunQueue");
  }
  registry = { crews: {}, leases: {} };
  items = /* @__PURE__ */ new Map();
  /** Plans `item` on standby for `daemon`, claimable by `eligible` (`daemon` first). */
  add(item, daemon, eligible) {
    const crewId = crewIdOf(item);
    const record = {
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
      status: "planned",
      plannedAt: ""
    };
    this.registry.crews[crewId] = record;
    this.items.set(crewId, item);
  }
  /** The crew `daemon`'s job claims next (`claimOrder`'s first), taken out of the queue. */
  claim(daemon) {
    const [crewId] = claimOrder(this.registry, daemon);
    if (crewId === void 0) return void 0;
    delete this.registry.crews[crewId];
    const item = this.items.get(crewId);
    this.items.delete(crewId);
    return item;
  }
  get size() {
    return this.items.size;
  }
  /** The crews no job claimed, in plan order. */
  unclaimed() {
    return [...this.items.values()];
  }
  /** Empties the queue (the run ended): what it held, in plan order. */
  drain() {
    const out = this.unclaimed();
    this.items.clear();
    this.registry.crews = {};
    return out;
  }
};

// lab/simulate/deployed.ts
var DEFAULT_DEPLOYED = {
  scheduleMinutes: 120,
  queueMinutes: 1,
  jobTimeoutMinutes: DEFAULT_JOB_TIMEOUT_MINUTES,
  gradingReserveMinutes: 5
};
function simulateDeployed(workload, options) {
  const longest = Math.max(...workload.issues.flatMap((i) => i.runs.map((r) => r.duration)));
  const o = { ...options, crewTimeoutMinutes: options.crewTimeoutMinutes ?? Math.ceil(longest) };
  if (o.crewTimeoutMinutes < longest) {
    throw new SimulationError(
      `crew timeout ${o.crewTimeoutMinutes} min is shorter than the longest run (${longest.toFixed(1)} min): that run would be killed, not finished`
    );
  }
  const { jobTimeoutMinutes, gradingReserveMinutes } = o.workflow;
  if (o.crewTimeoutMinutes + gradingReserveMinutes > jobTimeoutMinutes) {
    throw new SimulationError(
      `job time limit ${jobTimeoutMinutes} min cannot fit one crew timeout (${o.crewTimeoutMinutes} min) plus the grading reserve (${gradingReserveMinutes} min)`
    );
  }
  return new DeployedLoop(workload, o).run();
}
__name(simulateDeployed, "simulateDeployed");
var DeployedLoop = class {
  constructor(workload, o) {
    this.o = o;
    this.perDaemon = workload.options.fleet.slotsPerDaemon;
    this.log = new RunLog(workload.options.pauses.minutes);
    this.office = createOffice({
      slotsPerDaemon: this.perDaemon,
      totalSlots: workload.slots.length,
      order: o.order,
      ...quickOf(workload),
      ...o.predictions ? { predictions: { history: workload.history ?? [], risk: o.predictions.risk } } : {}
    });
    for (const s of workload.slots) {
      const d = this.daemons.get(s.daemon) ?? { id: s.daemon, slots: [], free: [], planned: [], running: 0 };
      d.slots.push(s);
      d.free.push(s);
      this.daemons.set(s.daemon, d);
    }
    for (const issue of workload.issues) this.addToBacklog({ issue, run: 0, attempt: 1, repair: false });
  }
  o;
  static {
    __name(this, "DeployedLoop");
  }
  perDaemon;
  office;
  daemons = /* @__PURE__ */ new Map();
  events = new MinHeap();
  ready = /* @__PURE__ */ new Map();
  log;
  backlog = { available: 0, busy: 0 };
  now = 0;
  seq = 0;
  decisions = 0;
  backlogSize = 0;
  /** `shared`: the runs with a queue, until their last crew job ends. */
  runs = /* @__PURE__ */ new Set();
  /** Items waiting for their run's grade to reach the office. */
  graded = /* @__PURE__ */ new Set();
  /** Runs whose grade has not handed their crews' ends to the office yet. */
  ungraded = /* @__PURE__ */ new Set();
  run() {
    this.events.push(0, { kind: "tick" });
    let idleTicks = 0;
    while (this.events.size > 0) {
      this.advanceTo(this.events.peekKey());
      const touched = /* @__PURE__ */ new Set();
      const starting = /* @__PURE__ */ new Set();
      while (this.events.peekKey() === this.now) {
        const e = this.events.pop().value;
        if (e.kind === "finish") {
          this.finish(e);
          touched.add(e.daemon);
        } else if (e.kind === "job") {
          e.daemon.jobAt = void 0;
          if (e.daemon.job) continue;
          e.daemon.job = {
            deadline: this.now + this.o.workflow.jobTimeoutMinutes,
            crews: [],
            ...e.daemon.pendingRun ? { run: e.daemon.pendingRun } : {}
          };
          e.daemon.pendingRun = void 0;
          touched.add(e.daemon);
          starting.add(e.daemon);
        } else if (e.kind === "plan") {
          this.plan(e.chain);
        } else if (e.kind === "grade") {
          this.grade(e.run);
        } else if (e.kind === "tick") {
          const before = this.running() + this.plannedCount();
          this.tick();
          const idle = before === 0 && this.running() + this.plannedCount() === 0 && this.now >= this.log.pausedUntil;
          idleTicks = idle ? idleTicks + 1 : 0;
          if (idleTicks > 2 && this.ready.size > 0) {
            throw new SimulationError(
              `${this.ready.size} run(s) stay unplaced with every slot idle: the office refuses them`
            );
          }
        }
      }
      for (const d of touched) this.fill(d, starting.has(d));
    }
    if (this.ready.size + this.plannedCount() > 0)
      throw new SimulationError("the simulation ended with work left");
    return this.log.summary(`${this.o.cadence} \xB7 ${this.o.order}`, this.decisions, this.backlog);
  }
  /** Moves the clock, counting busy and usable idle slot-time while runnable work waits. */
  advanceTo(next) {
    if (this.now >= this.log.pausedUntil && this.waiting().length > 0) {
      const idle = this.usableIdle(next - this.now);
      const busy = this.running();
      this.backlog.available += (next - this.now) * (busy + idle);
      this.backlog.busy += (next - this.now) * busy;
    }
    this.now = next;
  }
  running() {
    return [...this.daemons.values()].reduce((n, d) => n + d.running, 0);
  }
  plannedCount() {
    const shared = [...this.runs].reduce((n, r) => n + r.queue.size, 0);
    return [...this.daemons.values()].reduce(
      (n, d) => n + d.planned.length + (d.job?.crews.length ?? 0),
      shared + this.graded.size
    );
  }
  addToBacklog(item) {
    const full = { ...item, id: `${item.issue.number}#${item.run}`, seq: this.seq++ };
    this.ready.set(full.id, full);
    this.backlogSize += item.issue.size;
  }
  /** The daemons of `among` with a free slot, as the office's admission sees them. */
  freeDaemons(among, capacity) {
    return among.filter((d) => capacity(d) > 0).map((d) => ({
      id: d.id,
      class: d.slots[0].class,
      free: capacity(d),
      busy: this.perDaemon - capacity(d)
    }));
  }
  /** The office decides for `offered` daemons (others offer no slot); returns what it placed. */
  place(offered, capacity) {
    const free = this.freeDaemons(offered, capacity);
    if (free.length === 0 || this.ready.size === 0) return [];
    this.decisions++;
    const paused = this.now < this.log.pausedUntil ? `usage limit; paused until minute ${this.log.pausedUntil.toFixed(1)}` : void 0;
    const taken = free.reduce((n, d) => n + d.free, 0);
    const placed = this.office.place(this.now, [...this.ready.values()], free, paused, this.backlogSize);
    if (placed.size > taken) throw new SimulationError("the office placed more crews than free slots");
    const out = [];
    for (const [id, daemon] of placed) {
      const item = this.ready.get(id);
      this.ready.delete(id);
      this.backlogSize -= item.issue.size;
      out.push([item, this.daemons.get(daemon)]);
    }
    return out;
  }
  launch(d, item) {
    const slot = d.free.shift();
    if (!slot) throw new SimulationError(`daemon ${d.id} launched with no free slot`);
    d.running++;
    if (d.job?.run) d.job.run.started++;
    this.events.push(this.now + item.issue.runs[item.run].duration, {
      kind: "finish",
      daemon: d,
      slot,
      item,
      start: this.now
    });
  }
  /** A crew timeout plus the grading reserve still fit before the job's limit. */
  fits(job) {
    return this.now + this.o.crewTimeoutMinutes + this.o.workflow.gradingReserveMinutes <= job.deadline;
  }
  /**
   * The driver's loop for one daemon: planned crews first, then refill, then maybe end the job. A
   * cron job takes only the crews planned before it started: later plans queue the next job.
   */
  fill(d, starting) {
    if (!d.job) return;
    if (this.o.cadence === "standby" || this.o.cadence === "shared")
      return this.fillStandby(d, d.job, starting);
    if (starting || this.o.cadence === "refill") {
      while (d.free.length > 0 && d.planned.length > 0) this.launch(d, d.planned.shift());
    }
    const refill = this.o.cadence === "refill" && this.fits(d.job);
    if (refill && d.free.length > 0 && this.now >= this.log.pausedUntil) {
      for (const [item, daemon] of this.place([d], (x) => x.free.length)) this.launch(daemon, item);
    }
    if (d.running === 0) {
      d.job = void 0;
      if (d.planned.length > 0) this.startJobAt(d, this.now);
    }
  }
  /**
   * An Actions crew job with standby crews (dispatch/gates/standby.ts): it takes what was planned for its
   * daemon when it starts, launches as slots free while a crew timeout plus the reserve fit, and
   * what it did not start goes back to the backlog (the next plan cancels it and plans the issue
   * again).
   */
  fillStandby(d, job, starting) {
    if (starting) job.crews.push(...d.planned.splice(0));
    while (d.free.length > 0 && job.crews.length > 0 && this.now >= this.log.pausedUntil && this.fits(job)) {
      this.launch(d, job.crews.shift());
    }
    while (job.run && d.free.length > 0 && this.now >= this.log.pausedUntil && this.fits(job)) {
      const item = job.run.queue.claim(d.id);
      if (!item) break;
      this.launch(d, item);
    }
    if (d.running > 0) return;
    this.afterGrade(job.run, job.crews.splice(0));
    d.job = void 0;
    this.endRuns();
    if (d.planned.length > 0) this.startJobAt(d, this.now);
  }
  toBacklog(items) {
    for (const item of items) {
      this.ready.set(item.id, item);
      this.backlogSize += item.issue.size;
    }
  }
  /**
   * An Actions plan's free slots on `d`: the slots less the crews runs not graded yet planned there
   * (admission counts planned crews as busy; a daemon with standby counts at most its slots).
   */
  unheld(d) {
    let planned = 0;
    for (const r of this.ungraded) planned += r.planned.get(d) ?? 0;
    return this.perDaemon - Math.min(this.perDaemon, planned);
  }
  /** Items back to the backlog: at once, or (a crew job's) when its run's grade reaches the office. */
  afterGrade(run2, items) {
    if (!run2) return this.toBacklog(items);
    for (const i of items) this.graded.add(i);
    run2.graded.push(() => {
      for (const i of items) this.graded.delete(i);
      this.toBacklog(items);
    });
  }
  /** A run none of whose crew jobs runs or waits any more: what its queue still holds goes back. */
  endRuns() {
    for (const r of this.runs) {
      const live = [...this.daemons.values()].some((d) => d.job?.run === r || d.pendingRun === r);
      if (live) continue;
      this.afterGrade(r, r.queue.drain());
      this.runs.delete(r);
      this.events.push(this.now + (this.o.gradeMinutes ?? 5), { kind: "grade", run: r });
    }
  }
  /** A run's grade: its crews' ends reach the office, and the office says whether to start the next run. */
  grade(run2) {
    for (const f of run2.graded.splice(0)) f();
    this.ungraded.delete(run2);
    const paused = this.now < this.log.pausedUntil ? "usage limit" : void 0;
    const next = nextCycle({
      maxRuns: this.o.nextCycle?.runs ?? 12,
      started: run2.started,
      waiting: this.ready.size,
      chain: run2.chain,
      ...paused ? { paused } : {}
    });
    if (next.start)
      this.events.push(this.now + (this.o.nextCycle?.minutes ?? 2), { kind: "plan", chain: next.chain });
  }
  /** A run the loop started itself: a plan as the cron's, without moving the cron. */
  plan(chain) {
    this.planStandby((x) => this.unheld(x), chain);
    for (const d of this.daemons.values())
      if (d.planned.length > 0) this.startJobAt(d, this.now + this.o.workflow.queueMinutes);
  }
  /** What standby crews are sized by: the 75th percentile of the last 50 runs (standby.ts). */
  typicalMinutes() {
    const runs = this.log.timeline.slice(-50).map((t) => t.end - t.start).sort((a, b) => a - b);
    if (runs.length < 5) return this.o.crewTimeoutMinutes;
    const p75 = runs[Math.min(runs.length - 1, Math.ceil(runs.length * 0.75) - 1)];
    return Math.min(this.o.crewTimeoutMinutes, Math.max(1, p75));
  }
  startJobAt(d, at) {
    if (d.job || d.jobAt !== void 0) return;
    d.jobAt = at;
    this.events.push(at, { kind: "job", daemon: d });
  }
  /** The cron: a plan onto the free slots (and, for `standby`, the standby behind them). */
  tick() {
    const o = this.o;
    const capacity = /* @__PURE__ */ __name((x) => x.free.length - x.planned.length - (x.job?.crews.length ?? 0), "capacity");
    if (o.cadence === "standby" || o.cadence === "shared") this.planStandby((x) => this.unheld(x));
    else for (const [item, d] of this.place([...this.daemons.values()], capacity)) d.planned.push(item);
    for (const d of this.daemons.values())
      if (d.planned.length > 0) this.startJobAt(d, this.now + o.workflow.queueMinutes);
    if (this.ready.size + this.plannedCount() + this.running() > 0)
      this.events.push(this.now + o.workflow.scheduleMinutes, { kind: "tick" });
  }
  /**
   * An Actions plan: the first wave onto the free slots and the standby behind it, balanced by
   * predicted work — the office's own standby pass (dispatch/gates/standby.ts), for a full job.
   */
  planStandby(capacity, chain = 0) {
    if (this.now < this.log.pausedUntil || this.ready.size === 0) return;
    const free = this.freeDaemons([...this.daemons.values()], capacity);
    if (free.length === 0) return;
    this.decisions++;
    const { first, standby, eligible } = this.office.planStandby(
      [...this.ready.values()],
      free,
      {
        jobMinutes: this.o.workflow.jobTimeoutMinutes,
        crewTimeoutMinutes: this.o.crewTimeoutMinutes,
        gradingReserveMinutes: this.o.workflow.gradingReserveMinutes,
        typicalMinutes: this.typicalMinutes()
      },
      this.backlogSize
    );
    if (first.size > free.reduce((n, d) => n + d.free, 0)) {
      throw new SimulationError("the office placed more crews than free slots");
    }
    const run2 = { queue: new RunQueue(), started: 0, graded: [], chain, planned: /* @__PURE__ */ new Map() };
    const shared = this.o.cadence === "shared";
    for (const [id, daemon] of [...first, ...standby]) {
      const item = this.ready.get(id);
      this.ready.delete(id);
      this.backlogSize -= item.issue.size;
      const d = this.daemons.get(daemon);
      if (shared && standby.has(id)) run2.queue.add(item, daemon, eligible.get(id));
      else d.planned.push(item);
      run2.planned.set(d, (run2.planned.get(d) ?? 0) + 1);
    }
    this.runs.add(run2);
    this.ungraded.add(run2);
    for (const d of this.daemons.values()) if (d.planned.length > 0) d.pendingRun = run2;
    this.endRuns();
  }
  /** A run ends: its slot frees, it is recorded, and the office says what follows. */
  finish(e) {
    const { daemon: d, slot, item, start } = e;
    d.running--;
    d.free.push(slot);
    d.free.sort((a, b) => a.index - b.index);
    const { run: run2, resumeAt } = this.log.ended(slot, item, start, this.now);
    if (resumeAt !== void 0) this.events.push(resumeAt, { kind: "resume" });
    const step = this.office.afterRun(item, run2.outcome, this.now);
    if (step.kind !== "backlog") return this.log.settle(item.issue.number, step);
    if (item.run + 1 >= item.issue.runs.length) {
      throw new SimulationError(
        `issue #${item.issue.number} back in the backlog for a run the workload does not have`
      );
    }
    const next = { issue: item.issue, run: item.run + 1, attempt: step.attempt, repair: step.repair };
    const job = d.job?.run ? d.job : void 0;
    if (!job) return this.addToBacklog(next);
    const full = { ...next, id: `${item.issue.number}#${next.run}`, seq: this.seq++ };
    if ((this.o.repairInJob ?? true) && this.office.jobRepair(item)) return void job.crews.unshift(full);
    this.afterGrade(job.run, [full]);
  }
  /** Work not started: the backlog, crews planned or on standby, and what a grade will return. */
  waiting() {
    const out = [...this.ready.values()];
    for (const d of this.daemons.values()) out.push(...d.planned, ...d.job?.crews ?? []);
    for (const r of this.runs) out.push(...r.queue.unclaimed());
    for (const i of this.graded) out.push(i);
    return out;
  }
  /** Free slots some ready item fits, for the refill figure (idle while runnable work waits). */
  usableIdle(minutes2) {
    let lightest = 4;
    for (const i of this.waiting()) lightest = Math.min(lightest, classRank(i.issue.weight));
    let idle = 0;
    const causes = this.o.idle;
    for (const d of this.daemons.values()) {
      let n = 0;
      for (const s of d.free) if (classRank(s.class) >= lightest) n++;
      idle += n;
      if (!causes || n === 0) continue;
      const why = d.job ? this.fits(d.job) ? "empty" : "window" : d.jobAt !== void 0 ? "queued" : "noJob";
      causes[why] += n * minutes2;
    }
    return idle;
  }
};
function quickOf(workload) {
  const cut = quickCut(workload.issues.map((i) => i.size));
  return cut === void 0 ? {} : { quickMinutes: cut };
}
__name(quickOf, "quickOf");

// lab/simulate/metrics.ts
function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil(p / 100 * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}
__name(percentile, "percentile");
function measure(workload, result) {
  const busy = result.timeline.reduce((s, t) => s + (t.end - t.start), 0);
  const ttfv = result.issues.flatMap((i) => i.firstVerdictAt === void 0 ? [] : [i.firstVerdictAt]);
  const makespan = result.makespan;
  return {
    policy: result.policy,
    makespan,
    lowerBound: workload.lowerBound,
    makespanRatio: makespan / workload.lowerBound,
    utilization: makespan > 0 ? busy / (workload.slots.length * makespan) : 1,
    backlogUtilization: result.backlog.available > 0 ? result.backlog.busy / result.backlog.available : 1,
    ttfvP50: percentile(ttfv, 50),
    ttfvP95: percentile(ttfv, 95),
    issuesDone: result.issues.filter((i) => i.status === "done").length,
    issuesStopped: result.issues.filter((i) => i.status === "stopped").length,
    runs: result.timeline.length,
    repairs: result.timeline.filter((t) => t.repair).length,
    pausedMinutes: result.pauses.reduce((s, p) => s + (p.to - p.from), 0)
  };
}
__name(measure, "measure");

// lab/simulate/oracle.ts
var durationOf = /* @__PURE__ */ __name((item) => item.issue.runs[item.run].duration, "durationOf");
var oraclePolicy = /* @__PURE__ */ __name(() => {
  const queues = CAPACITY_CLASSES.map(() => []);
  let count = 0;
  return {
    name: "lpt-oracle",
    add(item) {
      const q = queues[classRank(item.issue.weight)];
      const d = durationOf(item);
      let lo = 0;
      let hi = q.length;
      while (lo < hi) {
        const mid = lo + hi >> 1;
        if (durationOf(q[mid]) < d) lo = mid + 1;
        else hi = mid;
      }
      q.splice(lo, 0, item);
      count++;
    },
    backlog: /* @__PURE__ */ __name(() => count, "backlog"),
    decide(ctx) {
      const launches = [];
      const order = [...ctx.free].sort(
        (a, b) => classRank(b.class) - classRank(a.class) || a.index - b.index
      );
      for (const slot of order) {
        const rank = classRank(slot.class);
        let pick = queues[rank].length ? rank : -1;
        if (pick < 0) {
          for (let c = 0; c < rank; c++) {
            const q = queues[c];
            if (q.length && (pick < 0 || durationOf(q.at(-1)) > durationOf(queues[pick].at(-1)))) pick = c;
          }
        }
        if (pick < 0) continue;
        launches.push({ item: queues[pick].pop(), slot });
        count--;
      }
      return launches;
    }
  };
}, "oraclePolicy");

// lab/simulate/ours.ts
function officePolicy(office, options = {}) {
  return (workload) => new OfficeBacklog(office, options, workload);
}
__name(officePolicy, "officePolicy");
var OfficeBacklog = class {
  constructor(office, options, workload) {
    this.office = office;
    this.options = options;
    this.workload = workload;
    this.name = options.name ?? "ours";
    if (office.afterRun) this.afterRun = office.afterRun.bind(office);
  }
  office;
  options;
  workload;
  static {
    __name(this, "OfficeBacklog");
  }
  name;
  consultWhilePaused = true;
  afterRun;
  byClass = CAPACITY_CLASSES.map(() => ({ items: [], head: 0, tail: -1 }));
  backlogSize = 0;
  launched = /* @__PURE__ */ new Set();
  /** Repairs and usage-limit retries. */
  side = /* @__PURE__ */ new Map();
  prepared = false;
  pending = [];
  inBacklog = 0;
  add(item) {
    this.inBacklog++;
    this.backlogSize += item.issue.size;
    if (!this.prepared && item.run === 0) this.pending.push(item);
    else this.side.set(item.id, item);
  }
  backlog() {
    return this.inBacklog;
  }
  decide(ctx) {
    if (!this.prepared) this.prepare();
    const freeByDaemon = /* @__PURE__ */ new Map();
    for (const s of ctx.free) {
      const list = freeByDaemon.get(s.daemon) ?? [];
      list.push(s);
      freeByDaemon.set(s.daemon, list);
    }
    const perDaemon = this.workload.options.fleet.slotsPerDaemon;
    const daemons = [...freeByDaemon].map(([id, slots]) => ({
      id,
      class: slots[0].class,
      free: slots.length,
      busy: perDaemon - slots.length
    }));
    let window = ctx.free.length;
    for (; ; ) {
      const { list, cut } = this.candidates(window);
      this.critical(list, window);
      const placed = this.office.place(ctx.now, list, daemons, ctx.paused, this.backlogSize);
      const wantedMore = cut.some((mine) => mine.every((i) => placed.has(i.id)));
      if (placed.size > 0 && placed.size < ctx.free.length && wantedMore) {
        window *= 2;
        continue;
      }
      return this.launch(list, placed, freeByDaemon);
    }
  }
  /** The office's placements as launches onto the free slots; they leave the backlog. */
  launch(list, placed, freeByDaemon) {
    const launches = [];
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
  prepare() {
    for (const item of this.office.order(this.pending))
      this.byClass[classRank(item.issue.weight)].items.push(item);
    for (const q of this.byClass) q.tail = q.items.length - 1;
    this.pending = [];
    this.prepared = true;
  }
  /** The side items plus up to `window` fresh items per class; `cut` lists the truncated classes. */
  candidates(window) {
    const list = [...this.side.values()];
    const cut = [];
    for (const q of this.byClass) {
      const mine = [];
      let taken = 0;
      for (let i = q.head; i < q.items.length; i++) {
        const item = q.items[i];
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
  critical(list, window) {
    const promote = /* @__PURE__ */ new Set();
    if (!this.options.tailGuard) return promote;
    const threshold = tailGuardThreshold(this.backlogSize, this.workload.slots.length);
    const shown = new Set(list.map((i) => i.id));
    for (const i of list) if (!i.repair && i.issue.size >= threshold) promote.add(i.id);
    const quick = this.options.quickMinutes;
    for (const q of this.byClass) {
      let first = q.head;
      while (first <= q.tail && this.launched.has(q.items[first].id)) first++;
      const longHead = quick !== void 0 && first <= q.tail && q.items[first].issue.size > quick;
      let taken = 0;
      for (let i = q.tail; i >= q.head && taken < window; i--) {
        const item = q.items[i];
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
};

// lab/simulate/prng.ts
function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = s + 2654435769 >>> 0;
    let z = s;
    z = Math.imul(z ^ z >>> 16, 2246822507) >>> 0;
    z = Math.imul(z ^ z >>> 13, 3266489909) >>> 0;
    return (z ^ z >>> 16) >>> 0;
  };
}
__name(splitmix32, "splitmix32");
function createRng(seed) {
  const init = splitmix32(seed);
  const next = sfc32([init(), init(), init(), init()]);
  const normal = /* @__PURE__ */ __name(() => {
    const u = 1 - next();
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }, "normal");
  return {
    next,
    normal,
    logNormal: /* @__PURE__ */ __name((median, sigma) => median * Math.exp(sigma * normal()), "logNormal"),
    pick(weights) {
      const total = weights.reduce((s, w) => s + w, 0);
      let r = next() * total;
      for (const [i, w] of weights.entries()) {
        if (r < w) return i;
        r -= w;
      }
      return weights.length - 1;
    }
  };
}
__name(createRng, "createRng");

// lab/simulate/workload.ts
var SIM_DOMAINS = ["docs", "tests", "frontend", "backend", "infra", "data"];
var DOMAIN_SHARES = [0.15, 0.15, 0.2, 0.25, 0.1, 0.15];
var DIFFICULTY_BY_SIZE = 0.8;
var DIFFICULTY_NOISE = 0.8;
var FAILURE_PER_DIFFICULTY = 0.45;
var FAILURE_DOMAIN_SIGMA = 0.5;
var MAX_CELL_FAILURE = 0.9;
function daemonId(i) {
  return `d${String(i + 1).padStart(3, "0")}`;
}
__name(daemonId, "daemonId");
function generateWorkload(options) {
  const rng = createRng(options.seed);
  const cellRng = createRng((options.seed ^ 1540483477) >>> 0);
  const cells = failureCells(options, cellRng);
  const issues = [];
  let totalWork = 0;
  let longestChain = 0;
  for (let n = 1; n <= options.issues; n++) {
    const issue = drawIssue(n, options, cells, rng, cellRng);
    const chain = issue.runs.reduce((s, r) => s + r.duration, 0);
    totalWork += chain;
    longestChain = Math.max(longestChain, chain);
    issues.push(issue);
  }
  const historyRng = createRng((options.seed ^ 668265263) >>> 0);
  const history = [];
  for (let n = 1; n <= options.historyIssues; n++)
    history.push(drawIssue(options.issues + n, options, cells, historyRng, historyRng));
  const slots = [];
  const { fleet } = options;
  for (let d = 0; d < fleet.daemons; d++) {
    const cls = fleet.daemonClasses[d % fleet.daemonClasses.length];
    for (let k = 0; k < fleet.slotsPerDaemon; k++) {
      slots.push({ index: slots.length, daemon: daemonId(d), slot: k, class: cls });
    }
  }
  return {
    options,
    issues,
    slots,
    totalWork,
    longestChain,
    lowerBound: Math.max(totalWork / slots.length, longestChain),
    history,
    cells
  };
}
__name(generateWorkload, "generateWorkload");
function drawIssue(n, options, cells, rng, cellRng) {
  const { medianMinutes, tailSigma, estimateNoise } = options.durations;
  const base = rng.logNormal(medianMinutes, tailSigma);
  const size = base * Math.exp(estimateNoise * rng.normal());
  const weight = CAPACITY_CLASSES[rng.pick(options.weightMix)];
  const z = tailSigma > 0 ? Math.log(base / medianMinutes) / tailSigma : 0;
  const domainIndex = cellRng.pick(DOMAIN_SHARES);
  const difficulty = clampDifficulty(3 + DIFFICULTY_BY_SIZE * z + DIFFICULTY_NOISE * cellRng.normal());
  const failureRate = cells.rates[domainIndex][difficulty - 1];
  const runs = [];
  let failures = 0;
  for (; ; ) {
    if (rng.next() < options.pauses.rate) {
      runs.push({ duration: Math.max(0.01, base * rng.next()), outcome: "usage_limit" });
      continue;
    }
    const duration = failures === 0 ? base : base * (0.75 + 0.5 * rng.next());
    if (rng.next() < failureRate) {
      runs.push({ duration, outcome: "failure" });
      if (++failures === 2) break;
    } else {
      runs.push({ duration, outcome: "success" });
      break;
    }
  }
  return { number: n, weight, priority: 2, size, domain: cells.domains[domainIndex], difficulty, runs };
}
__name(drawIssue, "drawIssue");
function clampDifficulty(x) {
  return Math.min(5, Math.max(1, Math.round(x)));
}
__name(clampDifficulty, "clampDifficulty");
function failureCells(options, rng) {
  const spread = options.failures.spread;
  const domainMult = SIM_DOMAINS.map(() => Math.exp(FAILURE_DOMAIN_SIGMA * spread * rng.normal()));
  const diffMult = [1, 2, 3, 4, 5].map((d) => Math.exp(FAILURE_PER_DIFFICULTY * spread * (d - 3)));
  const sd = Math.hypot(options.durations.tailSigma > 0 ? DIFFICULTY_BY_SIZE : 0, DIFFICULTY_NOISE);
  const cdf = /* @__PURE__ */ __name((x) => 0.5 * (1 + erf((x - 3) / (sd * Math.SQRT2))), "cdf");
  const pDiff = [1, 2, 3, 4, 5].map((d) => (d === 5 ? 1 : cdf(d + 0.5)) - (d === 1 ? 0 : cdf(d - 0.5)));
  const shares = DOMAIN_SHARES.reduce((s, w) => s + w, 0);
  let meanMult = 0;
  for (const [i, m] of domainMult.entries())
    for (const [j, k] of diffMult.entries()) meanMult += DOMAIN_SHARES[i] / shares * pDiff[j] * m * k;
  const rates = domainMult.map(
    (m) => diffMult.map((k) => Math.min(MAX_CELL_FAILURE, options.failures.rate * m * k / meanMult))
  );
  return { domains: SIM_DOMAINS, rates };
}
__name(failureCells, "failureCells");
function erf(x) {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return x >= 0 ? y : -y;
}
__name(erf, "erf");

// lab/simulate/compare.ts
var POLICIES = [
  {
    name: "ours",
    label: "ours (repairs first, smallest first, immediate refill, classes)",
    factory: /* @__PURE__ */ __name(() => (w) => officePolicy(
      createOffice({ slotsPerDaemon: w.options.fleet.slotsPerDaemon, totalSlots: w.slots.length })
    )(w), "factory")
  },
  { name: "batch", label: "batch-synchronous (matrix workflow)", factory: /* @__PURE__ */ __name(() => batchPolicy, "factory") },
  { name: "fifo", label: "FIFO with immediate refill", factory: /* @__PURE__ */ __name(() => fifoPolicy, "factory") },
  {
    name: "tail-guard",
    label: "dispatch.order: tail-guard (runs predicted \u2265 \xBE of the backlog per slot first, then the quicker 55 % smallest first, then the rest longest first; the default)",
    factory: /* @__PURE__ */ __name(() => (w) => {
      const quick = quickCut(w.issues.map((i) => i.size));
      const quickMinutes = quick === void 0 ? {} : { quickMinutes: quick };
      return officePolicy(
        createOffice({
          slotsPerDaemon: w.options.fleet.slotsPerDaemon,
          totalSlots: w.slots.length,
          order: "tail-guard",
          ...quickMinutes
        }),
        { tailGuard: true, name: "tail-guard", ...quickMinutes }
      )(w);
    }, "factory"),
    reference: true
  },
  {
    name: "lpt-oracle",
    label: "reference: longest-first knowing true durations (not implementable)",
    factory: /* @__PURE__ */ __name(() => oraclePolicy, "factory"),
    reference: true
  }
];
function compare(partial = {}, only, deployed) {
  const options = resolveSimOptions(partial);
  const workload = generateWorkload(options);
  const chosen = only ? only.map((name) => {
    const p = POLICIES.find((q) => q.name === name);
    if (!p) {
      throw new ConfigError(
        `simulate: unknown policy "${name}"; choose from ${POLICIES.map((q) => q.name).join(", ")}.`
      );
    }
    return p;
  }) : POLICIES.filter((p) => !p.reference);
  const results = chosen.map((p) => {
    const result = simulate(workload, p.factory());
    return { label: p.label, result, metrics: measure(workload, result) };
  });
  if (deployed) {
    for (const cadence of ["cron", "refill", "shared", "standby"]) {
      for (const order of ["smallest-first", "tail-guard"]) {
        const limit = cadence === "refill" ? { jobTimeoutMinutes: Infinity } : {};
        const result = simulateDeployed(workload, {
          workflow: { ...DEFAULT_DEPLOYED, ...deployed, ...limit },
          cadence,
          order
        });
        results.push({
          label: `deployed: ${CADENCE_LABELS[cadence]}, dispatch.order ${order}`,
          result,
          metrics: measure(workload, result)
        });
      }
    }
  }
  return { options, workload, results };
}
__name(compare, "compare");
var CADENCE_LABELS = {
  cron: "cron-only (a plan per schedule tick)",
  refill: "continuous refill from the office (one shared state: the CLI)",
  standby: "per-daemon standby (GHES): each daemon's standby crews its own crew job's alone",
  shared: "standby shared by the run's crew jobs (github.com): a freed slot takes its own, then the other daemons' it may run, in plan order"
};

// lab/simulate/report.ts
var GOALS = { utilization: 0.95, makespanRatio: 1.1, minStudents: 24 };
function minutes(m) {
  if (!Number.isFinite(m)) return "\u2013";
  return m >= 120 ? `${(m / 60).toFixed(1)} h` : `${m.toFixed(0)} min`;
}
__name(minutes, "minutes");
function pct(x) {
  return `${(x * 100).toFixed(1)} %`;
}
__name(pct, "pct");
function describeScenario(c) {
  const o = c.options;
  return `${o.issues} issues on ${o.fleet.daemons} daemon(s) \xD7 ${o.fleet.slotsPerDaemon} slot(s) = ${c.workload.slots.length} students; seed ${o.seed}, durations log-normal (median ${o.durations.medianMinutes} min, tail \u03C3 ${o.durations.tailSigma}), failure rate ${o.failures.rate} (spread ${o.failures.spread} per domain \xD7 difficulty), usage-limit rate ${o.pauses.rate} (pause ${o.pauses.minutes} min)`;
}
__name(describeScenario, "describeScenario");
function goalLines(c) {
  const ours = c.results.find((r2) => r2.metrics.policy === "ours")?.metrics;
  const where = { refill: "the CLI", shared: "github.com", standby: "GHES" };
  const deployed = ["refill", "shared", "standby"].flatMap((cadence) => {
    const m = c.results.find((r2) => r2.metrics.policy === `${cadence} \xB7 tail-guard`)?.metrics;
    if (!m) return [];
    return [
      `deployed ${cadence} (${where[cadence]}) \xB7 tail-guard: makespan ${m.makespanRatio.toFixed(3)} \xD7 bound (goal \u2264 1.1 \xD7: ${m.makespanRatio <= GOALS.makespanRatio ? "met" : "missed"}), slots busy ${pct(m.backlogUtilization)} of the time runnable work waits (goal \u2265 95 %: ${m.backlogUtilization >= GOALS.utilization ? "met" : "missed"})`
    ];
  });
  if (!ours) return deployed;
  if (c.workload.slots.length < GOALS.minStudents) {
    return [`goals apply from ${GOALS.minStudents} students; this fleet has ${c.workload.slots.length}.`];
  }
  const u = ours.utilization;
  const r = ours.makespanRatio;
  return [
    ...deployed,
    u >= GOALS.utilization ? `utilization goal met: ${pct(u)} \u2265 95 %` : `utilization goal missed by ${((GOALS.utilization - u) * 100).toFixed(1)} points: ${pct(u)} < 95 %`,
    r <= GOALS.makespanRatio ? `makespan goal met: ${r.toFixed(3)} \xD7 lower bound \u2264 1.1 \xD7` : `makespan goal missed by ${((r - GOALS.makespanRatio) / GOALS.makespanRatio * 100).toFixed(1)} %: ${r.toFixed(3)} \xD7 lower bound > 1.1 \xD7`
  ];
}
__name(goalLines, "goalLines");
function metricsRow(m) {
  return [
    m.policy,
    pct(m.utilization),
    pct(m.backlogUtilization),
    minutes(m.makespan),
    `${m.makespanRatio.toFixed(3)} \xD7`,
    minutes(m.ttfvP50),
    minutes(m.ttfvP95),
    String(m.runs),
    String(m.repairs),
    String(m.issuesStopped),
    minutes(m.pausedMinutes)
  ];
}
__name(metricsRow, "metricsRow");
var METRIC_HEADERS = [
  "policy",
  "utilization",
  "refill util.",
  "makespan",
  "vs bound",
  "TTFV p50",
  "TTFV p95",
  "runs",
  "repairs",
  "stopped",
  "paused"
];
function textTable(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = /* @__PURE__ */ __name((r) => r.map((cell, c) => c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])).join("  "), "line");
  return [line(rows[0]), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}
__name(textTable, "textTable");
function renderText(c) {
  return [
    describeScenario(c),
    `lower bound max(\u03A3 durations / slots, longest issue) = ${minutes(c.workload.lowerBound)}`,
    "",
    textTable([METRIC_HEADERS, ...c.results.map((r) => metricsRow(r.metrics))]),
    "",
    ...goalLines(c),
    ""
  ].join("\n");
}
__name(renderText, "renderText");
function renderJson(c) {
  return JSON.stringify(
    {
      options: flatSimOptions(c.options),
      students: c.workload.slots.length,
      totalWork: c.workload.totalWork,
      lowerBound: c.workload.lowerBound,
      policies: c.results.map((r) => ({ label: r.label, ...r.metrics })),
      goals: goalLines(c)
    },
    null,
    2
  );
}
__name(renderJson, "renderJson");

// lab/simulate/html.ts
var MAX_ROWS = 200;
var WIDTH = 1e3;
var LEFT = 70;
var COLORS = { success: "#2e8b57", failure: "#c0392b", usage_limit: "#e0a800" };
function timeline(c, result, horizon) {
  const slots = c.workload.slots;
  const rows = Math.min(slots.length, MAX_ROWS);
  const rowH = rows > 60 ? 4 : rows > 24 ? 8 : 14;
  const top = 20;
  const height = top + rows * rowH + 24;
  const x = /* @__PURE__ */ __name((t) => LEFT + t / horizon * WIDTH, "x");
  const parts = [];
  for (const p of result.pauses) {
    parts.push(
      `<rect x="${x(p.from).toFixed(1)}" y="${top}" width="${Math.max(1, x(p.to) - x(p.from)).toFixed(1)}" height="${rows * rowH}" fill="#ddd"><title>paused ${minutes(p.from)} \u2013 ${minutes(p.to)}</title></rect>`
    );
  }
  for (let i = 0; i < rows; i++) {
    if (rowH >= 8 || i % 10 === 0) {
      const s = slots[i];
      parts.push(
        `<text x="2" y="${top + i * rowH + rowH - 1}" font-size="${Math.min(10, rowH + 4)}">${escapeHtml(`${s.daemon}/${s.slot} ${s.class[0]}`)}</text>`
      );
    }
  }
  for (const t of result.timeline) {
    if (t.slot >= rows) continue;
    const w = Math.max(0.6, x(t.end) - x(t.start));
    const tip = `#${t.issue} attempt ${t.attempt}${t.repair ? " (repair)" : ""}: ${t.outcome}, ${minutes(t.start)} \u2192 ${minutes(t.end)}`;
    parts.push(
      `<rect x="${x(t.start).toFixed(2)}" y="${top + t.slot * rowH + 1}" width="${w.toFixed(2)}" height="${rowH - 1}" fill="${COLORS[t.outcome]}"${t.repair ? ' fill-opacity="0.6" stroke="#000" stroke-width="0.4"' : ""}><title>${escapeHtml(tip)}</title></rect>`
    );
  }
  const bound = x(c.workload.lowerBound);
  parts.push(
    `<line x1="${bound.toFixed(1)}" x2="${bound.toFixed(1)}" y1="${top - 6}" y2="${top + rows * rowH}" stroke="#1f4e9c" stroke-dasharray="4 3"/>`,
    `<text x="${(bound + 3).toFixed(1)}" y="${top - 8}" font-size="10" fill="#1f4e9c">lower bound ${escapeHtml(minutes(c.workload.lowerBound))}</text>`
  );
  for (let k = 0; k <= 10; k++) {
    const t = horizon * k / 10;
    parts.push(
      `<text x="${x(t).toFixed(1)}" y="${height - 6}" font-size="10" text-anchor="middle">${escapeHtml(minutes(t))}</text>`
    );
  }
  const note = slots.length > rows ? `<p class="note">First ${rows} of ${slots.length} slots shown.</p>` : "";
  return `<svg width="${LEFT + WIDTH + 20}" height="${height}" viewBox="0 0 ${LEFT + WIDTH + 20} ${height}" role="img" aria-label="${escapeHtml(result.policy)} per-slot timeline">${parts.join("")}</svg>${note}`;
}
__name(timeline, "timeline");
function renderHtml(c) {
  const horizon = Math.max(...c.results.map((r) => r.metrics.makespan), c.workload.lowerBound, 1e-9);
  const table = "<table><thead><tr>" + METRIC_HEADERS.map((h) => `<th>${escapeHtml(h)}</th>`).join("") + "</tr></thead><tbody>" + c.results.map(
    (r) => "<tr>" + metricsRow(r.metrics).map((v) => `<td>${escapeHtml(v)}</td>`).join("") + "</tr>"
  ).join("") + "</tbody></table>";
  const sections = c.results.map((r) => `<h2>${escapeHtml(r.label)}</h2>${timeline(c, r.result, horizon)}`).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>school-simulate</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}svg{display:block;margin:.5em 0 1.5em}
.note{color:#666;font-size:12px}.key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
</style></head><body>
<h1>Fleet simulation</h1>
<p>${escapeHtml(describeScenario(c))}.</p>
${table}
<ul>${goalLines(c).map((l) => `<li>${escapeHtml(l)}</li>`).join("")}</ul>
<p class="key">Runs:<span style="background:${COLORS.success}"></span>success<span style="background:${COLORS.failure}"></span>failure<span style="background:${COLORS.usage_limit}"></span>usage limit<span style="background:#ddd"></span>school paused \xB7 outlined = repair \xB7 dashed line = lower bound</p>
${sections}
</body></html>
`;
}
__name(renderHtml, "renderHtml");

// lab/simulate/learning.ts
var LEARNING_POLICIES = ["greedy", "random", "oracle", "learning"];
var DEFAULT_LEARNING_OPTIONS = { seed: 1, issues: 240, domains: 6, batch: 24 };
function mergeChance(a, domain, difficulty) {
  return a.merge[domain] * (1 - a.slope * (difficulty - 1) / 4);
}
__name(mergeChance, "mergeChance");
function crewCost(a, difficulty) {
  return a.costUsd * (0.6 + 0.2 * difficulty);
}
__name(crewCost, "crewCost");
var FAILED_COST = 1.4;
function expectedCrewCost(a, difficulty, p) {
  return crewCost(a, difficulty) * (p + (1 - p) * FAILED_COST);
}
__name(expectedCrewCost, "expectedCrewCost");
var FALSE_ACCEPT = 0.4;
var DIFFICULTY_MIX = [0.3, 0.25, 0.2, 0.15, 0.1];
function uniform(rng, lo, hi) {
  return lo + (hi - lo) * rng.next();
}
__name(uniform, "uniform");
var NOMINAL = [
  { id: "premium", costUsd: 3.6, lo: 0.5, hi: 0.85, slope: 0.25 },
  { id: "standard", costUsd: 1.2, lo: 0.3, hi: 0.75, slope: 0.45 },
  { id: "budget", costUsd: 0.4, lo: 0.05, hi: 0.65, slope: 0.7 }
];
function listPriceUsd(nominalUsd) {
  const meanDifficulty = DIFFICULTY_MIX.reduce((s, w, i) => s + w * (i + 1), 0);
  return nominalUsd * (0.6 + 0.2 * meanDifficulty);
}
__name(listPriceUsd, "listPriceUsd");
function makeWorld(o) {
  const rng = createRng(o.seed);
  const domains = Array.from({ length: o.domains }, (_, i) => `d${i + 1}`);
  const agent = /* @__PURE__ */ __name((id, cost, lo, hi, slope) => ({
    id,
    costUsd: cost * uniform(rng, 0.8, 1.2),
    merge: domains.map(() => uniform(rng, lo, hi)),
    slope
  }), "agent");
  const agents = NOMINAL.map((n) => agent(n.id, n.costUsd, n.lo, n.hi, n.slope));
  const issues = [];
  for (let n = 1; n <= o.issues; n++) {
    const domain = Math.floor(rng.next() * domains.length);
    const difficulty = rng.pick(DIFFICULTY_MIX) + 1;
    const outcomes = agents.map((a) => {
      const merged = rng.next() < mergeChance(a, domain, difficulty);
      const accepted = merged || rng.next() < FALSE_ACCEPT;
      const cost = crewCost(a, difficulty) * Math.exp(0.3 * rng.normal()) * (merged ? 1 : FAILED_COST);
      return { merged, accepted, costUsd: cost };
    });
    issues.push({ number: n, domain: domains[domain], difficulty, outcomes });
  }
  return { agents, domains, issues };
}
__name(makeWorld, "makeWorld");
function check2(o) {
  const int = /* @__PURE__ */ __name((v, min, max) => Number.isInteger(v) && v >= min && v <= max, "int");
  if (!int(o.issues, 1, 1e5))
    throw new ConfigError(
      `simulate --learning: --issues must be a whole number from 1 to 100,000; found ${o.issues}.`
    );
  if (!int(o.domains, 1, 100))
    throw new ConfigError(
      `simulate --learning: domains must be a whole number from 1 to 100; found ${o.domains}.`
    );
  if (!int(o.batch, 1, 1e4))
    throw new ConfigError(
      `simulate --learning: batch must be a whole number from 1 to 10,000; found ${o.batch}.`
    );
  if (!int(o.seed, 0, 2 ** 32 - 1))
    throw new ConfigError(
      `simulate --learning: --seed must be a whole number from 0 to 4294967295; found ${o.seed}.`
    );
}
__name(check2, "check");
var School = class {
  static {
    __name(this, "School");
  }
  ledger = ledgerFold.empty();
  crews = [];
  spend = [];
  seq = 0;
  clock = Date.parse("2026-01-01T00:00:00Z");
  apply(e) {
    this.ledger = ledgerFold.apply(this.ledger, e);
  }
  /** A crew ran: its verdict, spend and finish; returns what a later merge needs. */
  ran(issue, agent, o) {
    const crewId = `c${issue.number}-${(++this.seq).toString(16).padStart(8, "0")}`;
    const at = new Date(this.clock += 6e4);
    const cell = { agent, domain: issue.domain, difficulty: issue.difficulty };
    this.apply(
      event(
        "score.applied",
        `score:${crewId}`,
        {
          crewId,
          jobKey: `grade:${issue.number}:${crewId}`,
          ...cell,
          accepted: o.accepted,
          score: o.accepted ? 1 : 0,
          alpha: 0.3
        },
        at
      )
    );
    this.spend.push({ crewId, costUsd: o.costUsd });
    this.crews.push({
      crewId,
      issueNumber: issue.number,
      agent,
      status: "finished",
      startedAt: new Date(at.getTime() - 20 * 6e4).toISOString(),
      finishedAt: at.toISOString(),
      choice: { domain: issue.domain, difficulty: issue.difficulty }
    });
    return { crewId, ...cell, issue: issue.number };
  }
  /** A person merged or closed the pull request of an accepted crew. */
  settled(c, merged) {
    const at = new Date(this.clock += 6e4);
    this.apply(
      event(
        "human.judged",
        `human:${c.issue}`,
        {
          pr: c.issue,
          issue: c.issue,
          crewId: c.crewId,
          agent: c.agent,
          domain: c.domain,
          difficulty: c.difficulty,
          merged,
          alpha: 0.3
        },
        at
      )
    );
  }
};
function runPolicy(world, o, label, configs, lambda) {
  const school = new School();
  const rng = createRng(o.seed ^ 24301);
  const index = new Map(world.agents.map((a, i) => [a.id, i]));
  const pick = label === "random" ? () => Math.floor(rng.next() * world.agents.length) : label === "oracle" ? (issue) => oracleChoice(world, issue, lambda) : label === "oracleByIssue" ? (issue) => oracleByIssue(world, issue) : (issue, chooser) => {
    const c = chooser.choose({
      role: "coding",
      domain: issue.domain,
      difficulty: issue.difficulty,
      issueNumber: issue.number,
      attempt: 1
    });
    if (!("agent" in c))
      throw new Error(
        `simulate: the office chose no agent for issue #${issue.number}: ${c.reason}`
      );
    return index.get(c.agent);
  };
  let waiting = [];
  const figures = { merged: 0, accepted: 0, spendUsd: 0, crews: {} };
  const expected = { merged: 0, spendUsd: 0 };
  for (let start = 0; start < world.issues.length; start += o.batch) {
    const config = label === "greedy" ? configs.greedy : label === "learning" ? configs.learning : void 0;
    const chooser = config ? chooserFor(
      config.agents,
      choiceRule(config.dispatch, {
        scores: scoresOf(school.ledger),
        records: new RecordBook({ ledger: school.ledger, crews: school.crews, spend: school.spend })
      })
    ) : void 0;
    const batch = world.issues.slice(start, start + o.batch);
    const picks = batch.map((issue) => pick(issue, chooser));
    for (const w of waiting) school.settled(w.crew, w.merged);
    waiting = [];
    batch.forEach((issue, i) => {
      const a = world.agents[picks[i]];
      const outcome = issue.outcomes[picks[i]];
      const crew = school.ran(issue, a.id, outcome);
      figures.crews[a.id] = (figures.crews[a.id] ?? 0) + 1;
      const p = mergeChance(a, world.domains.indexOf(issue.domain), issue.difficulty);
      expected.merged += p;
      expected.spendUsd += expectedCrewCost(a, issue.difficulty, p);
      figures.spendUsd += outcome.costUsd;
      if (outcome.accepted) {
        figures.accepted += 1;
        waiting.push({ crew, merged: outcome.merged });
      }
      if (outcome.merged) figures.merged += 1;
    });
  }
  return {
    label,
    ...figures,
    mergedPerDollar: figures.spendUsd > 0 ? figures.merged / figures.spendUsd : 0,
    regret: 0,
    expectedMergedPerDollar: expected.spendUsd > 0 ? expected.merged / expected.spendUsd : 0
  };
}
__name(runPolicy, "runPolicy");
function oracleTarget(world) {
  const ratio = /* @__PURE__ */ __name((pick) => {
    let merged = 0;
    let spend = 0;
    for (const issue of world.issues) {
      const a = world.agents[pick(issue)];
      const p = mergeChance(a, world.domains.indexOf(issue.domain), issue.difficulty);
      merged += p;
      spend += expectedCrewCost(a, issue.difficulty, p);
    }
    return merged / spend;
  }, "ratio");
  let lambda = ratio((issue) => oracleByIssue(world, issue));
  for (let i = 0; i < 100; i++) {
    const next = ratio((issue) => oracleChoice(world, issue, lambda));
    if (next <= lambda + 1e-12) break;
    lambda = next;
  }
  return lambda;
}
__name(oracleTarget, "oracleTarget");
function bestBy(world, issue, value) {
  const d = world.domains.indexOf(issue.domain);
  let best = 0;
  let bestValue = -Infinity;
  world.agents.forEach((a, i) => {
    const p = mergeChance(a, d, issue.difficulty);
    const v = value(p, expectedCrewCost(a, issue.difficulty, p));
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  });
  return best;
}
__name(bestBy, "bestBy");
function oracleChoice(world, issue, lambda) {
  return bestBy(world, issue, (p, cost) => p - lambda * cost);
}
__name(oracleChoice, "oracleChoice");
function oracleByIssue(world, issue) {
  return bestBy(world, issue, (p, cost) => p / cost);
}
__name(oracleByIssue, "oracleByIssue");
function simulateLearning(partial = {}) {
  const o = { ...DEFAULT_LEARNING_OPTIONS, ...partial };
  check2(o);
  const world = makeWorld(o);
  const configOf = /* @__PURE__ */ __name((choice) => parseConfig(
    {
      agents: world.agents.map((a, i) => ({
        id: a.id,
        command: ["true"],
        expectedCostUsd: listPriceUsd(NOMINAL[i].costUsd)
      })),
      dispatch: { choice, choiceSeed: o.seed }
    },
    "simulate"
  ), "configOf");
  const configs = { greedy: configOf("greedy"), learning: configOf("learning") };
  const lambda = oracleTarget(world);
  const policies = LEARNING_POLICIES.map(
    (label) => runPolicy(world, o, label, configs, lambda)
  );
  const byIssue = runPolicy(world, o, "oracleByIssue", configs, lambda);
  const oracle = policies.find((p) => p.label === "oracle");
  for (const p of [...policies, byIssue])
    p.regret = oracle.mergedPerDollar > 0 ? 1 - p.mergedPerDollar / oracle.mergedPerDollar : 0;
  return {
    options: o,
    agents: world.agents.map((a) => ({ ...a })),
    domains: world.domains,
    policies,
    oracleTargetPerDollar: lambda,
    oracleByIssue: byIssue
  };
}
__name(simulateLearning, "simulateLearning");
var LEARNING_GOALS = { ofOracle: 0.9, overGreedy: 1.15 };
function renderLearningText(r) {
  const o = r.options;
  const lines = [
    `Which agent to send: ${o.issues} issues over ${r.domains.length} domains, ${r.agents.length} agents, plans of ${o.batch}, seed ${o.seed}`,
    `agents (hidden from the school): ${r.agents.map(
      (a) => `${a.id} ~$${a.costUsd.toFixed(2)}/crew, merges ${a.merge.map((m) => m.toFixed(2)).join("/")}`
    ).join("; ")}`,
    "",
    `${"policy".padEnd(10)}${"merged".padStart(8)}${"spend".padStart(11)}${"merged/$".padStart(10)}${"regret".padStart(9)}  crews per agent`
  ];
  const row = /* @__PURE__ */ __name((label, p) => `${label.padEnd(10)}${String(p.merged).padStart(8)}${`$${p.spendUsd.toFixed(2)}`.padStart(11)}${p.mergedPerDollar.toFixed(3).padStart(10)}${`${(p.regret * 100).toFixed(1)} %`.padStart(9)}  ${Object.entries(
    p.crews
  ).map(([a, n]) => `${a} ${n}`).join(", ")}`, "row");
  for (const p of r.policies) lines.push(row(p.label, p));
  const f = /* @__PURE__ */ __name((l) => r.policies.find((p) => p.label === l), "f");
  const ofOracle = f("learning").mergedPerDollar / f("oracle").mergedPerDollar;
  const overGreedy = f("learning").mergedPerDollar / f("greedy").mergedPerDollar;
  const ofByIssue = f("learning").mergedPerDollar / r.oracleByIssue.mergedPerDollar;
  lines.push(
    "",
    `reference: the oracle choosing the best true p / cost issue by issue, not the ratio optimum (\u03BB* = ${r.oracleTargetPerDollar.toFixed(3)} merged per dollar expected):`,
    row("by issue", r.oracleByIssue),
    "",
    `learning: ${(ofOracle * 100).toFixed(1)} % of the oracle's merged per dollar (goal \u2265 90 %: ${ofOracle >= LEARNING_GOALS.ofOracle ? "met" : "missed"}; ${(ofByIssue * 100).toFixed(1)} % of the by-issue oracle's), ${overGreedy.toFixed(2)} \xD7 greedy's (goal \u2265 1.15 \xD7: ${overGreedy >= LEARNING_GOALS.overGreedy ? "met" : "missed"})`,
    "regret = 1 \u2212 merged per dollar / the oracle\u2019s."
  );
  return lines.join("\n") + "\n";
}
__name(renderLearningText, "renderLearningText");
function renderLearningJson(r) {
  return JSON.stringify(
    {
      options: r.options,
      domains: r.domains,
      agents: r.agents,
      policies: r.policies.map((p) => ({
        label: p.label,
        merged: p.merged,
        accepted: p.accepted,
        spendUsd: round(p.spendUsd, 2),
        mergedPerDollar: round(p.mergedPerDollar, 4),
        regret: round(p.regret, 4),
        expectedMergedPerDollar: round(p.expectedMergedPerDollar, 4),
        crews: p.crews
      })),
      oracleTargetPerDollar: round(r.oracleTargetPerDollar, 4),
      oracleByIssue: {
        merged: r.oracleByIssue.merged,
        spendUsd: round(r.oracleByIssue.spendUsd, 2),
        mergedPerDollar: round(r.oracleByIssue.mergedPerDollar, 4),
        regret: round(r.oracleByIssue.regret, 4),
        crews: r.oracleByIssue.crews
      }
    },
    null,
    2
  );
}
__name(renderLearningJson, "renderLearningJson");
function round(x, digits) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
__name(round, "round");

// lab/simulate/command.ts
var HELP = `Usage: school-simulate [options]

Simulates the school in virtual time and compares our dispatch policy (the real dispatch office:
repairs first, smallest first, immediate slot refill, capacity classes) with a batch-synchronous
matrix workflow and with FIFO + immediate refill, on the same generated workload and seed.

Options:
  --issues N          issues in the curriculum (default: 10 per student)
  --daemons D         daemons (default ${DEFAULT_SIM_OPTIONS.fleet.daemons})
  --slots K           worktree slots per daemon; students = D \xD7 K (default ${DEFAULT_SIM_OPTIONS.fleet.slotsPerDaemon})
  --seed S            PRNG seed: same seed, same workload, same result (default ${DEFAULT_SIM_OPTIONS.seed})
  --tail SIGMA        log-normal sigma of run durations; larger = heavier tail (default ${DEFAULT_SIM_OPTIONS.durations.tailSigma})
  --median MIN        median run duration in minutes (default ${DEFAULT_SIM_OPTIONS.durations.medianMinutes})
  --failure-rate P    probability a run fails and is repaired (default ${DEFAULT_SIM_OPTIONS.failures.rate})
  --failure-spread X  how much the failure rate differs per domain \xD7 difficulty: 0 = one rate
                      for every run, 1 = the hard, long issues fail most (default ${DEFAULT_SIM_OPTIONS.failures.spread})
  --pause-rate P      probability a run hits a usage limit and pauses the school (default ${DEFAULT_SIM_OPTIONS.pauses.rate})
  --pause-minutes M   length of a usage-limit pause (default ${DEFAULT_SIM_OPTIONS.pauses.minutes})
  --reference        add two rows: the tail-guard proposal, and longest-first knowing the true
                      durations (a clairvoyant reference no scheduler can run)
  --deployed          add eight rows: the loop as deployed \u2014 cron-only, continuous refill (CLI),
                      the Actions crew jobs' standby shared by the run's jobs, own first
                      (github.com), and per-daemon standby (GHES), each under
                      dispatch.order smallest-first and tail-guard \u2014 with the workflow's
                      cadence (--schedule-minutes, --job-minutes, --queue-minutes)
  --schedule-minutes M  cron interval for --deployed (default ${DEFAULT_DEPLOYED.scheduleMinutes})
  --job-minutes M     crew job time limit for --deployed (default ${DEFAULT_DEPLOYED.jobTimeoutMinutes})
  --queue-minutes M   plan \u2192 crew job start (time in GitHub's job queue) for --deployed (default ${DEFAULT_DEPLOYED.queueMinutes})
  --html FILE         also write a self-contained page with a per-slot timeline per policy
  --json              print the figures as JSON instead of a table
  --learning          instead: which agent to send. A world of 3 agents with hidden merge chances
                      per domain and costs (seeded); greedy (top score), random, the oracle that
                      knows the truth and the learning choice (the real dispatch code) over the
                      same backlog: merged pull requests, spend, merged per dollar, regret. Takes
                      --issues (default 240), --seed and --json
  --version           print the toolkit's version
`;
function numberOption(name, value, min, max) {
  if (value === void 0) return void 0;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < min || n > max) {
    throw new ConfigError(`--${name}: expected a number from ${min} to ${max}, found "${value}".`);
  }
  return n;
}
__name(numberOption, "numberOption");
function given(o) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== void 0));
}
__name(given, "given");
function simulateOptions(values) {
  const str = /* @__PURE__ */ __name((k) => values[k], "str");
  const daemons = intOption("daemons", str("daemons")) ?? DEFAULT_SIM_OPTIONS.fleet.daemons;
  const slotsPerDaemon = intOption("slots", str("slots")) ?? DEFAULT_SIM_OPTIONS.fleet.slotsPerDaemon;
  return {
    fleet: { daemons, slotsPerDaemon },
    issues: intOption("issues", str("issues")) ?? 10 * daemons * slotsPerDaemon,
    ...given({ seed: intOption("seed", str("seed"), 0) }),
    durations: given({
      tailSigma: numberOption("tail", str("tail"), 0, 3),
      medianMinutes: numberOption("median", str("median"), 0.01, 1e6)
    }),
    failures: given({
      rate: numberOption("failure-rate", str("failure-rate"), 0, 0.9),
      spread: numberOption("failure-spread", str("failure-spread"), 0, 3)
    }),
    pauses: given({
      rate: numberOption("pause-rate", str("pause-rate"), 0, 0.5),
      minutes: numberOption("pause-minutes", str("pause-minutes"), 0, 1e6)
    })
  };
}
__name(simulateOptions, "simulateOptions");
var SIMULATE_OPTIONS = verbOptions(
  [
    "issues",
    "daemons",
    "slots",
    "seed",
    "tail",
    "median",
    "failure-rate",
    "failure-spread",
    "pause-rate",
    "pause-minutes",
    "html",
    "schedule-minutes",
    "job-minutes",
    "queue-minutes"
  ],
  ["json", "reference", "deployed", "learning"]
);
async function run(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...SIMULATE_OPTIONS, help: { type: "boolean" }, version: { type: "boolean" } },
      strict: true
    });
  } catch (e) {
    throw new ConfigError(`${e.message}. Run \`school-simulate --help\`.`);
  }
  const values = parsed.values;
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT.done;
  }
  if (values.version) {
    process.stdout.write(`school-core ${VERSION}
`);
    return EXIT.done;
  }
  if (values.learning) {
    const raw2 = values;
    const issues = intOption("issues", raw2.issues);
    const seed = intOption("seed", raw2.seed, 0);
    const result = simulateLearning({
      ...issues !== void 0 ? { issues } : {},
      ...seed !== void 0 ? { seed } : {}
    });
    process.stdout.write(values.json ? renderLearningJson(result) + "\n" : renderLearningText(result));
    return 0;
  }
  const policies = POLICIES.filter((p) => !p.reference || values.reference).map((p) => p.name);
  const raw = values;
  const num = /* @__PURE__ */ __name((k, min, max) => numberOption(k, raw[k], min, max), "num");
  const cadence = {
    ...num("schedule-minutes", 1, 1e6) !== void 0 ? { scheduleMinutes: num("schedule-minutes", 1, 1e6) } : {},
    ...num("job-minutes", 1, 4320) !== void 0 ? { jobTimeoutMinutes: num("job-minutes", 1, 4320) } : {},
    ...num("queue-minutes", 0, 1e6) !== void 0 ? { queueMinutes: num("queue-minutes", 0, 1e6) } : {}
  };
  const comparison = compare(simulateOptions(values), policies, values.deployed ? cadence : void 0);
  process.stdout.write(values.json ? renderJson(comparison) + "\n" : renderText(comparison));
  if (values.html) {
    const path = resolve(values.html);
    writeTextAtomic(path, renderHtml(comparison));
    process.stderr.write(`school-simulate: wrote ${path}
`);
  }
  return EXIT.done;
}
__name(run, "run");

// lab/simulate/cli.ts
run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`school-simulate: ${message(e)}
`);
    process.exitCode = e instanceof ConfigError ? EXIT.config : EXIT.failed;
  }
);
