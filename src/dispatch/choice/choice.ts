import { mean, sampleBeta, seeded, shrink, shrinkCost, UNTRIED, type Beta } from './posterior.js';
import type { ChoiceDraw, PlannedChoice } from '../../schemas/crew.js';
import { costOf, mergeRateOf, tallyOf, type RecordBook } from './record.js';

/**
 * Learning agent choice (`dispatch.choice: learning`, docs/dispatch.md "Choosing an agent"):
 * Thompson sampling on merged work per dollar.
 *
 * For each eligible agent: its posterior on "this crew's work is accepted and merged" in the
 * issue's cell (agent × domain × difficulty), shrunk toward the agent's domain record and its
 * overall record when the cell is thin; one draw from it; and the agent's expected cost of a crew
 * (its mean at that difficulty, refined by the cell).
 *
 * What the school maximizes is merged pull requests per dollar over the whole backlog, and the
 * issue-by-issue best ratio is not that optimum: an agent twice as dear for a little more chance
 * can have the better ratio on this issue while the same dollars merge more elsewhere. So, as in
 * a knapsack, the value of an agent is draw − λ × expected cost, where λ (the target) is the merged
 * per dollar the school can reach by its records: the fixed point of "choose by p − λ c, λ = the
 * ratio that gives" over the mix of issues recorded (Dinkelbach). Before any crew recorded a cost
 * the target is what the team's cost priors promise (`agents[].expectedCostUsd`); without them
 * there is no target, and the value is the draw per dollar.
 *
 * Exploration: the incumbent — the agent best by its posterior mean — stands on its mean, the
 * others on their draws. An agent is tried when a plausible draw of it beats what the incumbent
 * is expected to give; the incumbent's own bad luck in a draw never sends a worse agent.
 *
 * Deterministic: each agent's draw is seeded by (`dispatch.choiceSeed`, the ledger's generation,
 * issue, attempt, agent): an issue draws the same however often and in whatever order a plan asks.
 * The same state plans the same agents; new evidence draws afresh.
 */

/** Default cost of a crew when no crew of the school has recorded spend yet (USD). */
export const DEFAULT_CREW_COST_USD = 1;

/**
 * What a team says a crew of each agent roughly costs (`agents[].expectedCostUsd`, USD): the prior
 * mean of the agent's cost in place of the school's mean per crew. Its own crews replace it as
 * they record spend.
 */
export type CostPriors = Readonly<Record<string, number>>;

/** Pseudo-crews of the agent's mean at a difficulty a cell's mean cost leans on. */
export const CELL_COST_STRENGTH = 4;

/**
 * What one agent looked like to the choice. `incumbent`: the agent best by its posterior mean,
 * whose value is its mean's (mean − λ × cost), not its draw's.
 */
export type AgentDraw = ChoiceDraw & { incumbent?: boolean };

/**
 * Why an agent was chosen: recorded on the planned crew (`crew.planned` `choice`). `value` is
 * draw − targetPerDollar × expectedCostUsd (draw / expectedCostUsd while there is no target); the
 * incumbent's (`incumbent: true`) is its mean's instead of its draw's.
 */
export type ChoiceWhy = PlannedChoice & {
  targetPerDollar?: number;
  incumbent?: boolean;
  runnerUp?: AgentDraw;
};

export interface ChoiceContext {
  issueNumber: number;
  attempt: number;
  domain: string;
  difficulty: number;
}

const targets = new WeakMap<RecordBook, Map<string, number | undefined>>();

/**
 * The posterior of an agent in a cell, shrunk from its domain and overall records. Accepted work
 * still open counts by the agent's merge rate overall, and in the domain and cell by its rate in
 * the domain.
 */
export function posterior(book: RecordBook, agent: string, domain: string, difficulty: number): Beta {
  const all = book.of(agent);
  const here = book.of(agent, domain);
  const rate = mergeRateOf(all, here);
  const overall = shrink(UNTRIED, tallyOf(all, mergeRateOf(all)), Infinity);
  const inDomain = shrink(overall, tallyOf(here, rate));
  return shrink(inDomain, tallyOf(book.of(agent, domain, difficulty), rate));
}

/** Pseudo-crews of the school's mean a difficulty's cost factor leans on (a factor of 1). */
export const FACTOR_STRENGTH = 2;

/** Pseudo-crews a team's `expectedCostUsd` is worth against the agent's own spend. */
export const GIVEN_COST_STRENGTH = 2;

