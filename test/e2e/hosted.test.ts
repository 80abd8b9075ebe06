import { readFileSync } from 'node:fs';
import { data, Evaluator, Lexer, Parser } from '@actions/expressions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { examplePaths } from '../../src/examples/prepare.js';
import { tempDir } from '../support/tmp.js';
import { parseWorkflowYaml } from '../workflows/rules.js';
import { ActionsFake } from './fake.js';
import { LoopRunner } from './loop.js';
import { bundleLoop, exampleConfig, exampleOrigin, requireBundles } from '../support/e2e-school.js';

/**
 * A first run on a GitHub-hosted runner (fleet.daemons[].hosted: ubuntu-latest), as `school init`
 * writes it: the committed bundles through the workflow's jobs. The plan routes the daemon's roster
 * and crew jobs to the hosted label (the workflow's own `runs-on` expression, evaluated on the plan's
 * real outputs); run 1 brings the daemon online through its roster job, run 2 runs its crews in the
 * sandbox and grades them. The hosted runner's setup steps (bubblewrap, AppArmor) are checked in
 * test/workflows/hosted.test.ts; here the runner already has bubblewrap, as after them.
 */

const TOKEN = 'ghs_' + 'e2eHostedTokenNeverPrinted0123456789'.slice(0, 36);
const SLOW = 300_000;
const tmp = tempDir('school-e2e-hosted-');
const fake = new ActionsFake({ tokens: { [TOKEN]: 'write' } });
let server: { url: string; close(): Promise<void> };
let loop: LoopRunner;
const wf = parseWorkflowYaml(readFileSync('.github/workflows/school-loop.yml', 'utf8'));

/** The example school with one daemon on ubuntu-latest, as `school init` writes a first one. */
function schoolYml(): string {
  const config = exampleConfig();
  config.fleet = { daemons: [{ id: 'local', hosted: 'ubuntu-latest', worktrees: 2 }] };
  config.dispatch.maxCrews = 2;
  return stringify(config);
}

function runsOn(job: string, outputs: Record<string, string>, daemon: string): unknown {
  const expr = wf.jobs[job]!['runs-on'] as string;
  const inner = /^\$\{\{([\s\S]*)\}\}$/.exec(expr.trim())?.[1] ?? expr;
  const tree = new Parser(new Lexer(inner.trim()).lex().tokens, ['needs', 'matrix'], []).parse();
  const ctx = JSON.parse(
    JSON.stringify({ needs: { plan: { outputs } }, matrix: { daemon } }),
    data.reviver,
  ) as data.Dictionary;
  const v = new Evaluator(tree, ctx, new Map()).evaluate();
  return v instanceof data.Array ? v.values().map((x) => x.coerceString()) : v.coerceString();
}

beforeAll(async () => {
  requireBundles();
  const origin = exampleOrigin(tmp.path, schoolYml());
  // GitHub reads a pull request's head from the repository: here, the bare origin delivery pushes to.
  fake.origin = origin;
  fake.loadIssues(examplePaths().issues);
  ({ server, loop } = await bundleLoop(fake, { origin, root: tmp.path, token: TOKEN }));
}, SLOW);

afterAll(async () => {
  await server?.close();
  tmp.cleanup();
});

describe('a daemon on a GitHub-hosted runner, through the committed bundles', () => {
  it(
    'run 1 routes the roster job to ubuntu-latest and brings the daemon online; run 2 runs and grades its crews there',
    async () => {
      const first = await loop.run(3001);
      expect(first.plan.outputs.runners).toBe('{"local":"ubuntu-latest"}');
      expect(runsOn('roster', first.plan.outputs, 'local')).toBe('ubuntu-latest');
      expect(first.roster.map((j) => j.name)).toEqual(['roster local']);
      expect(first.heartbeats?.imported.code).toBe(0);

      const second = await loop.run(3002);
      expect(second.plan.outputs['has-work']).toBe('true');
      expect(JSON.parse(second.plan.outputs.daemons!)).toEqual(['local']);
      expect(runsOn('crew', second.plan.outputs, 'local')).toBe('ubuntu-latest');
      expect(second.crews.get('local')?.run.code).toBe(0);
      expect(Number(second.grade.drain.outputs.accepted)).toBeGreaterThan(0);
    },
    SLOW,
  );
});
