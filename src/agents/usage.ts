import { readUntrustedFile } from '../security/untrusted-file.js';
import { usageSchema, type Usage } from '../bookbag/schema.js';
import { finiteOr } from '../security/sanitize.js';
import { recordSpend } from '../dispatch/gates/spend.js';
import type { StateLayout } from '../state/layout.js';
import type { AgentConfig } from '../config/schema.js';
import { finiteRound, priceTokens, type TurnEnding } from './ending.js';

/**
 * Usage a student reports in the small JSON file its brief names (`SCHOOL_USAGE_FILE`):
 * `{"inputTokens": n, "outputTokens": n, "costUsd": n}`. Every field is optional; numbers go
 * through `finiteOr` (N1.3), so NaN, negatives or strings become absent, never arithmetic poison.
 * A missing or unreadable file means "no usage reported", and says why.
 */
export function readUsage(path: string): { usage?: Usage; problem?: string } {
  let raw: unknown;
  try {
    const text = readUntrustedFile(path, 64 * 1024);
    if (text === undefined) return {};
    raw = JSON.parse(text);
  } catch (e) {
    return { problem: `usage file unreadable: ${(e as Error).message.slice(0, 200)}` };
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return { problem: 'usage file is not a JSON object' };
  const r = raw as Record<string, unknown>;
  const pick = (k: string) => {
    const n = finiteOr(r[k], -1);
    return n >= 0 ? n : undefined;
  };
  const candidate = {
    inputTokens: pick('inputTokens'),
    outputTokens: pick('outputTokens'),
    cachedInputTokens: pick('cachedInputTokens'),
    costUsd: pick('costUsd'),
  };
  const parsed = usageSchema.safeParse(
    Object.fromEntries(Object.entries(candidate).filter(([, v]) => v !== undefined)),
  );
  return parsed.success ? { usage: parsed.data } : { problem: 'usage file has no usable numbers' };
}

/**
 * One `spend.recorded` event per agent turn in `spend.jsonl` — key `spend:<crew_id>` for the first
 * turn, `spend:<crew_id>:turn-<n>` for correction turn n — through the dispatch office's ledger,
 * which the spend cap reads before every batch. Idempotent: a replayed turn records nothing new.
 */
export async function recordCrewSpend(
  layout: StateLayout,
  crew: { crewId: string; issueNumber: number; agent: string },
  usage: Usage,
  turn = 0,
  o: SpendRowBounds = {},
): Promise<boolean> {
  return recordUsageSpend(layout, turn === 0 ? crew.crewId : `${crew.crewId}:turn-${turn}`, crew, usage, o);
}

/**
 * How a turn's row is bounded: `maxUsd`, what is left of the crew's budget after the turn's metered
 * spend; `meteredUsd`, the turn's metered spend (./usage-meter.ts), already in the ledger as rows of
 * its own — the row then holds only what was reported beyond it, so the turn costs the larger of the
 * two, never their sum.
 */
export interface SpendRowBounds {
  maxUsd?: number;
  meteredUsd?: number;
}

/** One `spend.recorded` row for what an agent run reported, under `key` (`spend:<key>`). */
export async function recordUsageSpend(
  layout: StateLayout,
  key: string,
  who: { crewId: string; issueNumber: number; agent: string },
  usage: Usage,
  o: SpendRowBounds = {},
): Promise<boolean> {
  const reported = usage.costUsd ?? 0;
  const metered = o.meteredUsd;
  return recordSpend(
    layout,
    key,
    {
      costUsd: metered === undefined ? reported : Math.max(0, Math.round((reported - metered) * 1e6) / 1e6),
      ...(metered === undefined ? {} : { meteredUsd: metered, reportedUsd: reported }),
      crewId: who.crewId,
      issueNumber: who.issueNumber,
      agent: who.agent,
      tokens: {
        input: usage.inputTokens ?? 0,
        output: usage.outputTokens ?? 0,
        ...(usage.cachedInputTokens ? { cachedInput: usage.cachedInputTokens } : {}),
      },
    },
    undefined,
    o.maxUsd === undefined ? {} : { maxUsd: o.maxUsd },
  );
}

/** A turn's cost as the school counts it against the crew's budget (`boundTurnCost`). */
export interface BoundedCost {
  /**
   * The usage with the cost the school counts: the larger of the metered and the reported cost, the
   * reported part beyond the metered at most what was left.
   */
  usage: Usage;
  /** The cost before the bound (priced or as reported). */
  reportedUsd: number;
  /** The reported cost was more than what was left of the budget: recorded as what was left. */
  over: boolean;
}

/**
 * A turn's cost, bounded. A command agent's cost is its student's word: where the agent has
 * `pricing`, its tokens are priced instead (codex is priced by its adapter; Claude Code prints its
 * own). Whatever the figure, the school records at most `leftUsd`, what is left of the crew's budget
 * (`dispatch.crewBudgetUsd`): a student's number can spend its own crew's budget, never the school's.
 * `meteredUsd`: what the key proxy metered of the same turn (already recorded, never bounded: the
 * API billed it). The turn costs the larger of the two; a report below the metered figure adds nothing.
 */
export function boundTurnCost(
  agent: Pick<AgentConfig, 'kind' | 'pricing'>,
  usage: Usage,
  leftUsd: number | undefined,
  meteredUsd = 0,
): BoundedCost {
  const priced =
    agent.kind === 'command' && agent.pricing
      ? priceTokens(
          {
            input: usage.inputTokens ?? 0,
            output: usage.outputTokens ?? 0,
            cachedInput: usage.cachedInputTokens,
          },
          agent.pricing,
        )
      : undefined;
  // A figure no arithmetic can use (Infinity, NaN) is taken for more than any budget, never for none.
  const figure = priced ?? usage.costUsd ?? 0;
  const reportedUsd = Number.isFinite(figure) && figure >= 0 ? figure : Number.MAX_VALUE;
  const metered = Number.isFinite(meteredUsd) && meteredUsd > 0 ? meteredUsd : 0;
  const left = leftUsd === undefined ? undefined : Math.max(0, Math.round((leftUsd - metered) * 1e6) / 1e6);
  const beyond = Math.max(0, reportedUsd - metered);
  const over = left !== undefined && beyond > left;
  const costUsd = metered ? finiteRound(metered + (over ? left : beyond)) : over ? left : reportedUsd;
  const counted = priced !== undefined || over || usage.costUsd !== undefined || metered > 0;
  return { usage: { ...usage, ...(counted ? { costUsd } : {}) }, reportedUsd, over };
}

/**
 * The agent as one turn runs it with `leftUsd` of the crew's budget: Claude Code gets it as
 * `--max-budget-usd` (./claude.ts `claudeArgv`) and stops itself there; the other kinds have no such
 * flag, and the session stops the crew after the turn whose cost passes it.
 */
export function budgetedAgent<A extends Pick<AgentConfig, 'kind'>>(
  agent: A,
  leftUsd: number | undefined,
): A & { maxBudgetUsd?: number } {
  return agent.kind === 'claude-code' && leftUsd !== undefined ? { ...agent, maxBudgetUsd: leftUsd } : agent;
}

const usd = (n: number) => `$${n.toFixed(2)}`;

/**
 * The crew's ending once its key proxy refused a request for a spent budget (./usage-meter.ts):
 * failed, with the proxy's words and what was metered against what the crew reported.
 */
export function meteredBudgetEnding(refusal: string, meteredUsd: number, reportedUsd: number): TurnEnding {
  return {
    kind: 'failed',
    reason: `${refusal}. The key proxy refused the crew's further requests: it metered ${usd(meteredUsd)} of the API's answers this turn, the crew reported ${usd(reportedUsd)}; the crew was stopped`,
  };
}

/** The crew's ending once its spend reached `dispatch.crewBudgetUsd`: failed, the budget named. */
export function budgetEnding(
  budgetUsd: number,
  spentUsd: number,
  over?: { turn: number; reportedUsd: number; leftUsd: number },
): TurnEnding {
  return {
    kind: 'failed',
    reason: over
      ? `the crew's budget dispatch.crewBudgetUsd (${usd(budgetUsd)}) is spent: turn ${over.turn} reported ${usd(over.reportedUsd)}, more than the ${usd(over.leftUsd)} left, and was recorded as what was left; the crew was stopped`
      : `the crew's budget dispatch.crewBudgetUsd (${usd(budgetUsd)}) is spent (${usd(spentUsd)} recorded): no further turn`,
  };
}
