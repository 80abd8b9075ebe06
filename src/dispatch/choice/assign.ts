import type { AgentConfig, Role } from '../../config/schema.js';
import { chooseLearning, type ChoiceWhy, type CostPriors } from './choice.js';
import type { Candidate } from './order.js';
import type { RecordBook } from './record.js';

/**
 * Who does the work and where (docs/architecture.md "Assignment", seed 003 routing).
 *
 * Agents: an agent is eligible when it takes the role, the domain (an empty domain list takes any)
 * and the difficulty. Among eligible agents the best score from the grading ledger wins; an agent
 * the ledger has not scored yet counts as NEUTRAL_SCORE, so new agents get work. Ties keep
 * configuration order. `forceAgent` is honoured only when that agent is allowed for the issue's
 * role (N4.3: a force can choose among the role's own agents, never escalate past them).
 *
 * Daemons: best fit — the smallest effective class that is at least the crew's weight — then the
 * least-loaded daemon of that class ((busy + assigned) / K), ties broken round-robin (the daemon
 * picked longest ago goes first). Each class keeps a binary heap, so a placement is O(log D).
 *
 * With `learning` (`dispatch.choice: learning` and a record book), the eligible agents are chosen
 * among by Thompson sampling on merged work per dollar instead (./choice.ts), one seeded draw per
 * issue and attempt, and the choice carries why. Eligibility and `forceAgent` are the same.
 */

/** Score of an agent for a context, from the grading ledger (EMA in [0, 1]); undefined = unscored. */
export type ScoreLookup = (
  agent: string,
  context: { role: Role; domain: string; difficulty: number },
) => number | undefined;

/** Prior for an agent without a score, in the middle of the EMA range. */
export const NEUTRAL_SCORE = 0.5;

export type AgentChoice =
  { agent: string; why?: ChoiceWhy } | { code: 'force-agent-not-allowed' | 'no-agent'; reason: string };

/** Learning choice: the records and the configured seed (`dispatch.choiceSeed`). */
export interface LearningChoice {
  records: RecordBook;
  seed: number;
}

/** What a chooser is asked about: the issue's cell, a force, and (for a learning draw) issue and attempt. */
export type Chosen = Pick<Candidate, 'role' | 'domain' | 'difficulty' | 'forceAgent'> &
  Partial<Pick<Candidate, 'issueNumber' | 'attempt'>>;

/**
 * The agent choice, behind one interface: the plan's predictions, admission and the simulator
 * (lab/simulate, `school-simulate --learning`) all ask a `Chooser` made by `chooserFor`, so the
 * greedy rule and the learning one are the product's code wherever a choice is measured.
 */
export interface Chooser {
  choose(c: Chosen): AgentChoice;
}

/** How an agent is chosen: by the top score (`scores`), or, given `learning`, by the records. */
export interface ChoiceRule {
  scores?: ScoreLookup;
  /** `dispatch.choice: learning`: choose by the records (./choice.ts) instead of the top score. */
  learning?: LearningChoice;
}

/**
 * The rule a school's configuration and records make: `dispatch.choice: learning` with its
 * `choiceSeed` chooses by `records` when they were read (the ledger could be read); otherwise, and
 * under `dispatch.choice: greedy`, by the top score (no scores: configuration order).
 */
export function choiceRule(
  dispatch: { choice: 'learning' | 'greedy'; choiceSeed: number },
  read: { scores?: ScoreLookup | undefined; records?: RecordBook | undefined },
): ChoiceRule {
  return {
    scores: read.scores,
    ...(dispatch.choice === 'learning' && read.records
      ? { learning: { records: read.records, seed: dispatch.choiceSeed } }
      : {}),
  };
}

/** A chooser among `agents` (configuration order) by `rule`. */
export function chooserFor(agents: readonly AgentConfig[], rule: ChoiceRule = {}): Chooser {
  return new AgentChooser(agents, rule.scores, rule.learning);
}

class AgentChooser implements Chooser {
  private readonly cache = new Map<string, AgentChoice>();
  private priors: CostPriors | undefined;

  constructor(
    private readonly agents: readonly AgentConfig[],
    private readonly scores?: ScoreLookup,
    private readonly learning?: LearningChoice,
  ) {}

  choose(c: Chosen): AgentChoice {
    // A learning draw is per issue and attempt; the greedy rule is the same for a whole cell.
    const cell = c.role + '\u0000' + c.domain + '\u0000' + c.difficulty;
    const key =
      c.forceAgent !== undefined
        ? cell + '\u0000' + c.forceAgent
        : this.learning
          ? cell + '\u0000' + c.issueNumber + '\u0000' + c.attempt
          : cell;
    let choice = this.cache.get(key);
    if (!choice) {
      choice =
        c.forceAgent !== undefined
          ? this.forced(c.forceAgent, c.role)
          : this.learning
            ? this.drawn(c, this.learning)
            : this.best(c);
      this.cache.set(key, choice);
    }
    return choice;
  }

