import type { IssueResult, SimResult, TimelineEntry } from './engine.js';
import type { NextStep, ReadyItem } from './policy.js';
import type { SimRun, SimSlot } from './workload.js';

/**
 * What both event loops (engine.ts for the policies, deployed.ts for the loop as deployed) record
 * of the runs that end: the timeline, each issue's result, and the pauses a usage limit causes.
 */
export class RunLog {
  readonly timeline: TimelineEntry[] = [];
  readonly results = new Map<number, IssueResult>();
  readonly pauses: Array<{ from: number; to: number }> = [];
  /** No launch before this minute (a usage limit; seed 002). */
  pausedUntil = -Infinity;

  constructor(private readonly pauseMinutes: number) {}

  /**
   * Records a run of `item` on `slot` from `start` to `now`. A usage limit pauses launches for the
   * workload's pause time, merged with a pause still going; `resumeAt` is then the new end of the
   * pause, when it moved. Any other outcome is a verdict: the issue's attempts and first verdict.
   */
  ended(slot: SimSlot, item: ReadyItem, start: number, now: number): { run: SimRun; resumeAt?: number } {
    const run = item.issue.runs[item.run]!;
    this.timeline.push({
      slot: slot.index,
      issue: item.issue.number,
      start,
      end: now,
      outcome: run.outcome,
      attempt: item.attempt,
      repair: item.repair,
    });
    const result = this.result(item.issue.number);
    if (run.outcome !== 'usage_limit') {
      result.attempts = item.attempt;
      result.firstVerdictAt ??= now;
      return { run };
    }
    const until = now + this.pauseMinutes;
    if (until <= this.pausedUntil) return { run };
    const last = this.pauses.at(-1);
    if (last && last.to >= now) last.to = until;
    else this.pauses.push({ from: now, to: until });
    this.pausedUntil = until;
    return { run, resumeAt: until };
  }

  /** The issue's end, when the step after its run is not another run. */
  settle(issue: number, step: Exclude<NextStep, { kind: 'backlog' }>): void {
    const result = this.result(issue);
    result.status = step.kind;
    if (step.kind === 'stopped') result.reason = step.reason;
  }

  /** The figures of a finished simulation. */
  summary(policy: string, decisions: number, backlog: SimResult['backlog']): SimResult {
    return {
      policy,
      makespan: this.timeline.reduce((m, t) => Math.max(m, t.end), 0),
      timeline: this.timeline,
      issues: [...this.results.values()].sort((a, b) => a.number - b.number),
      pauses: this.pauses,
      decisions,
      backlog,
    };
  }

  private result(n: number): IssueResult {
    let result = this.results.get(n);
    if (!result) {
      result = { number: n, status: 'done', attempts: 0 };
      this.results.set(n, result);
    }
    return result;
  }
}
