import type { SchoolConfig } from '../../config/schema.js';
import { resolveDeliveryMode } from '../../delivery/deliver.js';
import type { Candidate } from '../choice/order.js';
import { activeCrews, type CrewRegistry } from '../logs/registry.js';

/**
 * Back-pressure on review (docs/delivery.md, "Back-pressure"): the school opens pull requests no
 * faster than people review them. `delivery.maxOpenPullRequests` bounds the school's pull requests
 * waiting for review, `agents[].maxOpenPullRequests` one agent's. At the limit no new issue starts
 * (for the agent: that agent takes none, another eligible agent may); revisions of the open pull
 * requests still run, since they are how a waiting pull request gets reviewed and settled.
 *
 * What counts: every pull request the school delivered that a person has not merged or closed
 * (the outbox's deliveries less the feedback log's settlements, read by the caller), plus every
 * crew planned or running on a new issue (each may open one more). Planning decides under the
 * crews-log lock, so two planners never both take the last place. Branch delivery opens no pull
 * request: the limits do not apply there.
 */

/** A delivered pull request nobody merged or closed yet, and the crew whose commit it holds. */
export interface OpenPullRequest {
  issue: number;
  pr: number;
  crewId: string;
}

/** The pull requests the outbox delivered (by issue) that are not settled. */
export function openPullRequests(
  deliveries: Iterable<readonly [number, { pullRequest?: { number: number }; crewId: string }]>,
  settled: (pr: number) => boolean,
): OpenPullRequest[] {
  const out: OpenPullRequest[] = [];
  for (const [issue, d] of deliveries) {
    const pr = d.pullRequest?.number;
    if (pr !== undefined && !settled(pr)) out.push({ issue, pr, crewId: d.crewId });
  }
  return out.sort((a, b) => a.pr - b.pr);
}

/** Whether accepted work goes out as pull requests where this plan runs (the limits apply). */
export function pullRequestDelivery(config: SchoolConfig, actions: boolean): boolean {
  return resolveDeliveryMode(config.delivery, { actions }) === 'pull-request';
}

/** A crew that would open a pull request of its own: any but a revision of one already open. */
export function opensPullRequest(c: Pick<Candidate, 'revision'>): boolean {
  return !c.revision;
}

export interface ReviewCount {
  /** Delivered pull requests waiting for review. */
  waiting: number;
  /** Crews planned or running on new issues (each may open one). */
  working: number;
}

/** The review load: the school's, each agent's, and where the limits hold new work. */
export interface ReviewLoad extends ReviewCount {
  /** `delivery.maxOpenPullRequests`, when set. */
  limit?: number;
  /** The school is at its limit: no new issue starts. */
  full: boolean;
  /** Agents with pull requests waiting, crews working or a limit of their own, by id. */
  agents: Array<ReviewCount & { agent: string; limit?: number; full: boolean }>;
}

/**
 * The load over the open pull requests and the registry. An open pull request's agent is that of
 * the crew whose commit it holds; an issue with an open pull request is counted once, whatever
 * crews work on it (a revision updates the same pull request).
 */
export function reviewLoad(
  config: SchoolConfig,
  open: readonly OpenPullRequest[],
  registry: CrewRegistry,
): ReviewLoad {
  const agents = new Map<string, ReviewCount>();
  const of = (agent: string) => {
    let a = agents.get(agent);
    if (!a) agents.set(agent, (a = { waiting: 0, working: 0 }));
    return a;
  };
  const waitingIssues = new Set(open.map((p) => p.issue));
  for (const p of open) {
    const agent = registry.crews[p.crewId]?.agent;
    if (agent !== undefined) of(agent).waiting++;
  }
  const workingIssues = new Set<number>();
  for (const c of activeCrews(registry)) {
    if (c.revision || waitingIssues.has(c.issueNumber)) continue;
    workingIssues.add(c.issueNumber);
    of(c.agent).working++;
  }
  for (const a of config.agents) if (a.maxOpenPullRequests !== undefined) of(a.id);
  const limit = config.delivery.maxOpenPullRequests;
  const waiting = open.length;
  const working = workingIssues.size;
  const limits = new Map(config.agents.map((a) => [a.id, a.maxOpenPullRequests]));
  return {
    waiting,
    working,
    ...(limit !== undefined ? { limit } : {}),
    full: limit !== undefined && waiting + working >= limit,
    agents: [...agents]
      .map(([agent, n]) => {
        const own = limits.get(agent);
        return {
          agent,
          ...n,
          ...(own !== undefined ? { limit: own } : {}),
          full: own !== undefined && n.waiting + n.working >= own,
        };
      })
      .sort((a, b) => (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0)),
  };
}

