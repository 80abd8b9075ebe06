import { randomBytes } from 'node:crypto';
import type { AgentConfig, SchoolConfig } from '../config/schema.js';
import type { ContestPlan } from '../schemas/crew.js';
import type { Admitted, Refusal } from './gates/admission.js';
import type { VerdictLookup } from './logs/history.js';
import type { Candidate } from './choice/order.js';
import type { CrewRecord } from './logs/registry.js';

/**
 * Contests for hard issues (`dispatch.contest`, docs/dispatch.md "Contests"): a coding issue at or
 * above `difficultyAtLeast` is taken by one crew of each listed agent, each in its own slot. The
 * judges pick one crew (src/grading/contest.ts); only it is delivered, the others are the contest's
 * losers.
 *
 * Planning: each contested candidate becomes one entry per agent (the agent forced), placed by
 * admission like any candidate. The entries share the issue's fences (the fence set lets an issue's
 * own claims overlap, ./fences.ts) and still fence against every other issue. A contest needs at
 * least two of its crews placed in the same plan: otherwise none is, and the issue waits with the
 * reason. Revisions and issues that name their agent are never contested.
 *
 * History: a contest is one run of its issue (./history.ts): done when a crew of it is done, one
 * failed run when none is accepted, an interruption when none ran to the end. A loss is not a
 * failure.
 */

/**
 * A contested candidate's agents: the listed ones the issue admits and nothing holds out (`held`: the
 * agents a pause holds and those over their daily budget, as admission holds them).
 */
export function contestAgents(
  config: SchoolConfig,
  c: Candidate,
  held?: ReadonlyMap<string, string>,
): string[] | undefined {
  const contest = config.dispatch.contest;
  if (!contest || c.role !== 'coding' || c.difficulty < contest.difficultyAtLeast) return undefined;
  if (c.forceAgent !== undefined || c.revision !== undefined) return undefined;
  const byId = new Map<string, AgentConfig>(config.agents.map((a) => [a.id, a]));
  const agents = contest.agents.filter((id) => {
    const a = byId.get(id);
    return (
      a !== undefined &&
      !held?.has(id) &&
      a.roles.includes(c.role) &&
      (a.domains.length === 0 || a.domains.includes(c.domain)) &&
      a.maxDifficulty >= c.difficulty
    );
  });
  return agents.length >= 2 ? agents : undefined;
}

/** The ordered candidates with each contested one replaced by its entries (adjacent, in agent order). */
export function expandContests(
  candidates: readonly Candidate[],
  config: SchoolConfig,
  held?: ReadonlyMap<string, string>,
): { candidates: Candidate[]; entries: Map<Candidate, number> } {
  const entries = new Map<Candidate, number>();
  if (!config.dispatch.contest) return { candidates: [...candidates], entries };
  const out: Candidate[] = [];
  for (const c of candidates) {
    const agents = contestAgents(config, c, held);
    if (!agents) {
      out.push(c);
      continue;
    }
    for (const agent of agents) {
      const entry: Candidate = { ...c, forceAgent: agent };
      entries.set(entry, c.issueNumber);
      out.push(entry);
    }
  }
  return { candidates: out, entries };
}

/**
 * Keeps the contests with at least two crews admitted; the entries of the others are withdrawn
 * and their issue refused once, with why. An issue's several refusals (one per entry) become one.
 */
export function completeContests(
  admitted: readonly Admitted[],
  refused: readonly Refusal[],
  entries: ReadonlyMap<Candidate, number>,
): { admitted: Admitted[]; refused: Refusal[] } {
  if (entries.size === 0) return { admitted: [...admitted], refused: [...refused] };
  const placed = new Map<number, number>();
  const wanted = new Map<number, number>();
  for (const issue of entries.values()) wanted.set(issue, (wanted.get(issue) ?? 0) + 1);
  for (const a of admitted) {
    const issue = entries.get(a.candidate);
    if (issue !== undefined) placed.set(issue, (placed.get(issue) ?? 0) + 1);
  }
  const short = new Set([...wanted.keys()].filter((i) => (placed.get(i) ?? 0) < 2));
  const keep = admitted.filter((a) => {
    const issue = entries.get(a.candidate);
    return issue === undefined || !short.has(issue);
  });
  const out: Refusal[] = [];
  const seen = new Set<number>();
  for (const r of refused) {
    if (!wanted.has(r.issue)) {
      out.push(r);
      continue;
    }
    if (seen.has(r.issue) || !short.has(r.issue)) continue;
    seen.add(r.issue);
    out.push({
      issue: r.issue,
      code: r.code,
      reason: `a contest of ${wanted.get(r.issue)} crews, ${placed.get(r.issue) ?? 0} placed (it needs at least 2 at once): ${r.reason}`,
    });
  }
  return { admitted: keep, refused: out };
}

/** Crew ids per contest of this plan, in plan order: `k<issue>-<8 hex>` → crews. */
export function contestPlans<A extends { crewId: string; issueNumber: number }>(
  assignments: readonly A[],
  contested: (a: A, index: number) => boolean,
): Map<A, ContestPlan> {
  const byIssue = new Map<number, A[]>();
  for (const [i, a] of assignments.entries()) {
    if (!contested(a, i)) continue;
    byIssue.set(a.issueNumber, [...(byIssue.get(a.issueNumber) ?? []), a]);
  }
  const out = new Map<A, ContestPlan>();
  for (const [issue, crews] of byIssue) {
    const plan = { id: `k${issue}-${randomBytes(4).toString('hex')}`, of: crews.map((a) => a.crewId) };
    for (const a of crews) out.set(a, plan);
  }
  return out;
}

/**
 * The runs of an issue with each contest folded into one (finished contests only: an issue with an
 * active crew is active). The run stands for the contest:
 *  - a crew that succeeded and was not rejected: the issue is done by it;
 *  - else a crew that counts as a failed run (`failure`, ./history.ts): the contest is one failed run;
 *  - else the contest was interrupted (nothing counted): a crew of it that is an interruption, else
 *    an infra abort, else an orphaning, so those streaks are counted once per contest.
 * Its `finishedAt` is the contest's last finish.
 */
export function contestRuns(
  crews: readonly CrewRecord[],
  failure: (c: CrewRecord) => boolean,
  verdict?: VerdictLookup,
): CrewRecord[] {
  if (!crews.some((c) => c.contest)) return [...crews];
  const groups = new Map<string, CrewRecord[]>();
  const out: CrewRecord[] = [];
  for (const c of crews) {
    if (!c.contest) out.push(c);
    else groups.set(c.contest.id, [...(groups.get(c.contest.id) ?? []), c]);
  }
  for (const members of groups.values()) {
    const last = members.reduce((m, c) => ((c.finishedAt ?? '') > m ? (c.finishedAt ?? '') : m), '');
    const done = members.find((c) => c.outcome === 'succeeded' && verdict?.(c.crewId) !== 'rejected');
    const failed = members.find(failure);
    const interrupted = members.find((c) => !c.orphaned && !c.infra);
    const stand = done ?? failed ?? interrupted ?? members.find((c) => c.infra) ?? members[0]!;
    out.push({ ...stand, ...(last ? { finishedAt: last } : {}) });
  }
  return out;
}
