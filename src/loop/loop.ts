import type { SchoolConfig } from '../config/schema.js';
import { beatDaemons, planCrews, progressLine, runStep, type RunStepResult } from './steps.js';
import type { Progress } from '../crew/driver/driver.js';
import { installedDependencies, verifyOnCleanCheckout } from '../crew/checkout/clean-checkout.js';
import { fetchCurriculum, type CurriculumSource, type FetchResult } from '../curriculum/fetch.js';
import type { PlanResult } from '../dispatch/plan.js';
import { drain, type DrainResult } from '../grading/drain.js';
import { drainProgress } from '../grading/progress.js';
import { leaderboard, ScoreLedger, type LeaderboardRow } from '../grading/ledger.js';
import type { Deliverer } from '../delivery/deliver.js';
import type { IssuesPort, OutboxCounts } from '../outbox/outbox.js';
import { publishStatuses } from '../feedback/refresh.js';
import { statusLinks } from '../feedback/status.js';
import { LOCAL_RUN, type RunContext } from '../process/run-context.js';
import { hostEnvOf } from '../process/env.js';
import { watchDeliveries } from '../feedback/watch.js';
import type { FeedbackPort } from '../feedback/port.js';
import type { MergePort } from '../delivery/merge.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { afterGrading, withOutbox, type AfterGradingResult } from './after-grading.js';
import { runStages } from './stages.js';
import { crewPreflight, refusedPlan } from './preflight.js';
import { LoopStoppedError } from './stop.js';

/**
 * `school loop`: the stages of the school loop in one process, in order — fetch the curriculum,
 * read the feedback on delivered pull requests, plan and run crews on every daemon of the fleet
 * (all local here), drain the grading queue, then the step after grading (outbox delivery and
 * status refresh, src/loop/after-grading.ts) — on the same state directory the actions use. A second run continues from that state: issues with an
 * active or finished crew are not dispatched again; a failed one comes back as its repair.
 */
export interface LoopOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  source: CurriculumSource;
  /** argv prefix that starts one crew runner (the spec path is appended). */
  launcher: readonly string[];
  /** What the loop talks to on GitHub (or its local stand-ins); each is optional. */
  ports?: LoopPorts;
  /** Refill freed slots until nothing admissible is left (default); false runs only the plan. */
  refill?: boolean;
  /** Progress lines while crews run (which crew, which slot, elapsed). */
  onProgress?: (line: string, p: Progress, daemon: string) => void;
  /** The run (src/process/run-context.ts): who plans, leases and grades; a local run by default. */
  context?: RunContext;
  /**
   * Aborted when the loop is told to stop (./stop.ts): the drivers launch nothing more, and the loop
   * ends after its crews with `LoopStoppedError` instead of grading.
   */
  halt?: AbortSignal;
}

export interface LoopPorts {
  /** Labels, comments and status comments on issues. */
  github?: IssuesPort;
  /** Accepted work becomes a branch or pull request (src/delivery/setup.ts `deliveryFor`). */
  delivery?: Deliverer;
  /** Reads delivered pull requests: merged or closed unmerged (src/feedback/watch.ts). */
  feedback?: FeedbackPort;
  /** The guarded merge (`delivery.merge`, src/delivery/merge.ts), with the delivery token. */
  merge?: MergePort;
}

export interface LoopResult {
  fetch: FetchResult;
  plan: PlanResult;
  runs: Array<{ daemon: string; result: RunStepResult }>;
  /** The drain, with the outbox counts of the step after it. */
  drain: DrainResult & OutboxCounts;
  leaderboard: LeaderboardRow[];
  /** Why no crew was started: the sandbox would not run what the host runs (./preflight.ts). */
  preflightRefused?: string;
}

