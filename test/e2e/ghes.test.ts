import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { data, Evaluator, Lexer, Parser } from '@actions/expressions';
import { truthy } from '@actions/expressions/result';
import { http, HttpResponse, type HttpHandler } from 'msw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify } from 'yaml';
import { onGhes } from '../../src/github/actions-services.js';
import { examplePaths } from '../../src/examples/prepare.js';
import { tempDir } from '../support/tmp.js';
import { ActionsFake } from './fake.js';
import { LoopRunner, type LoopRun } from './loop.js';
import { bundleLoop, exampleConfig, exampleOrigin, requireBundles } from '../support/e2e-school.js';

/**
 * GitHub Enterprise Server: the loop's jobs through the committed bundles with the environment a
 * GHES runner gives (GITHUB_SERVER_URL on the enterprise host, GITHUB_API_URL at /api/v3) against a
 * GitHub that answers only under /api/v3, as GHES does. @actions/artifact 2+ refuses GHES, so the
 * checkpoint's artifact copy is skipped with a notice; the handoffs travel through the v3 artifact
 * actions, which the workflow picks on GHES (step conditions evaluated as GitHub does, below).
 */

const TOKEN = 'ghs_' + 'ghesTokenNeverPrinted0123456789abcdef'.slice(0, 36);
const SERVER = 'https://ghes.example.com';
const SLOW = 240_000;

/** The fake, reachable only under /api/v3 (a path GHES does not serve is its HTML 404). */
class GhesFake extends ActionsFake {
  override get handlers(): HttpHandler[] {
    const guard = http.all('*', ({ request }) => {
      if (!new URL(request.url).pathname.startsWith('/api/v3/'))
        return new HttpResponse('<html><body>Not Found</body></html>', {
          status: 404,
          headers: { 'content-type': 'text/html' },
        });
      return undefined; // on to the REST handlers
    });
    return [guard, ...super.handlers];
  }
}

const tmp = tempDir('school-ghes-');
const fake = new GhesFake({ tokens: { [TOKEN]: 'write' } });
let server: { url: string; close(): Promise<void> };
let loop: LoopRunner;
const runs: LoopRun[] = [];

beforeAll(async () => {
  requireBundles();
  const origin = exampleOrigin(tmp.path, stringify(exampleConfig()));
  fake.loadIssues(examplePaths().issues);
  ({ server, loop } = await bundleLoop(fake, {
    origin,
    root: tmp.path,
    token: TOKEN,
    api: '/api/v3',
    serverUrl: SERVER,
  }));
}, SLOW);

afterAll(async () => {
  await server?.close();
  tmp.cleanup();
});

const jobsOf = (r: LoopRun) => [
  r.plan.job,
  ...r.roster,
  ...(r.heartbeats ? [r.heartbeats.job] : []),
  ...[...r.crews.values()].map((c) => c.job),
  r.grade.job,
];

