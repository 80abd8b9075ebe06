import { randomBytes } from 'node:crypto';
import type { Pricing, SchoolConfig } from '../config/schema.js';
import { budgetStandings, type BudgetStanding } from '../dispatch/gates/budgets.js';
import { readSpend, recordSpend, type SpendEvent, type SpendState } from '../dispatch/gates/spend.js';
import type { MeteredUsage, MeterRefusal, ProxyMeter } from '../sandbox/index.js';
import { EventLog } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import { priceTable, priceUsage } from './pricing.js';

/**
 * A crew's meter behind its key proxy (src/sandbox/meter.ts): the school's own count of what the
 * crew spends, from the API's answers, where a student's report is only its word.
 *
 * - Each answer's usage is priced (./pricing.ts) and recorded the moment it has passed, as its own
 *   `spend.recorded` row (`source: metered`, the turn it belongs to) keyed
 *   `spend:<crew>:metered:<run>-<n>`: `<run>` is this meter's own random id, so a retried append
 *   is counted once and another runner's meter (a collected crew) never collides with it. The spend
 *   cap, the daily budgets and the board read these rows like any other.
 * - Each request is admitted first: refused (429, never sent upstream) once the crew's budget
 *   (`dispatch.crewBudgetUsd`), the school's or the agent's daily budget, or the spend cap is spent
 *   — the ledger re-read for every request, with what this meter has charged but not yet written —
 *   or once the crew has sent `sandbox.keyProxy.requestsPerMinute` requests in the last minute.
 * - A turn's self-reported cost and its metered cost are one spend: the turn's row (./usage.ts
 *   `recordCrewSpend`) holds only what the report says beyond the metered rows of that turn.
 */
export interface CrewMeterOptions {
  layout: StateLayout;
  who: { crewId: string; issueNumber: number; agent: string };
  config: {
    dispatch: Pick<SchoolConfig['dispatch'], 'crewBudgetUsd' | 'dailyBudgetUsd' | 'spendCap'>;
    agents: ReadonlyArray<Pick<SchoolConfig['agents'][number], 'id' | 'dailyBudgetUsd'>>;
    sandbox: { keyProxy: { prices: Record<string, Pricing>; requestsPerMinute: number } };
  };
  /** Records a crew alert (`model-unpriced`, `request-rate-capped`, `spend-unrecorded`). */
  alert?(kind: string, detail: string): Promise<unknown>;
  /** The clock (tests pass one: the rate cap counts a minute of it). */
  now?: () => Date;
}

const MINUTE_MS = 60_000;

export class CrewMeter implements ProxyMeter {
  private readonly run = randomBytes(6).toString('hex');
  private readonly prices: Record<string, Pricing>;
  private readonly now: () => Date;
  private seq = 0;
  private turn = 0;
  /** Charged, not yet in the ledger (or never: its append failed): counted by every admission. */
  private pendingUsd = 0;
  private readonly writes = new Set<Promise<unknown>>();
  private readonly sent: number[] = [];
  private readonly unpriced = new Set<string>();
  private rateCapped = false;
  /** Budget refusals, by turn: the session ends the crew naming the budget. */
  private readonly refusals = new Map<number, string>();

  constructor(private readonly o: CrewMeterOptions) {
    this.prices = priceTable(o.config.sandbox.keyProxy.prices);
    this.now = o.now ?? (() => new Date());
  }

  /** The turn the next answers belong to (0: the first, n: correction n). */
  beginTurn(turn: number): void {
    this.turn = turn;
  }

  /** Every request of the crew's API, whatever its path: the rate cap, then the budgets. */
  admit(): MeterRefusal | undefined {
    const now = this.now();
    const t = now.getTime();
    while (this.sent.length && this.sent[0]! <= t - MINUTE_MS) this.sent.shift();
    const rpm = this.o.config.sandbox.keyProxy.requestsPerMinute;
    if (this.sent.length >= rpm) {
      const message = `this crew sent ${this.sent.length} requests in the last minute, the most sandbox.keyProxy.requestsPerMinute (${rpm}) allows; retry later`;
      if (!this.rateCapped) {
        this.rateCapped = true;
        void this.o.alert?.('request-rate-capped', `the key proxy answered 429: ${message}`);
      }
      return { kind: 'rate', message, retryAfterSeconds: (this.sent[0]! + MINUTE_MS - t) / 1000 };
    }
    const spent = this.spentBudget(now);
    if (spent) {
      this.refusals.set(this.turn, spent);
      return { kind: 'budget', message: spent };
    }
    this.sent.push(t);
    return undefined;
  }

