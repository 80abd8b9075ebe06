import { randomBytes } from 'node:crypto';
import type { DispatchOrder, SchoolConfig } from '../../config/schema.js';
import type { CrewEvent, LeaseOwner } from '../../schemas/crew.js';
import { event } from '../../state/event-log.js';
import { foldLog } from '../../state/fold.js';
import type { StateLayout } from '../../state/layout.js';
import { admit, type AdmissionInput, type AdmissionResult, type Admitted } from './admission.js';
import { issueStates, type Requeues, type VerdictLookup } from '../logs/history.js';
import { expectedMinutes, predictedMinutes, tailGuardThreshold } from '../choice/order.js';
import { crewFold, crewLog, type CrewRegistry } from '../logs/registry.js';
import { readSchool } from '../logs/school-log.js';

/**
 * Standby crews for Actions crew jobs. A crew job works on its own copy of the state and cannot take
 * new work from the office while it runs (another daemon's job could take the same issue), so the
 * plan gives each daemon, behind its first wave, crews on standby that only that daemon's job may
 * start: when one of its slots frees and a crew timeout plus the grading reserve still fit. Standby
 * is planned with the same admission as the first wave (agents, fences, spend cap, pauses, class
 * and disk), recorded as `crew.planned` with `queued: true` (the field's name on disk), and so the
 * standby crews of two daemons never share an issue. What a job could not start is cancelled by
 * the next plan (an interruption: the issue is simply planned again).
 *
 * - Concurrency: a daemon's job runs at most as many crews at once as its first wave (≤ its slots),
 *   so `maxCrews` holds across jobs; for the cap, a daemon counts as min(its slots, its active
 *   crews), standby ones included (`capUsage`).
 * - Depth and balance: the first crew of a slot may take the whole crew timeout; behind it each
 *   daemon gets predicted work (size × the records' miss, ./predict.ts) for the time its job may still start
 *   crews, balanced across daemons (`admitStandby`). The typical crew duration seen so far
 *   (`typicalCrewMs`, the 75th percentile of recent runs) sizes the last crew a slot starts.
 *   Over-planning costs nothing paid: an unstarted crew only waits for the next plan.
 */

/** Crews counted against `maxCrews`: per daemon at most its slots (a daemon never runs more). */
export function capUsage(registry: CrewRegistry, config: SchoolConfig): number {
  const slots = new Map(config.fleet.daemons.map((d) => [d.id, d.worktrees]));
  const perDaemon = new Map<string, number>();
  for (const c of Object.values(registry.crews)) {
    if (c.status === 'finished') continue;
    perDaemon.set(c.daemon, (perDaemon.get(c.daemon) ?? 0) + 1);
  }
  let n = 0;
  for (const [daemon, count] of perDaemon) n += Math.min(count, slots.get(daemon) ?? count);
  return n;
}

const RECENT = 50;
const MIN_SAMPLES = 5;
const FLOOR_MS = 60_000;

/**
 * The 75th percentile of the last 50 crews' run times (start to finish), at least a minute; the
 * crew timeout until five crews have finished.
 */
export function typicalCrewMs(registry: CrewRegistry, crewTimeoutMs: number): number {
  // The last RECENT runs by finish time, kept in one pass (a year of history is not sorted per plan).
  const recent: Array<{ at: string; ms: number }> = [];
  for (const c of Object.values(registry.crews)) {
    if (!c.startedAt || !c.finishedAt || c.outcome === 'cancelled') continue;
    if (recent.length === RECENT && c.finishedAt <= recent[0]!.at) continue;
    const ms = Date.parse(c.finishedAt) - Date.parse(c.startedAt);
    if (!Number.isFinite(ms) || ms < 0) continue;
    let i = recent.findIndex((r) => r.at > c.finishedAt!);
    if (i < 0) i = recent.length;
    recent.splice(i, 0, { at: c.finishedAt, ms });
    if (recent.length > RECENT) recent.shift();
  }
  const runs = recent.map((r) => r.ms).sort((a, b) => a - b);
  if (runs.length < MIN_SAMPLES) return crewTimeoutMs;
  const p75 = runs[Math.min(runs.length - 1, Math.ceil(runs.length * 0.75) - 1)]!;
  return Math.min(crewTimeoutMs, Math.max(FLOOR_MS, p75));
}