/**
 * What a crew costs, as agent × difficulty: a base per agent (its mean crew over the school's mix of
 * difficulties) times a factor per difficulty shared by every agent (a hard issue takes more turns
 * whoever works it). Fitted from the records by a few alternating rounds, each factor shrunk toward 1
 * by FACTOR_STRENGTH crews; the factors average 1 over the school's crews.
 */
interface CostModel {
  factor(difficulty: number): number;
  /** Per agent: its spend and its crews weighted by their difficulty's factor (base = spend / weight). */
  agents: Map<string, { spendUsd: number; weight: number }>;
  /** The school's base per crew, when anything was spent. */
  schoolBase: number | undefined;
}

const costModels = new WeakMap<RecordBook, CostModel>();

export function costModel(book: RecordBook): CostModel {
  const hit = costModels.get(book);
  if (hit) return hit;
  const rows = book.list('difficulty').filter((r) => r.crews > 0);
  const factors = new Map<number, number>();
  const f = (d: number) => factors.get(d) ?? 1;
  const agents = new Map<string, { spendUsd: number; weight: number }>();
  const fitBases = () => {
    agents.clear();
    for (const r of rows) {
      const a = agents.get(r.agent) ?? { spendUsd: 0, weight: 0 };
      a.spendUsd += r.spendUsd;
      a.weight += r.crews * f(r.difficulty);
      agents.set(r.agent, a);
    }
  };
  fitBases();
  if (book.school.spendUsd > 0) {
    for (let round = 0; round < 20; round++) {
      const by = new Map<number, { spendUsd: number; expected: number; crews: number }>();
      for (const r of rows) {
        const a = agents.get(r.agent)!;
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
        const mean = t.crews > 0 ? t.expected / t.crews : 0;
        const k = FACTOR_STRENGTH * mean;
        factors.set(d, t.expected + k > 0 ? (t.spendUsd + k) / (t.expected + k) : 1);
        crews += t.crews;
        sum += t.crews * f(d);
      }
      // Factors are relative: they average 1 over the school's crews, so a base is a mean crew.
      if (crews > 0 && sum > 0) for (const [d, v] of factors) factors.set(d, (v * crews) / sum);
      fitBases();
    }
  }
  let spendUsd = 0;
  let weight = 0;
  for (const a of agents.values()) {
    spendUsd += a.spendUsd;
    weight += a.weight;
  }
  const model: CostModel = {
    factor: f,
    agents,
    schoolBase: spendUsd > 0 && weight > 0 ? spendUsd / weight : undefined,
  };
  costModels.set(book, model);
  return model;
}

/**
 * Expected spend of one more crew of an agent in a cell (USD). The agent's base (`costModel`) is
 * its own spend shrunk toward a prior: the team's `expectedCostUsd` for it when given (worth two
 * crews), else the school's base (one crew; $1 before any crew spent). That base times the
 * difficulty's factor is the prior of the agent's mean at the difficulty, worth two crews; that
 * is the prior of the cell's mean, worth four. Never below $0.01.
 */
export function expectedCost(
  book: RecordBook,
  agent: string,
  domain: string,
  difficulty: number,
  priors?: CostPriors,
): number {
  const model = costModel(book);
  const given = priors?.[agent];
  const own = model.agents.get(agent) ?? { spendUsd: 0, weight: 0 };
  const base =
    given !== undefined && Number.isFinite(given) && given > 0
      ? shrinkCost(given, { crews: own.weight, spendUsd: own.spendUsd }, GIVEN_COST_STRENGTH)
      : shrinkCost(
          model.schoolBase ?? DEFAULT_CREW_COST_USD,
          { crews: own.weight, spendUsd: own.spendUsd },
          1,
        );
  const atDifficulty = shrinkCost(
    base * model.factor(difficulty),
    costOf(book.of(agent, undefined, difficulty)),
  );
  return shrinkCost(atDifficulty, costOf(book.of(agent, domain, difficulty)), CELL_COST_STRENGTH);
}

/**
 * The merged pull requests per dollar the school can reach by its records (λ): over the mix of
 * issues recorded (crews per domain and difficulty), the agent per cell maximizing mean − λ × cost,
 * and λ the ratio that choice gives, iterated to its fixed point (Dinkelbach; it rises at every
 * step and stops in a few). With cost priors and nothing recorded yet, the mix is one issue and
 * the agents those the priors name, each at its overall posterior mean (0.5 for the untried).
 * Undefined before any crew recorded a cost when no prior is given.
 */
