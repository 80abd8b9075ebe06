import { readFileSync } from 'node:fs';
import { data, Evaluator, Lexer, Parser } from '@actions/expressions';
import { truthy } from '@actions/expressions/result';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript } from './run-script.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import { TESTED_VERSIONS } from '../../src/agents/tested-versions.js';
import { dispatchOutputs } from '../../src/actions/dispatch-crew/summary.js';
import { parseConfig } from '../../src/config/load.js';
import { fleetStatus } from '../../src/dispatch/fleet/fleet.js';
import type { DispatchJobResult } from '../../src/loop/dispatch-job.js';
import { renderWorkflow } from '../../src/cli/init-workflows.js';
import { tempDir } from '../support/tmp.js';
import { parseWorkflowYaml, type Step } from './rules.js';

/**
 * A daemon on a GitHub-hosted runner (fleet.daemons[].hosted): the plan's daemon-matrix.mjs routes
 * its crew and roster jobs to the hosted label, every other daemon to [self-hosted, <prefix>-<id>],
 * and on a hosted runner the crew job installs bubblewrap and lifts the AppArmor restriction before
 * the students run. The routing and the guard are evaluated with GitHub's expression engine.
 */

const tmp = tempDir('school-hosted-');
afterAll(() => tmp.cleanup());
const wf = parseWorkflowYaml(readFileSync('.github/workflows/school-loop.yml', 'utf8'));

/** dispatch-crew's outputs for a plan of nothing over the fleet of `config`, no daemon busy. */
function planOutputs(config: SchoolConfig) {
  const fleet = fleetStatus(config, { roster: {} } as never, new Date()).map((d) => ({
    ...d,
    busy: 0,
    assigned: 0,
  }));
  const plan = { matrix: [], fleet, assignments: [], refused: [] };
  return dispatchOutputs({ mode: 'plan', plan, notes: {} } as unknown as DispatchJobResult);
}

const matrixOutputs = (env: Record<string, string>) => runScript(tmp.path, 'daemon-matrix.mjs', env);

function evaluate(expression: string, context: Record<string, unknown>): data.ExpressionData {
  const inner = /^\$\{\{([\s\S]*)\}\}$/.exec(expression.trim())?.[1] ?? expression;
  const lexed = new Lexer(inner.trim()).lex();
  const tree = new Parser(lexed.tokens, Object.keys(context), []).parse();
  const ctx = JSON.parse(JSON.stringify(context), data.reviver) as data.Dictionary;
  return new Evaluator(tree, ctx, new Map()).evaluate();
}

/** An expression's value as plain JSON: a string or a list of them. */
const plain = (v: data.ExpressionData): unknown =>
  v instanceof data.Array ? v.values().map(plain) : v.coerceString();

