import type { CrewOutcome } from '../schemas/crew.js';
import type { CrewRecord, CrewRegistry } from './registry.js';
import { byCodePoint } from '../state/fold.js';

/**
 * Where each issue stands, from the crew registry (seed 002, N2.1):
 *  - an issue with a planned or running crew is never dispatched again;
 *  - a succeeded run (not rejected by grading) is done;
 *  - one failed run puts the issue back in the backlog as a repair (attempt 2);
 *  - two consecutive failed runs stop it: `repair-stopped-after-two-failures`, never a third attempt;
 *  - usage/credit limits, rate limits and service overload, cancellations, pre-verify aborts (a
 *    dirty slot, N4.1) and an agent that could not start (`infra`) are interruptions, not failures;
 *  - `school requeue` forgets the runs before it: a stopped issue is ready again.
 */
export type IssueState =
  | { kind: 'active'; crewId: string }
  | { kind: 'done'; crewId: string }
  | { kind: 'stopped'; crewIds: [string, string] }
  | { kind: 'repair'; attempt: 2; failedCrewId: string }
  | { kind: 'ready'; attempt: 1 };

/** Outcomes that count toward the two-failure stop. `aborted` and `lost` count too (N7.1: a dead
 * daemon must not loop an issue forever) — except an abort by the pre-verify of a dirty slot
 * (`preVerify`, N4.1): nothing ran, so it says nothing about the agent. */
export const FAILURE_OUTCOMES: readonly CrewOutcome[] = ['failed', 'timed_out', 'aborted', 'lost'];

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
  for (const run of runs) {
    // A requeue forgets the failures before it (the operator has looked at them).
    if (requeued && (run.finishedAt ?? '') <= requeued) continue;
    const outcome = run.outcome;
    if (outcome === 'succeeded') {
      if (verdict?.(run.crewId) === 'rejected') failures.push(run.crewId);
      else return { kind: 'done', crewId: run.crewId };
    } else if (outcome && FAILURE_OUTCOMES.includes(outcome) && !run.preVerify && !run.infra) {
      failures.push(run.crewId);
    }
    // Interruptions (usage_limit, overloaded, cancelled, a pre-verify or infra abort) neither count nor
    // reset the streak.
    if (failures.length >= 2) {
      const [a, b] = failures.slice(-2) as [string, string];
      return { kind: 'stopped', crewIds: [a, b] };
    }
  }
  if (failures.length === 1) return { kind: 'repair', attempt: 2, failedCrewId: failures[0]! };
  return READY;
}
