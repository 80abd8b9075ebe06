import type { VerificationRecord } from '../bookbag/schema.js';
import type { CrewOutcome } from '../schemas/crew.js';
import { EXIT_OVERLOADED, EXIT_USAGE_LIMIT } from './brief.js';
import type { RunResult } from '../process/run.js';
import type { TurnEnding } from './ending.js';
import { describeMissing, type MissingAt } from '../sandbox/index.js';

/**
 * The student contract's result signals (command agents). Seed 002: a usage/credit limit and a
 * service overload are not failed runs — a limit pauses, an overload is retried later. They are the
 * student's word, so a limit pauses its agent alone, for at most `dispatch.agentPauseMaxMinutes`
 * (src/dispatch/gates/pause.ts). A student reports them by exit code (75 = usage limit,
 * 76 = overloaded; 75 is EX_TEMPFAIL) or by a first line `school-result: usage-limit` /
 * `school-result: overloaded` in its report file.
 */
const MARKER = /^\s*school-result:\s*(usage-limit|overloaded)\s*$/im;

export function reportMarker(report: string | undefined): 'usage_limit' | 'overloaded' | undefined {
  const m = report?.slice(0, 4096).match(MARKER);
  if (!m) return undefined;
  return m[1] === 'usage-limit' ? 'usage_limit' : 'overloaded';
}

export interface Classified {
  outcome: CrewOutcome;
  reason: string;
}

export function classify(
  student: Pick<RunResult, 'exitCode' | 'signal' | 'timedOut' | 'spawnError'>,
  report: string | undefined,
  verification: VerificationRecord | null,
  timeoutMs: number,
): Classified {
  if (student.timedOut) {
    return {
      outcome: 'timed_out',
      reason: `student exceeded its ${Math.round(timeoutMs / 1000)} s timeout; process group killed`,
    };
  }
  if (student.spawnError)
    return { outcome: 'failed', reason: `student could not start: ${student.spawnError}` };
  const marker = reportMarker(report);
  if (student.exitCode === EXIT_USAGE_LIMIT || marker === 'usage_limit') {
    return {
      outcome: 'usage_limit',
      reason: 'student reported a usage or credit limit',
    };
  }
  if (student.exitCode === EXIT_OVERLOADED || marker === 'overloaded') {
    return {
      outcome: 'overloaded',
      reason: 'student reported a service overload; retried later (not a failure)',
    };
  }
  if (student.exitCode !== 0) {
    return {
      outcome: 'failed',
      reason: `student exited ${student.exitCode ?? `on signal ${student.signal}`}`,
    };
  }
  if (verification && !verification.passed) {
    return { outcome: 'failed', reason: verificationFailure(verification) };
  }
  return {
    outcome: 'succeeded',
    reason: verification
      ? 'student finished; verification passed'
      : 'student finished; no verification configured',
  };
}

/** Outcomes the graders see: a run the agent is accountable for. */
export const GRADED_OUTCOMES: readonly CrewOutcome[] = ['succeeded', 'failed', 'timed_out'];

/**
 * A crew's outcome from its last agent turn and the last verification. `infra` marks an agent that
 * could not start, or a verification that did not find a program (`missing`): recorded as
 * `aborted` with an alert (`alert`, when not `agent-could-not-start`), never counted against the agent.
 * Whom a usage limit pauses is not decided here: whatever the CLI printed (its error envelope too)
 * is output a process inside the sandbox can write; the crew asks its key proxy's record of the
 * API's own answers (src/sandbox/upstream-record.ts `limitEvidence`).
 */
export function classifyEnding(
  ending: TurnEnding,
  verification: VerificationRecord | null,
  correctionTurns: number,
  missing?: MissingAt,
  /** No turn ran (./session.ts `verifyFirst`): the school's merge was verified as it stood. */
  noTurn?: boolean,
): Classified & { infra?: boolean; alert?: string } {
  switch (ending.kind) {
    case 'could_not_start':
      return { outcome: 'aborted', reason: ending.reason, infra: true };
    case 'usage_limit':
      return { outcome: 'usage_limit', reason: `${ending.reason} (not a failure)` };
    case 'overloaded':
      return { outcome: 'overloaded', reason: `${ending.reason}; retried later (not a failure)` };
    case 'timed_out':
      return { outcome: 'timed_out', reason: ending.reason };
    case 'failed':
      return { outcome: 'failed', reason: ending.reason };
    case 'succeeded':
      break;
  }
  const turns = correctionTurns ? ` after ${correctionTurns} correction turn(s)` : '';
  // A program the verification's sandbox does not have: the school's failure (docs/crews.md).
  if (missing && verification && !verification.passed) {
    const what = missing.stage === 'install' ? 'dispatch.install' : 'dispatch.verify';
    return {
      outcome: 'aborted',
      reason: describeMissing(missing, what),
      infra: true,
      alert: 'program-not-found',
    };
  }
  // The school's failure (docs/grading.md, "When the school fails"): an install that fails, a run
  // killed by the machine, a red base nothing tells apart from the crew's run. The issue waits; the
  // alert says what to fix.
  if (verification?.environment && !verification.passed) {
    return {
      outcome: 'aborted',
      reason: `verification could not judge the change: ${verification.environment.reason}`,
      infra: true,
      alert: 'environment-failed',
    };
  }
  if (verification && !verification.passed) {
    return { outcome: 'failed', reason: `${verificationFailure(verification)}${turns}` };
  }
  if (noTurn && verification?.passed) return { outcome: 'succeeded', reason: ending.reason };
  return {
    outcome: 'succeeded',
    reason: verification
      ? `student finished; verification passed${turns}`
      : 'student finished; no verification configured',
  };
}

/** A failed verification in words: what did not apply, which tests broke, or how the command ended. */
export function verificationFailure(v: VerificationRecord): string {
  if (v.notApplied !== undefined)
    return `the change does not apply at its base: ${v.notApplied.slice(0, 300)}`;
  if (v.timedOut) return 'verification timed out';
  if (v.broken?.length)
    return `verification: ${v.broken.length} test(s) that did not fail at the base fail: ${v.broken.slice(0, 5).join('; ')}`;
  if (v.exitCode === null) return 'verification could not run';
  return `verification exited ${v.exitCode}`;
}