describe('the loop on GitHub Enterprise Server', () => {
  it(
    'runs 1 and 2: heartbeats, then crews graded and delivered; every call under /api/v3; the artifact copy skipped with a notice',
    async () => {
      runs.push(await loop.run(3001));
      expect(runs[0]!.heartbeats?.imported.code).toBe(0);
      const r = await loop.run(3002);
      runs.push(r);
      expect(r.plan.outputs['has-work']).toBe('true');
      expect(Number(r.grade.drain.outputs.accepted)).toBeGreaterThan(0);
      expect(fake.pulls.length).toBe(Number(r.grade.drain.outputs.accepted));

      // Every REST call went to the enterprise API root; none was refused for its path.
      expect(fake.requests.length).toBeGreaterThan(0);
      for (const q of fake.requests) expect(q.path, q.path).toMatch(/^\/api\/v3\//);

      // Saves that wrote a new checkpoint (an unchanged one writes to no source at all).
      const saves = runs
        .flatMap(jobsOf)
        .flatMap((j) => j.steps.filter((s) => s.name === 'checkpoint-state save'))
        .filter((s) => !s.stdout.includes('nothing changed since generation'));
      expect(saves.length).toBeGreaterThanOrEqual(3);
      for (const s of saves) {
        expect(s.code).toBe(0);
        expect(s.stdout).toContain(`the artifact copy is skipped: GitHub Enterprise Server (${SERVER})`);
        // A notice, not a warning: no warning line mentions the artifact.
        expect(s.stdout.split('\n').filter((l) => l.startsWith('::warning') && /artifact/i.test(l))).toEqual(
          [],
        );
        expect(s.summary).toContain('GitHub Enterprise Server');
      }
    },
    SLOW,
  );
});

describe('GHES detection', () => {
  it('github.com and GHE.com hosts are not GHES; any other server is', () => {
    expect(onGhes('https://github.com')).toBe(false);
    expect(onGhes('https://octo.ghe.com')).toBe(false);
    expect(onGhes(undefined)).toBe(false);
    expect(onGhes(SERVER)).toBe(true);
    expect(onGhes('https://github.example.com')).toBe(true);
  });
});

type Step = {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
};
const workflow = parseYaml(readFileSync('.github/workflows/school-loop.yml', 'utf8')) as {
  jobs: Record<string, { steps: Step[] }>;
};

/** A step condition evaluated by GitHub's expression engine (status functions all true). */
function runsOn(condition: string | undefined, context: Record<string, unknown>): boolean {
  if (!condition) return true;
  const expr = condition.replace(/^\$\{\{\s*|\s*\}\}$/g, '');
  const fns = ['always', 'success', 'failure', 'cancelled'].map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
  const tree = new Parser(new Lexer(expr).lex().tokens, Object.keys(context), fns).parse();
  const ctx = JSON.parse(JSON.stringify(context), data.reviver) as data.Dictionary;
  const functions = new Map(
    fns.map((f) => [
      f.name,
      { ...f, call: () => new data.BooleanData(f.name !== 'failure' && f.name !== 'cancelled') },
    ]),
  );
  return truthy(new Evaluator(tree, ctx, functions).evaluate());
}

describe('school-loop.yml picks the artifact actions the server supports', () => {
  const artifactSteps = Object.entries(workflow.jobs).flatMap(([job, j]) =>
    j.steps
      .filter((s) => /actions\/(upload|download)-artifact@/.test(s.uses ?? ''))
      .map((s) => ({ job, ...s })),
  );
  const context = (server_url: string) => ({
    github: { server_url, run_id: '9', run_attempt: '1' },
    inputs: { 'dry-run': false },
    needs: {
      plan: { outputs: { attempt: '1' } },
      crew: { result: 'success' },
      // artifact-id comes from the v6 upload, which runs only where artifact v4+ does.
      judge: {
        outputs: {
          verdicts: server_url === SERVER ? '' : '7',
          'verdicts-digest': `sha256:${'0'.repeat(64)}`,
        },
      },
    },
    steps: {
      matrix: { outputs: { 'has-work': 'true', attempt: '1' } },
      restore: { outcome: 'success' },
      'handoffs-ghes-download': { outcome: 'success' },
    },
  });

  for (const [server, line] of [
    ['https://github.com', /@v[4-9]|# v[4-9]/],
    ['https://octo.ghe.com', /# v[4-9]/],
    [SERVER, /# v3\./],
  ] as const) {
    it(`${server}: every artifact hand-off runs exactly once, with the ${String(line)} actions`, () => {
      const byName = new Map<string, number>();
      for (const s of artifactSteps) {
        const key = `${s.job}:${s.name!.replace(/ \([^)]*\)$/, '')}`;
        const on = runsOn(s.if, context(server));
        if (on) {
          byName.set(key, (byName.get(key) ?? 0) + 1);
          const pinned = readFileSync('.github/workflows/school-loop.yml', 'utf8')
            .split('\n')
            .find((l) => l.includes(`uses: ${s.uses}`))!;
          expect(pinned, key).toMatch(line);
        } else byName.set(key, byName.get(key) ?? 0);
      }
      expect(
        [...byName.values()].every((n) => n === 1),
        JSON.stringify([...byName]),
      ).toBe(true);
      // Uploads: plan, roster, crew, judge (verdicts). Downloads: heartbeats, crew, judge (handoffs),
      // grade (handoffs, verdicts).
      expect(byName.size).toBe(9);
    });
  }

  it('on GHES the download of every artifact keeps only this attempt’s hand-offs, one directory each', () => {
    const grade = workflow.jobs.grade!.steps.find((s) => s.id === 'handoffs-ghes')!;
    const judge = workflow.jobs.judge!.steps.find((s) => s.name === "Keep this run's handoffs (GHES)")!;
    const beats = workflow.jobs.heartbeats!.steps.find(
      (s) => s.name === "Keep this run's heartbeats (GHES)",
    )!;
    for (const [step, kind, dest, job] of [
      [grade, 'handoff', '.school/in/handoff', 'grade'],
      [judge, 'handoff', '.school/in/handoff', 'judge'],
      [beats, 'roster', '.school/in/roster', 'heartbeats'],
    ] as const) {
      const ws = join(tmp.path, `ws-${job}`);
      mkdirSync(ws, { recursive: true });
      // The toolkit's checkout, where the step's script lives.
      symlinkSync(process.cwd(), join(ws, '.school-core'));
      // What download-artifact v3 without a name leaves: every artifact of the run, by name.
      for (const name of [
        `school-plan-9-1`,
        `school-roster-9-1-1-alpha`,
        `school-handoff-9-1-1-alpha`,
        `school-handoff-9-1-2-beta`,
        `school-handoff-9-2-1-alpha`, // handed on under another plan attempt
        `school-${kind}-9-1-1-gpu-2`,
      ]) {
        mkdirSync(join(ws, '.school/in/all', name), { recursive: true });
        writeFileSync(join(ws, '.school/in/all', name, 'manifest.json'), '{}');
      }
      const prefix = step
        .env!.SCHOOL_PREFIX!.replace('${{ github.run_id }}', '9')
        .replace('${{ needs.plan.outputs.attempt }}', '1');
      const r = spawnSync('bash', ['-e', '-c', step.run!], {
        cwd: ws,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', SCHOOL_PREFIX: prefix },
      });
      expect(r.status, r.stderr).toBe(0);
      const kept = readdirSync(join(ws, dest)).sort();
      expect(kept).toEqual(
        kind === 'handoff'
          ? ['school-handoff-9-1-1-alpha', 'school-handoff-9-1-1-gpu-2', 'school-handoff-9-1-2-beta']
          : ['school-roster-9-1-1-alpha', 'school-roster-9-1-1-gpu-2'],
      );
      expect(existsSync(join(ws, '.school/in/all'))).toBe(false);
      expect(existsSync(join(ws, dest, kept[0]!, 'manifest.json'))).toBe(true);
    }
  });
});
