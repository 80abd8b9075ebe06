import type { SchoolConfig } from '../config/schema.js';
import { readCurriculumStrict } from '../curriculum/store.js';
import { untrustedReason } from '../curriculum/trust.js';
import type { CurriculumItem } from '../schemas/curriculum.js';
import { event } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import { issueStates, type VerdictLookup } from './logs/history.js';
import { describePauses, pauseStatus } from './gates/pause.js';
import { readRegistry, type CrewRegistry } from './logs/registry.js';
import { schoolLog, readSchool } from './logs/school-log.js';
import { totalSpend } from './gates/spend.js';
import type { RunContext } from '../process/run-context.js';

/**
 * The next cycle at once (GitHub Actions). A scheduled run plans, its crew jobs run, its grade merges
 * what they did; work that is still waiting then (a repair, what the standby could not hold) waits
 * for the next scheduled run, up to a whole schedule interval with every slot idle. Instead, the
 * grade job starts the next run itself (`workflow_dispatch` of the calling workflow, which a
 * GITHUB_TOKEN may do) when:
 * - `maxRuns` > 0 (the workflow input `next-cycle-runs`; 0 turns it off);
 * - this run's crew jobs started at least one crew (progress: a run that started nothing ends the
 *   chain, so a fleet that cannot take the waiting work is never polled in a loop);
 * - some curriculum issue is waiting: ready or a repair, with no crew planned or running;
 * - launches are not paused and the spend cap is not reached;
 * - fewer than `maxRuns` runs in a row were started this way (a run started by the schedule, a
 *   person or an event begins a new chain).
 * Two plans never run at once: the plan job's concurrency group holds one running and one pending.
 */
export interface NextCycleInput {
  maxRuns: number;
  /** Crews this run's crew jobs started. */
  started: number;
  /** Curriculum issues ready or waiting for a repair, with no crew planned or running. */
  waiting: number;
  paused?: string;
  spendCapReached?: string;
  /** Runs in a row the loop started itself, this one included (0 when it was not one). */
  chain: number;
}

export interface NextCycleDecision {
  start: boolean;
  /** The chain the next run continues (when `start`). */
  chain: number;
  reason: string;
}

export function nextCycle(i: NextCycleInput): NextCycleDecision {
  const no = (reason: string): NextCycleDecision => ({ start: false, chain: i.chain, reason });
  if (i.maxRuns <= 0) return no('off (next-cycle-runs is 0)');
  if (i.started === 0) return no('this run started no crew');
  if (i.waiting === 0) return no('no work is waiting');
  if (i.paused) return no(`launches are paused: ${i.paused}`);
  if (i.spendCapReached) return no(i.spendCapReached);
  if (i.chain >= i.maxRuns)
    return no(
      `${i.chain} runs in a row were started by the loop (next-cycle-runs ${i.maxRuns}); the schedule goes on`,
    );
  return {
    start: true,
    chain: i.chain + 1,
    reason: `${i.waiting} issue(s) waiting; this run started ${i.started} crew(s)`,
  };
}

/**
 * Issues of the curriculum that wait for a crew: ready or a repair, none planned or running, past
 * the intake trust gate (as the plan sees them).
 */
export function waitingIssues(
  config: SchoolConfig,
  registry: CrewRegistry,
  curriculum: readonly CurriculumItem[],
  verdict?: VerdictLookup,
  requeues?: Readonly<Record<number, string>>,
): number {
  const states = issueStates(registry, verdict, requeues);
  return curriculum.filter((c) => {
    const k = states.get(c.number)?.kind ?? 'ready';
    return (k === 'ready' || k === 'repair') && !untrustedReason(c, config.curriculum.trust);
  }).length;
}

/** This run's identity in GitHub Actions, and whether the loop started it (`startedByLoop`). */
export interface ThisRun {
  runId: string;
  runAttempt: string;
  /** A `workflow_dispatch` by the loop's own token (`github-actions[bot]`). */
  startedByLoop: boolean;
}

export function thisRun(ctx: RunContext): ThisRun | undefined {
  const { run } = ctx;
  if (!run) return undefined;
  return {
    runId: run.id,
    runAttempt: run.attempt,
    startedByLoop: run.event === 'workflow_dispatch' && run.triggeringActor === 'github-actions[bot]',
  };
}

/** The decision from the state the grade job just saved. */
export function readNextCycle(
  layout: StateLayout,
  config: SchoolConfig,
  run: ThisRun,
  maxRuns: number,
  verdict?: VerdictLookup,
): NextCycleDecision {
  const registry = readRegistry(layout);
  const started = Object.values(registry.crews).filter(
    (c) => c.startedAt !== undefined && c.plannedBy?.kind === 'actions' && c.plannedBy.runId === run.runId,
  ).length;
  const school = readSchool(layout);
  const waiting = waitingIssues(config, registry, readCurriculumStrict(layout), verdict, school.requeues);
  const paused = describePauses(pauseStatus(layout).pauses);
  const cap = config.dispatch.spendCap;
  const spent = cap === undefined ? 0 : totalSpend(layout);
  // The chain this run belongs to: the one recorded when the loop started it, else none.
  const chain = run.startedByLoop ? (school.nextCycle?.chain ?? 1) : 0;
  return nextCycle({
    maxRuns,
    started,
    waiting,
    ...(paused ? { paused } : {}),
    ...(cap !== undefined && spent >= cap
      ? { spendCapReached: `the spend cap is reached ($${spent.toFixed(2)} of $${cap.toFixed(2)})` }
      : {}),
    chain,
  });
}

/** Records that this run starts the next one (before the request: a retry adds nothing). */
export async function recordNextCycle(layout: StateLayout, run: ThisRun, chain: number): Promise<void> {
  await schoolLog(layout).append([
    event('loop.next-cycle', `next-cycle:${run.runId}:${run.runAttempt}`, { runId: run.runId, chain }),
  ]);
}