/**
 * The standby pass: after `first` admitted a first wave, admit more of the refused candidates onto
 * the daemons that got one, balancing predicted work (./order.ts `predictedMinutes`), not counts.
 * A daemon's job may start crews while a crew timeout plus the grading reserve still fit, so each of
 * its first-wave slots starts another crew while the work queued before it (each crew's predicted
 * work, at most a crew timeout) ends within L = remaining − crew timeout − reserve: a daemon takes
 * standby while its load is under (its first-wave crews) × L, its load starting at the predicted
 * work of its first wave; the last crew it takes may run past L.
 * Rounds: every daemon whose load per slot is within one typical crew of the lightest one and
 * still under budget takes the next candidate admission gives it (one slot each, the same rules
 * as the first wave); a daemon that gets nothing has nothing left it may run. So daemons run dry
 * together instead of one working through a queue of long issues while the others sit done.
 * Candidates still refused keep the first pass's reason. O(rounds × n) for n candidates; a round
 * places a crew on every daemon offered.
 */
export function admitStandby(
  input: AdmissionInput,
  first: AdmissionResult,
  typicalMs: number,
  order?: DispatchOrder,
): { standby: Admitted[]; refused: AdmissionResult['refused'] } {
  const allowance = new Map<string, number>();
  const load = new Map<string, number>();
  // No crew holds its slot longer than the crew timeout, whatever its issue's estimate says.
  const work = (c: Admitted['candidate']) => Math.min(predictedMinutes(c), input.time.crewTimeoutMs / 60_000);
  for (const a of first.admitted) {
    allowance.set(a.daemon, (allowance.get(a.daemon) ?? 0) + 1);
    load.set(a.daemon, (load.get(a.daemon) ?? 0) + work(a.candidate));
  }
  const refusedIssues = new Set(first.refused.map((r) => r.issue));
  let rest = input.candidates.filter((c) => refusedIssues.has(c.issueNumber));
  const typical = typicalMs / 60_000;
  const horizon = (input.time.remainingMs - input.time.crewTimeoutMs - input.time.gradingReserveMs) / 60_000;
  if (allowance.size === 0 || rest.length === 0 || horizon < 0)
    return { standby: [], refused: first.refused };
  // A slot starts its next crew only while the work before it ends within the horizon (the job
  // starts no crew once a crew timeout and the reserve no longer fit).
  const budget = (d: string) => allowance.get(d)! * horizon;
  const perSlot = (d: string) => load.get(d)! / allowance.get(d)!;
  const open = new Set([...allowance.keys()].filter((d) => load.get(d)! < budget(d)));
  const held = [
    ...input.heldFences,
    ...first.admitted.map((a) => ({
      fences: a.candidate.fences,
      holder: `issue #${a.candidate.issueNumber} (admitted this batch)`,
    })),
  ];
  let fallbacks = Math.max(0, input.limits.maxFallbacks - first.admitted.filter((a) => a.fallback).length);
  const standby: Admitted[] = [];
  while (open.size > 0 && rest.length > 0) {
    const lightest = Math.min(...[...open].map(perSlot));
    const offered = new Set([...open].filter((d) => perSlot(d) <= lightest + typical));
    const round = admitOneEach(input, rest, offered, held, fallbacks);
    const got = new Set(round.admitted.map((a) => a.daemon));
    for (const d of offered) if (!got.has(d)) open.delete(d);
    if (round.admitted.length === 0) break;
    const taken = new Set(round.admitted.map((a) => a.candidate.issueNumber));
    rest = rest.filter((c) => !taken.has(c.issueNumber));
    for (const a of round.admitted) {
      standby.push(a);
      if (a.fallback) fallbacks = Math.max(0, fallbacks - 1);
      held.push({
        fences: a.candidate.fences,
        holder: `issue #${a.candidate.issueNumber} (admitted this batch)`,
      });
      load.set(a.daemon, load.get(a.daemon)! + work(a.candidate));
      if (load.get(a.daemon)! >= budget(a.daemon)) open.delete(a.daemon);
    }
  }
  const standbyIssues = new Set(standby.map((a) => a.candidate.issueNumber));
  return {
    standby: order === 'tail-guard' ? sequence(standby, allowance) : standby,
    refused: first.refused.filter((r) => !standbyIssues.has(r.issue)),
  };
}