describe('a daemon on a GitHub-hosted runner', () => {
  const hostedPlan = () =>
    matrixOutputs({
      SCHOOL_MATRIX: JSON.stringify([{ daemon: 'local', assignments: ['c1-11111111'] }]),
      SCHOOL_FLEET: JSON.stringify(['local', 'gpu']),
      SCHOOL_RUNNERS: JSON.stringify({ local: 'ubuntu-latest' }),
      SCHOOL_RUNNER_PREFIX: 'school',
    });

  it("the plan names each hosted daemon's label in dispatch-crew's `runners` output, and nothing else", () => {
    const config = parseConfig({
      fleet: { daemons: [{ id: 'local', hosted: 'ubuntu-latest' }, { id: 'gpu' }] },
    });
    const out = planOutputs(config);
    expect(out.runners).toBe('{"local":"ubuntu-latest"}');
    expect(out.fleet).toBe('["local","gpu"]');
  });

  it("names a self-hosted daemon's own labels in the `runners` output; school.yml refuses a label runs-on cannot take", () => {
    const config = parseConfig({
      fleet: {
        daemons: [
          { id: 'local', hosted: 'ubuntu-latest' },
          { id: 'gpu', labels: ['linux', 'a100'] },
        ],
      },
    });
    const out = planOutputs(config);
    expect(JSON.parse(out.runners!)).toEqual({ local: 'ubuntu-latest', gpu: ['linux', 'a100'] });
    expect(() => parseConfig({ fleet: { daemons: [{ id: 'gpu', labels: ['two words'] }] } })).toThrow(
      /fleet\.daemons\.0\.labels\.0.*runner label/s,
    );
  });

  it('routes the crew and roster jobs of a hosted daemon to its label, the others to their self-hosted runner', () => {
    const r = hostedPlan();
    expect(r.status, r.stderr).toBe(0);
    for (const job of ['crew', 'roster']) {
      const runsOn = wf.jobs[job]!['runs-on'] as string;
      const on = (daemon: string) =>
        plain(evaluate(runsOn, { needs: { plan: { outputs: r.outputs } }, matrix: { daemon } }));
      expect(on('local'), job).toBe('ubuntu-latest');
      expect(on('gpu'), job).toEqual(['self-hosted', 'school-gpu']);
    }
  });

  it('refuses a runner that is not a plain label, and self-hosted as a hosted label', () => {
    for (const bad of [
      { local: 'ubuntu-latest, windows' },
      { local: 'self-hosted' },
      { 'Not-An-Id': 'x' },
      ['x'],
    ]) {
      const r = matrixOutputs({
        SCHOOL_MATRIX: '[]',
        SCHOOL_FLEET: '["local"]',
        SCHOOL_RUNNERS: JSON.stringify(bad),
      });
      expect(r.status, JSON.stringify(bad)).toBe(1);
      expect(r.outputs).toEqual({});
    }
    const prefix = matrixOutputs({ SCHOOL_MATRIX: '[]', SCHOOL_RUNNER_PREFIX: '${{ x }}' });
    expect(prefix.status).toBe(1);
  });

  it('installs bubblewrap and lifts AppArmor before the students run, on hosted runners only', () => {
    for (const job of ['crew', 'roster']) {
      const steps = wf.jobs[job]!.steps as Step[];
      const i = steps.findIndex((s) => /apparmor_restrict_unprivileged_userns=0/.test(s.run ?? ''));
      expect(i, job).toBeGreaterThanOrEqual(0);
      expect(steps[i]!.run).toMatch(/apt-get install -y -qq bubblewrap/);
      const first = steps.findIndex((s) => /actions\/dispatch-crew$/.test(s.uses ?? ''));
      expect(i, job).toBeLessThan(first);
      const runs = (environment: string) =>
        truthy(evaluate(steps[i]!.if!, { runner: { os: 'Linux', environment } }));
      expect(runs('github-hosted'), job).toBe(true);
      expect(runs('self-hosted'), job).toBe(false);
    }
  });

  it('installs the agent CLI releases the adapters are tested with, on hosted runners only, before the crews', () => {
    const wanted = Object.values(TESTED_VERSIONS).map((t) => t.install.replace(/^npm install -g /, ''));
    for (const job of ['crew', 'roster']) {
      const steps = wf.jobs[job]!.steps as Step[];
      const i = steps.findIndex((s) => /^npm install -g /.test(s.run ?? ''));
      expect(i, job).toBeGreaterThanOrEqual(0);
      const packages = steps[i]!.run!.trim()
        .split(/\s+/)
        .filter((w) => !w.startsWith('-'))
        .slice(2);
      expect(packages.sort(), job).toEqual(wanted.sort());
      expect(i).toBeLessThan(steps.findIndex((s) => /actions\/dispatch-crew$/.test(s.uses ?? '')));
      expect(truthy(evaluate(steps[i]!.if!, { runner: { environment: 'github-hosted' } }))).toBe(true);
      expect(truthy(evaluate(steps[i]!.if!, { runner: { environment: 'self-hosted' } }))).toBe(false);
    }
  });

  it('school.yml takes fleet.daemons[].hosted, a runner label; the caller written for it keeps hosted jobs under 6 hours', () => {
    const c = parseConfig({ fleet: { daemons: [{ id: 'local', hosted: 'ubuntu-latest' }] } });
    expect(c.fleet.daemons[0]!.hosted).toBe('ubuntu-latest');
    expect(() => parseConfig({ fleet: { daemons: [{ id: 'local', hosted: 'self-hosted' }] } })).toThrow(
      /hosted/,
    );
    const caller = parseWorkflowYaml(
      renderWorkflow({ toolkit: 'o/school-core', version: '1.2.3', config: 'school.yml', hosted: true }),
    );
    const w = caller.jobs.school! as { with?: Record<string, unknown> };
    expect(w.with?.['crew-timeout-minutes']).toBe(360);
  });
});
