import { existsSync } from 'node:fs';
import type { SpendEvent } from '../dispatch/gates/spend.js';
import type { PauseRecorded } from '../dispatch/logs/school-log.js';
import type { CrewRegistry } from '../dispatch/logs/registry.js';
import { boundText, MAX_DETAIL } from '../security/bound.js';
import { EventLog, type StateEvent } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';

/**
 * What a crew job hands on about its crews' spend and pauses is the word of a runner that ran student
 * code: a runner the student took over can write any row. The import holds those rows to what a crew
 * may do on its own runner, whatever the rows say:
 * - a crew's spend rows together are at most `dispatch.crewBudgetUsd` (rows already in the ledger
 *   count): a row past it is recorded as what was left, the figure it claimed kept as `reportedUsd`,
 *   with a `cost-over-budget` alert. A row whose amount is no number ≥ 0 is refused (it would halt
 *   dispatch: the cap could not be judged);
 * - a pause holds only that crew's agent, and lifts at most `dispatch.agentPauseMaxMinutes` after the
 *   crew's pause was recorded (or after the import, when the row says a later time), with a
 *   `pause-rescoped` alert when the row asked for more. A school-wide pause is kept only when it
 *   carries the key proxy's record of the API's own limit answer (`upstream`, src/sandbox/key-proxy.ts),
 *   and then it lifts a week after the crew at the latest, as any school-wide pause with a reset time.
 */

export interface ImportAlert {
  kind: 'cost-over-budget' | 'pause-rescoped';
  crewId: string;
  detail: string;
}

const WEEK_MS = 7 * 24 * 3600_000;
const usd = (n: number) => `$${n.toFixed(2)}`;

/** Spend per crew and the keys already in the ledger, read once per import. */
export class SpendBound {
  private readonly spent = new Map<string, number>();
  private readonly keys = new Set<string>();

  constructor(
    layout: StateLayout,
    private readonly budgetUsd: number,
  ) {
    if (!existsSync(layout.file('spend'))) return;
    for (const e of new EventLog<SpendEvent>(layout.file('spend')).read().events) {
      if (e.type !== 'spend.recorded') continue;
      this.keys.add(e.key);
      const crew = e.data?.crewId;
      const cost = e.data?.costUsd;
      if (typeof crew === 'string' && typeof cost === 'number' && Number.isFinite(cost) && cost > 0)
        this.spent.set(crew, (this.spent.get(crew) ?? 0) + cost);
    }
  }

  /** Why the row cannot be recorded at all, or undefined. */
  refusal(e: StateEvent): string | undefined {
    const cost = (e.data as { costUsd?: unknown }).costUsd;
    if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0)
      return `costUsd ${boundText(JSON.stringify(cost) ?? String(cost), 80)} is not a number ≥ 0`;
    return undefined;
  }

  /** The row as recorded (at most what is left of its crew's budget), and the alert when it was cut. */
  bound(e: StateEvent): { event: StateEvent; alert?: ImportAlert } {
    const d = e.data as unknown as SpendEvent['data'];
    const crewId = d.crewId!;
    // A row the ledger holds already is skipped by its dedup: it counts once, as it was recorded.
    if (this.keys.has(e.key)) return { event: e };
    this.keys.add(e.key);
    const spent = this.spent.get(crewId) ?? 0;
    const left = Math.max(0, Math.round((this.budgetUsd - spent) * 1e6) / 1e6);
    if (d.costUsd <= left) {
      this.spent.set(crewId, spent + d.costUsd);
      return { event: e };
    }
    this.spent.set(crewId, spent + left);
    const reportedUsd =
      typeof d.reportedUsd === 'number' && d.reportedUsd > d.costUsd ? d.reportedUsd : d.costUsd;
    return {
      event: { ...e, data: { ...d, costUsd: left, reportedUsd } },
      alert: {
        kind: 'cost-over-budget',
        crewId,
        detail: `spend row ${boundText(e.key, 120)} of crew ${crewId} claimed ${usd(d.costUsd)}, more than the ${usd(left)} left of dispatch.crewBudgetUsd (${usd(this.budgetUsd)}); recorded as ${usd(left)}`,
      },
    };
  }
}

/** A school-wide pause's evidence: the key proxy saw the API answer with a limit (see ../sandbox/key-proxy.ts). */
function upstreamEvidence(d: PauseRecorded): boolean {
  const u = d.upstream;
  return (
    !!u && typeof u === 'object' && [400, 402, 429, 503, 529].includes(u.status) && typeof u.at === 'string'
  );
}

/**
 * A crew job's pause as the import records it: its crew's agent alone, for at most `agentMaxMs`,
 * unless it is school-wide on the API's own answer. `now` is the import's time: a row cannot date
 * itself into the future to last longer.
 */
export function boundPause(
  e: StateEvent,
  registry: CrewRegistry,
  agentMaxMs: number,
  now = new Date(),
): { event: StateEvent; alert?: ImportAlert } {
  const d = e.data as unknown as PauseRecorded;
  const crewId = d.crewId!;
  const agent = registry.crews[crewId]?.agent;
  const at = Math.min(Date.parse(e.at), now.getTime());
  const named = typeof d.until === 'string' ? Date.parse(d.until) : NaN;
  const schoolWide = d.agent === undefined && upstreamEvidence(d);
  const cap = at + (schoolWide ? WEEK_MS : agentMaxMs);
  const until = Number.isFinite(named) && named <= cap ? named : cap;
  const changed: string[] = [];
  if (!schoolWide && d.agent !== agent)
    changed.push(
      d.agent === undefined ? 'it held the whole school' : `it named agent ${boundText(String(d.agent), 80)}`,
    );
  if (until !== named)
    changed.push(
      Number.isFinite(named) ? `it lasted until ${boundText(String(d.until), 80)}` : 'it named no end',
    );
  if (!changed.length) return { event: e };
  const scope = schoolWide ? 'the school' : `agent ${String(agent)} alone`;
  const data: PauseRecorded = {
    ...d,
    ...(schoolWide ? {} : { agent: agent! }),
    until: new Date(until).toISOString(),
    reason: `${d.reason} (handed on by a crew job: ${scope} waits, until ${new Date(until).toISOString()} at most)`,
  };
  return {
    event: { ...e, data: data as unknown as StateEvent['data'] },
    alert: {
      kind: 'pause-rescoped',
      crewId,
      detail: boundText(
        `pause of crew ${crewId} handed on by a crew job: ${changed.join('; ')}; recorded as a pause of ${scope} until ${new Date(until).toISOString()}`,
        MAX_DETAIL,
      ),
    },
  };
}
