import { readdirSync, existsSync, cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ActionsFake } from './fake.js';
import { Job, STATE_INPUTS, type RunContext, type StepResult } from './runner.js';

/**
 * One run of `.github/workflows/school-loop.yml`, job by job and step by step, with the same inputs
 * the workflow passes: plan → roster × fleet → crew × daemon with work → grade. Jobs that the
 * workflow runs in parallel (roster and crew matrix legs) run here as parallel OS processes, so
 * their saves race on the state branch's compare-and-swap as they would on GitHub.
 */

export interface PlanJobResult {
  job: Job;
  fetch: StepResult;
  dispatch: StepResult;
  /** The plan job's outputs (daemon-matrix.mjs): daemons, crews, has-work, fleet. */
  outputs: Record<string, string>;
}

export interface LoopRun {
  plan: PlanJobResult;
  roster: Job[];
  crews: Map<string, { job: Job; run: StepResult }>;
  grade: { job: Job; drain: StepResult };
}

export interface LoopOptions {
  /** Daemons whose crew job never runs (cancelled while pending, or no runner came). */
  skipCrew?: string[];
}

export class LoopRunner {
  constructor(
    private readonly base: Omit<RunContext, 'runId'>,
    private readonly fake: ActionsFake,
  ) {}

  private artifacts(runId: number): string[] {
    const dir = join(this.base.root, `run-${runId}`, 'artifacts');
    return existsSync(dir) ? readdirSync(dir) : [];
  }

  /** Starts a job: recorded in_progress for the Actions API, ended with its conclusion. */
  private async job<T>(ctx: RunContext, name: string, body: (job: Job) => Promise<T>): Promise<T> {
    this.fake.job(ctx.runId, name, 'in_progress');
    const job = new Job(ctx, name);
    try {
      const out = await body(job);
      this.fake.job(ctx.runId, name, 'completed', 'success');
      return out;
    } catch (e) {
      this.fake.job(ctx.runId, name, 'completed', 'failure');
      throw e;
    }
  }

  async planJob(ctx: RunContext): Promise<PlanJobResult> {
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
        }),
      );
      const matrix = await job.must(
        job.script('daemon-matrix.mjs', ['.school/plan/matrix.json'], {
          SCHOOL_MATRIX: dispatch.outputs.matrix ?? '',
          SCHOOL_FLEET: dispatch.outputs.fleet ?? '',
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

  async rosterJob(ctx: RunContext, daemon: string): Promise<Job> {
    return this.job(ctx, `roster ${daemon}`, async (job) => {
      await job.restore();
      await job.must(
        job.uses('dispatch-crew', {
          mode: 'heartbeat',
          daemon,
          config: STATE_INPUTS.config,
          'state-dir': STATE_INPUTS['state-dir'],
        }),
      );
      await job.save();
      return job;
    });
  }

  async crewJob(ctx: RunContext, daemon: string): Promise<{ job: Job; run: StepResult }> {
    return this.job(ctx, `crew ${daemon}`, async (job) => {
      await job.restore();
      job.download((n) => n === `school-plan-${ctx.runId}-1`, '.school/plan', this.artifacts(ctx.runId));
      const run = await job.uses('dispatch-crew', {
        mode: 'run',
        daemon,
        config: STATE_INPUTS.config,
        'state-dir': STATE_INPUTS['state-dir'],
        'bookbags-path': '.school/out/bookbags',
      });
      // Both `always()`: bookbags and finished crews reach the branch even after a failure.
      job.upload(`school-bookbags-${ctx.runId}-1-${daemon}`, '.school/out/bookbags');
      await job.save();
      if (run.code !== 0) throw new Error(`crew ${daemon}: run exited ${run.code}\n${run.stdout}`);
      return { job, run };
    });
  }

  async gradeJob(ctx: RunContext, crewsRan: boolean): Promise<{ job: Job; drain: StepResult }> {
    return this.job(ctx, 'grade', async (job) => {
      await job.restore();
      if (crewsRan) {
        const prefix = `school-bookbags-${ctx.runId}-1-`;
        job.download((n) => n.startsWith(prefix), '.school/in/bookbags', this.artifacts(ctx.runId));
      } else mkdirSync(job.path('.school/in/bookbags'), { recursive: true });
      const drain = await job.must(
        job.uses('drain-grading', {
          config: STATE_INPUTS.config,
          'state-dir': STATE_INPUTS['state-dir'],
          'bookbags-path': '.school/in/bookbags',
          'requeue-dead-letter': '',
        }),
      );
      await job.save();
      return { job, drain };
    });
  }

  /** The whole workflow run `runId`. */
  async run(runId: number, options: LoopOptions = {}): Promise<LoopRun> {
    const ctx: RunContext = { ...this.base, runId };
    const plan = await this.planJob(ctx);
    const fleet = JSON.parse(plan.outputs.fleet ?? '[]') as string[];
    const daemons = JSON.parse(plan.outputs.daemons ?? '[]') as string[];
    const crewDaemons = plan.outputs['has-work'] === 'true' ? daemons : [];
    for (const d of crewDaemons.filter((x) => options.skipCrew?.includes(x))) {
      // Replaced while pending by a newer job of its group: GitHub reports it cancelled, never started.
      this.fake.job(runId, `crew ${d}`, 'completed', 'cancelled');
    }
    const [roster, crewList] = await Promise.all([
      Promise.all(fleet.map((d) => this.rosterJob(ctx, d))),
      Promise.all(
        crewDaemons
          .filter((d) => !options.skipCrew?.includes(d))
          .map(async (d) => [d, await this.crewJob(ctx, d)] as const),
      ),
    ]);
    const grade = await this.gradeJob(ctx, crewDaemons.length > 0);
    return { plan, roster, crews: new Map(crewList), grade };
  }
}
