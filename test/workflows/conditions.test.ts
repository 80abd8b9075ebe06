import { readFileSync } from 'node:fs';
import { data } from '@actions/expressions';
import { truthy as isTruthy } from '@actions/expressions/result';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { Step, Workflow } from './rules.js';
import { evaluate, interpolate, type Json } from './expressions.js';

/**
 * Evaluates the workflows' job conditions and artifact names the way GitHub does: the conditions as
 * @actions/workflow-parser converts them (a condition without a status function is wrapped in
 * `success() && (…)`), evaluated by GitHub's expression engine (@actions/expressions) against the
 * contexts a run has. In a called workflow `github` is the caller's (its event_name too) and `vars`
 * are the caller's variables, which a new user has not set.
 */

type Result = 'success' | 'failure' | 'skipped';

/** GitHub's truthiness: false, 0, '', null and NaN are falsy. */
const truthy = (v: data.ExpressionData) => isTruthy(v);

interface Job {
  id: string;
  needs: string[];
  condition: string;
}

async function jobsOf(file: string): Promise<Job[]> {
  const content = readFileSync(file, 'utf8');
  const parsed = parseWorkflow({ name: file, content }, new NoOperationTraceWriter());
  const template = await convertWorkflowTemplate(parsed.context, parsed.value!);
  expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
  return template.jobs.map((j) => {
    const job = j as unknown as {
      id: { value: string };
      needs?: { value: string }[];
      if: { expression: string };
    };
    return { id: job.id.value, needs: (job.needs ?? []).map((n) => n.value), condition: job.if.expression };
  });
}

interface Scenario {
  github: Json;
  inputs: Json;
  vars?: Json;
  /** Outputs of jobs that ran and succeeded. */
  outputs?: Record<string, Json>;
  /** Jobs that run but fail. */
  fail?: string[];
}

/** Which jobs run, in order, as GitHub decides it from each job's `needs` and condition. */
function simulate(jobs: Job[], s: Scenario): Record<string, Result> {
  const results: Record<string, Result> = {};
  const ancestors = (id: string): string[] => {
    const job = jobs.find((j) => j.id === id)!;
    return [...new Set(job.needs.flatMap((n) => [n, ...ancestors(n)]))];
  };
  for (const job of jobs) {
    for (const n of job.needs) expect(results[n], `${job.id} needs ${n}, which comes later`).toBeDefined();
    const up = ancestors(job.id).map((a) => results[a]!);
    const status = {
      success: up.every((r) => r === 'success'),
      failure: up.some((r) => r === 'failure'),
      cancelled: false,
    };
    const needs = Object.fromEntries(
      job.needs.map((n) => [
        n,
        { result: results[n], outputs: results[n] === 'success' ? (s.outputs?.[n] ?? {}) : {} },
      ]),
    );
    const context = { github: s.github, inputs: s.inputs, vars: s.vars ?? {}, needs };
    const runs = truthy(evaluate(job.condition, context, status));
    results[job.id] = !runs ? 'skipped' : s.fail?.includes(job.id) ? 'failure' : 'success';
  }
  return results;
}

const loop = parseYaml(readFileSync('.github/workflows/school-loop.yml', 'utf8')) as Workflow & {
  on: { workflow_call: { inputs: Record<string, { default?: unknown }> } };
};

/** The caller exactly as docs/github-actions.md shows it. */
function readmeCaller(): { on: Json; with: Json } {
  const readme = readFileSync('docs/github-actions.md', 'utf8');
  const block = /```yaml\n(# \.github\/workflows\/school\.yml\n[\s\S]*?)```/.exec(readme);
  expect(block, 'docs/github-actions.md: the caller workflow block').not.toBeNull();
  const caller = parseYaml(block![1]!) as { on: Json; jobs: Record<string, { uses: string; with?: Json }> };
  const job = Object.values(caller.jobs)[0]!;
  expect(job.uses).toMatch(/\/\.github\/workflows\/school-loop\.yml@/);
  return { on: caller.on, with: job.with ?? {} };
}

/** A called workflow's inputs: the caller's `with`, and every other input's default. */
function calledInputs(given: Json): Json {
  const defaults = Object.fromEntries(
    Object.entries(loop.on.workflow_call.inputs).map(([k, v]) => [k, v.default ?? null]),
  );
  return { ...defaults, ...given };
}

