import { readdirSync, existsSync, cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startArtifactService, type ArtifactService } from '../support/artifact-service.js';
import type { ActionsFake } from './fake.js';
import { Job, STATE_INPUTS, type CheckoutOptions, type RunContext, type StepResult } from './runner.js';

/**
 * One run of `.github/workflows/school-loop.yml`, job by job and step by step, with the same inputs
 * and artifacts the workflow passes: plan → roster × fleet → heartbeats, and crew × daemon with
 * work → judge → grade. Roster and crew legs (where students run) hold no write token and save
 * nothing: they hand their events and bookbags on as artifacts, which heartbeats and grade validate
 * and merge into the state before they save. The judge leg (no write token either) runs the judges
 * on a throwaway copy and hands verdicts on; grade applies them as data and runs no judge. Jobs the workflow runs in parallel run here as parallel
 * OS processes, so the two saving jobs race on the state branch's compare-and-swap as on GitHub.
 */

/** `fetch-depth: 0`: the judges check out a crew's recorded base, delivery builds on it. */
const ALL_HISTORY: CheckoutOptions = { fetchDepth: 0 };

export interface PlanJobResult {
  job: Job;
  fetch: StepResult;
  dispatch: StepResult;
  /** The plan job's outputs (daemon-matrix.mjs): daemons, crews, has-work, fleet, attempt, revisions, runners. */
  outputs: Record<string, string>;
}

export interface LoopRun {
  plan: PlanJobResult;
  roster: Job[];
  /** Absent when no roster leg ran (an empty fleet). */
  heartbeats?: { job: Job; imported: StepResult };
  crews: Map<string, { job: Job; run: StepResult }>;
  judge: { job: Job; judged: StepResult };
  grade: { job: Job; imported?: StepResult; drain: StepResult };
}

export interface LoopOptions {
  /** Daemons whose crew job never runs (cancelled while pending, or no runner came). */
  skipCrew?: string[];
  /** The crew jobs' `fetch-depth`, whatever the plan says (a caller's older workflow). */
  crewFetchDepth?: number;
  /** A short cycle for these pull requests (the caller's `event-pull-request`: `only-pull-requests`). */
  onlyPullRequests?: string;
  /** The `env:` of the crew step: the agents' credentials (the workflow passes its secrets there). */
  crewEnv?: Record<string, string>;
}

export class LoopRunner {
  private service?: Promise<ArtifactService>;

  constructor(
    private readonly base: Omit<RunContext, 'runId'>,
    private readonly fake: ActionsFake,
  ) {}

  /**
   * The loop's one artifact (results) service (`base.artifacts`, else started on first use): the
   * crew jobs' claims on the shared standby queue and the grade job's list of them go there; its
   * `artifacts()`, `requests` and `count()` show what the bundles did, `fail`/`delay`/`hold` inject.
   */
  artifactService(): Promise<ArtifactService> {
    this.service ??= this.base.artifacts ? Promise.resolve(this.base.artifacts) : startArtifactService();
    return this.service;
  }

  /** A run's context, with the loop's artifact service. */
  async context(runId: number, runAttempt?: number): Promise<RunContext> {
    return {
      ...this.base,
      runId,
      ...(runAttempt ? { runAttempt } : {}),
      artifacts: await this.artifactService(),
    };
  }

  /** Stops the artifact service this runner started (a `base.artifacts` is the caller's). */
  async close(): Promise<void> {
    if (this.service && !this.base.artifacts) await (await this.service).close();
    this.service = undefined;
  }

  private artifacts(runId: number): string[] {
    const dir = join(this.base.root, `run-${runId}`, 'artifacts');
    return existsSync(dir) ? readdirSync(dir) : [];
  }

  /** Starts a job: recorded in_progress for the Actions API, ended with its conclusion. */
  private async job<T>(
    ctx: RunContext,
    name: string,
    body: (job: Job) => Promise<T>,
    checkout: CheckoutOptions = {},
  ): Promise<T> {
    this.fake.job(ctx.runId, name, 'in_progress');
    const job = new Job(ctx, name, checkout);
    try {
      const out = await body(job);
      this.fake.job(ctx.runId, name, 'completed', 'success');
      return out;
    } catch (e) {
      this.fake.job(ctx.runId, name, 'completed', 'failure');
      throw e;
    }
  }