export function targetPerDollar(book: RecordBook, priors?: CostPriors): number | undefined {
  const key = priors ? JSON.stringify(priors) : '';
  const cached = targets.get(book) ?? new Map<string, number | undefined>();
  targets.set(book, cached);
  if (cached.has(key)) return cached.get(key);
  let value: number | undefined;
  const given = Object.keys(priors ?? {});
  if (book.school.spendUsd > 0 || given.length > 0) {
    const mix = new Map<string, { domain: string; difficulty: number; n: number }>();
    for (const r of book.list('cell')) {
      const n = r.crews > 0 ? r.crews : r.graded;
      if (n <= 0) continue;
      const k = `${r.domain}|${r.difficulty}`;
      const m = mix.get(k) ?? { domain: r.domain, difficulty: r.difficulty, n: 0 };
      m.n += n;
      mix.set(k, m);
    }
    // Nothing recorded yet, but the team said what crews cost: the target is the best the
    // agents' priors promise (every untried agent's mean is 0.5, so the cheapest one's ratio).
    if (mix.size === 0) mix.set('', { domain: '', difficulty: 0, n: 1 });
    const agents = book.agentIds().length > 0 ? book.agentIds() : given;
    const table = [...mix.values()].map((c) => ({
      n: c.n,
      options: agents.map((a) => ({
        p: mean(posterior(book, a, c.domain, c.difficulty)),
        cost: expectedCost(book, a, c.domain, c.difficulty, priors),
      })),
    }));
    const ratio = (pick: (o: { p: number; cost: number }) => number) => {
      let merged = 0;
      let spend = 0;
      for (const c of table) {
        let best = c.options[0]!;
        for (const o of c.options) if (pick(o) > pick(best)) best = o;
        merged += c.n * best.p;
        spend += c.n * best.cost;
      }
      return spend > 0 ? merged / spend : undefined;
    };
    value = ratio((o) => o.p / o.cost);
    for (let i = 0; i < 50 && value !== undefined; i++) {
      const lambda: number = value;
      const next = ratio((o) => o.p - lambda * o.cost);
      if (next === undefined || next <= lambda + 1e-12) break;
      value = next;
    }
  }
  cached.set(key, value);
  return value;
}

/** One agent's seeded draw for an issue. */
export function drawFor(
  book: RecordBook,
  agent: string,
  c: ChoiceContext,
  seed: number,
  priors?: CostPriors,
): AgentDraw {
  const p = posterior(book, agent, c.domain, c.difficulty);
  const u = seeded(`${seed}:${book.generation}:${c.issueNumber}:${c.attempt}:${agent}`);
  const draw = sampleBeta(p, u);
  const expectedCostUsd = expectedCost(book, agent, c.domain, c.difficulty, priors);
  const target = targetPerDollar(book, priors);
  const value = target === undefined ? draw / expectedCostUsd : draw - target * expectedCostUsd;
  return { agent, draw, mean: mean(p), expectedCostUsd, value };
}

/**
 * The agent with the highest drawn value among `eligible` (in configuration order; a tie keeps
 * the earlier one), with why. Undefined when none is eligible.
 */
export function chooseLearning(
  book: RecordBook,
  eligible: readonly string[],
  c: ChoiceContext,
  seed: number,
  priors?: CostPriors,
): { agent: string; why: ChoiceWhy } | undefined {
  let best: AgentDraw | undefined;
  let second: AgentDraw | undefined;
  const target = targetPerDollar(book, priors);
  const worth = (p: number, cost: number) => (target === undefined ? p / cost : p - target * cost);
  const draws = eligible.map((agent) => drawFor(book, agent, c, seed, priors));
  // The incumbent, the agent best by its posterior mean, stands on that mean; the others stand on
  // their draws: a challenger is sent when its draw beats what the incumbent is expected to give.
  let incumbent: AgentDraw | undefined;
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
  if (!best) return undefined;
  const { agent, ...drawn } = best;
  return {
    agent,
    why: {
      rule: 'learning',
      domain: c.domain,
      difficulty: c.difficulty,
      generation: book.generation,
      ...drawn,
      ...(target !== undefined ? { targetPerDollar: target } : {}),
      ...(second ? { runnerUp: second } : {}),
    },
  };
}
