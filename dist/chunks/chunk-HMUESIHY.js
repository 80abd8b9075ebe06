import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  CAPACITY_CLASSES,
  CREW_ID_PATTERN,
  DAEMON_ID_PATTERN,
  GradingQueue,
  ScoreLedger,
  UNTRIED,
  blendedScore,
  classRank,
  costOf,
  crewFold,
  crewLog,
  event,
  external_exports,
  foldLog,
  isBasenameGlob,
  issueStates,
  mean,
  mergeRateOf,
  message,
  opensPullRequest,
  readSchool,
  sampleBeta,
  seeded,
  shrink,
  shrinkCost,
  spendCapLine,
  tallyOf,
  writeFileAtomic
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/grading/feedback.ts
function gradingVerdicts(layout, logger) {
  try {
    const verdicts = /* @__PURE__ */ new Map();
    for (const j of Object.values(new GradingQueue(layout).state().jobs)) {
      if (j.status === "graded" && j.verdict) {
        verdicts.set(j.job.crewId, j.verdict.accepted ? "accepted" : "rejected");
      }
    }
    return (crewId) => verdicts.get(crewId);
  } catch (e) {
    logger.warning(`planning without grading verdicts: ${message(e)}`);
    return void 0;
  }
}
__name(gradingVerdicts, "gradingVerdicts");
function ledgerScores(layout, logger) {
  let state;
  try {
    state = new ScoreLedger(layout).state();
  } catch (e) {
    logger.warning(`planning without agent scores: ${message(e)}`);
    return void 0;
  }
  return scoresOf(state);
}
__name(ledgerScores, "ledgerScores");
function scoresOf(state) {
  if (Object.keys(state.agents).length === 0) return void 0;
  return (agent, { domain, difficulty }) => blendedScore(state, agent, domain, difficulty);
}
__name(scoresOf, "scoresOf");
function ledgerCounts(layout, logger) {
  try {
    return new ScoreLedger(layout).state();
  } catch (e) {
    logger.warning(`planning without agent records: ${message(e)}`);
    return void 0;
  }
}
__name(ledgerCounts, "ledgerCounts");

// src/dispatch/leases/claims.ts
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
var CLAIM_PREFIX = "school-claim-";
function claimName(runId, attempt, crewId) {
  return `${CLAIM_PREFIX}${runId}-${attempt}-${crewId}`;
}
__name(claimName, "claimName");
function claimPrefix(runId, attempt) {
  return `${CLAIM_PREFIX}${runId}-${attempt}-`;
}
__name(claimPrefix, "claimPrefix");
var claimFileSchema = external_exports.strictObject({
  schema: external_exports.literal(1),
  crewId: external_exports.string().regex(CREW_ID_PATTERN),
  daemon: external_exports.string().regex(DAEMON_ID_PATTERN),
  runId: external_exports.string().regex(/^[0-9]+$/),
  /** The plan's attempt (the claim artifact's name carries it). */
  attempt: external_exports.string().regex(/^[0-9]+$/),
  /** The claiming crew job's run attempt. */
  jobAttempt: external_exports.string().regex(/^[0-9]+$/),
  nonce: external_exports.string().regex(/^[0-9a-f]{32}$/)
});
var CLAIMS_DIR = "claims";
var MAX_CLAIM_FILE = 4096;
function claimable(c) {
  return c.status === "planned" && c.queued === true && c.eligible !== void 0 && !c.claimed;
}
__name(claimable, "claimable");
function claimOrder(registry, daemon) {
  const own = [];
  const others = [];
  for (const c of Object.values(registry.crews)) {
    if (!claimable(c) || !c.eligible.includes(daemon)) continue;
    (c.daemon === daemon ? own : others).push(c.crewId);
  }
  return [...own, ...others];
}
__name(claimOrder, "claimOrder");
async function claimCrew(layout, ctx, daemon, crewId, now = () => /* @__PURE__ */ new Date()) {
  const file = {
    schema: 1,
    crewId,
    daemon,
    runId: ctx.runId,
    attempt: ctx.attempt,
    jobAttempt: ctx.jobAttempt,
    nonce: randomBytes(16).toString("hex")
  };
  mkdirSync(ctx.dir, { recursive: true });
  const path = join(ctx.dir, `${crewId}.json`);
  const bytes = Buffer.from(`${JSON.stringify(file)}
`);
  writeFileAtomic(path, bytes);
  let outcome;
  try {
    outcome = await ctx.port.create(claimName(ctx.runId, ctx.attempt, crewId), path);
  } catch (e) {
    outcome = { kind: "failed", reason: message(e) };
  }
  if (outcome.kind !== "won") return outcome;
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const data = { crewId, daemon, jobAttempt: ctx.jobAttempt, nonce: file.nonce, sha256 };
  const tx = await crewLog(layout).transact((current) => {
    const c = foldLog(crewFold, current).crews[crewId];
    const ok = c !== void 0 && claimable(c) && c.eligible.includes(daemon);
    return {
      append: ok ? [event("crew.claimed", `claimed:${crewId}`, data, now())] : [],
      result: ok
    };
  });
  if (!tx.result)
    return { kind: "failed", reason: `crew ${crewId} is no longer a claimable crew of ${daemon}` };
  return { kind: "won", sha256 };
}
__name(claimCrew, "claimCrew");
async function claimedInRun(port, runId, attempt) {
  const prefix = claimPrefix(runId, attempt);
  return new Set([...(await port.list(prefix)).keys()].map((n) => n.slice(prefix.length)));
}
__name(claimedInRun, "claimedInRun");