const github = (event_name: string, run_attempt = '1') => ({
  event_name,
  repository: 'someone/app',
  run_id: '8123',
  run_attempt,
  sha: 'a'.repeat(40),
});

const FLEET = { fleet: '["alpha","beta"]', attempt: '1' };
const fresh = { plan: { ...FLEET, 'has-work': 'false', daemons: '[]', crews: '0' } };
const busy = { plan: { ...FLEET, 'has-work': 'true', daemons: '["alpha","beta"]', crews: '3' } };

describe("The documented caller: every job's condition, evaluated as GitHub does", () => {
  const caller = readmeCaller();

  it('the caller runs on a schedule and by hand, and sets no variable the loop would need', async () => {
    expect(Object.keys(caller.on)).toEqual(expect.arrayContaining(['schedule', 'workflow_dispatch']));
    const jobs = await jobsOf('.github/workflows/school-loop.yml');
    for (const job of jobs) expect(job.condition, job.id).not.toMatch(/\bvars\./);
  });

  for (const event of ['schedule', 'workflow_dispatch', 'pull_request']) {
    it(`${event}: a fresh school plans, beats every daemon and grades (no crews yet)`, async () => {
      const jobs = await jobsOf('.github/workflows/school-loop.yml');
      const r = simulate(jobs, { github: github(event), inputs: calledInputs(caller.with), outputs: fresh });
      expect(r).toEqual({
        plan: 'success',
        roster: 'success',
        heartbeats: 'success',
        crew: 'skipped',
        judge: 'success',
        grade: 'success',
      });
    });

    it(`${event}: with work, every job runs`, async () => {
      const jobs = await jobsOf('.github/workflows/school-loop.yml');
      const r = simulate(jobs, { github: github(event), inputs: calledInputs(caller.with), outputs: busy });
      expect(
        Object.values(r).every((x) => x === 'success'),
        JSON.stringify(r),
      ).toBe(true);
    });
  }

  it('a failed crew job is still graded; a failed plan still drains; dry-run and drain-only do what they say', async () => {
    const jobs = await jobsOf('.github/workflows/school-loop.yml');
    const inputs = calledInputs(caller.with);
    const base = { github: github('schedule'), outputs: busy };
    expect(simulate(jobs, { ...base, inputs, fail: ['crew'] })).toMatchObject({
      crew: 'failure',
      judge: 'success',
      grade: 'success',
    });
    // A failed judge leaves grade to apply nothing: the pending jobs stay queued, nothing is lost.
    expect(simulate(jobs, { ...base, inputs, fail: ['judge'] })).toMatchObject({
      judge: 'failure',
      grade: 'success',
    });
    expect(simulate(jobs, { ...base, inputs, fail: ['roster'] })).toMatchObject({
      heartbeats: 'success',
      grade: 'success',
    });
    expect(simulate(jobs, { ...base, inputs, fail: ['plan'] })).toEqual({
      plan: 'failure',
      roster: 'skipped',
      heartbeats: 'skipped',
      crew: 'skipped',
      judge: 'success',
      grade: 'success',
    });
    expect(simulate(jobs, { ...base, inputs: calledInputs({ ...caller.with, 'dry-run': true }) })).toEqual({
      plan: 'success',
      roster: 'skipped',
      heartbeats: 'skipped',
      crew: 'skipped',
      judge: 'skipped',
      grade: 'skipped',
    });
    expect(simulate(jobs, { ...base, inputs: calledInputs({ ...caller.with, 'drain-only': true }) })).toEqual(
      {
        plan: 'skipped',
        roster: 'skipped',
        heartbeats: 'skipped',
        crew: 'skipped',
        judge: 'success',
        grade: 'success',
      },
    );
  });

  it("negative control: the former gate on the caller's variables skips a scheduled caller's plan", () => {
    const former =
      "success() && (!inputs.drain-only && (github.event_name != 'schedule' || vars.SCHOOL_LOOP_ENABLED == 'true'))";
    const context = { github: github('schedule'), inputs: calledInputs(caller.with), vars: {}, needs: {} };
    expect(truthy(evaluate(former, context, { success: true }))).toBe(false);
    expect(
      truthy(evaluate(former, { ...context, github: github('workflow_dispatch') }, { success: true })),
    ).toBe(true);
  });
});

