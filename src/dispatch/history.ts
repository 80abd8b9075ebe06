import type { CrewOutcome } from '../schemas/crew.js';
import type { CrewRecord, CrewRegistry } from './registry.js';
import { byCodePoint } from '../state/fold.js';
import { contestRuns } from './contest.js';

/**
 * Where each issue stands, from the crew registry (seed 002, N2.1):
 *  - an issue with a planned or running crew is never dispatched again;
 *  - a succeeded run (not rejected by grading) is done;
 *  - one failed run puts the issue back in the backlog as a repair (attempt 2);
 *  - two consecutive failed runs stop it: `repair-stopped-after-two-failures`, never a third attempt;
 *  - usage/credit limits, rate limits and service overload, cancellations, pre-verify aborts (a
 *    dirty slot, N4.1) and the school's own failures (`infra`: an agent that could not start, a
 *    program the sandbox lacks) are interruptions, not failures; but `MAX_INFRA_ABORTS` consecutive
 *    infra aborts stop the issue (`stopped-after-infra-aborts`): a runner that lacks a program would
 *    otherwise pay the agent for every cycle's run;
 *  - N7.1: a crew its classroom lost (`orphaned`: Orca crashed or restarted before its student
 *    finished) is not the student's failed run either; but `MAX_ORPHANINGS` consecutive orphanings
 *    stop the issue too (`stopped-after-orphanings`), so a classroom that keeps failing cannot loop it;
 *  - a usage limit only the student reported (no `upstream`: the key proxy did not see the API say
 *    so) is its word, which a prompt can steer: `MAX_LIMIT_CLAIMS` of them on one issue stop it
 *    (`limit-claims-stopped`), so an issue cannot pause each agent that takes it again and again;
 *  - `school requeue` forgets the runs before it: a stopped issue is ready again.
 */
export type IssueState =
  | { kind: 'active'; crewId: string }
  | { kind: 'done'; crewId: string }
  /**
   * `orphaned`: stopped by consecutive orphanings (their count), `infra`: by consecutive infra
   * aborts (their count), not by two failed runs.
   */
  | {
      kind: 'stopped';
      crewIds: [string, string];
      orphaned?: number;
      infra?: number;
      /** Stopped by usage limits only its students reported (their count). */
      limitClaims?: number;
    }
  | { kind: 'repair'; attempt: 2; failedCrewId: string }
  | { kind: 'ready'; attempt: 1 };

/** Outcomes that count toward the two-failure stop. `aborted` and `lost` count too (N7.1: a dead
 * daemon must not loop an issue forever) — except an abort by the pre-verify of a dirty slot
 * (`preVerify`, N4.1) or of an agent that could not start (`infra`): nothing ran, so it says nothing
 * about the agent; and an orphaned crew (`orphaned`), bounded by `MAX_ORPHANINGS` instead. */
export const FAILURE_OUTCOMES: readonly CrewOutcome[] = ['failed', 'timed_out', 'aborted', 'lost'];

/**
 * N7.1: consecutive orphanings of one issue (no run of its student's own between them) after which
 * the issue waits for `school requeue`. An orphaning never costs the student an attempt, so this
 * bound, not the two-failure stop, is what keeps a crashing classroom from looping an issue.
 */
export const MAX_ORPHANINGS = 3;

/**
 * Consecutive infra aborts of one issue (the school's failures: a program missing from the sandbox,
 * an agent that could not start) after which it waits for `school requeue`. None costs the agent an
 * attempt; this bound keeps a runner that lacks a program from running the agent again and again.
 */
export const MAX_INFRA_ABORTS = 3;

/**
 * Usage limits of one issue that only its students reported (no `upstream` record of the API's own
 * answer) after which it waits for `school requeue`. Each pauses the crew's agent: an issue whose text
 * steers its agents into claiming a limit would otherwise hold every agent in turn, again and again.
 * Counted since the last requeue, not only in a row: runs between them do not wash a claim out.
 */
export const MAX_LIMIT_CLAIMS = 2;

/** What grading concluded about a finished crew, when known (accepted = both judges passed). */
export type VerdictLookup = (crewId: string) => 'accepted' | 'rejected' | undefined;

