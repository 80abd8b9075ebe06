import { mean, sampleBeta, seeded, shrink, shrinkCost, UNTRIED, type Beta } from './posterior.js';
import type { ChoiceDraw, PlannedChoice } from '../schemas/crew.js';
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
 * there is no target, and the value is the draw per dollar.
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

/** What one agent looked like to the choice. */
export type AgentDraw = ChoiceDraw;

/**
 * Why an agent was chosen: recorded on the planned crew (`crew.planned` `choice`). `value` is
 * draw − targetPerDollar × expectedCostUsd (draw / expectedCostUsd while there is no target).
 */
export type ChoiceWhy = PlannedChoice & { targetPerDollar?: number };

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

/**
 * Expected spend of one more crew of an agent in a cell (USD): what a crew costs depends mostly on
 * the agent and the difficulty. The agent's mean is shrunk toward its prior by one pseudo-crew —
 * the team's `expectedCostUsd` for it when given, else the school's mean per crew ($1 before any
 * crew spent) —, the agent's mean at the difficulty toward that by two, the cell's toward that by
 * four; never below $0.01.
 */
export function expectedCost(
  book: RecordBook,
  agent: string,
  domain: string,
  difficulty: number,
  priors?: CostPriors,
): number {
  const given = priors?.[agent];
  const school = book.school.crews > 0 ? book.school.spendUsd / book.school.crews : DEFAULT_CREW_COST_USD;
  const prior = given !== undefined && Number.isFinite(given) && given > 0 ? given : school;
  const overall = shrinkCost(prior, costOf(book.of(agent)), 1);
  const atDifficulty = shrinkCost(overall, costOf(book.of(agent, undefined, difficulty)));
  return shrinkCost(atDifficulty, costOf(book.of(agent, domain, difficulty)), CELL_COST_STRENGTH);
}

/**
 * The merged pull requests per dollar the school can reach by its records (λ): over the mix of
 * issues recorded (crews per domain and difficulty), the agent per cell maximizing mean − λ × cost,
 * and λ the ratio that choice gives, iterated to its fixed point (Dinkelbach; it rises at every
 * step and stops in a few). Undefined before any crew recorded a cost.
 */
export function targetPerDollar(book: RecordBook, priors?: CostPriors): number | undefined {
  const key = priors ? JSON.stringify(priors) : '';
  const cached = targets.get(book) ?? new Map<string, number | undefined>();
  targets.set(book, cached);
  if (cached.has(key)) return cached.get(key);
  let value: number | undefined;
  if (book.school.spendUsd > 0) {
    const mix = new Map<string, { domain: string; difficulty: number; n: number }>();
    for (const r of book.list('cell')) {
      const n = r.crews > 0 ? r.crews : r.graded;
      if (n <= 0) continue;
      const k = `${r.domain}|${r.difficulty}`;
      const m = mix.get(k) ?? { domain: r.domain, difficulty: r.difficulty, n: 0 };
      m.n += n;
      mix.set(k, m);
    }
    const agents = book.agentIds();
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
  for (const agent of eligible) {
    const d = drawFor(book, agent, c, seed, priors);
    if (!best || d.value > best.value) {
      second = best;
      best = d;
    } else if (!second || d.value > second.value) second = d;
  }
  if (!best) return undefined;
  const { agent, ...drawn } = best;
  const target = targetPerDollar(book, priors);
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