/**
 * One queue per run (docs/dispatch.md): the daemons whose crew jobs may run each standby crew, the
 * planned daemon first. A crew job exists for every daemon that got a first-wave crew; of those, a
 * daemon is listed when admission would place this crew on it alone — the same agent, class and
 * weight, classroom kind (no new fallback), free disk — with fences checked against the crews the
 * state already holds. The other crews of this batch are left out on purpose: the shared crews are
 * claimed one at a time, and a crew job only ever runs crews whose fences the plan kept disjoint.
 */
export function sharedEligible(
  input: AdmissionInput,
  first: AdmissionResult,
  standby: Admitted[],
): string[][] {
  const jobs = [...new Set(first.admitted.map((a) => a.daemon))];
  return standby.map((a) => {
    const others = jobs.filter((d) => d !== a.daemon && admitsOn(input, a, d));
    return [a.daemon, ...others];
  });
}

/** Whether admission alone would place `a`'s crew, with its agent, on `daemon`. */
function admitsOn(input: AdmissionInput, a: Admitted, daemon: string): boolean {
  // Fences against the state's crews only (see above).
  const r = admitOneEach(input, [a.candidate], new Set([daemon]), input.heldFences, a.fallback ? 1 : 0);
  const placed = r.admitted[0];
  return (
    placed !== undefined &&
    placed.daemon === daemon &&
    placed.agent === a.agent &&
    placed.fallback === a.fallback
  );
}

/**
 * Admission asked for at most one crew on each of the `offered` daemons (one free slot each, the
 * others full). Concurrency is the first wave's: standby adds waiting crews, not running ones. The
 * time gate is the standby work budget, not admission's: a standby crew starts only while a crew
 * timeout and the reserve fit, which the crew job checks at launch.
 */
function admitOneEach(
  input: AdmissionInput,
  candidates: AdmissionInput['candidates'],
  offered: ReadonlySet<string>,
  heldFences: AdmissionInput['heldFences'],
  maxFallbacks: number,
): AdmissionResult {
  return admit({
    ...input,
    candidates,
    daemons: input.daemons.map((d) =>
      offered.has(d.id) ? { ...d, slots: 1, busy: 0 } : { ...d, busy: Number.MAX_SAFE_INTEGER },
    ),
    limits: { ...input.limits, maxCrews: Number.MAX_SAFE_INTEGER, activeCrews: 0, maxFallbacks },
    heldFences,
    time: { remainingMs: 1, crewTimeoutMs: 1, gradingReserveMs: 0, maxWaves: 1 },
  });
}

/**
 * Tail-guard over a daemon's own standby: its job starts them in the order planned, so the rule
 * the office applies to a shrinking backlog (./order.ts) is applied here to the daemon's queue as it
 * will shrink. At each place, a crew predicted at ≥ β × the queue's remaining work per slot goes
 * next (the longest such of the priority at the head); otherwise the next in admission order.
 * Repairs keep the front. Each daemon's crews keep their places in the list; only their order changes. O(n²)
 * per daemon, n its standby crews.
 */
