import { cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { installedDependencies, verifyOnCleanCheckout } from '../crew/checkout/clean-checkout.js';
import { drain, type DrainJudging, type DrainLimits, type DrainResult } from '../grading/drain.js';
import { importBookbags } from '../grading/import.js';
import { judgeGrader } from '../grading/judge-verify.js';
import { drainProgress } from '../grading/progress.js';
import {
  alertRefusals,
  applicableJobs,
  appliedGrader,
  loadVerdicts,
  recordVerdictSpend,
  recordingGrader,
  verdictsDigest,
  writeVerdicts,
  type Refusal,
  type VerdictEntry,
} from '../grading/verdicts.js';
import { GradingQueue, pendingKeys, type JobState } from '../grading/queue.js';
import { countsLine } from '../grading/report.js';
import { handoffDirs } from '../handoff/handoff.js';
import { importHandoffs } from '../handoff/import.js';
import type { ClaimPort } from '../dispatch/leases/claims.js';
import type { Logger } from '../log.js';
import { StateLayout } from '../state/layout.js';
import { Outbox, type OutboxCounts } from '../outbox/outbox.js';
import type { WatchResult } from '../feedback/watch.js';
import { afterGrading, withOutbox, type AfterGradingResult } from './after-grading.js';
import { gradingPorts } from './github-ports.js';
import { runStages } from './stages.js';
import { statusLinks } from '../feedback/status.js';
import { ensureRefreshBases } from '../feedback/drift.js';
import { requeueDeadLetters, type Requeued } from '../grading/requeue.js';
import { hostEnvOf } from '../process/env.js';
import { auditActor, LOCAL_RUN, type RunContext } from '../process/run-context.js';

/**
 * The job drain-grading does, without the runner: import what crew jobs handed on, requeue, drain
 * the queue (judges, ledger, outbox entries), run the step after grading (feedback watch, outbox
 * delivery, status refresh: ./after-grading.ts), and describe it. The action
 * (src/actions/drain-grading/) parses its inputs into `DrainJobInput`, calls `drainJob`, and reports
 * the result (outputs and summary).
 *
 * Three modes (docs/grading.md, "Where each judge runs"):
 * - `drain` (default, and `school drain`): the judges run here, in their sandbox, and the verdicts
 *   are applied here — for a machine where no write token sits next to them;
 * - `judge` (the workflow's `judge` job, no write token): the judges run on a throwaway copy of
 *   the state, with verification re-run on a clean checkout; nothing is delivered or saved; the
 *   verdicts are written to `verdicts-path` for the grade job;
 * - `apply` (the `grade` job, write token): no judge runs; the verdicts in `verdicts-path` are
 *   validated as data and applied (./../grading/verdicts.ts); a job without one stays queued.
 */
export const DRAIN_MODES = ['drain', 'judge', 'apply'] as const;
export type DrainMode = (typeof DRAIN_MODES)[number];

/** What drain-grading's job needs, parsed and checked (src/actions/drain-grading/inputs.ts). */
export interface DrainJobInput {
  mode: DrainMode;
  verdicts?: DrainJobVerdicts;
  limits?: DrainLimits;
  deadLetters: DrainJobDeadLetters;
  /** Only read: nothing is imported, requeued, graded or delivered. */
  dryRun: boolean;
  bookbags?: DrainJobBookbags;
  /** The configuration file and the state directory (`config`, `state-dir`). */
  school?: { config?: string; stateDir?: string };
  tokens?: DrainJobTokens;
}

/** The judge job's verdicts (the directory of verdicts.json), handed from judge to apply. */
export interface DrainJobVerdicts {
  /** judge: where the verdicts go; apply: where they are read from. */
  path?: string;
  /** apply: the judge step's `verdicts-digest` output, checked against the file. */
  digest?: string;
}

export interface DrainJobDeadLetters {
  /** Dead letters to requeue: job keys, `issue:<N>` or `all` (src/grading/requeue.ts). */
  requeue: string[];
  /** List them and only read (as `dryRun`). */
  list: boolean;
}

/** What the crew jobs handed on (`bookbags-path`), and the run's claims to check shared crews against. */
export interface DrainJobBookbags {
  path?: string;
  /**
   * The run's claim service (one queue per run, src/dispatch/leases/claims.ts): without it, a handoff's
   * claims of shared crews are refused, and with them those crews' events.
   */
  claims?: ClaimPort;
}

export interface DrainJobTokens {
  /** Labels, comments and the feedback scan. */
  github?: string;
  /** Delivery's pull requests (an App or PAT token); default `github`. */
  delivery?: string;
}

export type DrainJobResult =
  | { mode: 'read-only'; pending: number; dead: JobState[] }
  | {
      mode: 'drain';
      /** The drain, with the outbox counts of the step after it. */
      drained: DrainResult & OutboxCounts;
      /** The feedback watch of the step after grading, when it ran. */
      feedback?: WatchResult;
      pending: number;
      dead: JobState[];
      /** Dead letters requeued before the drain (`requeue-dead-letter`). */
      requeued?: Requeued[];
      /** apply: verdicts refused (each alerted), and why none were read at all. */
      refused?: Refusal[];
      missing?: string;
    }
  | {
      mode: 'judge';
      /** Nothing is delivered here: the outbox counts are those of the throwaway state. */
      drained: DrainResult & OutboxCounts;
      verdicts: number;
      requeued?: Requeued[];
      file: string;
      digest: string;
      pending: number;
      dead: JobState[];
    };

export interface DrainJob {
  config: SchoolConfig;
  layout: StateLayout;
  result: DrainJobResult;
}

/** Runs the mode `inputs` names in `context` (the run, built by the entry: src/process/run-context.ts). */
export async function drainJob(
  inputs: DrainJobInput,
  logger: Logger,
  context: RunContext = LOCAL_RUN,
): Promise<DrainJob> {
  const { config: file, stateDir } = inputs.school ?? {};
  const config = resolveConfig(file, stateDir ? { stateDir } : {});
  const layout = new StateLayout(config.stateDir, auditActor(context));
  const queue = new GradingQueue(layout, (m) => logger.warning(m));
  const done = (result: DrainJobResult): DrainJob => ({ config, layout, result });

  // list-dead-letters and dry-run only read: nothing is imported, requeued, graded or delivered.
  if (inputs.deadLetters.list || inputs.dryRun) {
    const dead = queue.deadLetters();
    const pending = pendingKeys(queue.state(), new Date()).length;
    logger.info(`${pending} job(s) pending, ${dead.length} dead letter(s)`);
    for (const d of dead)
      logger.info(`dead letter ${d.job.jobKey} (${d.attempts} attempts): ${d.lastError ?? ''}`);
    return done({ mode: 'read-only', pending, dead });
  }
  if (inputs.mode === 'judge') {
    let judged!: DrainJob;
    await runStages('drain-grading judge', {
      judge: async () => void (judged = await judgeJob(inputs, config, logger, context)),
    });
    return judged;
  }
  let requeued!: Requeued[];
  let drained!: DrainResult;
  let after!: AfterGradingResult;
  let verdicts: Awaited<ReturnType<typeof verdictsToApply>>['verdicts'] | undefined;
  // Merged or closed delivered pull requests are the last judge (src/feedback/watch.ts); accepted
  // work becomes a branch and a pull request with the delivery token (docs/delivery.md).
  const ports = gradingPorts({
    config,
    layout,
    logger,
    actions: true,
    repository: config.repository ?? context.repository,
    token: inputs.tokens?.github,
    deliveryToken: inputs.tokens?.delivery,
  });
  if (!ports.github)
    logger.warning('no token or repository: labels and comments stay in the outbox for a later drain');
  await runStages('drain-grading', {
    import: async () => {
      requeued = await importAndRequeue(inputs, config, layout, queue, logger);
    },
    drain: async () => {
      const toApply =
        inputs.mode === 'apply'
          ? await verdictsToApply(inputs, layout, queue, logger)
          : { applied: {}, verdicts: undefined };
      verdicts = toApply.verdicts;
      drained = await logger.group('Drain the grading queue', () =>
        drain({
          config,
          layout,
          logger,
          deliver: !!ports.delivery,
          limits: inputs.limits,
          // Drain mode judges here: the evidence judge runs a patch's added tests on a clean checkout.
          judging: { ...toApply.applied, verifyOnCleanCheckout, installedDependencies },
          worker: { context },
          observe: { progress: drainProgress({ logger }) },
        }),
      );
    },
    // Then, once: merged or closed pull requests are the last judge, the outbox goes out, and the
    // status comments name the verdicts and the pull requests just delivered.
    'after-grading': async () => {
      after = await logger.group('Deliver and refresh the status comments', () =>
        afterGrading({ config, layout, logger, links: statusLinks(context), ...ports }),
      );
    },
  });
  const report = withOutbox(drained, after);
  logger.info(countsLine(report));
  const pending = pendingKeys(queue.state(), new Date()).length;
  return done({
    mode: 'drain',
    drained: report,
    ...(after.feedback ? { feedback: after.feedback } : {}),
    pending,
    dead: queue.deadLetters(),
    requeued,
    ...verdicts,
  });
}

/**
 * No judge runs in this process: the judge job's verdicts, validated as data, are applied. The
 * jobs to drain are those with a usable verdict and those whose bookbag this job cannot read.
 */
async function verdictsToApply(
  inputs: DrainJobInput,
  layout: StateLayout,
  queue: GradingQueue,
  logger: Logger,
): Promise<{
  applied: DrainJudging;
  verdicts: { refused: Refusal[]; missing?: string };
}> {
  const now = new Date();
  const state = queue.state();
  const loaded = await loadVerdicts(
    layout,
    inputs.verdicts?.path,
    state,
    now,
    inputs.verdicts?.digest || undefined,
  );
  await alertRefusals(layout, loaded.refused, logger);
  for (const x of loaded.skipped) logger.info(`verdict for ${x.jobKey} not applied now: ${x.reason}`);
  await recordVerdictSpend(layout, loaded);
  if (loaded.missing) logger.warning(`${loaded.missing}: every pending job stays queued for the next cycle`);
  const { keys, unreadable } = await applicableJobs(layout, state, loaded, now);
  const waiting = pendingKeys(state, now).filter((k) => !keys.has(k)).length;
  if (waiting > 0) logger.info(`${waiting} pending job(s) have no usable verdict: they stay queued`);
  return {
    applied: { only: (k) => keys.has(k), grade: appliedGrader(loaded, unreadable) },
    verdicts: { refused: loaded.refused, ...(loaded.missing ? { missing: loaded.missing } : {}) },
  };
}

/** Imports what the crew jobs handed on (`bookbags-path`), then requeues the named dead letters. */
async function importAndRequeue(
  inputs: DrainJobInput,
  config: SchoolConfig,
  layout: StateLayout,
  queue: GradingQueue,
  logger: Logger,
): Promise<Requeued[]> {
  const { path: from, claims } = inputs.bookbags ?? {};
  if (from) {
    await logger.group('Import bookbags', async () => {
      // Handoffs of crew jobs are validated and imported whole (events and bookbags).
      if (handoffDirs(from).length) {
        const h = await importHandoffs(layout, from, {
          config,
          logger,
          claims,
        });
        logger.info(`imported ${h.dirs.length} handoff(s); refused ${h.refused.length} item(s)`);
        return;
      }
      const r = await importBookbags(layout, from, logger);
      logger.info(
        `imported ${r.imported} bookbag(s), enqueued ${r.enqueued} new job(s), skipped ${r.skipped.length}`,
      );
    });
  }
  const requeued = await requeueDeadLetters(queue, inputs.deadLetters.requeue);
  for (const j of requeued) logger.info(`requeued ${j.jobKey}; previous failure: ${j.previousFailure}`);
  // A refresh crew started from the school's merge of the base into the head, made in the plan
  // job's checkout: this one makes it again before judging or delivering (src/feedback/drift.ts).
  await ensureRefreshBases({ config, layout, logger });
  return requeued;
}

/**
 * The judge job: the judges on a throwaway copy of the state (the restored state is not touched and
 * nothing is saved), delivery and GitHub off, every verdict written to `verdicts-path`.
 */
async function judgeJob(
  inputs: DrainJobInput,
  restored: SchoolConfig,
  logger: Logger,
  context: RunContext,
): Promise<DrainJob> {
  const copy = mkdtempSync(join(tmpdir(), 'school-judge-state-'));
  cpSync(resolve(restored.stateDir), copy, {
    recursive: true,
    filter: (src) => !src.endsWith('.lock'),
  });
  const config: SchoolConfig = { ...restored, stateDir: copy };
  const layout = new StateLayout(copy, auditActor(context));
  const queue = new GradingQueue(layout, (m) => logger.warning(m));
  const requeued = await importAndRequeue(inputs, config, layout, queue, logger);
  const entries: VerdictEntry[] = [];
  const judge = judgeGrader({
    config,
    layout,
    host: hostEnvOf(context),
    verifyOnCleanCheckout,
    installedDependencies,
  });
  const drained = await logger
    .group('Judge the pending jobs', () =>
      drain({
        config,
        layout,
        logger,
        limits: inputs.limits,
        judging: { grade: recordingGrader(layout, judge, entries) },
        worker: { context },
        observe: { progress: drainProgress({ logger }) },
      }),
    )
    .finally(() => judge.close());
  const dir = inputs.verdicts!.path!;
  mkdirSync(dir, { recursive: true });
  const file = writeVerdicts(dir, entries);
  logger.info(`${entries.length} verdict(s) handed on in ${file}`);
  const pending = pendingKeys(queue.state(), new Date()).length;
  return {
    config,
    layout,
    result: {
      mode: 'judge',
      drained: withOutbox(drained, {
        outboxDelivered: 0,
        outboxPending: new Outbox(layout).pending().length,
      }),
      verdicts: entries.length,
      requeued,
      file,
      digest: verdictsDigest(readFileSync(file)),
      pending,
      dead: queue.deadLetters(),
    },
  };
}
