import type { SchoolConfig } from '../../config/schema.js';
import { utcDay, type SpendState } from './spend.js';

/**
 * The school's budgets (docs/dispatch.md, "Budgets"), counted from the spend ledger:
 *
 * - `dispatch.crewBudgetUsd` — what one crew may spend over all its turns: the hard cap that also
 *   bounds a reported cost (src/agents/usage.ts);
 * - `dispatch.dailyBudgetUsd` — what the school may spend in one UTC day, every row counted
 *   (reviewers too): once reached, a plan places nothing until 00:00 UTC;
 * - `agents[].dailyBudgetUsd` — what one agent's turns (rows naming the agent) may spend in one UTC
 *   day: once reached the agent is not chosen, another eligible agent may be;
 * - `dispatch.spendCap` — what the school may spend at all (./admission.ts, seed 003).
 *
 * A budget is judged before a batch, like the cap: crews already running may carry the day past it
 * by what they still spend, each at most its crew budget. Pure: the caller reads the ledger.
 */

export type BudgetKind = 'crew' | 'school-daily' | 'agent-daily' | 'school-cap';

export interface BudgetStanding {
  kind: BudgetKind;
  /** Its name, as refusals and the board say it. */
  name: string;
  /** The setting in school.yml. */
  field: string;
  agent?: string;
  crewId?: string;
  limitUsd: number;
  /** Spent against it: this UTC day, ever (the cap), or by this crew. Absent: no crew is running. */
  spentUsd?: number;
  leftUsd: number;
  reached: boolean;
}

type BudgetConfig = {
  dispatch: Pick<SchoolConfig['dispatch'], 'crewBudgetUsd' | 'dailyBudgetUsd' | 'spendCap'>;
} & {
  agents: ReadonlyArray<Pick<SchoolConfig['agents'][number], 'id' | 'dailyBudgetUsd'>>;
};

/** Daily budgets reached before a batch: the school's refuses it, an agent's keeps that agent out. */
export interface DailyBudgets {
  school?: string;
  agents: Map<string, string>;
}

export function schoolDailyName(): string {
  return 'daily budget of the school (dispatch.dailyBudgetUsd)';
}

export function agentDailyName(agent: string): string {
  return `daily budget of agent ${agent} (agents[].dailyBudgetUsd)`;
}

/** What was spent on the UTC day of `now`, in all and by agent. */
export function spentToday(
  spend: SpendState | undefined,
  now: Date,
): { usd: number; agents: Record<string, number> } {
  return spend?.days?.[utcDay(now)] ?? { usd: 0, agents: {} };
}

export function dailyBudgets(config: BudgetConfig, spend: SpendState | undefined, now: Date): DailyBudgets {
  const today = spentToday(spend, now);
  const out: DailyBudgets = { agents: new Map() };
  const school = config.dispatch.dailyBudgetUsd;
  if (school !== undefined && !(today.usd < school))
    out.school = `${schoolDailyName()} reached: ${amount(today.usd)} of ${limit(school)} USD spent today (UTC); nothing is placed until 00:00 UTC`;
  for (const a of config.agents) {
    if (a.dailyBudgetUsd === undefined) continue;
    const spent = today.agents[a.id] ?? 0;
    if (!(spent < a.dailyBudgetUsd))
      out.agents.set(
        a.id,
        `${agentDailyName(a.id)} reached: ${amount(spent)} of ${limit(a.dailyBudgetUsd)} USD spent today (UTC); next plan after 00:00 UTC`,
      );
  }
  return out;
}

/** Whether any daily budget is configured (a plan reads the ledger for it). */
export function hasDailyBudgets(config: BudgetConfig): boolean {
  return (
    config.dispatch.dailyBudgetUsd !== undefined || config.agents.some((a) => a.dailyBudgetUsd !== undefined)
  );
}

/**
 * Every budget with what it has left, for the board: the crew budget of each running crew (or the
 * budget alone while none runs), the school's daily budget, each agent's daily budget, the cap.
 */
export function budgetStandings(
  config: BudgetConfig,
  spend: SpendState | undefined,
  now: Date,
  running: readonly string[] = [],
): BudgetStanding[] {
  const out: BudgetStanding[] = [];
  const crew = config.dispatch.crewBudgetUsd;
  if (running.length === 0)
    out.push({
      kind: 'crew',
      name: 'budget of each crew',
      field: 'dispatch.crewBudgetUsd',
      limitUsd: crew,
      leftUsd: crew,
      reached: false,
    });
  for (const crewId of running) {
    const spent = spend?.crews?.[crewId]?.usd ?? 0;
    out.push(standing('crew', `budget of crew ${crewId}`, 'dispatch.crewBudgetUsd', crew, spent, { crewId }));
  }
  const today = spentToday(spend, now);
  const school = config.dispatch.dailyBudgetUsd;
  if (school !== undefined)
    out.push(
      standing('school-daily', 'daily budget of the school', 'dispatch.dailyBudgetUsd', school, today.usd),
    );
  for (const a of config.agents) {
    if (a.dailyBudgetUsd === undefined) continue;
    out.push(
      standing(
        'agent-daily',
        `daily budget of agent ${a.id}`,
        'agents[].dailyBudgetUsd',
        a.dailyBudgetUsd,
        today.agents[a.id] ?? 0,
        {
          agent: a.id,
        },
      ),
    );
  }
  const cap = config.dispatch.spendCap;
  if (cap !== undefined)
    out.push(standing('school-cap', 'school-wide cap', 'dispatch.spendCap', cap, spend?.totalUsd ?? 0));
  return out;
}

function standing(
  kind: BudgetKind,
  name: string,
  field: string,
  limitUsd: number,
  spentUsd: number,
  extra: { agent?: string; crewId?: string } = {},
): BudgetStanding {
  return {
    kind,
    name,
    field,
    ...extra,
    limitUsd,
    spentUsd,
    leftUsd: Math.max(0, limitUsd - spentUsd),
    reached: !(spentUsd < limitUsd),
  };
}

/** One line per budget: "daily budget of agent codex: 12.50 of 20 USD spent today (UTC), 7.50 left". */
export function budgetLine(b: BudgetStanding): string {
  const field = `(${b.field})`;
  if (b.spentUsd === undefined) return `${b.name} ${field}: ${limit(b.limitUsd)} USD, no crew running`;
  const when =
    b.kind === 'school-cap' ? 'spent' : b.kind === 'crew' ? 'spent by the crew' : 'spent today (UTC)';
  const left = b.reached
    ? b.kind === 'crew'
      ? 'REACHED'
      : b.kind === 'school-cap'
        ? 'REACHED, dispatch halted'
        : 'REACHED until 00:00 UTC'
    : `${amount(b.leftUsd)} left`;
  return `${b.name} ${field}: ${amount(b.spentUsd)} of ${limit(b.limitUsd)} USD ${when}, ${left}`;
}

function amount(n: number): string {
  return n.toFixed(2);
}

/** A configured limit as written (20, 12.5). */
function limit(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
}
