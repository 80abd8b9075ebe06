import type { AgentConfig, DispatchOrder } from '../../src/config/schema.js';
import { admit, type AdmissionDaemon, type AdmissionInput } from '../../src/dispatch/gates/admission.js';
import { admitStandby, sharedEligible, jobRepair } from '../../src/dispatch/gates/standby.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { orderCandidates, type Candidate } from '../../src/dispatch/choice/order.js';
import { Predictor } from '../../src/dispatch/choice/predict.js';
import { RecordBook, type LedgerCounts, type RecordCrew } from '../../src/dispatch/choice/record.js';
import type { CrewRecord } from '../../src/dispatch/logs/registry.js';
import type { CrewOutcome } from '../../src/schemas/crew.js';
import type { FreeDaemon, Office } from './ours.js';
import type { NextStep, ReadyItem } from './policy.js';
import type { RunOutcome, SimIssue } from './workload.js';

/**
 * The simulator's door into the real dispatch office (src/dispatch): `orderCandidates` orders,
 * `admit` admits and assigns (global cap, class ladder, best-fit-decreasing, least-loaded,
 * round-robin, pause gate), `issueStates` decides repair / stop / done from a crew history. Nothing
 * here re-decides: it translates simulator items into office inputs and the answers back.
 *
 * What the simulation holds fixed: one agent that takes every role, every daemon online with ample
 * disk, no spend cap, no fences, a job-time budget of one wave — the dimensions under study are
 * order, refill, classes and the failure lifecycle.
 */
export const AGENT: AgentConfig = {
  id: 'sim-student',
  kind: 'command',
  command: ['true'],
  args: [],
  roles: ['coding', 'research', 'triage', 'docs'],
  domains: [],
  maxDifficulty: 5,
  trust: 'standard',
  passEnv: [],
  keyProxy: 'auto',
};
const EPOCH = Date.UTC(2026, 0, 1);
const iso = (minutes: number) => new Date(EPOCH + minutes * 60_000).toISOString();

const OUTCOME: Record<RunOutcome, CrewOutcome> = {
  success: 'succeeded',
  failure: 'failed',
  usage_limit: 'usage_limit',
};

export interface OfficeOptions {
  /** Slots per daemon (K), for the office's least-loaded ratio. */
  slotsPerDaemon: number;
  /** Total slots: the global cap `maxCrews`. */
  totalSlots: number;
  /** `dispatch.order`; absent: smallest-first (the configuration defaults to tail-guard). */
  order?: DispatchOrder;
  /**
   * Predictions from the records, as the plan makes them (dispatch/choice/predict.ts): the office keeps a
   * score ledger and crew log of every run that ended — those of `history` (earlier cycles, ended
   * before minute 0) and the backlog's own as they end — and gives each candidate the predicted
   * minutes and, with `risk`, the chance of a repair of its agent × domain × difficulty. Absent:
   * every candidate is its size estimate, as before predictions.
   */
  predictions?: { history: readonly SimIssue[]; risk: boolean };
  /** Tail-guard's quick cut over the curriculum (order.ts `quickCut`): every issue of the backlog. */
  quickMinutes?: number;
}

/** An Actions plan's clock, in virtual minutes: the job it plans for, and what sizes the standby. */
export interface StandbyTime {
  jobMinutes: number;
  crewTimeoutMinutes: number;
  gradingReserveMinutes: number;
  /** The typical crew (75th percentile of recent runs): the last crew a slot starts. */
  typicalMinutes: number;
}

export interface SimOffice extends Office {
  afterRun(item: ReadyItem, outcome: RunOutcome, now: number): NextStep;
  /** After `afterRun`: does the crew job that ran `item` plan its repair itself (standby.ts `jobRepair`)? */
  jobRepair(item: ReadyItem): boolean;
  /**
   * An Actions plan (plan.ts `decide` with `standby`): the first wave onto the free slots, then the
   * real standby pass (dispatch/gates/standby.ts `admitStandby`) behind it. Item id → daemon for each,
   * and for each standby crew the daemons whose crew jobs may claim it (standby.ts `sharedEligible`,
   * the plan's `eligible`: docs/dispatch.md, "One queue per run"), its planned daemon first.
   */
  planStandby(
    candidates: readonly ReadyItem[],
    daemons: readonly FreeDaemon[],
    time: StandbyTime,
    backlogSize?: number,
  ): { first: Map<string, string>; standby: Map<string, string>; eligible: Map<string, string[]> };
}

export function createOffice(options: OfficeOptions): SimOffice {
  return new SimulatedOffice(options);
}

