/**
 * What verifying on a clean checkout costs (src/crew/clean-checkout.ts): the same `node --test`
 * verification of the same change, run (a) as before, in the student's worktree, and (b) on a fresh
 * checkout of the base with the frozen patch applied, with the dependency cache warm (the install
 * already made for this base) and cold (the install runs first). Both inside the sandbox, as a crew
 * runs them. Repository: the embedded example's files (src/examples), a handful of modules and tests.
 * Goal: warm ≤ 1.2× the verification in the student's worktree.
 */
import { testHost } from '../test/support/host.js';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../src/config/load.js';
import { verifyOnCleanCheckout } from '../src/crew/clean-checkout.js';
import { childEnv } from '../src/process/env.js';
import { runProcess } from '../src/process/run.js';
import { Sandbox } from '../src/sandbox/sandbox.js';
import { git, initRepo } from '../test/support/tmp.js';
import type { Bench, BenchFigure } from './types.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const RUNS = 3;

let dir: string | undefined;
let repo = '';
let student = '';
let patch = '';
let sandbox: Sandbox | undefined;

const config = () =>
  parseConfig({
    repoPath: repo,
    dispatch: {
      verify: ['node', '--test'],
      // A stand-in install: writes a tiny package, as `npm ci` would, without a registry.
      install: {
        command: ['node', '-e', "require('fs').mkdirSync('node_modules/dep',{recursive:true})"],
      },
    },
  });

export const benchmarks: Bench[] = [
  {
    name: 'verify',
    rounds: 5,
    async setup() {
      dir = mkdtempSync(join(tmpdir(), 'school-verify-bench-'));
      repo = join(dir, 'repo');
      cpSync(join(root, 'examples', 'repo-template'), repo, { recursive: true });
      initRepo(repo, { 'package-lock.json': '{"lockfileVersion":3}\n' });
      student = join(dir, 'student');
      git(repo, 'worktree', 'add', '--detach', '--quiet', student, 'HEAD');
      writeFileSync(
        join(student, 'extra.test.mjs'),
        "import { test } from 'node:test';\ntest('more', () => {});\n",
      );
      git(student, 'add', '--all', '--intent-to-add');
      patch = `${git(student, 'diff', '--binary', 'HEAD')}\n`;
      sandbox = new Sandbox({
        host: testHost(),
        config: config().sandbox,
        root: join(dir, 'sandbox'),
        protect: [repo],
      });
    },
    async teardown() {
      await sandbox?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
    async run(): Promise<BenchFigure[]> {
      const sb = sandbox!;
      const c = config();
      const env = childEnv();
      const inStudent: number[] = [];
      const warm: number[] = [];
      const cold: number[] = [];
      const clean = (deps: string) => async () => {
        const t = performance.now();
        const r = await verifyOnCleanCheckout(
          {
            config: c,
            baseSha: git(repo, 'rev-parse', 'HEAD'),
            patch,
            scratch: join(dir!, 'scratch'),
            depsRoot: deps,
            sandbox: sb,
            logFile: join(dir!, 'verify.log'),
            timeoutMs: 60_000,
          },
          ['node', '--test'],
          env,
        );
        if (r.exitCode !== 0) throw new Error(`clean verification exited ${r.exitCode}`);
        return performance.now() - t;
      };
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        const started = await sb.confine(['node', '--test'], env, {
          cwd: student,
          readOnly: [student],
          home: sb.freshHome('verify'),
          allow: [],
        });
        const r = await runProcess(started.argv, { cwd: student, env: started.env, timeoutMs: 60_000 });
        if (r.exitCode !== 0) throw new Error(`verification in the worktree exited ${r.exitCode}`);
        inStudent.push(performance.now() - t);
        warm.push(await clean(join(dir!, 'deps-warm'))());
        const coldDeps = join(dir!, `deps-cold-${i}`);
        cold.push(await clean(coldDeps)());
        rmSync(coldDeps, { recursive: true, force: true });
      }
      const base = { label: "in the student's worktree (ms)", value: median(inStudent) };
      return [
        {
          figure: 'verification on a clean checkout, dependency cache warm',
          value: median(warm),
          unit: 'ms',
          baseline: base,
          goal: '≤ 1.2× the worktree verification',
          target: { op: '<=', value: 1.2, of: 'ratio' },
        },
        {
          figure: 'verification on a clean checkout, dependency cache cold',
          value: median(cold),
          unit: 'ms',
          baseline: base,
        },
      ];
    },
  },
];