describe("school.yml: this repository's own schedule is gated on its variable", () => {
  it('runs on a schedule only with SCHOOL_LOOP_ENABLED=true, by hand always', async () => {
    const [job] = await jobsOf('.github/workflows/school.yml');
    const runs = (event: string, vars: Json) =>
      truthy(
        evaluate(job!.condition, { github: github(event), vars, needs: {}, inputs: {} }, { success: true }),
      );
    expect(runs('schedule', {})).toBe(false);
    expect(runs('schedule', { SCHOOL_LOOP_ENABLED: 'false' })).toBe(false);
    expect(runs('schedule', { SCHOOL_LOOP_ENABLED: 'true' })).toBe(true);
    expect(runs('workflow_dispatch', {})).toBe(true);
  });
});

describe('"Re-run failed jobs": the re-run crew and grade take the first attempt\'s plan and handoffs', () => {
  const step = (job: string, pred: (s: Step) => boolean) => loop.jobs[job]!.steps!.find(pred)!;
  const uploadOf = (job: string) => step(job, (s) => (s.uses ?? '').startsWith('actions/upload-artifact'));
  const downloadOf = (job: string) =>
    step(job, (s) => (s.uses ?? '').startsWith('actions/download-artifact'));

  it('names every artifact after the plan attempt, so a re-run job finds the plan and the grade finds every handoff', () => {
    const plan1 = { github: github('schedule', '1'), steps: { matrix: { outputs: { attempt: '1' } } } };
    const planName = interpolate(String(uploadOf('plan').with!.name), plan1);
    // Attempt 1: crew alpha succeeded, crew beta failed. Attempt 2 re-runs crew beta and the grade;
    // the plan keeps its attempt-1 outputs.
    const needs = { plan: { outputs: { ...busy.plan } } };
    const crewCtx = (attempt: string, daemon: string) => ({
      github: github('schedule', attempt),
      needs,
      matrix: { daemon },
    });
    expect(interpolate(String(downloadOf('crew').with!.name), crewCtx('2', 'beta'))).toBe(planName);
    const handoffs = [
      interpolate(String(uploadOf('crew').with!.name), crewCtx('1', 'alpha')),
      interpolate(String(uploadOf('crew').with!.name), crewCtx('1', 'beta')),
      interpolate(String(uploadOf('crew').with!.name), crewCtx('2', 'beta')),
    ];
    expect(new Set(handoffs).size).toBe(3); // the re-run never collides with the first attempt's upload
    const pattern = interpolate(String(downloadOf('grade').with!.pattern), {
      github: github('schedule', '2'),
      needs,
    });
    expect(handoffs.filter((n) => picomatch(pattern)(n))).toEqual(handoffs);
    // Another run's or another plan attempt's handoffs are never taken.
    expect(picomatch(pattern)(handoffs[0]!.replace('-8123-1-', '-8124-1-'))).toBe(false);
    expect(picomatch(pattern)(handoffs[0]!.replace('-8123-1-', '-8123-2-'))).toBe(false);
    // The same holds for the roster's heartbeats and the heartbeats job.
    const beat = interpolate(String(uploadOf('roster').with!.name), crewCtx('2', 'beta'));
    const beats = interpolate(String(downloadOf('heartbeats').with!.pattern), {
      github: github('schedule', '2'),
      needs,
    });
    expect(picomatch(beats)(beat)).toBe(true);
    expect(picomatch(pattern)(beat)).toBe(false); // a heartbeat is never taken as a crew handoff
  });

  it("negative control: names from the job's own run_attempt miss the plan on a re-run", () => {
    const former = 'school-plan-${{ github.run_id }}-${{ github.run_attempt }}';
    expect(interpolate(former, { github: github('schedule', '2') })).not.toBe(
      interpolate(former, { github: github('schedule', '1') }),
    );
  });

  it('the re-run grade still runs when the re-run crew job fails again', async () => {
    const jobs = await jobsOf('.github/workflows/school-loop.yml');
    const r = simulate(jobs, {
      github: github('schedule', '2'),
      inputs: calledInputs({}),
      outputs: busy,
      fail: ['crew'],
    });
    expect(r.grade).toBe('success');
  });
});
