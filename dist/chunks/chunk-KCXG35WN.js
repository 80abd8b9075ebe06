import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  UNTRIED,
  mean,
  shrink
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/cli/exit.ts
var EXIT = { done: 0, failed: 1, config: 2, denied: 3 };
function worstExit(...codes) {
  for (const c of [EXIT.config, EXIT.failed, EXIT.denied]) if (codes.includes(c)) return c;
  return EXIT.done;
}
__name(worstExit, "worstExit");
var GATES = /* @__PURE__ */ new Set([
  "state-corrupt",
  "spend-cap",
  "daily-budget",
  "paused",
  "time-budget",
  "fleet-offline",
  "disk-floor"
]);
function deniedBy(plan) {
  if (plan.assignments.length > 0) return void 0;
  if (plan.blocked) return plan.blocked;
  if (plan.loud) return plan.loud;
  return plan.refused.find((r) => GATES.has(r.code))?.reason;
}
__name(deniedBy, "deniedBy");

// src/dispatch/choice/predict.ts
var RATIO_BOUNDS = [0.05, 20];
var Predictor = class {
  constructor(book) {
    this.book = book;
    this.school = sumOf(book.list("agent"));
  }
  book;
  static {
    __name(this, "Predictor");
  }
  school;
  cache = /* @__PURE__ */ new Map();
  model;
  /** The prediction for a run of `size` estimated minutes of `agent` in a domain at a difficulty. */
  predict(size, agent, domain, difficulty) {
    const key = `${size}|${agent}|${domain}|${difficulty}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const ratio = this.ratio(agent, domain, difficulty);
    const pFail = this.failure(agent, domain, difficulty);
    const out = {
      ...ratio !== void 0 && size > 0 ? { minutes: size * ratio } : {},
      ...pFail !== void 0 ? { pFail } : {}
    };
    this.cache.set(key, out);
    return out;
  }
  /** Run minutes per estimated minute for the cell, shrunk level by level; undefined with no evidence. */
  ratio(agent, domain, difficulty) {
    const model = this.model ??= missModel(this.book);
    if (!model) return void 0;
    let miss = model.mean;
    const levels = [
      this.book.of(agent),
      this.book.of(agent, domain),
      this.book.of(agent, domain, difficulty)
    ];
    levels.forEach((r, i) => {
      const own = missesOf(r);
      const tau2 = model.tau2[i];
      if (own.n <= 0 || tau2 <= 0) return;
      miss += own.n * tau2 / (own.n * tau2 + model.s2) * (own.sum / own.n - miss);
    });
    const ratio = Math.exp(miss + model.s2 / 2);
    return Math.min(RATIO_BOUNDS[1], Math.max(RATIO_BOUNDS[0], ratio));
  }
  /** The posterior mean of not accepted, shrunk level by level; undefined before any graded crew. */
  failure(agent, domain, difficulty) {
    if (this.school.graded <= 0) return void 0;
    return mean(failurePosterior(this.book, agent, domain, difficulty, this.school));
  }
};
function failurePosterior(book, agent, domain, difficulty, school = sumOf(book.list("agent"))) {
  const overall = shrink(UNTRIED, failures(school), Infinity);
  const ofAgent = shrink(overall, failures(book.of(agent)));
  const inDomain = shrink(ofAgent, failures(book.of(agent, domain)));
  return shrink(inDomain, failures(book.of(agent, domain, difficulty)));
}
__name(failurePosterior, "failurePosterior");
function failures(r) {
  if (!r) return { successes: 0, failures: 0 };
  const rejected = Math.max(0, r.graded - r.accepted);
  return { successes: rejected, failures: Math.max(0, r.accepted) };
}
__name(failures, "failures");
function missesOf(r) {
  return { n: r?.sizedCrews ?? 0, sum: r?.sizedLog ?? 0, sumSq: r?.sizedLogSq ?? 0 };
}
__name(missesOf, "missesOf");
function missModel(book) {
  const cells = book.list("cell").map((r) => ({ r, m: missesOf(r) })).filter((c) => c.m.n > 0);
  const total = cells.reduce((t, c) => ({ n: t.n + c.m.n, sum: t.sum + c.m.sum }), { n: 0, sum: 0 });
  if (total.n <= 0) return void 0;
  let within = 0;
  for (const { m } of cells) within += m.sumSq - m.sum * m.sum / m.n;
  const df = total.n - cells.length;
  const s2 = df > 0 ? Math.max(0, within / df) : 0;
  const mean2 = /* @__PURE__ */ __name((m) => m.sum / m.n, "mean");
  const school = { n: total.n, sum: total.sum, sumSq: 0 };
  const parentOf = [
    () => ["", school],
    (r) => [r.agent, missesOf(book.of(r.agent))],
    (r) => [`${r.agent}|${r.domain}`, missesOf(book.of(r.agent, r.domain))]
  ];
  const levels = [book.list("agent"), book.list("domain"), book.list("cell")];
  const tau2 = levels.map((list, level) => {
    let q = 0;
    let groups = 0;
    const parents = /* @__PURE__ */ new Map();
    for (const r of list) {
      const own = missesOf(r);
      if (own.n <= 0) continue;
      const [key, parent] = parentOf[level](r);
      const p = parents.get(key) ?? { n: parent.n, sq: 0 };
      p.sq += own.n * own.n;
      parents.set(key, p);
      q += own.n * (mean2(own) - mean2(parent)) ** 2;
      groups += 1;
    }
    let denom = 0;
    for (const p of parents.values()) denom += p.n - p.sq / p.n;
    if (denom <= 0 || df <= 0) return 0;
    return Math.max(0, (q - (groups - parents.size) * s2) / denom);
  });
  return { mean: total.sum / total.n, s2, tau2 };
}
__name(missModel, "missModel");
function sumOf(records) {
  const out = { graded: 0, accepted: 0 };
  for (const r of records) {
    out.graded += r.graded;
    out.accepted += r.accepted;
  }
  return out;
}
__name(sumOf, "sumOf");

export {
  EXIT,
  worstExit,
  deniedBy,
  Predictor
};
