/**
 * Action cold start (docs/benchmarks.md): time from `node dist/<name>/index.js` to the first input validation
 * error, per bundled action, against `node -e 0` measured in the same round. Each action runs in an
 * empty scratch directory holding an invalid `school.yml` (pointed to by INPUT_CONFIG) and no other
 * inputs, so the first thing it can do is reject its input; the clock stops at the first `::error::`
 * line on stdout (the process is then ended) or at exit. Bundles not built yet are skipped and named.
 * SCHOOL_BENCH_DIST=DIR measures bundles built elsewhere (e.g. a scratch ncc build of a branch).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bench, BenchFigure } from './types.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the bundles are: dist/ by default; SCHOOL_BENCH_DIST points at a scratch build instead. */
const dist = process.env.SCHOOL_BENCH_DIST || join(root, 'dist');
const GOAL_MS = 300;
const TIMEOUT_MS = 15_000;

interface Probe {
  ms: number;
  sawError: boolean;
  code: number | null;
}

/** Spawns argv (no shell) and times it until `::error::`/a validation message appears or it exits. */
export function probe(argv: string[], cwd: string, env: NodeJS.ProcessEnv, marker?: RegExp): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let done = false;
    const finish = (sawError: boolean, code: number | null) => {
      if (done) return;
      done = true;
      const ms = performance.now() - t0;
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      resolve({ ms, sawError, code });
    };
    const timer = setTimeout(() => finish(false, null), TIMEOUT_MS);
    const watch = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (marker?.test(out)) finish(true, null);
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', watch);
    child.on('error', reject);
    child.on('exit', (code) => finish(marker ? marker.test(out) : code === 0, code));
  });
}

/** Action bundles present in dist/ (the CLI bundle is measured separately). */
export function actionBundles(): { built: string[]; missing: string[] } {
  const built = existsSync(dist)
    ? readdirSync(dist).filter((n) => n !== 'cli' && existsSync(join(dist, n, 'index.js')))
    : [];
  const declared = existsSync(join(root, 'actions'))
    ? readdirSync(join(root, 'actions')).filter((n) => existsSync(join(root, 'actions', n, 'action.yml')))
    : [];
  const src = existsSync(join(root, 'src/actions'))
    ? readdirSync(join(root, 'src/actions')).filter((n) =>
        existsSync(join(root, 'src/actions', n, 'index.ts')),
      )
    : [];
  const missing = [...new Set([...declared, ...src])].filter((n) => !built.includes(n)).sort();
  return { built: built.sort(), missing };
}

let scratch = '';

function cleanEnv(): NodeJS.ProcessEnv {
  // Only what node needs: no INPUT_*, no token, no GITHUB_* from the caller's environment.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: scratch, INPUT_CONFIG: 'school.yml' };
  return env;
}

export const benchmarks: Bench[] = [
  {
    name: 'cold-start',
    async setup() {
      scratch = mkdtempSync(join(tmpdir(), 'school-cold-'));
      // An invalid value the config loader must reject: maxCrews has a minimum of 1.
      writeFileSync(join(scratch, 'school.yml'), 'dispatch:\n  maxCrews: 0\n');
    },
    async teardown() {
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    },
    async run() {
      const base = await probe(['-e', '0'], scratch, cleanEnv());
      const baseline = { label: 'node -e 0', value: base.ms };
      const { built, missing } = actionBundles();
      const figures: BenchFigure[] = [];
      for (const name of built) {
        const p = await probe([join(dist, name, 'index.js')], scratch, cleanEnv(), /::error::/);
        figures.push({
          figure: `cold start ${name} → first input error`,
          value: p.ms,
          unit: 'ms',
          baseline,
          goal: `≤ ${GOAL_MS} ms`,
          target: { op: '<=', value: GOAL_MS },
          note: p.sawError
            ? undefined
            : `no ::error:: line (exit ${p.code}): the bundle did not reject bad input`,
        });
      }
      const cli = join(dist, 'cli', 'index.js');
      if (existsSync(cli)) {
        const p = await probe([cli, 'status', '--no-such-option'], scratch, cleanEnv(), /^school: /m);
        figures.push({
          figure: 'cold start school CLI → first option error',
          value: p.ms,
          unit: 'ms',
          baseline,
          goal: `≤ ${GOAL_MS} ms`,
          target: { op: '<=', value: GOAL_MS },
          note: p.sawError
            ? undefined
            : `no option error (exit ${p.code}): is dist/cli built from this branch?`,
        });
      }
      figures.push({
        figure: 'node -e 0',
        value: base.ms,
        unit: 'ms',
        note: missing.length ? `not built yet, skipped: ${missing.join(', ')}` : undefined,
      });
      return figures;
    },
  },
];