  charge(usage: MeteredUsage): void {
    const priced = priceUsage(usage, this.prices);
    if (priced.unknown && !this.unpriced.has(priced.unknown)) {
      this.unpriced.add(priced.unknown);
      void this.o.alert?.(
        'model-unpriced',
        `the key proxy saw model ${priced.unknown}, which sandbox.keyProxy.prices and the built-in prices do not name: its answers are priced at the most expensive ${usage.api} rate; add its price to sandbox.keyProxy.prices`,
      );
    }
    const { crewId, issueNumber, agent } = this.o.who;
    const usd = priced.usd;
    this.pendingUsd += usd;
    const key = `${crewId}:metered:${this.run}-${++this.seq}`;
    const write = recordSpend(
      this.o.layout,
      key,
      {
        costUsd: usd,
        crewId,
        issueNumber,
        agent,
        source: 'metered',
        turn: this.turn,
        ...(usage.model ? { model: usage.model } : {}),
        tokens: {
          input: usage.input,
          output: usage.output,
          ...(usage.cachedInput ? { cachedInput: usage.cachedInput } : {}),
        },
      },
      this.now(),
    ).then(
      () => {
        this.pendingUsd -= usd;
      },
      (e: unknown) =>
        // Kept as pending: the budgets still count what the API billed.
        this.o.alert?.(
          'spend-unrecorded',
          `a metered answer ($${usd.toFixed(4)}) could not be written to the spend ledger: ${(e as Error).message.slice(0, 300)}`,
        ),
    );
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  /** Waits for every charge so far to be in the ledger. */
  async settle(): Promise<void> {
    while (this.writes.size) await Promise.allSettled([...this.writes]);
  }

  /** The metered spend of one turn of the crew, from the ledger (every runner's rows), once settled. */
  async turnUsd(turn: number): Promise<number> {
    await this.settle();
    const { crewId } = this.o.who;
    let usd = 0;
    for (const e of new EventLog<SpendEvent>(this.o.layout.file('spend')).read().events) {
      const d = e.data;
      if (e.type === 'spend.recorded' && d?.source === 'metered' && d.crewId === crewId && d.turn === turn)
        usd += d.costUsd;
    }
    return Math.round(usd * 1e6) / 1e6;
  }

  /** Why the proxy refused a request of this turn for a spent budget, if it did. */
  refusedFor(turn: number): string | undefined {
    return this.refusals.get(turn);
  }

  /** The first budget spent, as the refusal says it; undefined while every one has some left. */
  private spentBudget(now: Date): string | undefined {
    const spend = withPending(readSpend(this.o.layout), this.o.who, this.pendingUsd, now);
    const reached = budgetStandings(this.o.config, spend, now, [this.o.who.crewId]).find(
      (b) => b.reached && (b.kind !== 'agent-daily' || b.agent === this.o.who.agent),
    );
    return reached ? refusalText(reached) : undefined;
  }
}

/** The ledger as it will be once this meter's pending rows are written. */
function withPending(
  s: SpendState,
  who: { crewId: string; agent: string },
  usd: number,
  now: Date,
): SpendState {
  if (usd <= 0) return s;
  const day = now.toISOString().slice(0, 10);
  const days = { ...s.days };
  const d = days[day] ?? { usd: 0, agents: {} };
  days[day] = { usd: d.usd + usd, agents: { ...d.agents, [who.agent]: (d.agents[who.agent] ?? 0) + usd } };
  const crews = { ...s.crews };
  const c = crews[who.crewId] ?? { usd: 0, day };
  crews[who.crewId] = { ...c, usd: c.usd + usd };
  return { ...s, totalUsd: s.totalUsd + usd, days, crews };
}

const usd = (n: number) => `$${n.toFixed(2)}`;

function refusalText(b: BudgetStanding): string {
  const spent = usd(b.spentUsd ?? 0);
  const of = `${spent} of ${usd(b.limitUsd)} (${b.field})`;
  switch (b.kind) {
    case 'crew':
      return `the school's budget for this crew is spent: ${of}`;
    case 'school-daily':
      return `the school's budget for today (UTC) is spent: ${of}`;
    case 'agent-daily':
      return `the school's budget for agent ${b.agent ?? '?'} today (UTC) is spent: ${of}`;
    case 'school-cap':
      return `the school's spend cap is reached: ${of}`;
  }
}