  private eligible(c: Pick<Candidate, 'role' | 'domain' | 'difficulty'>): AgentConfig[] {
    return this.agents.filter(
      (a) =>
        a.roles.includes(c.role) &&
        (a.domains.length === 0 || a.domains.includes(c.domain)) &&
        a.maxDifficulty >= c.difficulty,
    );
  }

  private drawn(c: Chosen, learning: LearningChoice): AgentChoice {
    const picked = chooseLearning(
      learning.records,
      this.eligible(c).map((a) => a.id),
      {
        issueNumber: c.issueNumber ?? 0,
        attempt: c.attempt ?? 1,
        domain: c.domain,
        difficulty: c.difficulty,
      },
      learning.seed,
      this.costPriors(),
    );
    return picked ?? this.none(c);
  }

  /** What the configuration says each agent's crew roughly costs (`agents[].expectedCostUsd`). */
  private costPriors(): CostPriors | undefined {
    const given = this.agents.filter((a) => a.expectedCostUsd !== undefined);
    if (given.length === 0) return undefined;
    return (this.priors ??= Object.fromEntries(given.map((a) => [a.id, a.expectedCostUsd!])));
  }

  private forced(id: string, role: Role): AgentChoice {
    const agent = this.agents.find((a) => a.id === id);
    if (!agent) {
      return {
        code: 'force-agent-not-allowed',
        reason: `forceAgent "${id}" is not a configured agent (known: ${this.agents.map((a) => a.id).join(', ')})`,
      };
    }
    if (!agent.roles.includes(role)) {
      return {
        code: 'force-agent-not-allowed',
        reason: `forceAgent "${id}" is not allowed for role ${role} (it takes: ${agent.roles.join(', ')}); a forced agent never widens what a role may do`,
      };
    }
    return { agent: id };
  }

  private best(c: Pick<Candidate, 'role' | 'domain' | 'difficulty'>): AgentChoice {
    let best: { id: string; score: number } | undefined;
    for (const a of this.eligible(c)) {
      const raw = this.scores?.(a.id, { role: c.role, domain: c.domain, difficulty: c.difficulty });
      const score = typeof raw === 'number' && Number.isFinite(raw) ? raw : NEUTRAL_SCORE;
      if (!best || score > best.score) best = { id: a.id, score };
    }
    if (best) return { agent: best.id };
    return this.none(c);
  }

  private none(c: Pick<Candidate, 'role' | 'domain' | 'difficulty'>): AgentChoice {
    if (this.agents.length === 0) return { code: 'no-agent', reason: NO_AGENTS };
    return {
      code: 'no-agent',
      reason: `no configured agent takes role ${c.role}, domain ${c.domain} at difficulty ${c.difficulty}`,
    };
  }
}

/** What a school with no agents says instead of dispatching. */
export const NO_AGENTS =
  'no agents are configured: add one to school.yml (agents: [{id: claude, kind: claude-code, passEnv: [ANTHROPIC_API_KEY]}], kind codex, or a command) or run `school init`';

/** A daemon as the placer sees it: how much it may still take this cycle. */
export interface PlacerDaemon {
  id: string;
  /** Index of its effective class (light = 0 … xl = 3). */
  rank: number;
  slots: number;
  busy: number;
  /** Crews it may still take this cycle (K × waves − busy). */
  capacity: number;
}

interface Entry {
  d: PlacerDaemon;
  assigned: number;
  /** Round-robin: when it was last picked (unpicked daemons keep configuration order). */
  seq: number;
}

function before(a: Entry, b: Entry): boolean {
  // Compare load ratios without division: (busy_a + n_a) / K_a < (busy_b + n_b) / K_b.
  const la = (a.d.busy + a.assigned) * b.d.slots;
  const lb = (b.d.busy + b.assigned) * a.d.slots;
  return la !== lb ? la < lb : a.seq < b.seq;
}

class Heap {
  private readonly items: Entry[] = [];
  get size(): number {
    return this.items.length;
  }
  push(e: Entry): void {
    const h = this.items;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): Entry | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** Best-fit, least-loaded, round-robin placement over one pool of daemons. */
export class DaemonPlacer {
  private readonly heaps: Heap[];
  private seq = 0;

  constructor(daemons: readonly PlacerDaemon[], classes = 4) {
    this.heaps = Array.from({ length: classes }, () => new Heap());
    daemons.forEach((d, i) => {
      if (d.capacity > 0) this.heaps[d.rank]!.push({ d, assigned: 0, seq: i - daemons.length });
    });
  }

  /** The daemon for a crew of class `rank`, or undefined when no daemon of that class or above has room. */
  place(rank: number): string | undefined {
    for (let c = rank; c < this.heaps.length; c++) {
      const heap = this.heaps[c]!;
      const e = heap.pop();
      if (!e) continue;
      e.assigned++;
      e.seq = ++this.seq;
      if (e.assigned < e.d.capacity) heap.push(e);
      return e.d.id;
    }
    return undefined;
  }
}
