import { parseConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';
import { choiceRule, chooserFor, type Chooser } from '../../src/dispatch/choice/assign.js';
import { RecordBook, type RecordCrew } from '../../src/dispatch/choice/record.js';
import { scoresOf } from '../../src/grading/feedback.js';
import { ledgerFold, type LedgerState, type ScoreEvent } from '../../src/grading/ledger.js';
import { event } from '../../src/state/event-log.js';
import { createRng, type Rng } from './prng.js';

/**
 * `school-simulate --learning` (docs/simulate.md, "Which agent to send"): a world of agents whose
 * chance of a merged pull request per domain and difficulty, and whose cost per crew, are hidden
 * from the school; one backlog; four ways of choosing the agent for each issue:
 *
 * - `greedy`: the product's `Chooser` (src/dispatch/choice/assign.ts `chooserFor`) under
 *   `dispatch.choice: greedy`, over the real ledger fold (top blended score, unscored = 0.5);
 * - `random`: a seeded uniform pick;
 * - `oracle`: knows the truth and the backlog, sends the agent maximizing true merge chance − λ* ×
 *   expected cost, λ* the best merged per dollar this backlog allows (`oracleTarget`);
 * - `learning`: the same `Chooser` under `dispatch.choice: learning`, over a `RecordBook` built
 *   from the same ledger events, finished crews and spend rows a school records.
 *
 * Both real rules are configured as a school configures them (`choiceRule` over the parsed
 * `dispatch` section): the simulator implements no part of the choice; it only plays the world.
 *
 * Issues are planned in batches of `batch` (one plan per batch: the choice sees only what was
 * recorded before it); the judges' verdict and the spend are recorded when the batch ends, the
 * person's merge or unmerged close one batch later. Every issue's outcome under every agent is
 * drawn up front, so all policies face the same luck, and each issue is tried once.
 */
export const LEARNING_POLICIES = ['greedy', 'random', 'oracle', 'learning'] as const;
export type LearningPolicy = (typeof LEARNING_POLICIES)[number];

export interface LearningOptions {
  seed: number;
  issues: number;
  domains: number;
  /** Issues per plan. */
  batch: number;
}

export const DEFAULT_LEARNING_OPTIONS: LearningOptions = { seed: 1, issues: 240, domains: 6, batch: 24 };

/** An agent of the world, as only the simulator knows it. */
export interface WorldAgent {
  id: string;
  /** Mean cost of one crew at difficulty 1 (USD). */
  costUsd: number;
  /** Chance of a merged pull request per domain, at difficulty 1. */
  merge: number[];
  /** How much of that chance is lost from difficulty 1 to 5 (0 = none, 1 = all). */
  slope: number;
}

export interface WorldIssue {
  number: number;
  domain: string;
  difficulty: number;
  /** Per agent: merged if this crew ran, judged accepted, and what it cost. */
  outcomes: Array<{ merged: boolean; accepted: boolean; costUsd: number }>;
}

export interface World {
  agents: WorldAgent[];
  domains: string[];
  issues: WorldIssue[];
}

export interface PolicyFigures {
  label: LearningPolicy;
  merged: number;
  accepted: number;
  spendUsd: number;
  mergedPerDollar: number;
  /** 1 − mergedPerDollar / the oracle's: the share of the oracle's merged work per dollar lost. */
  regret: number;
  /** Crews sent per agent. */
  crews: Record<string, number>;
  /** Merged per dollar in expectation over the world's luck (the true chances and mean costs of the picks). */
  expectedMergedPerDollar: number;
}

export interface LearningResult {
  options: LearningOptions;
  agents: Array<{ id: string; costUsd: number; merge: number[]; slope: number }>;
  domains: string[];
  policies: PolicyFigures[];
  /** The oracle's λ*: the best merged per dollar in expectation over this backlog. */
  oracleTargetPerDollar: number;
  /** A second reference: the oracle choosing by the best true p / cost issue by issue. */
  oracleByIssue: Omit<PolicyFigures, 'label'> & { label: 'oracleByIssue' };
}

/** The chance an agent's crew on an issue ends in a merged pull request. */
export function mergeChance(a: WorldAgent, domain: number, difficulty: number): number {
  return a.merge[domain]! * (1 - (a.slope * (difficulty - 1)) / 4);
}

/** Mean cost of an agent's crew at a difficulty (failed crews cost more: they use every turn). */
export function crewCost(a: WorldAgent, difficulty: number): number {
  return a.costUsd * (0.6 + 0.2 * difficulty);
}
const FAILED_COST = 1.4;
/** Mean cost of a crew whose merge chance is p (log-normal noise of mean ~1 aside). */
function expectedCrewCost(a: WorldAgent, difficulty: number, p: number): number {
  return crewCost(a, difficulty) * (p + (1 - p) * FAILED_COST);
}
/** Judges pass some work people will not merge (METR, March 2026: ~72 % against ~48 %). */
const FALSE_ACCEPT = 0.4;
const DIFFICULTY_MIX = [0.3, 0.25, 0.2, 0.15, 0.1];

function uniform(rng: Rng, lo: number, hi: number): number {
  return lo + (hi - lo) * rng.next();
}

/**
 * The agents' list prices (USD per crew at difficulty 1) and the range their merge chances are drawn
 * from. Configuration order puts the strongest first, as a school would list its agents.
 */
const NOMINAL = [
  { id: 'premium', costUsd: 3.6, lo: 0.5, hi: 0.85, slope: 0.25 },
  { id: 'standard', costUsd: 1.2, lo: 0.3, hi: 0.75, slope: 0.45 },
  { id: 'budget', costUsd: 0.4, lo: 0.05, hi: 0.65, slope: 0.7 },
] as const;

/**
 * What the school is told a crew costs (`agents[].expectedCostUsd`): the list price at the mean
 * difficulty of the backlog's mix. Not the truth: each world's agent costs ±20 % of its list price,
 * and a crew whose work is not merged costs 1.4 × more.
 */
export function listPriceUsd(nominalUsd: number): number {
  const meanDifficulty = DIFFICULTY_MIX.reduce((s, w, i) => s + w * (i + 1), 0);
  return nominalUsd * (0.6 + 0.2 * meanDifficulty);
}

/** The hidden world: three agents about nine-fold apart in cost, merge chances drawn per domain. */
export function makeWorld(o: LearningOptions): World {
  const rng = createRng(o.seed);
  const domains = Array.from({ length: o.domains }, (_, i) => `d${i + 1}`);
  const agent = (id: string, cost: number, lo: number, hi: number, slope: number): WorldAgent => ({
    id,
    costUsd: cost * uniform(rng, 0.8, 1.2),
    merge: domains.map(() => uniform(rng, lo, hi)),
    slope,
  });
  const agents = NOMINAL.map((n) => agent(n.id, n.costUsd, n.lo, n.hi, n.slope));
  const issues: WorldIssue[] = [];
  for (let n = 1; n <= o.issues; n++) {
    const domain = Math.floor(rng.next() * domains.length);
    const difficulty = rng.pick(DIFFICULTY_MIX) + 1;
    const outcomes = agents.map((a) => {
      const merged = rng.next() < mergeChance(a, domain, difficulty);
      const accepted = merged || rng.next() < FALSE_ACCEPT;
      const cost = crewCost(a, difficulty) * Math.exp(0.3 * rng.normal()) * (merged ? 1 : FAILED_COST);
      return { merged, accepted, costUsd: cost };
    });
    issues.push({ number: n, domain: domains[domain]!, difficulty, outcomes });
  }
  return { agents, domains, issues };
}

function check(o: LearningOptions): void {
  const int = (v: number, min: number, max: number) => Number.isInteger(v) && v >= min && v <= max;
  if (!int(o.issues, 1, 100_000))
    throw new ConfigError(
      `simulate --learning: --issues must be a whole number from 1 to 100,000; found ${o.issues}.`,
    );
  if (!int(o.domains, 1, 100))
    throw new ConfigError(
      `simulate --learning: domains must be a whole number from 1 to 100; found ${o.domains}.`,
    );
  if (!int(o.batch, 1, 10_000))
    throw new ConfigError(
      `simulate --learning: batch must be a whole number from 1 to 10,000; found ${o.batch}.`,
    );
  if (!int(o.seed, 0, 2 ** 32 - 1))
    throw new ConfigError(
      `simulate --learning: --seed must be a whole number from 0 to 4294967295; found ${o.seed}.`,
    );
}

/** What a school records as its crews end and people decide: fed to the real folds. */
class School {
  ledger: LedgerState = ledgerFold.empty();
  readonly crews: RecordCrew[] = [];
  readonly spend: Array<{ crewId: string; costUsd: number }> = [];
  private seq = 0;
  private clock = Date.parse('2026-01-01T00:00:00Z');

  private apply(e: ScoreEvent): void {
    this.ledger = ledgerFold.apply(this.ledger, e);
  }

  /** A crew ran: its verdict, spend and finish; returns what a later merge needs. */
  ran(issue: WorldIssue, agent: string, o: WorldIssue['outcomes'][number]) {
    const crewId = `c${issue.number}-${(++this.seq).toString(16).padStart(8, '0')}`;
    const at = new Date((this.clock += 60_000));
    const cell = { agent, domain: issue.domain, difficulty: issue.difficulty };
    this.apply(
      event(
        'score.applied',
        `score:${crewId}`,
        {
          crewId,
          jobKey: `grade:${issue.number}:${crewId}`,
          ...cell,
          accepted: o.accepted,
          score: o.accepted ? 1 : 0,
          alpha: 0.3,
        },
        at,
      ),
    );
    this.spend.push({ crewId, costUsd: o.costUsd });
    this.crews.push({
      crewId,
      issueNumber: issue.number,
      agent,
      status: 'finished',
      startedAt: new Date(at.getTime() - 20 * 60_000).toISOString(),
      finishedAt: at.toISOString(),
      choice: { domain: issue.domain, difficulty: issue.difficulty },
    });
    return { crewId, ...cell, issue: issue.number };
  }

  /** A person merged or closed the pull request of an accepted crew. */
  settled(c: ReturnType<School['ran']>, merged: boolean): void {
    const at = new Date((this.clock += 60_000));
    this.apply(
      event(
        'human.judged',
        `human:${c.issue}`,
        {
          pr: c.issue,
          issue: c.issue,
          crewId: c.crewId,
          agent: c.agent,
          domain: c.domain,
          difficulty: c.difficulty,
          merged,
          alpha: 0.3,
        },
        at,
      ),
    );
  }
}

type PickFn = (issue: WorldIssue, chooser: Chooser | undefined) => number;

type RunLabel = LearningPolicy | 'oracleByIssue';

function runPolicy<L extends RunLabel>(
  world: World,
  o: LearningOptions,
  label: L,
  configs: Record<'greedy' | 'learning', SchoolConfig>,
  lambda: number,
): Omit<PolicyFigures, 'label'> & { label: L } {
  const school = new School();
  const rng = createRng(o.seed ^ 0x5eed);
  const index = new Map(world.agents.map((a, i) => [a.id, i]));
  const pick: PickFn =
    label === 'random'
      ? () => Math.floor(rng.next() * world.agents.length)
      : label === 'oracle'
        ? (issue) => oracleChoice(world, issue, lambda)
        : label === 'oracleByIssue'
          ? (issue) => oracleByIssue(world, issue)
          : (issue, chooser) => {
              const c = chooser!.choose({
                role: 'coding',
                domain: issue.domain,
                difficulty: issue.difficulty,
                issueNumber: issue.number,
                attempt: 1,
              });
              if (!('agent' in c))
                throw new Error(
                  `simulate: the office chose no agent for issue #${issue.number}: ${c.reason}`,
                );
              return index.get(c.agent)!;
            };
  let waiting: Array<{ crew: ReturnType<School['ran']>; merged: boolean }> = [];
  const figures = { merged: 0, accepted: 0, spendUsd: 0, crews: {} as Record<string, number> };
  const expected = { merged: 0, spendUsd: 0 };
  for (let start = 0; start < world.issues.length; start += o.batch) {
    // One plan: the chooser sees the records as they stand before the batch runs.
    const config = label === 'greedy' ? configs.greedy : label === 'learning' ? configs.learning : undefined;
    const chooser = config
      ? chooserFor(
          config.agents,
          choiceRule(config.dispatch, {
            scores: scoresOf(school.ledger),
            records: new RecordBook({ ledger: school.ledger, crews: school.crews, spend: school.spend }),
          }),
        )
      : undefined;
    const batch = world.issues.slice(start, start + o.batch);
    const picks = batch.map((issue) => pick(issue, chooser));
    // The pull requests of the previous batch are settled while this one runs.
    for (const w of waiting) school.settled(w.crew, w.merged);
    waiting = [];
    batch.forEach((issue, i) => {
      const a = world.agents[picks[i]!]!;
      const outcome = issue.outcomes[picks[i]!]!;
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
    expectedMergedPerDollar: expected.spendUsd > 0 ? expected.merged / expected.spendUsd : 0,
  };
}

/**
 * The oracle knows every agent's true merge chance and mean cost, and the backlog. It maximizes
 * merged pull requests per dollar over the backlog: per issue, the agent maximizing p − λ* × cost,
 * where λ* is the best ratio any assignment of agents to these issues reaches in expectation
 * (Dinkelbach's fixed point; it is that optimum). The issue-by-issue best p / cost
 * (`oracleByIssue`) is not: an agent with the better ratio on one issue can spend dollars that
 * merge more elsewhere. It is kept as a second reference.
 */
export function oracleTarget(world: World): number {
  const ratio = (pick: (issue: WorldIssue) => number) => {
    let merged = 0;
    let spend = 0;
    for (const issue of world.issues) {
      const a = world.agents[pick(issue)]!;
      const p = mergeChance(a, world.domains.indexOf(issue.domain), issue.difficulty);
      merged += p;
      spend += expectedCrewCost(a, issue.difficulty, p);
    }
    return merged / spend;
  };
  let lambda = ratio((issue) => oracleByIssue(world, issue));
  for (let i = 0; i < 100; i++) {
    const next = ratio((issue) => oracleChoice(world, issue, lambda));
    if (next <= lambda + 1e-12) break;
    lambda = next;
  }
  return lambda;
}

function bestBy(world: World, issue: WorldIssue, value: (p: number, cost: number) => number): number {
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

/** The agent maximizing true merge chance − λ × expected cost (λ: `oracleTarget`). */
export function oracleChoice(world: World, issue: WorldIssue, lambda: number): number {
  return bestBy(world, issue, (p, cost) => p - lambda * cost);
}

/** The agent with the highest true merge chance per expected dollar on this issue alone. */
export function oracleByIssue(world: World, issue: WorldIssue): number {
  return bestBy(world, issue, (p, cost) => p / cost);
}

export function simulateLearning(partial: Partial<LearningOptions> = {}): LearningResult {
  const o: LearningOptions = { ...DEFAULT_LEARNING_OPTIONS, ...partial };
  check(o);
  const world = makeWorld(o);
  // The school.yml of each real rule: the same agents and cost priors, `dispatch.choice` set.
  const configOf = (choice: 'greedy' | 'learning') =>
    parseConfig(
      {
        agents: world.agents.map((a, i) => ({
          id: a.id,
          command: ['true'],
          expectedCostUsd: listPriceUsd(NOMINAL[i]!.costUsd),
        })),
        dispatch: { choice, choiceSeed: o.seed },
      },
      'simulate',
    );
  const configs = { greedy: configOf('greedy'), learning: configOf('learning') };
  const lambda = oracleTarget(world);
  const policies: PolicyFigures[] = LEARNING_POLICIES.map((label) =>
    runPolicy(world, o, label, configs, lambda),
  );
  const byIssue = runPolicy(world, o, 'oracleByIssue', configs, lambda);
  const oracle = policies.find((p) => p.label === 'oracle')!;
  for (const p of [...policies, byIssue])
    p.regret = oracle.mergedPerDollar > 0 ? 1 - p.mergedPerDollar / oracle.mergedPerDollar : 0;
  return {
    options: o,
    agents: world.agents.map((a) => ({ ...a })),
    domains: world.domains,
    policies,
    oracleTargetPerDollar: lambda,
    oracleByIssue: byIssue,
  };
}

/** The goal (docs/simulate.md): learning ≥ 90 % of the oracle's merged per dollar, ≥ 1.15 × greedy's. */
export const LEARNING_GOALS = { ofOracle: 0.9, overGreedy: 1.15 } as const;

export function renderLearningText(r: LearningResult): string {
  const o = r.options;
  const lines = [
    `Which agent to send: ${o.issues} issues over ${r.domains.length} domains, ${r.agents.length} agents, plans of ${o.batch}, seed ${o.seed}`,
    `agents (hidden from the school): ${r.agents
      .map(
        (a) => `${a.id} ~$${a.costUsd.toFixed(2)}/crew, merges ${a.merge.map((m) => m.toFixed(2)).join('/')}`,
      )
      .join('; ')}`,
    '',
    `${'policy'.padEnd(10)}${'merged'.padStart(8)}${'spend'.padStart(11)}${'merged/$'.padStart(10)}${'regret'.padStart(9)}  crews per agent`,
  ];
  const row = (label: string, p: Omit<PolicyFigures, 'label'>) =>
    `${label.padEnd(10)}${String(p.merged).padStart(8)}${`$${p.spendUsd.toFixed(2)}`.padStart(11)}${p.mergedPerDollar.toFixed(3).padStart(10)}${`${(p.regret * 100).toFixed(1)} %`.padStart(9)}  ${Object.entries(
      p.crews,
    )
      .map(([a, n]) => `${a} ${n}`)
      .join(', ')}`;
  for (const p of r.policies) lines.push(row(p.label, p));
  const f = (l: LearningPolicy) => r.policies.find((p) => p.label === l)!;
  const ofOracle = f('learning').mergedPerDollar / f('oracle').mergedPerDollar;
  const overGreedy = f('learning').mergedPerDollar / f('greedy').mergedPerDollar;
  const ofByIssue = f('learning').mergedPerDollar / r.oracleByIssue.mergedPerDollar;
  lines.push(
    '',
    `reference: the oracle choosing the best true p / cost issue by issue, not the ratio optimum (λ* = ${r.oracleTargetPerDollar.toFixed(3)} merged per dollar expected):`,
    row('by issue', r.oracleByIssue),
    '',
    `learning: ${(ofOracle * 100).toFixed(1)} % of the oracle's merged per dollar (goal ≥ 90 %: ${ofOracle >= LEARNING_GOALS.ofOracle ? 'met' : 'missed'}; ${(ofByIssue * 100).toFixed(1)} % of the by-issue oracle's), ${overGreedy.toFixed(2)} × greedy's (goal ≥ 1.15 ×: ${overGreedy >= LEARNING_GOALS.overGreedy ? 'met' : 'missed'})`,
    'regret = 1 − merged per dollar / the oracle’s.',
  );
  return lines.join('\n') + '\n';
}

export function renderLearningJson(r: LearningResult): string {
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
        crews: p.crews,
      })),
      oracleTargetPerDollar: round(r.oracleTargetPerDollar, 4),
      oracleByIssue: {
        merged: r.oracleByIssue.merged,
        spendUsd: round(r.oracleByIssue.spendUsd, 2),
        mergedPerDollar: round(r.oracleByIssue.mergedPerDollar, 4),
        regret: round(r.oracleByIssue.regret, 4),
        crews: r.oracleByIssue.crews,
      },
    },
    null,
    2,
  );
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