  async planJob(ctx: RunContext, options: LoopOptions = {}): Promise<PlanJobResult> {
    return this.job(ctx, 'plan', async (job) => {
      await job.restore();
      const fetch = await job.must(
        job.uses('fetch-curriculum', {
          repository: ctx.repository,
          config: STATE_INPUTS.config,
          'state-dir': STATE_INPUTS['state-dir'],
        }),
      );
      const dispatch = await job.must(
        job.uses('dispatch-crew', {
          mode: 'plan',
          config: STATE_INPUTS.config,
          'state-dir': STATE_INPUTS['state-dir'],
          'max-crews': '',
          ...(options.onlyPullRequests ? { 'only-pull-requests': options.onlyPullRequests } : {}),
        }),
      );
      const matrix = await job.must(
        job.script('daemon-matrix.mjs', ['.school/plan/matrix.json'], {
          SCHOOL_MATRIX: dispatch.outputs.matrix ?? '',
          SCHOOL_FLEET: dispatch.outputs.fleet ?? '',
          SCHOOL_REVISIONS: dispatch.outputs.revisions ?? '',
          SCHOOL_RUNNERS: dispatch.outputs.runners ?? '',
          SCHOOL_RUNNER_PREFIX: 'school',
        }),
      );
      await job.save();
      if (matrix.outputs['has-work'] === 'true') {
        cpSync(job.path('.school/state/curriculum.jsonl'), job.path('.school/plan/curriculum.jsonl'));
        job.upload(`school-plan-${ctx.runId}-1`, '.school/plan');
      }
      return { job, fetch, dispatch, outputs: matrix.outputs };
    });
  }

  /** The plan job's attempt and this run's attempt, as the workflow names its artifacts. */
  private attempts(ctx: RunContext): string {
    return `1-${ctx.runAttempt ?? 1}`;
  }

  /**
   * `roster <daemon>` on the daemon's own runner: beats into a handoff, restores and saves nothing
   * (no state, no write token), and hands the beat on as an artifact.
   */
  async rosterJob(ctx: RunContext, daemon: string): Promise<Job> {
    return this.job(ctx, `roster ${daemon}`, async (job) => {
      mkdirSync(job.path(STATE_INPUTS['state-dir']), { recursive: true });
      await job.must(
        job.uses('dispatch-crew', {
          mode: 'heartbeat',
          daemon,
          config: STATE_INPUTS.config,
          'state-dir': STATE_INPUTS['state-dir'],
          'handoff-out': '.school/out',
          token: '',
        }),
      );
      job.upload(`school-roster-${ctx.runId}-${this.attempts(ctx)}-${daemon}`, '.school/out');
      return job;
    });
  }

  /** `heartbeats`: takes this run's roster handoffs, validates and records them, saves. */
  async heartbeatsJob(ctx: RunContext): Promise<{ job: Job; imported: StepResult }> {
    return this.job(ctx, 'heartbeats', async (job) => {
      await job.restore();
      const prefix = `school-roster-${ctx.runId}-1-`;
      job.download((n) => n.startsWith(prefix), '.school/in/roster', this.artifacts(ctx.runId), {
        merge: false,
      });
      const imported = await job.must(
        job.uses('dispatch-crew', {
          mode: 'import',
          config: STATE_INPUTS.config,
          'state-dir': STATE_INPUTS['state-dir'],
          'handoffs-in': '.school/in/roster',
        }),
      );
      await job.save();
      return { job, imported };
    });
  }

  /**
   * `crew <daemon>`: students run here. Restores the state read-only, takes the plan, runs the
   * daemon's crews into a handoff (no token) and hands it on — also after a failure; saves nothing.
   */
  async crewJob(
    ctx: RunContext,
    daemon: string,
    revisions = false,
    fetchDepth?: number,
    env: Record<string, string> = {},
  ): Promise<{ job: Job; run: StepResult }> {
    // A revision starts from its pull request's head: with revisions planned the checkout fetches
    // every branch (`fetch-depth: 0`), one shallow commit otherwise.
    const checkout = { fetchDepth: fetchDepth ?? (revisions ? 0 : 1) };
    return this.job(
      ctx,
      `crew ${daemon}`,
      async (job) => {
        await job.restore();
        job.download((n) => n === `school-plan-${ctx.runId}-1`, '.school/plan', this.artifacts(ctx.runId));
        const run = await job.uses(
          'dispatch-crew',
          {
            mode: 'run',
            daemon,
            config: STATE_INPUTS.config,
            'state-dir': STATE_INPUTS['state-dir'],
            'handoff-out': '.school/out',
            'job-timeout-minutes': '120',
            'plan-attempt': '1', // needs.plan.outputs.attempt: the claims' names carry it
            token: '',
          },
          env,
        );
        job.upload(`school-handoff-${ctx.runId}-${this.attempts(ctx)}-${daemon}`, '.school/out');
        if (run.code !== 0) throw new Error(`crew ${daemon}: run exited ${run.code}\n${run.stdout}`);
        return { job, run };
      },
      checkout,
    );
  }