// src/dispatch/choice/choice.ts
var DEFAULT_CREW_COST_USD = 1;
var CELL_COST_STRENGTH = 4;
var targets = /* @__PURE__ */ new WeakMap();
function posterior(book, agent, domain, difficulty) {
  const all = book.of(agent);
  const here = book.of(agent, domain);
  const rate = mergeRateOf(all, here);
  const overall = shrink(UNTRIED, tallyOf(all, mergeRateOf(all)), Infinity);
  const inDomain = shrink(overall, tallyOf(here, rate));
  return shrink(inDomain, tallyOf(book.of(agent, domain, difficulty), rate));
}
__name(posterior, "posterior");
var FACTOR_STRENGTH = 2;
var GIVEN_COST_STRENGTH = 2;
var costModels = /* @__PURE__ */ new WeakMap();
function costModel(book) {
  const hit = costModels.get(book);
  if (hit) return hit;
  const rows = book.list("difficulty").filter((r) => r.crews > 0);
  const factors = /* @__PURE__ */ new Map();
  const f = /* @__PURE__ */ __name((d) => factors.get(d) ?? 1, "f");
  const agents = /* @__PURE__ */ new Map();
  const fitBases = /* @__PURE__ */ __name(() => {
    agents.clear();
    for (const r of rows) {
      const a = agents.get(r.agent) ?? { spendUsd: 0, weight: 0 };
      a.spendUsd += r.spendUsd;
      a.weight += r.crews * f(r.difficulty);
      agents.set(r.agent, a);
    }
  }, "fitBases");
  fitBases();
  if (book.school.spendUsd > 0) {
    for (let round = 0; round < 20; round++) {
      const by = /* @__PURE__ */ new Map();
      for (const r of rows) {
        const a = agents.get(r.agent);
        const base = a.weight > 0 ? a.spendUsd / a.weight : 0;
        const t = by.get(r.difficulty) ?? { spendUsd: 0, expected: 0, crews: 0 };
        t.spendUsd += r.spendUsd;
        t.expected += r.crews * base;
        t.crews += r.crews;
        by.set(r.difficulty, t);
      }
      let crews = 0;
      let sum = 0;
      for (const [d, t] of by) {
        const mean2 = t.crews > 0 ? t.expected / t.crews : 0;
        const k = FACTOR_STRENGTH * mean2;
        factors.set(d, t.expected + k > 0 ? (t.spendUsd + k) / (t.expected + k) : 1);
        crews += t.crews;
        sum += t.crews * f(d);
      }
      if (crews > 0 && sum > 0) for (const [d, v] of factors) factors.set(d, v * crews / sum);
      fitBases();
    }
  }
  let spendUsd = 0;
  let weight = 0;
  for (const a of agents.values()) {
    spendUsd += a.spendUsd;
    weight += a.weight;
  }
  const model = {
    factor: f,
    agents,
    schoolBase: spendUsd > 0 && weight > 0 ? spendUsd / weight : void 0
  };
  costModels.set(book, model);
  return model;
}
__name(costModel, "costModel");
function expectedCost(book, agent, domain, difficulty, priors) {
  const model = costModel(book);
  const given = priors?.[agent];
  const own = model.agents.get(agent) ?? { spendUsd: 0, weight: 0 };
  const base = given !== void 0 && Number.isFinite(given) && given > 0 ? shrinkCost(given, { crews: own.weight, spendUsd: own.spendUsd }, GIVEN_COST_STRENGTH) : shrinkCost(
    model.schoolBase ?? DEFAULT_CREW_COST_USD,
    { crews: own.weight, spendUsd: own.spendUsd },
    1
  );
  const atDifficulty = shrinkCost(
    base * model.factor(difficulty),
    costOf(book.of(agent, void 0, difficulty))
  );
  return shrinkCost(atDifficulty, costOf(book.of(agent, domain, difficulty)), CELL_COST_STRENGTH);
}
__name(expectedCost, "expectedCost");
function targetPerDollar(book, priors) {
  const key = priors ? JSON.stringify(priors) : "";
  const cached = targets.get(book) ?? /* @__PURE__ */ new Map();
  targets.set(book, cached);
  if (cached.has(key)) return cached.get(key);
  let value;
  const given = Object.keys(priors ?? {});
  if (book.school.spendUsd > 0 || given.length > 0) {
    const mix = /* @__PURE__ */ new Map();
    for (const r of book.list("cell")) {
      const n = r.crews > 0 ? r.crews : r.graded;
      if (n <= 0) continue;
      const k = `${r.domain}|${r.difficulty}`;
      const m = mix.get(k) ?? { domain: r.domain, difficulty: r.difficulty, n: 0 };
      m.n += n;
      mix.set(k, m);
    }
    if (mix.size === 0) mix.set("", { domain: "", difficulty: 0, n: 1 });
    const agents = book.agentIds().length > 0 ? book.agentIds() : given;
    const table = [...mix.values()].map((c) => ({
      n: c.n,
      options: agents.map((a) => ({
        p: mean(posterior(book, a, c.domain, c.difficulty)),
        cost: expectedCost(book, a, c.domain, c.difficulty, priors)
      }))
    }));
    const ratio = /* @__PURE__ */ __name((pick) => {
      let merged = 0;
      let spend = 0;
      for (const c of table) {
        let best = c.options[0];
        for (const o of c.options) if (pick(o) > pick(best)) best = o;
        merged += c.n * best.p;
        spend += c.n * best.cost;
      }
      return spend > 0 ? merged / spend : void 0;
    }, "ratio");
    value = ratio((o) => o.p / o.cost);
    for (let i = 0; i < 50 && value !== void 0; i++) {
      const lambda = value;
      const next = ratio((o) => o.p - lambda * o.cost);
      if (next === void 0 || next <= lambda + 1e-12) break;
      value = next;
    }
  }
  cached.set(key, value);
  return value;
}
__name(targetPerDollar, "targetPerDollar");
function drawFor(book, agent, c, seed, priors) {
  const p = posterior(book, agent, c.domain, c.difficulty);
  const u = seeded(`${seed}:${book.generation}:${c.issueNumber}:${c.attempt}:${agent}`);
  const draw = sampleBeta(p, u);
  const expectedCostUsd = expectedCost(book, agent, c.domain, c.difficulty, priors);
  const target = targetPerDollar(book, priors);
  const value = target === void 0 ? draw / expectedCostUsd : draw - target * expectedCostUsd;
  return { agent, draw, mean: mean(p), expectedCostUsd, value };
}
__name(drawFor, "drawFor");
function chooseLearning(book, eligible, c, seed, priors) {
  let best;
  let second;
  const target = targetPerDollar(book, priors);
  const worth = /* @__PURE__ */ __name((p, cost) => target === void 0 ? p / cost : p - target * cost, "worth");
  const draws = eligible.map((agent2) => drawFor(book, agent2, c, seed, priors));
  let incumbent;
  for (const d of draws)
    if (!incumbent || worth(d.mean, d.expectedCostUsd) > worth(incumbent.mean, incumbent.expectedCostUsd))
      incumbent = d;
  if (incumbent) {
    incumbent.value = worth(incumbent.mean, incumbent.expectedCostUsd);
    incumbent.incumbent = true;
  }
  for (const d of draws) {
    if (!best || d.value > best.value) {
      second = best;
      best = d;
    } else if (!second || d.value > second.value) second = d;
  }
  if (!best) return void 0;
  const { agent, ...drawn } = best;
  return {
    agent,
    why: {
      rule: "learning",
      domain: c.domain,
      difficulty: c.difficulty,
      generation: book.generation,
      ...drawn,
      ...target !== void 0 ? { targetPerDollar: target } : {},
      ...second ? { runnerUp: second } : {}
    }
  };
}
__name(chooseLearning, "chooseLearning");

