/**
 * What verifying on a clean checkout costs (src/crew/checkout/clean-checkout.ts), against the same command run
 * directly in the same checkout, both in the sandbox, measured in the same round:
 *  - the repository: the embedded example (src/examples) plus a `node_modules` of some size (a
 *    stand-in install writes 200 packages of 12 files, about 2,400 files and 5 MB; the tests require
 *    some of them), a `node --test` suite;
 *  - direct: `node --test` in a checkout of base + patch with the dependencies in place;
 *  - clean, cache warm: what a crew pays per verification — a fresh checkout, the patch applied, the
 *    base's tests put back, the installed dependencies shown (copied where the file system shares
 *    blocks; else read-only with a writable node_modules/.cache), the run, the removal;
 *    with `dispatch.verifyResults` too (the base's record is read from its cache);
 *  - the install cache's hit path (`installedDependencies` for a base already installed);
 *  - cold: the install runs first (and the base is verified), for the record.
 * Goal: warm ≤ 1.5× direct.
 */
import { testHost } from '../test/support/host.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../src/config/load.js';
import { installedDependencies, verifyOnCleanCheckout } from '../src/crew/checkout/clean-checkout.js';
import type { CleanCheckoutOptions } from '../src/grading/judge-verify.js';
import { childEnv } from '../src/process/env.js';
import { runProcess } from '../src/process/run.js';
import { Sandbox } from '../src/sandbox/sandbox.js';
import { git, initRepo } from '../test/support/tmp.js';
import type { Bench, BenchFigure } from './types.js';
import { policyFrom } from '../src/config/sandbox-policy.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const RUNS = 1;
const PACKAGES = 200;
const FILES = 12;

/** A stand-in `npm ci`: PACKAGES packages of FILES files each (about 2 KB a file), no registry. */
const INSTALL = [
  'node',
  '-e',
  `const fs=require('fs');const pad='//'+'x'.repeat(2000)+'\\n';for(let p=0;p<${PACKAGES};p++){const d='node_modules/dep'+p;fs.mkdirSync(d+'/lib',{recursive:true});fs.writeFileSync(d+'/package.json',JSON.stringify({name:'dep'+p,main:'index.js'}));fs.writeFileSync(d+'/index.js','module.exports='+p+';\\n');for(let f=0;f<${FILES - 2};f++)fs.writeFileSync(d+'/lib/f'+f+'.js',pad)}`,
];

let dir: string | undefined;
let repo = '';
let direct = '';
let patch = '';
let sandbox: Sandbox | undefined;

const config = (named: boolean) =>
  parseConfig({
    repoPath: repo,
    dispatch: {
      verify: ['node', '--test'],
      install: { command: INSTALL },
      ...(named ? { verifyResults: { format: 'node-test' } } : {}),
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
      initRepo(repo, {
        'package-lock.json': '{"lockfileVersion":3}\n',
        '.gitignore': 'node_modules/\n',
        'test/deps.test.mjs':
          "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\ntest('deps load', () => { for (const p of [0, 99, 199]) assert.strictEqual(require('dep' + p), p); });\n",
      });
      // The change: a test the student adds.
      const student = join(dir, 'student');
      git(repo, 'worktree', 'add', '--detach', '--quiet', student, 'HEAD');
      writeFileSync(
        join(student, 'extra.test.mjs'),
        "import { test } from 'node:test';\ntest('more', () => {});\n",
      );
      git(student, 'add', '--all', '--intent-to-add');
      patch = `${git(student, 'diff', '--binary', 'HEAD')}\n`;
      // The same checkout for the direct run: base + patch, dependencies installed in place.
      direct = join(dir, 'direct');
      git(repo, 'worktree', 'add', '--detach', '--quiet', direct, 'HEAD');
      writeFileSync(join(direct, 'crew.patch'), patch);
      git(direct, 'apply', 'crew.patch');
      rmSync(join(direct, 'crew.patch'));
      const r = await runProcess(INSTALL, { cwd: direct, env: childEnv(), timeoutMs: 120_000 });
      if (r.exitCode !== 0) throw new Error('the stand-in install failed');
      sandbox = new Sandbox({
        host: testHost(),
        policy: policyFrom(config(false).sandbox, { protect: [repo] }),
        root: join(dir, 'sandbox'),
      });
    },
    async teardown() {
      await sandbox?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
    async run(): Promise<BenchFigure[]> {
      const sb = sandbox!;
      const env = childEnv();
      const base = git(repo, 'rev-parse', 'HEAD');
      const options = (named: boolean, deps: string): CleanCheckoutOptions => ({
        config: config(named),
        baseSha: base,
        patch,
        scratch: join(dir!, 'scratch'),
        depsRoot: deps,
        sandbox: sb,
        logFile: join(dir!, 'verify.log'),
        timeoutMs: 60_000,
      });
      const clean = async (named: boolean, deps: string) => {
        const t = performance.now();
        const r = await verifyOnCleanCheckout(options(named, deps), ['node', '--test'], env);
        if (!r.passed) throw new Error(`clean verification failed: ${JSON.stringify(r)}`);
        return performance.now() - t;
      };
      const directRuns: number[] = [];
      const warm: number[] = [];
      const warmNamed: number[] = [];
      const hit: number[] = [];
      const cold: number[] = [];
      mkdirSync(join(dir!, 'deps-warm'), { recursive: true });
      // Warm the caches once (install, base record) outside the measured runs.
      await clean(true, join(dir!, 'deps-warm'));
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        const started = await sb.confine(['node', '--test'], env, {
          cwd: direct,
          writable: [direct],
          home: sb.freshHome('verify'),
          allow: [],
        });
        const r = await runProcess(started.argv, { cwd: direct, env: started.env, timeoutMs: 60_000 });
        if (r.exitCode !== 0) throw new Error(`the direct verification exited ${r.exitCode}`);
        directRuns.push(performance.now() - t);
        warm.push(await clean(false, join(dir!, 'deps-warm')));
        warmNamed.push(await clean(true, join(dir!, 'deps-warm')));
        const h = performance.now();
        await installedDependencies(options(false, join(dir!, 'deps-warm')), env);
        hit.push(performance.now() - h);
        const coldDeps = join(dir!, `deps-cold-${i}`);
        cold.push(await clean(true, coldDeps));
        rmSync(coldDeps, { recursive: true, force: true });
      }
      const baseline = {
        label: 'the same command, direct in the same checkout (ms)',
        value: median(directRuns),
      };
      return [
        {
          figure: `clean verification, cache warm (checkout, patch, test reset, ${PACKAGES * FILES} dependency files shown)`,
          value: median(warm),
          unit: 'ms',
          baseline,
          goal: '≤ 1.5× direct',
          target: { op: '<=', value: 1.5, of: 'ratio' },
        },
        {
          figure: 'clean verification with named results, cache and base record warm',
          value: median(warmNamed),
          unit: 'ms',
          baseline,
          goal: '≤ 1.5× direct',
          target: { op: '<=', value: 1.5, of: 'ratio' },
        },
        {
          figure: 'install cache hit (installedDependencies of an installed base)',
          value: median(hit),
          unit: 'ms',
          goal: '≤ 20 ms',
          target: { op: '<=', value: 20 },
        },
        {
          figure: 'clean verification, cold (install and base run first)',
          value: median(cold),
          unit: 'ms',
          baseline,
        },
      ];
    },
  },
];