  private takeHandoffs(ctx: RunContext, job: Job, crewsRan: boolean): void {
    mkdirSync(job.path('.school/in/handoff'), { recursive: true });
    if (!crewsRan) return;
    const prefix = `school-handoff-${ctx.runId}-1-`;
    job.download((n) => n.startsWith(prefix), '.school/in/handoff', this.artifacts(ctx.runId), {
      merge: false,
    });
  }

  /**
   * `judge`: restores the state (read only), takes the same handoffs, judges the pending jobs on a
   * throwaway copy with no token, and hands `verdicts.json` on. Saves nothing.
   */
  async judgeJob(ctx: RunContext, crewsRan: boolean): Promise<{ job: Job; judged: StepResult }> {
    return this.job(
      ctx,
      'judge',
      async (job) => {
        await job.restore();
        this.takeHandoffs(ctx, job, crewsRan);
        const judged = await job.must(
          job.uses('drain-grading', {
            mode: 'judge',
            config: STATE_INPUTS.config,
            'state-dir': STATE_INPUTS['state-dir'],
            'bookbags-path': '.school/in/handoff',
            'verdicts-path': '.school/verdicts',
            'requeue-dead-letter': '',
            token: '',
          }),
        );
        job.upload(`school-verdicts-${ctx.runId}-1-1`, '.school/verdicts');
        return { job, judged };
      },
      ALL_HISTORY,
    );
  }

  /**
   * `grade`: takes this run's crew handoffs (one directory each), validates and merges them into
   * the state, applies the judge's verdicts (as data: no judge runs here), saves.
   */
  async gradeJob(
    ctx: RunContext,
    crewsRan: boolean,
  ): Promise<{ job: Job; imported?: StepResult; drain: StepResult }> {
    return this.job(
      ctx,
      'grade',
      async (job) => {
        await job.restore();
        let imported: StepResult | undefined;
        this.takeHandoffs(ctx, job, crewsRan);
        const verdicts = `school-verdicts-${ctx.runId}-1-1`;
        job.download((n) => n === verdicts, '.school/in/verdicts', this.artifacts(ctx.runId));
        if (crewsRan) {
          imported = await job.must(
            job.uses('dispatch-crew', {
              mode: 'import',
              config: STATE_INPUTS.config,
              'state-dir': STATE_INPUTS['state-dir'],
              'handoffs-in': '.school/in/handoff',
            }),
          );
        }
        const drain = await job.must(
          job.uses('drain-grading', {
            mode: 'apply',
            'verdicts-path': '.school/in/verdicts',
            config: STATE_INPUTS.config,
            'state-dir': STATE_INPUTS['state-dir'],
            'bookbags-path': '.school/in/handoff',
            'requeue-dead-letter': '',
          }),
        );
        await job.save();
        return { job, ...(imported ? { imported } : {}), drain };
      },
      ALL_HISTORY,
    );
  }

  /**
   * The whole workflow run `runId`: after the plan, the roster legs then `heartbeats`, and the crew
   * legs then `judge` then `grade`, both chains at once (their saves race on the branch's compare-and-swap).
   */
  async run(runId: number, options: LoopOptions = {}): Promise<LoopRun> {
    const ctx = await this.context(runId);
    const plan = await this.planJob(ctx, options);
    const fleet = JSON.parse(plan.outputs.fleet ?? '[]') as string[];
    const daemons = JSON.parse(plan.outputs.daemons ?? '[]') as string[];
    const crewDaemons = plan.outputs['has-work'] === 'true' ? daemons : [];
    for (const d of crewDaemons.filter((x) => options.skipCrew?.includes(x))) {
      // Replaced while pending by a newer job of its group: GitHub reports it cancelled, never started.
      this.fake.job(runId, `crew ${d}`, 'completed', 'cancelled');
    }
    const beats = (async () => {
      const roster = await Promise.all(fleet.map((d) => this.rosterJob(ctx, d)));
      return { roster, heartbeats: roster.length ? await this.heartbeatsJob(ctx) : undefined };
    })();
    const graded = (async () => {
      const crews = await Promise.all(
        crewDaemons
          .filter((d) => !options.skipCrew?.includes(d))
          .map(
            async (d) =>
              [
                d,
                await this.crewJob(
                  ctx,
                  d,
                  plan.outputs.revisions === 'true',
                  options.crewFetchDepth,
                  options.crewEnv,
                ),
              ] as const,
          ),
      );
      const crewsRan = crewDaemons.length > 0;
      const judge = await this.judgeJob(ctx, crewsRan);
      return { crews: new Map(crews), judge, grade: await this.gradeJob(ctx, crewsRan) };
    })();
    const [{ roster, heartbeats }, { crews, judge, grade }] = await Promise.all([beats, graded]);
    return { plan, roster, ...(heartbeats ? { heartbeats } : {}), crews, judge, grade };
  }
}