export async function runLoop(o: LoopOptions): Promise<LoopResult> {
  const { config, layout, logger } = o;
  const { github, delivery, feedback, merge } = o.ports ?? {};
  const context = o.context ?? LOCAL_RUN;
  const links = statusLinks(context);
  const daemons = config.fleet.daemons.map((d) => d.id);
  let fetched!: FetchResult;
  let refused: string | undefined;
  let plan!: PlanResult;
  let runs: LoopResult['runs'] = [];
  let drained!: DrainResult;
  let after!: AfterGradingResult;
  await runStages('school loop', {
    fetch: async () => {
      fetched = await logger.group('fetch-curriculum', () =>
        fetchCurriculum({ layout, config, source: o.source, logger }),
      );
      logger.info(
        `curriculum: ${fetched.count} issue(s) (${fetched.added} added, ${fetched.changed} changed, ${fetched.removed} removed)`,
      );
    },
    // Before planning, so this cycle plans its revision crews (one conditional request, answered
    // 304, when nothing changed).
    feedback: async () => {
      if (feedback)
        await logger.group('feedback', () => watchDeliveries({ config, layout, logger, port: feedback }));
    },
    // The sandbox runs what the host runs, or no crew is placed (cached when unchanged).
    preflight: async () => {
      refused = await crewPreflight({ config, layout, logger, env: hostEnvOf(o.context) });
    },
    // Every daemon runs on this machine: each beats before the plan assigns to it.
    beat: () => (refused ? undefined : beatDaemons(layout, config, daemons)),
    plan: async () => {
      plan = refused
        ? refusedPlan(refused)
        : await logger.group('dispatch-crew: plan', () => planCrews({ config, layout, logger, context }));
      if (plan.loud) logger.warning(plan.loud);
      logger.info(
        `plan: ${plan.assignments.length} crew(s) admitted, ${plan.refused.length} issue(s) not placed`,
      );
    },
    // "queued" before the crews start (never throws).
    statuses: async () => {
      if (github) await publishStatuses({ config, layout, logger, github, ...links });
    },
    // One driver per daemon, side by side, each with its K slots. A freed slot is refilled at once
    // from what is still admissible, so one run of the loop works through the backlog.
    run: async () => {
      if (!refused)
        runs = await logger.group('dispatch-crew: run', () =>
          Promise.all(
            daemons.map(async (daemon) => ({
              daemon,
              result: await runStep({
                config,
                layout,
                daemon,
                logger,
                launch: { launcher: o.launcher, halt: o.halt },
                context,
                office: { refill: o.refill ?? true },
                onProgress: (p) => o.onProgress?.(progressLine(daemon, p), p, daemon),
              }),
            })),
          ),
        );
      // Told to stop: its crews ended (cancelled); grading waits for the next loop, which drains it.
      if (o.halt?.aborted) throw new LoopStoppedError(String(o.halt.reason));
    },
    // Grading ends at the ledger: verdicts, scores and outbox entries.
    drain: async () => {
      drained = await logger.group('drain-grading', () =>
        drain({
          config,
          layout,
          logger,
          deliver: !!delivery,
          judging: { verifyOnCleanCheckout, installedDependencies },
          worker: { context },
          observe: { progress: drainProgress({ logger }) },
        }),
      );
      if (drained.fatal) logger.error(`grading stopped: ${drained.fatal}`);
    },
    // Once: the outbox goes out (labels, pull requests), the guarded merge, the status comments.
    // The feedback was read before planning: once per cycle.
    'after-grading': async () => {
      after = await logger.group('after grading', () =>
        afterGrading({ config, layout, logger, links, github, delivery, merge }),
      );
    },
  });

  // N5.2: a drain stopped by a corrupt ledger reports it as `fatal`; the loop must not then throw
  // while reading that ledger for the leaderboard. It shows none and keeps the fatal result.
  const board = drained.fatal ? [] : leaderboard(new ScoreLedger(layout).state());
  return {
    fetch: fetched,
    plan,
    runs,
    drain: withOutbox(drained, after),
    leaderboard: board,
    preflightRefused: refused,
  };
}