/** Whether any limit is configured (a load without one only informs). */
export function limited(load: ReviewLoad): boolean {
  return load.limit !== undefined || load.agents.some((a) => a.limit !== undefined);
}

/**
 * The one line the plan's log and summary, the board and `school status` print: "waiting for
 * review: N", the limit, what is held and what frees a place.
 */
export function reviewLine(load: ReviewLoad): string {
  const prs = (n: number) => `${n} pull request${n === 1 ? '' : 's'}`;
  const parts = [`waiting for review: ${load.waiting}`];
  if (load.working > 0) parts[0] += ` (and ${load.working} new issue(s) in progress)`;
  if (load.limit !== undefined)
    parts.push(
      load.full
        ? `at the limit delivery.maxOpenPullRequests ${load.limit}: no new issue starts until one is merged or closed; revisions still run`
        : `limit delivery.maxOpenPullRequests ${load.limit}`,
    );
  const held = load.agents.filter((a) => a.full);
  if (held.length)
    parts.push(
      `held: ${held.map((a) => `agent ${a.agent} (${prs(a.waiting)} waiting${a.working ? `, ${a.working} in progress` : ''}; its maxOpenPullRequests ${a.limit})`).join(', ')} takes no new issue; other agents still do`,
    );
  return parts.join('; ');
}

/**
 * The places left for new issues in one plan, consumed as admission takes them: the first wave and
 * the standby passes (./standby.ts) share one room, so together they never pass a limit.
 */
export class ReviewRoom {
  private school: number;
  private readonly agents = new Map<string, number>();

  constructor(private readonly load: ReviewLoad) {
    this.school = load.limit !== undefined ? Math.max(0, load.limit - load.waiting - load.working) : Infinity;
    for (const a of load.agents)
      if (a.limit !== undefined) this.agents.set(a.agent, Math.max(0, a.limit - a.waiting - a.working));
  }

  /** Why no new issue may start now, or undefined while the school has room. */
  schoolHeld(): string | undefined {
    if (this.school > 0) return undefined;
    return `waiting for review: ${this.load.waiting} pull request(s)${this.load.working ? ` and ${this.load.working} new issue(s) in progress` : ''} reach delivery.maxOpenPullRequests ${this.load.limit}; a new issue starts when one is merged or closed (revisions still run)`;
  }

  /** Agents that may take no new issue now (agent id → why). */
  heldAgents(): Map<string, string> {
    const held = new Map<string, string>();
    for (const [agent, left] of this.agents) {
      if (left > 0) continue;
      const a = this.load.agents.find((x) => x.agent === agent)!;
      held.set(
        agent,
        `agent ${agent} has ${a.waiting} pull request(s) waiting for review${a.working ? ` and ${a.working} new issue(s) in progress` : ''}, its maxOpenPullRequests ${a.limit}; it takes no new issue until one is merged or closed (other agents still do)`,
      );
    }
    return held;
  }

  /** A new issue admitted for `agent`: one place fewer for the school and for the agent. */
  take(agent: string): void {
    this.school--;
    const left = this.agents.get(agent);
    if (left !== undefined) this.agents.set(agent, left - 1);
  }
}
