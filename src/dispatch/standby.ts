import type { SchoolConfig } from '../config/schema.js';
import { admit, type AdmissionInput, type AdmissionResult, type Admitted } from './admission.js';
import type { CrewRegistry } from './registry.js';

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
 * - Depth: the first crew of a slot may take the whole crew timeout; the rest are sized by the
 *   typical crew duration seen so far (`typicalCrewMs`, the 75th percentile of recent runs), which
 *   is what a slot really spends per crew. Over-planning costs nothing paid: an unstarted crew only
 *   waits for the next plan.
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
 * the daemons that got one, each taking as many per wave as its first wave holds, for as many waves
 * as fit after a first crew timeout. Candidates still refused keep the first pass's reason.
 */
export function admitStandby(
  input: AdmissionInput,
  first: AdmissionResult,
  typicalMs: number,
): { standby: Admitted[]; refused: AdmissionResult['refused'] } {
  const allowance = new Map<string, number>();
  for (const a of first.admitted) allowance.set(a.daemon, (allowance.get(a.daemon) ?? 0) + 1);
  const refusedIssues = new Set(first.refused.map((r) => r.issue));
  const rest = input.candidates.filter((c) => refusedIssues.has(c.issueNumber));
  if (allowance.size === 0 || rest.length === 0) return { standby: [], refused: first.refused };
  const fallbacks = first.admitted.filter((a) => a.fallback).length;
  const second = admit({
    ...input,
    candidates: rest,
    daemons: input.daemons.map((d) =>
      allowance.has(d.id)
        ? { ...d, slots: allowance.get(d.id)!, busy: 0 }
        : { ...d, busy: Number.MAX_SAFE_INTEGER },
    ),
    // Concurrency is the first wave's; standby adds waiting crews, not running ones.
    maxCrews: Number.MAX_SAFE_INTEGER,
    activeCrews: 0,
    heldFences: [
      ...input.heldFences,
      ...first.admitted.map((a) => ({
        fences: a.candidate.fences,
        holder: `issue #${a.candidate.issueNumber} (admitted this batch)`,
      })),
    ],
    time: {
      remainingMs: input.time.remainingMs - input.time.crewTimeoutMs,
      crewTimeoutMs: typicalMs,
      gradingReserveMs: input.time.gradingReserveMs,
      maxWaves: Number.MAX_SAFE_INTEGER,
    },
    maxFallbacks: Math.max(0, input.maxFallbacks - fallbacks),
  });
  const standbyIssues = new Set(second.admitted.map((a) => a.candidate.issueNumber));
  return { standby: second.admitted, refused: first.refused.filter((r) => !standbyIssues.has(r.issue)) };
}
