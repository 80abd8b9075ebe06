import { mean, sampleBeta, seeded, shrink, shrinkCost, UNTRIED, type Beta } from './posterior.js';
import type { ChoiceDraw, PlannedChoice } from '../schemas/crew.js';
import { costOf, mergeRateOf, tallyOf, type RecordBook } from './record.js';

/**
 * Learning agent choice (`dispatch.choice: learning`, docs/dispatch.md "Choosing an agent"):
 * Thompson sampling on merged work per dollar.
 *
 * For each eligible agent: its posterior on "this crew's work is accepted and merged" in the
 * issue's cell (agent × domain × difficulty), shrunk toward the agent's domain record and its
 * overall record when the cell is thin; one draw from it; divided by the agent's expected cost of a
 * crew in that cell (shrunk likewise, toward the school's mean cost per crew when the agent has
 * spent nothing yet). The highest draw per dollar wins. An untried agent's posterior is wide, so it
 * wins some draws early; once its record is poor its draws rarely win.
 *
 * Deterministic: each agent's draw is seeded by (`dispatch.choiceSeed`, the ledger's generation,
 * issue, attempt, agent). The same state plans the same agents; new evidence draws afresh.
 */

/** Default cost of a crew when no crew of the school has recorded spend yet (USD). */
export const DEFAULT_CREW_COST_USD = 1;

/** What one agent looked like to the choice (value = draw / expected cost: merged work per dollar). */
export type AgentDraw = ChoiceDraw;

/** Why an agent was chosen: recorded on the planned crew (`crew.planned` `choice`). */
export type ChoiceWhy = PlannedChoice;

export interface ChoiceContext {
  issueNumber: number;
  attempt: number;
  domain: string;
  difficulty: number;
}

/** The posterior of an agent in a cell, shrunk from its domain and overall records. */
export function posterior(book: RecordBook, agent: string, domain: string, difficulty: number): Beta {
  const rate = mergeRateOf(book.of(agent));
  const overall = shrink(UNTRIED, tallyOf(book.of(agent), rate), Infinity);
  const inDomain = shrink(overall, tallyOf(book.of(agent, domain), rate));
  return shrink(inDomain, tallyOf(book.of(agent, domain, difficulty), rate));
}

/** Expected spend of one more crew of an agent in a cell (USD). */
export function expectedCost(book: RecordBook, agent: string, domain: string, difficulty: number): number {
  const school = book.school.crews > 0 ? book.school.spendUsd / book.school.crews : DEFAULT_CREW_COST_USD;
  const overall = shrinkCost(school, costOf(book.of(agent)), 1);
  const inDomain = shrinkCost(overall, costOf(book.of(agent, domain)));
  return shrinkCost(inDomain, costOf(book.of(agent, domain, difficulty)));
}

/** One agent's seeded draw for an issue. */
export function drawFor(book: RecordBook, agent: string, c: ChoiceContext, seed: number): AgentDraw {
  const p = posterior(book, agent, c.domain, c.difficulty);
  const u = seeded(`${seed}:${book.generation}:${c.issueNumber}:${c.attempt}:${agent}`);
  const draw = sampleBeta(p, u);
  const expectedCostUsd = expectedCost(book, agent, c.domain, c.difficulty);
  return { agent, draw, mean: mean(p), expectedCostUsd, value: draw / expectedCostUsd };
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
): { agent: string; why: ChoiceWhy } | undefined {
  let best: AgentDraw | undefined;
  let second: AgentDraw | undefined;
  for (const agent of eligible) {
    const d = drawFor(book, agent, c, seed);
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
      ...(second ? { runnerUp: second } : {}),
    },
  };
}