export const READY: IssueState = { kind: 'ready', attempt: 1 };

/** Folds the registry into one state per issue that has history; issues absent from the map are ready. */
/**
 * `school requeue ISSUE` (school.jsonl `issue.requeued`): the latest requeue time per issue. Runs
 * that finished before it no longer count toward the two-failure stop.
 */
export type Requeues = ReadonlyMap<number, string> | Readonly<Record<number, string>>;

function requeuedAt(requeues: Requeues | undefined, issue: number): string | undefined {
  if (!requeues) return undefined;
  return requeues instanceof Map ? requeues.get(issue) : (requeues as Record<number, string>)[issue];
}

export function issueStates(
  registry: CrewRegistry,
  verdict?: VerdictLookup,
  requeues?: Requeues,
): Map<number, IssueState> {
  const byIssue = new Map<number, CrewRecord[]>();
  for (const c of Object.values(registry.crews)) {
    const list = byIssue.get(c.issueNumber);
    if (list) list.push(c);
    else byIssue.set(c.issueNumber, [c]);
  }
  const out = new Map<number, IssueState>();
  for (const [issue, crews] of byIssue) out.set(issue, stateOf(crews, verdict, requeuedAt(requeues, issue)));
  return out;
}

function stateOf(crews: CrewRecord[], verdict?: VerdictLookup, requeued?: string): IssueState {
  const active = crews.find((c) => c.status !== 'finished');
  if (active) return { kind: 'active', crewId: active.crewId };
  // A contest is one run of its issue (./contest.ts): its losers are not failed runs.
  crews = contestRuns(crews, (c) => failedRun(c, verdict), verdict);
  // Runs of one issue never overlap (an active crew blocks the next), so finish time orders them.
  const runs =
    crews.length === 1
      ? crews
      : [...crews].sort(
          (a, b) =>
            byCodePoint(a.finishedAt ?? '', b.finishedAt ?? '') ||
            byCodePoint(a.plannedAt, b.plannedAt) ||
            byCodePoint(a.crewId, b.crewId),
        );
  const failures: string[] = [];
  let orphans: string[] = [];
  let infra: string[] = [];
  const claims: string[] = [];
  for (const run of runs) {
    // A requeue forgets the failures before it (the operator has looked at them).
    if (requeued && (run.finishedAt ?? '') <= requeued) continue;
    const outcome = run.outcome;
    if (run.orphaned) {
      // N7.1: the classroom's failure, not the student's: counted on its own, never as an attempt.
      orphans.push(run.crewId);
      if (orphans.length >= MAX_ORPHANINGS) {
        const [a, b] = orphans.slice(-2) as [string, string];
        return { kind: 'stopped', crewIds: [a, b], orphaned: orphans.length };
      }
      continue;
    }
    if (outcome === 'succeeded') {
      if (verdict?.(run.crewId) === 'rejected') failures.push(run.crewId);
      else return { kind: 'done', crewId: run.crewId };
    } else if (outcome && FAILURE_OUTCOMES.includes(outcome) && !run.preVerify && !run.infra) {
      failures.push(run.crewId);
    } else if (run.infra) {
      infra.push(run.crewId);
      if (infra.length >= MAX_INFRA_ABORTS) {
        const [a, b] = infra.slice(-2) as [string, string];
        return { kind: 'stopped', crewIds: [a, b], infra: infra.length };
      }
    }
    // A run the student finished (counted) ends a streak of orphanings or infra aborts;
    // interruptions (usage_limit, overloaded, cancelled, a pre-verify abort) reset no streak.
    if (outcome === 'usage_limit' && !run.upstream) {
      claims.push(run.crewId);
      if (claims.length >= MAX_LIMIT_CLAIMS) {
        const [a, b] = claims.slice(-2) as [string, string];
        return { kind: 'stopped', crewIds: [a, b], limitClaims: claims.length };
      }
    }
    if (failures.at(-1) === run.crewId) {
      orphans = [];
      infra = [];
    }
    if (failures.length >= 2) {
      const [a, b] = failures.slice(-2) as [string, string];
      return { kind: 'stopped', crewIds: [a, b] };
    }
  }
  if (failures.length === 1) return { kind: 'repair', attempt: 2, failedCrewId: failures[0]! };
  return READY;
}