/** The real dispatch code behind the simulator's `Office` seam, with a crew history per issue. */
class SimulatedOffice implements SimOffice {
  private readonly history = new Map<number, Record<string, CrewRecord>>();
  private readonly records?: SimRecords;

  constructor(private readonly options: OfficeOptions) {
    if (options.predictions) this.records = new SimRecords(options.predictions.history);
  }

  order(items: readonly ReadyItem[]): ReadyItem[] {
    const byIssue = new Map(items.map((i) => [i.issue.number, i]));
    return orderCandidates(items.map((i) => this.candidate(i))).map((c) => byIssue.get(c.issueNumber)!);
  }

  /** An item as the office's candidate, with the predictions of the records when they are kept. */
  private candidate(item: ReadyItem): Candidate {
    const c = candidateOf(item);
    if (!this.records) return c;
    const p = this.records.predictor().predict(c.size, AGENT.id, c.domain, c.difficulty);
    if (p.minutes !== undefined) c.predicted = p.minutes;
    if (this.options.predictions?.risk && p.pFail !== undefined) c.pFail = p.pFail;
    return c;
  }

  place(
    _now: number,
    candidates: readonly ReadyItem[],
    daemons: readonly FreeDaemon[],
    paused?: string,
    backlogSize?: number,
  ): Map<string, string> {
    const byIssue = new Map(candidates.map((i) => [i.issue.number, i]));
    const decision = admit(this.admission(candidates, daemons, paused, backlogSize));
    const placed = new Map<string, string>();
    for (const a of decision.admitted) placed.set(byIssue.get(a.candidate.issueNumber)!.id, a.daemon);
    return placed;
  }

  planStandby(
    candidates: readonly ReadyItem[],
    daemons: readonly FreeDaemon[],
    time: StandbyTime,
    backlogSize?: number,
  ): { first: Map<string, string>; standby: Map<string, string>; eligible: Map<string, string[]> } {
    const byIssue = new Map(candidates.map((i) => [i.issue.number, i]));
    const input: AdmissionInput = {
      ...this.admission(candidates, daemons, undefined, backlogSize),
      time: {
        remainingMs: time.jobMinutes * 60_000,
        crewTimeoutMs: time.crewTimeoutMinutes * 60_000,
        gradingReserveMs: time.gradingReserveMinutes * 60_000,
        maxWaves: 1,
      },
    };
    const decision = admit(input);
    const standby = admitStandby(
      input,
      decision,
      time.typicalMinutes * 60_000,
      this.options.order ?? 'smallest-first',
    );
    const ids = (list: typeof decision.admitted) =>
      new Map(list.map((a) => [byIssue.get(a.candidate.issueNumber)!.id, a.daemon]));
    const eligible = sharedEligible(input, decision, standby.standby);
    return {
      first: ids(decision.admitted),
      standby: ids(standby.standby),
      eligible: new Map(
        standby.standby.map((a, i) => [byIssue.get(a.candidate.issueNumber)!.id, eligible[i]!]),
      ),
    };
  }

  private admission(
    candidates: readonly ReadyItem[],
    daemons: readonly FreeDaemon[],
    paused?: string,
    backlogSize?: number,
  ): AdmissionInput {
    const { options } = this;
    const free = daemons.reduce((s, d) => s + d.free, 0);
    return {
      // With predictions the candidates are the whole backlog (the deployed loop passes it whole)
      // and the order sums their expected work itself; the caller's sum is of size estimates.
      candidates: orderCandidates(
        candidates.map((c) => this.candidate(c)),
        {
          order: options.order ?? 'smallest-first',
          slots: options.totalSlots,
          ...(backlogSize !== undefined && !this.records ? { backlogSize } : {}),
          ...(options.quickMinutes !== undefined ? { quickMinutes: options.quickMinutes } : {}),
        },
      ),
      daemons: daemons.map((d) => admissionDaemon(d, options.slotsPerDaemon)),
      agents: [AGENT],
      limits: {
        maxCrews: options.totalSlots,
        activeCrews: options.totalSlots - free,
        minFreeDiskBytes: 0,
        maxFallbacks: 0,
      },
      heldFences: [],
      time: { remainingMs: 2 * 60_000, crewTimeoutMs: 60_000, gradingReserveMs: 0, maxWaves: 1 },
      spend: { spentUsd: 0 },
      ...(paused !== undefined ? { holds: { paused } } : {}),
    };
  }

  jobRepair(item: ReadyItem): boolean {
    const crews = this.history.get(item.issue.number) ?? {};
    return jobRepair({ crews, leases: {} }, crewIdOf(item)) !== undefined;
  }