function sequence(standby: Admitted[], slots: ReadonlyMap<string, number>): Admitted[] {
  const byDaemon = new Map<string, Admitted[]>();
  for (const a of standby) byDaemon.set(a.daemon, [...(byDaemon.get(a.daemon) ?? []), a]);
  const next = new Map<string, Admitted[]>();
  for (const [daemon, list] of byDaemon) {
    const rest = [...list];
    let work = rest.reduce((w, a) => w + expectedMinutes(a.candidate), 0);
    const out: Admitted[] = [];
    while (rest.length > 0) {
      const threshold = tailGuardThreshold(work, slots.get(daemon) ?? 1);
      let pick = rest.findIndex((a) => a.candidate.repair && !a.candidate.environment);
      if (pick < 0) {
        // Within the priority at the head (the list is in priority order), as in ./order.ts.
        const priority = rest[0]!.candidate.priority;
        pick = 0;
        let longest = -1;
        rest.forEach((a, i) => {
          const p = expectedMinutes(a.candidate);
          if (a.candidate.priority === priority && !a.candidate.environment && p >= threshold && p > longest)
            [pick, longest] = [i, p];
        });
      }
      const [a] = rest.splice(pick, 1);
      out.push(a!);
      work -= expectedMinutes(a!.candidate);
    }
    next.set(daemon, out);
  }
  return standby.map((a) => next.get(a.daemon)!.shift()!);
}

/**
 * A repair in the job that ran the failed crew (seed 002: "queued repairs launch before new
 * upward rooms"). An Actions crew job cannot ask the office for new work, but the repair of its own
 * crew is safe to plan there: until the run's grade imports this job's handoff every other planner
 * sees the issue as active (its crew planned for this daemon), so no one else can take it. The job
 * plans it (`crew.planned`, `queued: true`, `repairOf` the failed crew) and starts it first, while a
 * crew timeout plus the reserve fit; the judges grade both crews as usual, and a repair the job did
 * not start is cancelled by the next plan like any standby crew.
 *
 * This decides it, from the crew registry after `crewId` finished: the issue's state (./history.ts,
 * with the grading verdicts and requeues the job's state holds) must be a repair whose failed crew is
 * exactly `crewId`. A second failure stops the issue there; an interruption is no failure.
 */
export function jobRepair(
  registry: CrewRegistry,
  crewId: string,
  verdict?: VerdictLookup,
  requeues?: Requeues,
): { issueNumber: number; attempt: number } | undefined {
  const crew = registry.crews[crewId];
  if (!crew || crew.status !== 'finished') return undefined;
  const ofIssue = Object.fromEntries(
    Object.values(registry.crews)
      .filter((c) => c.issueNumber === crew.issueNumber)
      .map((c) => [c.crewId, c]),
  );
  const state = issueStates({ crews: ofIssue, leases: {} }, verdict, requeues).get(crew.issueNumber);
  if (state?.kind !== 'repair' || state.failedCrewId !== crewId) return undefined;
  return { issueNumber: crew.issueNumber, attempt: state.attempt };
}

/**
 * Plans the in-job repair of `crewId` (see `jobRepair`) on its daemon, under the crew log's lock;
 * returns the new crew's id, or undefined when the issue needs none. The repair keeps the failed
 * crew's agent, weight and fences (the same work, restarted from the contract).
 */
export async function planJobRepair(
  layout: StateLayout,
  o: { crewId: string; plannedBy?: LeaseOwner; verdict?: VerdictLookup; now?: Date },
): Promise<string | undefined> {
  const requeues = readSchool(layout).requeues;
  const tx = await crewLog(layout).transact((current) => {
    const registry = foldLog(crewFold, current);
    const repair = jobRepair(registry, o.crewId, o.verdict, requeues);
    const failed = registry.crews[o.crewId];
    if (!repair || !failed) return { append: [] as CrewEvent[], result: undefined };
    const crewId = `c${repair.issueNumber}-${randomBytes(4).toString('hex')}`;
    const planned = event(
      'crew.planned',
      `planned:${crewId}`,
      {
        crewId,
        issueNumber: repair.issueNumber,
        daemon: failed.daemon,
        agent: failed.agent,
        weight: failed.weight,
        fences: failed.fences,
        repair: true,
        attempt: repair.attempt,
        queued: true as const,
        repairOf: o.crewId,
        ...(o.plannedBy
          ? {
              plannedBy:
                o.plannedBy.kind === 'actions' ? { ...o.plannedBy, daemon: failed.daemon } : o.plannedBy,
            }
          : {}),
      },
      o.now ?? new Date(),
    ) as CrewEvent;
    return { append: [planned], result: crewId };
  });
  return tx.result;
}
