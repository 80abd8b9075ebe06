import type { UpstreamLimit } from '../../sandbox/index.js';
import type { CrewRegistry } from '../logs/registry.js';

/**
 * Whether a usage limit only the student claimed is the agent's (docs/dispatch.md "Launch pauses").
 * A claim — a command agent's exit 75 or report marker, a limit line in a model's answer, a CLI's
 * prose or error envelope — arrives on output a process inside the sandbox can write, and an issue's
 * text can ask the model to write it. Taken as the agent's word, one such issue would hold the agent
 * (often the school's only one) idle about an hour in every hour. So a claim pauses the agent only
 * when something the student cannot write confirms it, first found first:
 *  1. the key proxy's record of the API's own limit answer (src/sandbox/upstream-record.ts: the
 *     crew already asked it; it pauses the school);
 *  2. a crew of another issue of the same agent that reported the limit within the window
 *     (`dispatch.agentPauseMaxMinutes`): two issues' texts are not one issue's;
 *  3. a probe: the school runs the agent itself, once, as its crews run it (the same argv, login,
 *     environment, sandbox and key proxy) but in an empty scratch directory outside any worktree,
 *     with a fixed trivial prompt and no issue text (src/agents/probe.ts). Its answer being a limit too (or the API's answer to
 *     it, as the key proxy saw it) confirms; an answer confirms nothing.
 * Unconfirmed, the crew's outcome is `limit_unconfirmed`: its issue goes behind the others
 * (./order.ts) and `dispatch.maxUnconfirmedLimitClaims` of them stop it (./history.ts).
 * `dispatch.limitProbe: false` keeps the rule from before probes: every claim pauses its agent.
 */

export interface Confirmation {
  by: 'probe' | 'crews';
  /** In words, for the crew's reason and the pause. */
  said: string;
  /** The reset the probe's answer named (the CLI's limit envelope). */
  resetAt?: Date;
  /** The API's own limit answer to the probe, as the key proxy saw it: the school pauses. */
  upstream?: UpstreamLimit;
}

/**
 * A crew of another issue of `agent` that reported a usage limit its students alone saw (a claim,
 * confirmed or not) and finished within `windowMs` before `at`: the crew id, or undefined.
 */
export function corroboratingCrew(
  registry: CrewRegistry,
  c: { crewId: string; issueNumber: number; agent: string },
  at: Date,
  windowMs: number,
): string | undefined {
  const since = at.getTime() - windowMs;
  for (const other of Object.values(registry.crews)) {
    if (other.crewId === c.crewId || other.agent !== c.agent || other.issueNumber === c.issueNumber) continue;
    if (other.status !== 'finished') continue;
    if (other.outcome !== 'limit_unconfirmed' && other.outcome !== 'usage_limit') continue;
    const finished = Date.parse(other.finishedAt ?? '');
    if (Number.isFinite(finished) && finished >= since && finished <= at.getTime()) return other.crewId;
  }
  return undefined;
}

export interface ProbeResult {
  /** The probe says the agent is limited. */
  limited: boolean;
  /** How the probe ended, in words. */
  reason: string;
  resetAt?: Date;
  upstream?: UpstreamLimit;
}

/** Whom a claim holds, once confirmation was looked for. */
export type ClaimVerdict = { confirmed: Confirmation } | { unconfirmed: string };

/**
 * Looks for a confirmation of a crew's claim: corroboration by another issue's crew first (free),
 * then the probe. The key proxy's own record was read by the crew before (it pauses the school).
 */
export async function confirmClaim(o: {
  registry: CrewRegistry;
  crew: { crewId: string; issueNumber: number; agent: string };
  at: Date;
  windowMs: number;
  probe: () => Promise<ProbeResult>;
}): Promise<ClaimVerdict> {
  const other = corroboratingCrew(o.registry, o.crew, o.at, o.windowMs);
  if (other)
    return {
      confirmed: {
        by: 'crews',
        said: `crew ${other} of another issue of agent ${o.crew.agent} reported it too within the window`,
      },
    };
  const p = await o.probe();
  if (p.limited)
    return {
      confirmed: {
        by: 'probe',
        said: p.reason,
        ...(p.resetAt ? { resetAt: p.resetAt } : {}),
        ...(p.upstream ? { upstream: p.upstream } : {}),
      },
    };
  return { unconfirmed: p.reason };
}