/** A run that counts toward the two-failure stop (as `stateOf` counts it). */
function failedRun(run: CrewRecord, verdict?: VerdictLookup): boolean {
  if (run.orphaned) return false;
  if (run.outcome === 'succeeded') return verdict?.(run.crewId) === 'rejected';
  return !!run.outcome && FAILURE_OUTCOMES.includes(run.outcome) && !run.preVerify && !run.infra;
}

/** What a run-time prediction is keyed by: the agent that will do the work, the domain, the difficulty. */
export interface RunKey {
  agent: string;
  domain: string;
  difficulty: number;
}

/** The size (estimated minutes) and the run-time context of an issue, for the run-time history. */
export type IssueSizeLookup = (
  issue: number,
) => { size: number; domain: string; difficulty: number } | undefined;

/** Finished runs a key needs before its own calibration replaces the school-wide one. */
export const MIN_RUNS_PER_KEY = 3;
/** Bounds of a calibration: history can stretch or shrink an estimate twentyfold, no more. */
const FACTOR_BOUNDS = [0.05, 20] as const;

/**
 * Run-time history per agent × domain × difficulty: how long crews really took against the size
 * estimate of their issue (`Σ minutes run ÷ Σ estimated minutes`). `predict` scales an issue's
 * estimate by the factor of its key once that key has `MIN_RUNS_PER_KEY` finished runs, by the
 * school-wide factor before that, and leaves it as estimated with no history at all. A run of an
 * issue no longer in the curriculum (closed issues leave it; the crew log keeps no estimate) counts
 * toward the school-wide factor only, against `defaultSize` (the curriculum's default estimate).
 * Cancelled runs, interruptions that never ran (pre-verify, infra) and orphaned runs are left out. One pass over
 * the registry: O(crews).
 */
export class RunTimeHistory {
  private readonly byKey = new Map<string, { run: number; estimated: number; n: number }>();
  private readonly all = { run: 0, estimated: 0, n: 0 };

  constructor(registry: CrewRegistry, sizeOf: IssueSizeLookup, defaultSize: number) {
    for (const c of Object.values(registry.crews)) {
      if (!c.startedAt || !c.finishedAt || c.outcome === 'cancelled' || c.preVerify || c.infra || c.orphaned)
        continue;
      const ms = Date.parse(c.finishedAt) - Date.parse(c.startedAt);
      if (!Number.isFinite(ms) || ms < 0) continue;
      const issue = sizeOf(c.issueNumber);
      const accs = [this.all];
      if (issue && issue.size > 0) {
        const key = runKey({ agent: c.agent, domain: issue.domain, difficulty: issue.difficulty });
        const k = this.byKey.get(key) ?? { run: 0, estimated: 0, n: 0 };
        this.byKey.set(key, k);
        accs.push(k);
      }
      const estimated = issue && issue.size > 0 ? issue.size : defaultSize;
      if (!(estimated > 0)) continue;
      for (const acc of accs) {
        acc.run += ms / 60_000;
        acc.estimated += estimated;
        acc.n++;
      }
    }
  }

  /** The calibration for a key: its own once it has enough runs, else the school's, else 1. */
  factor(key: RunKey): number {
    const own = this.byKey.get(runKey(key));
    const acc =
      own && own.n >= MIN_RUNS_PER_KEY ? own : this.all.n >= MIN_RUNS_PER_KEY ? this.all : undefined;
    if (!acc || acc.estimated <= 0) return 1;
    return Math.min(FACTOR_BOUNDS[1], Math.max(FACTOR_BOUNDS[0], acc.run / acc.estimated));
  }

  /** Predicted minutes for an issue of `size` estimated minutes run under `key`. */
  predict(size: number, key: RunKey): number {
    return size * this.factor(key);
  }
}

function runKey(k: RunKey): string {
  return `${k.agent}\u0000${k.domain}\u0000${k.difficulty}`;
}