// src/dispatch/choice/assign.ts
var NEUTRAL_SCORE = 0.5;
function choiceRule(dispatch, read) {
  return {
    scores: read.scores,
    ...dispatch.choice === "learning" && read.records ? { learning: { records: read.records, seed: dispatch.choiceSeed } } : {}
  };
}
__name(choiceRule, "choiceRule");
function chooserFor(agents, rule = {}) {
  return new AgentChooser(agents, rule.scores, rule.learning);
}
__name(chooserFor, "chooserFor");
var AgentChooser = class {
  constructor(agents, scores, learning) {
    this.agents = agents;
    this.scores = scores;
    this.learning = learning;
  }
  agents;
  scores;
  learning;
  static {
    __name(this, "AgentChooser");
  }
  cache = /* @__PURE__ */ new Map();
  priors;
  choose(c) {
    const cell = c.role + "\0" + c.domain + "\0" + c.difficulty;
    const key = c.forceAgent !== void 0 ? cell + "\0" + c.forceAgent : this.learning ? cell + "\0" + c.issueNumber + "\0" + c.attempt : cell;
    let choice = this.cache.get(key);
    if (!choice) {
      choice = c.forceAgent !== void 0 ? this.forced(c.forceAgent, c.role) : this.learning ? this.drawn(c, this.learning) : this.best(c);
      this.cache.set(key, choice);
    }
    return choice;
  }
  eligible(c) {
    return this.agents.filter(
      (a) => a.roles.includes(c.role) && (a.domains.length === 0 || a.domains.includes(c.domain)) && a.maxDifficulty >= c.difficulty
    );
  }
  drawn(c, learning) {
    const picked = chooseLearning(
      learning.records,
      this.eligible(c).map((a) => a.id),
      {
        issueNumber: c.issueNumber ?? 0,
        attempt: c.attempt ?? 1,
        domain: c.domain,
        difficulty: c.difficulty
      },
      learning.seed,
      this.costPriors()
    );
    return picked ?? this.none(c);
  }
  /** What the configuration says each agent's crew roughly costs (`agents[].expectedCostUsd`). */
  costPriors() {
    const given = this.agents.filter((a) => a.expectedCostUsd !== void 0);
    if (given.length === 0) return void 0;
    return this.priors ??= Object.fromEntries(given.map((a) => [a.id, a.expectedCostUsd]));
  }
  forced(id, role) {
    const agent = this.agents.find((a) => a.id === id);
    if (!agent) {
      return {
        code: "force-agent-not-allowed",
        reason: `forceAgent "${id}" is not a configured agent (known: ${this.agents.map((a) => a.id).join(", ")})`
      };
    }
    if (!agent.roles.includes(role)) {
      return {
        code: "force-agent-not-allowed",
        reason: `forceAgent "${id}" is not allowed for role ${role} (it takes: ${agent.roles.join(", ")}); a forced agent never widens what a role may do`
      };
    }
    return { agent: id };
  }
  best(c) {
    let best;
    for (const a of this.eligible(c)) {
      const raw = this.scores?.(a.id, { role: c.role, domain: c.domain, difficulty: c.difficulty });
      const score = typeof raw === "number" && Number.isFinite(raw) ? raw : NEUTRAL_SCORE;
      if (!best || score > best.score) best = { id: a.id, score };
    }
    if (best) return { agent: best.id };
    return this.none(c);
  }
  none(c) {
    if (this.agents.length === 0) return { code: "no-agent", reason: NO_AGENTS };
    return {
      code: "no-agent",
      reason: `no configured agent takes role ${c.role}, domain ${c.domain} at difficulty ${c.difficulty}`
    };
  }
};
var NO_AGENTS = "no agents are configured: add one to school.yml (agents: [{id: claude, kind: claude-code, passEnv: [ANTHROPIC_API_KEY]}], kind codex, or a command) or run `school init`";
function before(a, b) {
  const la = (a.d.busy + a.assigned) * b.d.slots;
  const lb = (b.d.busy + b.assigned) * a.d.slots;
  return la !== lb ? la < lb : a.seq < b.seq;
}
__name(before, "before");
var Heap = class {
  static {
    __name(this, "Heap");
  }
  items = [];
  get size() {
    return this.items.length;
  }
  push(e) {
    const h = this.items;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = i - 1 >> 1;
      if (!before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }
  pop() {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l], h[m])) m = l;
        if (r < h.length && before(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
};
var DaemonPlacer = class {
  static {
    __name(this, "DaemonPlacer");
  }
  heaps;
  seq = 0;
  constructor(daemons, classes = 4) {
    this.heaps = Array.from({ length: classes }, () => new Heap());
    daemons.forEach((d, i) => {
      if (d.capacity > 0) this.heaps[d.rank].push({ d, assigned: 0, seq: i - daemons.length });
    });
  }
  /** The daemon for a crew of class `rank`, or undefined when no daemon of that class or above has room. */
  place(rank) {
    for (let c = rank; c < this.heaps.length; c++) {
      const heap = this.heaps[c];
      const e = heap.pop();
      if (!e) continue;
      e.assigned++;
      e.seq = ++this.seq;
      if (e.assigned < e.d.capacity) heap.push(e);
      return e.d.id;
    }
    return void 0;
  }
};

// src/dispatch/choice/order.ts
var QUICK_SHARE = 0.55;
function quickCut(sizes) {
  const xs = sizes.filter((x) => Number.isFinite(x) && x >= 0).sort((a, b) => a - b);
  if (xs.length === 0) return void 0;
  return xs[Math.min(xs.length, Math.max(1, Math.ceil(QUICK_SHARE * xs.length))) - 1];
}
__name(quickCut, "quickCut");
var TAIL_GUARD_BETA = 0.75;
function tailGuardThreshold(backlogSize, slots) {
  return TAIL_GUARD_BETA * backlogSize / Math.max(1, slots);
}
__name(tailGuardThreshold, "tailGuardThreshold");
function predictedMinutes(c) {
  return c.predicted ?? c.size;
}
__name(predictedMinutes, "predictedMinutes");
var REPAIR_FACTOR = 1;
function expectedMinutes(c) {
  const p = c.attempt >= 2 ? 0 : Math.min(1, Math.max(0, c.pFail ?? 0));
  return predictedMinutes(c) * (1 + p * REPAIR_FACTOR);
}
__name(expectedMinutes, "expectedMinutes");
function orderCandidates(candidates, o = {}) {
  const sorted = [...candidates].sort(compareCandidates);
  if (o.order !== "tail-guard") return sorted;
  const total = o.backlogSize ?? candidates.reduce((s, c) => s + expectedMinutes(c), 0);
  const threshold = tailGuardThreshold(total, o.slots ?? 1);
  const quick = o.quickMinutes;
  return promote(
    sorted,
    (c) => expectedMinutes(c) >= threshold,
    quick === void 0 ? void 0 : (c) => c.size > quick
  );
}
__name(orderCandidates, "orderCandidates");
function promote(ordered, lifted, long) {
  const band = /* @__PURE__ */ new Map();
  for (const c of ordered)
    if (!front(c) && !c.environment && !c.limitClaim) {
      if (lifted(c)) band.set(c, 0);
      else if (long?.(c)) band.set(c, 2);
    }
  if (band.size === 0) return [...ordered];
  const rank = new Map(ordered.map((c, i) => [c, i]));
  const bandOf = /* @__PURE__ */ __name((c) => band.get(c) ?? 1, "bandOf");
  return [...ordered].sort((a, b) => {
    if (front(a) !== front(b)) return front(a) ? -1 : 1;
    const env = behind(a, b);
    if (env) return env;
    if (a.priority !== b.priority) return a.priority - b.priority;
    const ba = bandOf(a);
    if (ba !== bandOf(b)) return ba - bandOf(b);
    if (ba !== 1) return expectedMinutes(b) - expectedMinutes(a) || a.issueNumber - b.issueNumber;
    return rank.get(a) - rank.get(b);
  });
}
__name(promote, "promote");
function front(c) {
  return c.repair && !c.environment && !c.limitClaim || c.revision !== void 0;
}
__name(front, "front");
function behind(a, b) {
  if (!!a.limitClaim !== !!b.limitClaim) return a.limitClaim ? 1 : -1;
  return !!a.environment === !!b.environment ? 0 : a.environment ? 1 : -1;
}
__name(behind, "behind");
function compareCandidates(a, b) {
  if (front(a) !== front(b)) return front(a) ? -1 : 1;
  const env = behind(a, b);
  if (env) return env;
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.size !== b.size) return a.size - b.size;
  return a.issueNumber - b.issueNumber;
}
__name(compareCandidates, "compareCandidates");