  /** Records the run as a finished crew and lets the office's history say what follows. */
  afterRun(item: ReadyItem, outcome: RunOutcome, now: number): NextStep {
    const n = item.issue.number;
    const crews = this.history.get(n) ?? {};
    this.history.set(n, crews);
    const crewId = crewIdOf(item);
    crews[crewId] = {
      crewId,
      issueNumber: n,
      daemon: 'sim',
      agent: AGENT.id,
      weight: item.issue.weight,
      fences: [],
      attempt: item.attempt,
      repair: item.repair,
      status: 'finished',
      plannedAt: iso(now),
      finishedAt: iso(now),
      outcome: OUTCOME[outcome],
      // The simulator's usage limits are the API's (they pause the school): the key proxy saw them.
      ...(outcome === 'usage_limit' ? { upstream: { status: 429, at: iso(now) } } : {}),
    };
    this.records?.ended(item.issue, item.run, now);
    const state = issueStates({ crews, leases: {} }).get(n);
    switch (state?.kind) {
      case 'done':
        return { kind: 'done' };
      case 'stopped':
        return { kind: 'stopped', reason: 'repair-stopped-after-two-failures' };
      case 'repair':
        return { kind: 'backlog', attempt: state.attempt, repair: true };
      case 'ready':
        return { kind: 'backlog', attempt: 1, repair: false };
      default:
        throw new Error(
          `dispatch history reports issue #${n} as ${state?.kind ?? 'unknown'} after its run ended`,
        );
    }
  }
}

/**
 * The office's records as the school keeps them: a score ledger's counts (a run that ended with a
 * success is graded and accepted, a failure graded and not accepted, a usage limit not graded) and a
 * crew log with each crew's minutes, folded into the record book (dispatch/choice/record.ts) whenever a
 * prediction is asked after a run ended.
 */
class SimRecords {
  private readonly cells: Record<string, LedgerCounts['cells'][string]> = {};
  private readonly crews: RecordCrew[] = [];
  private readonly issues = new Map<number, SimIssue>();
  private cached?: Predictor;

  constructor(history: readonly SimIssue[]) {
    // Earlier cycles ended before minute 0: each run back to back, ending at minute 0.
    for (const issue of history) {
      let end = -issue.runs.reduce((s, r) => s + r.duration, 0);
      for (let run = 0; run < issue.runs.length; run++) {
        end += issue.runs[run]!.duration;
        this.ended(issue, run, end);
      }
    }
  }

  ended(issue: SimIssue, run: number, at: number): void {
    const r = issue.runs[run]!;
    this.issues.set(issue.number, issue);
    const cell = cellOf(issue);
    const crewId = `c${issue.number}-${String(run).padStart(8, '0')}`;
    this.crews.push({
      crewId,
      issueNumber: issue.number,
      agent: AGENT.id,
      status: 'finished',
      startedAt: iso(at - r.duration),
      finishedAt: iso(at),
      outcome: OUTCOME[r.outcome],
      choice: cell,
    });
    if (r.outcome !== 'usage_limit') {
      const k = `${AGENT.id}|${cell.domain}|${cell.difficulty}`;
      const c = (this.cells[k] ??= { agent: AGENT.id, ...cell, count: 0, accepted: 0 });
      c.count += 1;
      if (r.outcome === 'success') c.accepted += 1;
    }
    this.cached = undefined;
  }

  predictor(): Predictor {
    this.cached ??= new Predictor(
      new RecordBook({
        ledger: { cells: this.cells },
        crews: this.crews,
        cellOf: (n) => {
          const issue = this.issues.get(n);
          return issue ? { ...cellOf(issue), size: issue.size } : undefined;
        },
      }),
    );
    return this.cached;
  }
}

function cellOf(issue: SimIssue): { domain: string; difficulty: number } {
  return { domain: issue.domain ?? 'general', difficulty: issue.difficulty ?? 2 };
}

export function crewIdOf(item: ReadyItem): string {
  return `c${item.issue.number}-${String(item.run).padStart(8, '0')}`;
}

function candidateOf(item: ReadyItem): Candidate {
  return {
    issueNumber: item.issue.number,
    role: 'coding',
    ...cellOf(item.issue),
    weight: item.issue.weight,
    fences: [],
    priority: item.issue.priority,
    size: item.issue.size,
    repair: item.repair,
    attempt: item.repair ? 2 : 1,
  };
}

/** A free daemon as admission sees it: online, its class as declared, disk never the limit. */
function admissionDaemon(d: FreeDaemon, slots: number): AdmissionDaemon {
  return {
    id: d.id,
    labels: [],
    slots,
    classroom: 'worktree',
    declaredClass: d.class,
    effectiveClass: d.class,
    online: true,
    freeDiskBytes: Number.MAX_SAFE_INTEGER,
    busy: d.busy,
  };
}
