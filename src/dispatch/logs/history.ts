import type { CrewOutcome } from '../../schemas/crew.js';
import type { CrewRecord, CrewRegistry } from './registry.js';
import { byCodePoint } from '../../state/fold.js';
import { contestRuns } from '../contest.js';

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
 *  - a claim nothing confirmed (`limit_unconfirmed`, ./limit-probe.ts: the agent was not paused)
 *    sends its issue behind the others (`limitClaim`, ./order.ts), and `dispatch.maxUnconfirmedLimitClaims`
 *    of them (default `MAX_UNCONFIRMED_LIMIT_CLAIMS`) stop it (`stopped-after-unconfirmed-limit-claims`);
 *    a claim the school confirmed (`confirmed`) counts toward neither stop;
 *  - a crew a person stopped (`cancelled` with `stoppedBy`) stops its issue until `school requeue`:
 *    a stop is a person's decision, which the next plan must not undo;
 *  - `school requeue` (or `school dead-letters requeue issue:N`) forgets the runs before it: a
 *    stopped issue is ready again;
 *  - an issue whose last run ended on the environment's failure (`infra`: an install or a program
 *    the sandbox lacks, an agent that could not start) is marked `environment`: it waits behind the
 *    issues that wait (./order.ts), a repair included, since the same machine would fail it again
 *    ahead of work that may not need what is missing.
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
      /** Stopped by unconfirmed limit claims (`limit_unconfirmed`, their count). */
      limitUnconfirmed?: number;
      /** A person stopped its crew (`/school stop`, `school crew stop`): who, as recorded. */
      stoppedBy?: string;
    }
  | { kind: 'repair'; attempt: 2; failedCrewId: string; environment?: true; limitClaim?: true }
  | { kind: 'ready'; attempt: 1; environment?: true; limitClaim?: true };

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

/**
 * `dispatch.maxUnconfirmedLimitClaims`' default: unconfirmed limit claims (`limit_unconfirmed`) of
 * one issue, counted since its last requeue, after which it waits for a requeue. None paused the
 * agent; this bound keeps the issue from spending a launch and a probe on every cycle.
 */
export const MAX_UNCONFIRMED_LIMIT_CLAIMS = 3;

/** What the issue history weighs beside the registry. */
export interface HistoryOptions {
  /** `dispatch.maxUnconfirmedLimitClaims`. */
  maxUnconfirmedLimitClaims?: number;
}

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
  o: HistoryOptions = {},
): Map<number, IssueState> {
  const byIssue = new Map<number, CrewRecord[]>();
  for (const c of Object.values(registry.crews)) {
    const list = byIssue.get(c.issueNumber);
    if (list) list.push(c);
    else byIssue.set(c.issueNumber, [c]);
  }
  const out = new Map<number, IssueState>();
  for (const [issue, crews] of byIssue)
    out.set(issue, stateOf(crews, verdict, requeuedAt(requeues, issue), o));
  return out;
}

function stateOf(
  crews: CrewRecord[],
  verdict?: VerdictLookup,
  requeued?: string,
  o: HistoryOptions = {},
): IssueState {
  const maxUnconfirmed = o.maxUnconfirmedLimitClaims ?? MAX_UNCONFIRMED_LIMIT_CLAIMS;
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
  const unconfirmed: string[] = [];
  // Whether the last run that ended was an unconfirmed limit claim: the issue waits behind the rest.
  let limitClaim = false;
  // Whether the last run that counted for anything was the environment's failure.
  let environment = false;
  for (const run of runs) {
    // A requeue forgets the failures before it (the operator has looked at them).
    if (requeued && (run.finishedAt ?? '') <= requeued) continue;
    const outcome = run.outcome;
    // A person stopped it: it waits for them (`school requeue`), not for the next plan.
    if (outcome === 'cancelled' && run.stoppedBy)
      return { kind: 'stopped', crewIds: [run.crewId, run.crewId], stoppedBy: run.stoppedBy };
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
      environment = true;
      infra.push(run.crewId);
      if (infra.length >= MAX_INFRA_ABORTS) {
        const [a, b] = infra.slice(-2) as [string, string];
        return { kind: 'stopped', crewIds: [a, b], infra: infra.length };
      }
    }
    // A run the student finished (counted) ends a streak of orphanings or infra aborts;
    // interruptions (usage_limit, overloaded, cancelled, a pre-verify abort) reset no streak.
    limitClaim = outcome === 'limit_unconfirmed';
    if (outcome === 'limit_unconfirmed') {
      unconfirmed.push(run.crewId);
      if (unconfirmed.length >= maxUnconfirmed) {
        const [a, b] = (unconfirmed.length > 1 ? unconfirmed.slice(-2) : [run.crewId, run.crewId]) as [
          string,
          string,
        ];
        return { kind: 'stopped', crewIds: [a, b], limitUnconfirmed: unconfirmed.length };
      }
    }
    if (outcome === 'usage_limit' && !run.upstream && !run.confirmed) {
      claims.push(run.crewId);
      if (claims.length >= MAX_LIMIT_CLAIMS) {
        const [a, b] = claims.slice(-2) as [string, string];
        return { kind: 'stopped', crewIds: [a, b], limitClaims: claims.length };
      }
    }
    if (failures.at(-1) === run.crewId) {
      orphans = [];
      infra = [];
      environment = false;
    }
    if (failures.length >= 2) {
      const [a, b] = failures.slice(-2) as [string, string];
      return { kind: 'stopped', crewIds: [a, b] };
    }
  }
  const env = {
    ...(environment ? { environment: true as const } : {}),
    ...(limitClaim ? { limitClaim: true as const } : {}),
  };
  if (failures.length === 1) return { kind: 'repair', attempt: 2, failedCrewId: failures[0]!, ...env };
  return environment || limitClaim ? { ...READY, ...env } : READY;
}

/** A run that counts toward the two-failure stop (as `stateOf` counts it). */
function failedRun(run: CrewRecord, verdict?: VerdictLookup): boolean {
  if (run.orphaned) return false;
  if (run.outcome === 'succeeded') return verdict?.(run.crewId) === 'rejected';
  return !!run.outcome && FAILURE_OUTCOMES.includes(run.outcome) && !run.preVerify && !run.infra;
}