// src/dispatch/gates/standby.ts
import { randomBytes as randomBytes2 } from "node:crypto";

// src/dispatch/gates/fences.ts
function normalizeFence(glob) {
  const first = glob.charCodeAt(0);
  const last = glob.charCodeAt(glob.length - 1);
  if (glob.length > 0 && first !== 46 && first !== 47 && first > 32 && last > 32 && glob.indexOf("\\") === -1 && glob.indexOf("//") === -1 && !/\s/.test(glob[0]) && !/\s/.test(glob[glob.length - 1])) {
    return glob;
  }
  let g = glob.trim().replace(/\\/g, "/");
  while (g.startsWith("./")) g = g.slice(2);
  while (g.startsWith("/")) g = g.slice(1);
  return g.replace(/\/{2,}/g, "/");
}
__name(normalizeFence, "normalizeFence");
var FenceSet = class {
  static {
    __name(this, "FenceSet");
  }
  root = { label: "" };
  /** The first conflict with a held fence, or undefined when every fence is free. */
  conflict(fences) {
    for (const fence of fences) {
      const g = normalizeFence(fence);
      if (g === "") continue;
      const owner = this.ownerOf(prefixOf(g));
      if (owner !== void 0) return { fence, heldBy: owner };
    }
    return void 0;
  }
  /** Claims the fences for `owner` (overlapping claims are allowed: held fences are not re-judged). */
  claim(fences, owner) {
    for (const fence of fences) {
      const g = normalizeFence(fence);
      if (g !== "") this.insert(prefixOf(g), owner);
    }
  }
  /**
   * Checks, then claims when free: one pass over the fences for the common case. A fence `owner`
   * itself holds is free to it: the crews of one contest (./contest.ts) share their issue's fences.
   * That never hides another owner: a claim is only made where nothing of anyone else overlaps.
   */
  tryClaim(fences, owner) {
    if (fences.length === 0) return void 0;
    if (fences.length === 1) {
      const g = normalizeFence(fences[0]);
      if (g === "") return void 0;
      const p = prefixOf(g);
      const held = this.ownerOf(p);
      if (held !== void 0 && held !== owner) return { fence: fences[0], heldBy: held };
      this.insert(p, owner);
      return void 0;
    }
    const prefixes = [];
    for (const fence of fences) {
      const g = normalizeFence(fence);
      if (g === "") continue;
      const p = prefixOf(g);
      const held = this.ownerOf(p);
      if (held !== void 0 && held !== owner) return { fence, heldBy: held };
      prefixes.push(p);
    }
    for (const p of prefixes) this.insert(p, owner);
    return void 0;
  }
  ownerOf(p) {
    let node = this.root;
    if (node.owner !== void 0) return node.owner;
    let i = 0;
    for (; ; ) {
      if (i === p.length) return node.below;
      const child = node.children?.get(p[i]);
      if (!child) return void 0;
      const label = child.label;
      const k = common(p, i, label);
      if (k < label.length) return i + k === p.length ? child.below : void 0;
      i += k;
      node = child;
      if (node.owner !== void 0) return node.owner;
    }
  }
  insert(p, owner) {
    let node = this.root;
    node.below ??= owner;
    let i = 0;
    while (i < p.length) {
      const ch = p[i];
      let child = node.children?.get(ch);
      if (!child) {
        (node.children ??= /* @__PURE__ */ new Map()).set(ch, { label: p.slice(i), owner, below: owner });
        return;
      }
      const k = common(p, i, child.label);
      if (k < child.label.length) {
        const tail = child.label.slice(k);
        const mid = { label: child.label.slice(0, k), children: /* @__PURE__ */ new Map([[tail[0], child]]) };
        if (child.below !== void 0) mid.below = child.below;
        child.label = tail;
        node.children.set(ch, mid);
        child = mid;
      }
      child.below ??= owner;
      node = child;
      i += k;
    }
    node.owner ??= owner;
  }
};
function prefixOf(normal) {
  if (isBasenameGlob(normal)) return "";
  const m = /[*?[{]/.exec(normal);
  return m ? normal.slice(0, m.index) : normal;
}
__name(prefixOf, "prefixOf");
function common(p, at, label) {
  const n = Math.min(label.length, p.length - at);
  let k = 0;
  while (k < n && p.charCodeAt(at + k) === label.charCodeAt(k)) k++;
  return k;
}
__name(common, "common");
function cleanFences(fences) {
  return fences.filter((f) => normalizeFence(f) !== "").map((f) => f.trim());
}
__name(cleanFences, "cleanFences");

// src/dispatch/gates/admission.ts
var CLASSES = CAPACITY_CLASSES.length;
var GiB = 1024 ** 3;
function admit(input) {
  const { remainingMs, crewTimeoutMs, gradingReserveMs, maxWaves } = input.time;
  const fit = crewTimeoutMs > 0 ? Math.floor((remainingMs - gradingReserveMs) / crewTimeoutMs) : 0;
  const waves = Math.max(0, Math.min(maxWaves, fit));
  const gated = batchGate(input, waves);
  if (gated) return gated;
  const pools = buildPools(input, waves);
  const { selected, refused } = select(input, pools, waves);
  const admitted = place(selected, pools, refused);
  return { admitted, refused, waves };
}
__name(admit, "admit");
function batchGate(input, waves) {
  const { candidates } = input;
  const all = /* @__PURE__ */ __name((code, reason, loud) => ({
    admitted: [],
    refused: candidates.map((c) => ({ issue: c.issueNumber, code, reason })),
    ...loud ? { loud } : {},
    waves
  }), "all");
  const holds = input.holds ?? {};
  if (holds.blocked !== void 0)
    return all("state-corrupt", `registry assumed full (the crew state cannot be read): ${holds.blocked}`);
  const { spentUsd, capUsd } = input.spend;
  if (capUsd !== void 0 && !(spentUsd < capUsd)) {
    const loud = spendCapLine(spentUsd, capUsd, candidates.length);
    return all("spend-cap", `${loud}: the school's budget dispatch.spendCap is spent`, loud);
  }
  if (holds.dailyBudgets?.school !== void 0) return all("daily-budget", holds.dailyBudgets.school);
  if (holds.paused !== void 0) return all("paused", holds.paused);
  if (waves < 1) {
    const { remainingMs, crewTimeoutMs, gradingReserveMs } = input.time;
    return all(
      "time-budget",
      `time budget: ${min(remainingMs)} left in the job < crew timeout ${min(crewTimeoutMs)} + grading reserve ${min(gradingReserveMs)}`
    );
  }
  return void 0;
}
__name(batchGate, "batchGate");
function select(input, pools, waves) {
  const hasBot = pools.bot.daemons.length > 0;
  const held = heldAgents(input);
  const rule = input.choice ?? {};
  const chooser = chooserFor(held.size ? input.agents.filter((a) => !held.has(a.id)) : input.agents, rule);
  const everyone = held.size ? chooserFor(input.agents, rule) : void 0;
  const review = input.holds?.review;
  const choosers = /* @__PURE__ */ new Map();
  const reviewChooser = /* @__PURE__ */ __name((reviewHeld) => {
    if (reviewHeld.size === 0) return chooser;
    const key = [...reviewHeld.keys()].sort().join("\0");
    let c = choosers.get(key);
    if (!c)
      choosers.set(
        key,
        c = chooserFor(
          input.agents.filter((a) => !held.has(a.id) && !reviewHeld.has(a.id)),
          rule
        )
      );
    return c;
  }, "reviewChooser");
  const whole = everyone ?? chooserFor(input.agents, rule);
  const fences = new FenceSet();
  for (const h of input.heldFences) fences.claim(h.fences, h.holder);
  const refused = [];
  const selected = [];
  let room = input.limits.maxCrews - input.limits.activeCrews;
  let fallbacks = 0;
  const refuse = /* @__PURE__ */ __name((c, code, reason) => refused.push({ issue: c.issueNumber, code, reason }), "refuse");
  for (const c of input.candidates) {
    if (room <= 0) {
      refuse(
        c,
        "global-cap",
        `global cap reached: maxCrews ${input.limits.maxCrews}, ${input.limits.activeCrews} active, ${selected.length} admitted this batch`
      );
      continue;
    }
    const fresh = review !== void 0 && opensPullRequest(c);
    const full = fresh ? review.schoolHeld() : void 0;
    if (full !== void 0) {
      refuse(c, "review-back-pressure", full);
      continue;
    }
    const reviewHeld = fresh ? review.heldAgents() : /* @__PURE__ */ new Map();
    const choice = reviewChooser(reviewHeld).choose(c);
    if ("code" in choice) {
      const all = held.size || reviewHeld.size ? whole.choose(c) : choice;
      if ("code" in all) refuse(c, all.code, all.reason);
      else {
        const h = held.get(all.agent);
        const r = reviewHeld.get(all.agent);
        if (!h && r) refuse(c, "agent-review-back-pressure", r);
        else refuse(c, h?.code ?? "agent-paused", h?.reason ?? `agent ${all.agent} is paused`);
      }
      continue;
    }
    let poolName = c.role !== "coding" && hasBot ? "bot" : "worktree";
    let fallback = false;
    if (c.role === "coding" && pools.worktree.online === 0 && pools.bot.online > 0) {
      if (fallbacks >= input.limits.maxFallbacks) {
        refuse(
          c,
          "fallback-limit",
          `no worktree daemon is online and fallback runs are capped at ${input.limits.maxFallbacks} per batch`
        );
        continue;
      }
      poolName = "bot";
      fallback = true;
    }
    const pool = pools[poolName];
    const rank = classRank(c.weight);
    const why = pool.refusal(rank, input, waves);
    if (why) {
      refuse(c, why.code, why.reason);
      continue;
    }
    const conflict = fences.tryClaim(c.fences, c.issueNumber);
    if (conflict) {
      const holder = typeof conflict.heldBy === "number" ? `issue #${conflict.heldBy} (admitted this batch)` : conflict.heldBy;
      refuse(c, "fence-conflict", `fence ${conflict.fence} overlaps a fence held by ${holder}`);
      continue;
    }
    pool.take(rank);
    if (fresh) review.take(choice.agent);
    if (fallback) fallbacks++;
    room--;
    selected.push({
      c,
      agent: choice.agent,
      pool: poolName,
      fallback,
      rank,
      order: selected.length,
      ...choice.why ? { why: choice.why } : {}
    });
  }
  return { selected, refused };
}
__name(select, "select");
function heldAgents(input) {
  const held = /* @__PURE__ */ new Map();
  for (const [agent, reason] of input.holds?.dailyBudgets?.agents ?? [])
    held.set(agent, { code: "agent-daily-budget", reason });
  for (const [agent, reason] of input.holds?.pausedAgents ?? [])
    held.set(agent, { code: "agent-paused", reason });
  return held;
}
__name(heldAgents, "heldAgents");
function place(selected, pools, refused) {
  const slots = new Array(selected.length);
  for (const name of ["worktree", "bot"]) {
    const placer = new DaemonPlacer(pools[name].placerDaemons, CLASSES);
    const mine = selected.filter((s) => s.pool === name).sort((a, b) => b.rank - a.rank || a.order - b.order);
    for (const s of mine) {
      const daemon = placer.place(s.rank);
      if (daemon === void 0) {
        refused.push({
          issue: s.c.issueNumber,
          code: "no-free-slot",
          reason: `no daemon of class \u2265 ${s.c.weight} had a free slot at placement`
        });
        continue;
      }
      slots[s.order] = {
        candidate: s.c,
        agent: s.agent,
        daemon,
        classroom: pools[name].classroomOf.get(daemon),
        fallback: s.fallback,
        ...s.why ? { why: s.why } : {}
      };
    }
  }
  return slots.filter((a) => a !== void 0);
}
__name(place, "place");
var Pool = class {
  constructor(name, daemons, minFreeDiskBytes, waves) {
    this.name = name;
    for (const d of daemons) {
      this.daemons.push(d);
      this.classroomOf.set(d.id, d.classroom);
      if (!d.online) continue;
      this.online++;
      const rank = classRank(d.effectiveClass);
      const usable = d.freeDiskBytes !== void 0 && d.freeDiskBytes >= minFreeDiskBytes;
      const capacity = usable ? Math.max(0, d.slots * waves - d.busy) : 0;
      for (let c = 0; c <= rank; c++) {
        this.onlineAtLeast[c]++;
        if (usable) this.usableAtLeast[c]++;
        this.capAtLeast[c] += capacity;
      }
      this.placerDaemons.push({ id: d.id, rank, slots: d.slots, busy: d.busy, capacity });
    }
  }
  name;
  static {
    __name(this, "Pool");
  }
  daemons = [];
  online = 0;
  /** Free slots this batch on usable daemons of class ≥ c. */
  capAtLeast = new Array(CLASSES).fill(0);
  onlineAtLeast = new Array(CLASSES).fill(0);
  usableAtLeast = new Array(CLASSES).fill(0);
  /** Admitted so far, by class. */
  taken = new Array(CLASSES).fill(0);
  placerDaemons = [];
  classroomOf = /* @__PURE__ */ new Map();
  take(rank) {
    this.taken[rank]++;
  }
  /** Why one more crew of class `rank` cannot be admitted, or undefined when it can. */
  refusal(rank, input, waves) {
    const weight = CAPACITY_CLASSES[rank];
    let needAtLeast = 0;
    for (let c = CLASSES - 1; c >= 0; c--) {
      needAtLeast += this.taken[c];
      if (c > rank) continue;
      if (needAtLeast + 1 <= this.capAtLeast[c]) continue;
      return this.explain(rank, c, weight, input, waves);
    }
    return void 0;
  }
  explain(rank, c, weight, input, waves) {
    if (this.daemons.length === 0) {
      return {
        code: "no-classroom",
        reason: `no daemon in the fleet hosts ${this.name} classrooms`
      };
    }
    if (this.online === 0) {
      const names = this.daemons.slice(0, 5).map((d) => `${d.id} (${d.offlineReason ?? "offline"})`).join(", ");
      const more = this.daemons.length > 5 ? ` and ${this.daemons.length - 5} more` : "";
      return { code: "fleet-offline", reason: `no online ${this.name} daemon: ${names}${more}` };
    }
    if (this.onlineAtLeast[rank] === 0) {
      const largest = CAPACITY_CLASSES[this.onlineAtLeast.findLastIndex((n) => n > 0)] ?? "none";
      return {
        code: "over-capacity",
        reason: `weight ${weight} exceeds every online daemon's effective class (largest: ${largest}); refused, not dropped`
      };
    }
    if (this.usableAtLeast[rank] === 0) {
      const low = this.daemons.filter((d) => d.online && classRank(d.effectiveClass) >= rank).slice(0, 5).map((d) => `${d.id}: ${d.freeDiskBytes === void 0 ? "unknown" : gib(d.freeDiskBytes)}`).join(", ");
      return {
        code: "disk-floor",
        reason: `free disk below the ${gib(input.limits.minFreeDiskBytes)} floor on every online daemon of class \u2265 ${weight} (${low})`
      };
    }
    const cls = CAPACITY_CLASSES[c];
    if (waves < input.time.maxWaves) {
      return {
        code: "time-budget",
        reason: `time budget: only ${waves} of ${input.time.maxWaves} wave(s) fit in the ${min(input.time.remainingMs)} left, and their ${this.capAtLeast[c]} slot(s) on class \u2265 ${cls} are taken`
      };
    }
    return {
      code: "no-free-slot",
      reason: `all ${this.capAtLeast[c]} free slot(s) this batch on daemons of class \u2265 ${cls} are taken`
    };
  }
};
function buildPools(input, waves) {
  const bot = input.daemons.filter((d) => d.classroom === "bot");
  const worktree = input.daemons.filter((d) => d.classroom !== "bot");
  return {
    worktree: new Pool("worktree", worktree, input.limits.minFreeDiskBytes, waves),
    bot: new Pool("bot", bot, input.limits.minFreeDiskBytes, waves)
  };
}
__name(buildPools, "buildPools");
function min(ms) {
  const m = ms / 6e4;
  return `${Number.isInteger(m) ? m : m.toFixed(1)} min`;
}
__name(min, "min");
function gib(bytes) {
  return `${(bytes / GiB).toFixed(1)} GiB`;
}
__name(gib, "gib");

// src/dispatch/gates/standby.ts
function capUsage(registry, config) {
  const slots = new Map(config.fleet.daemons.map((d) => [d.id, d.worktrees]));
  const perDaemon = /* @__PURE__ */ new Map();
  for (const c of Object.values(registry.crews)) {
    if (c.status === "finished") continue;
    perDaemon.set(c.daemon, (perDaemon.get(c.daemon) ?? 0) + 1);
  }
  let n = 0;
  for (const [daemon, count] of perDaemon) n += Math.min(count, slots.get(daemon) ?? count);
  return n;
}
__name(capUsage, "capUsage");
var RECENT = 50;
var MIN_SAMPLES = 5;
var FLOOR_MS = 6e4;
function typicalCrewMs(registry, crewTimeoutMs) {
  const recent = [];
  for (const c of Object.values(registry.crews)) {
    if (!c.startedAt || !c.finishedAt || c.outcome === "cancelled") continue;
    if (recent.length === RECENT && c.finishedAt <= recent[0].at) continue;
    const ms = Date.parse(c.finishedAt) - Date.parse(c.startedAt);
    if (!Number.isFinite(ms) || ms < 0) continue;
    let i = recent.findIndex((r) => r.at > c.finishedAt);
    if (i < 0) i = recent.length;
    recent.splice(i, 0, { at: c.finishedAt, ms });
    if (recent.length > RECENT) recent.shift();
  }
  const runs = recent.map((r) => r.ms).sort((a, b) => a - b);
  if (runs.length < MIN_SAMPLES) return crewTimeoutMs;
  const p75 = runs[Math.min(runs.length - 1, Math.ceil(runs.length * 0.75) - 1)];
  return Math.min(crewTimeoutMs, Math.max(FLOOR_MS, p75));
}
__name(typicalCrewMs, "typicalCrewMs");
function admitStandby(input, first, typicalMs, order) {
  const allowance = /* @__PURE__ */ new Map();
  const load = /* @__PURE__ */ new Map();
  const work = /* @__PURE__ */ __name((c) => Math.min(predictedMinutes(c), input.time.crewTimeoutMs / 6e4), "work");
  for (const a of first.admitted) {
    allowance.set(a.daemon, (allowance.get(a.daemon) ?? 0) + 1);
    load.set(a.daemon, (load.get(a.daemon) ?? 0) + work(a.candidate));
  }
  const refusedIssues = new Set(first.refused.map((r) => r.issue));
  let rest = input.candidates.filter((c) => refusedIssues.has(c.issueNumber));
  const typical = typicalMs / 6e4;
  const horizon = (input.time.remainingMs - input.time.crewTimeoutMs - input.time.gradingReserveMs) / 6e4;
  if (allowance.size === 0 || rest.length === 0 || horizon < 0)
    return { standby: [], refused: first.refused };
  const budget = /* @__PURE__ */ __name((d) => allowance.get(d) * horizon, "budget");
  const perSlot = /* @__PURE__ */ __name((d) => load.get(d) / allowance.get(d), "perSlot");
  const open = new Set([...allowance.keys()].filter((d) => load.get(d) < budget(d)));
  const held = [
    ...input.heldFences,
    ...first.admitted.map((a) => ({
      fences: a.candidate.fences,
      holder: `issue #${a.candidate.issueNumber} (admitted this batch)`
    }))
  ];
  let fallbacks = Math.max(0, input.limits.maxFallbacks - first.admitted.filter((a) => a.fallback).length);
  const standby = [];
  while (open.size > 0 && rest.length > 0) {
    const lightest = Math.min(...[...open].map(perSlot));
    const offered = new Set([...open].filter((d) => perSlot(d) <= lightest + typical));
    const round = admitOneEach(input, rest, offered, held, fallbacks);
    const got = new Set(round.admitted.map((a) => a.daemon));
    for (const d of offered) if (!got.has(d)) open.delete(d);
    if (round.admitted.length === 0) break;
    const taken = new Set(round.admitted.map((a) => a.candidate.issueNumber));
    rest = rest.filter((c) => !taken.has(c.issueNumber));
    for (const a of round.admitted) {
      standby.push(a);
      if (a.fallback) fallbacks = Math.max(0, fallbacks - 1);
      held.push({
        fences: a.candidate.fences,
        holder: `issue #${a.candidate.issueNumber} (admitted this batch)`
      });
      load.set(a.daemon, load.get(a.daemon) + work(a.candidate));
      if (load.get(a.daemon) >= budget(a.daemon)) open.delete(a.daemon);
    }
  }
  const standbyIssues = new Set(standby.map((a) => a.candidate.issueNumber));
  return {
    standby: order === "tail-guard" ? sequence(standby, allowance) : standby,
    refused: first.refused.filter((r) => !standbyIssues.has(r.issue))
  };
}
__name(admitStandby, "admitStandby");
function sharedEligible(input, first, standby) {
  const jobs = [...new Set(first.admitted.map((a) => a.daemon))];
  return standby.map((a) => {
    const others = jobs.filter((d) => d !== a.daemon && admitsOn(input, a, d));
    return [a.daemon, ...others];
  });
}
__name(sharedEligible, "sharedEligible");
function admitsOn(input, a, daemon) {
  const r = admitOneEach(input, [a.candidate], /* @__PURE__ */ new Set([daemon]), input.heldFences, a.fallback ? 1 : 0);
  const placed = r.admitted[0];
  return placed !== void 0 && placed.daemon === daemon && placed.agent === a.agent && placed.fallback === a.fallback;
}
__name(admitsOn, "admitsOn");
function admitOneEach(input, candidates, offered, heldFences, maxFallbacks) {
  return admit({
    ...input,
    candidates,
    daemons: input.daemons.map(
      (d) => offered.has(d.id) ? { ...d, slots: 1, busy: 0 } : { ...d, busy: Number.MAX_SAFE_INTEGER }
    ),
    limits: { ...input.limits, maxCrews: Number.MAX_SAFE_INTEGER, activeCrews: 0, maxFallbacks },
    heldFences,
    time: { remainingMs: 1, crewTimeoutMs: 1, gradingReserveMs: 0, maxWaves: 1 }
  });
}
__name(admitOneEach, "admitOneEach");
function sequence(standby, slots) {
  const byDaemon = /* @__PURE__ */ new Map();
  for (const a of standby) byDaemon.set(a.daemon, [...byDaemon.get(a.daemon) ?? [], a]);
  const next = /* @__PURE__ */ new Map();
  for (const [daemon, list] of byDaemon) {
    const rest = [...list];
    let work = rest.reduce((w, a) => w + expectedMinutes(a.candidate), 0);
    const out = [];
    while (rest.length > 0) {
      const threshold = tailGuardThreshold(work, slots.get(daemon) ?? 1);
      let pick = rest.findIndex((a2) => a2.candidate.repair && !a2.candidate.environment);
      if (pick < 0) {
        const priority = rest[0].candidate.priority;
        pick = 0;
        let longest = -1;
        rest.forEach((a2, i) => {
          const p = expectedMinutes(a2.candidate);
          if (a2.candidate.priority === priority && !a2.candidate.environment && p >= threshold && p > longest)
            [pick, longest] = [i, p];
        });
      }
      const [a] = rest.splice(pick, 1);
      out.push(a);
      work -= expectedMinutes(a.candidate);
    }
    next.set(daemon, out);
  }
  return standby.map((a) => next.get(a.daemon).shift());
}
__name(sequence, "sequence");
function jobRepair(registry, crewId, verdict, requeues) {
  const crew = registry.crews[crewId];
  if (!crew || crew.status !== "finished") return void 0;
  const ofIssue = Object.fromEntries(
    Object.values(registry.crews).filter((c) => c.issueNumber === crew.issueNumber).map((c) => [c.crewId, c])
  );
  const state = issueStates({ crews: ofIssue, leases: {} }, verdict, requeues).get(crew.issueNumber);
  if (state?.kind !== "repair" || state.failedCrewId !== crewId) return void 0;
  return { issueNumber: crew.issueNumber, attempt: state.attempt };
}
__name(jobRepair, "jobRepair");
async function planJobRepair(layout, o) {
  const requeues = readSchool(layout).requeues;
  const tx = await crewLog(layout).transact((current) => {
    const registry = foldLog(crewFold, current);
    const repair = jobRepair(registry, o.crewId, o.verdict, requeues);
    const failed = registry.crews[o.crewId];
    if (!repair || !failed) return { append: [], result: void 0 };
    const crewId = `c${repair.issueNumber}-${randomBytes2(4).toString("hex")}`;
    const planned = event(
      "crew.planned",
      `planned:${crewId}`,
      {
        crewId,
        issueNumber: repair.issueNumber,
        daemon: failed.daemon,
        agent: failed.agent,
        weight: failed.weight,
        fences: failed.fences,
        repair: true,
        attempt: repair.attempt,
        queued: true,
        repairOf: o.crewId,
        ...o.plannedBy ? {
          plannedBy: o.plannedBy.kind === "actions" ? { ...o.plannedBy, daemon: failed.daemon } : o.plannedBy
        } : {}
      },
      o.now ?? /* @__PURE__ */ new Date()
    );
    return { append: [planned], result: crewId };
  });
  return tx.result;
}
__name(planJobRepair, "planJobRepair");

export {
  choiceRule,
  chooserFor,
  NO_AGENTS,
  cleanFences,
  admit,
  quickCut,
  tailGuardThreshold,
  orderCandidates,
  capUsage,
  typicalCrewMs,
  admitStandby,
  sharedEligible,
  jobRepair,
  planJobRepair,
  gradingVerdicts,
  ledgerScores,
  scoresOf,
  ledgerCounts,
  claimName,
  claimPrefix,
  claimFileSchema,
  CLAIMS_DIR,
  MAX_CLAIM_FILE,
  claimOrder,
  claimCrew,
  claimedInRun
};
