/**
 * `npm run resilience [-- --short] [-- --iterations N] [--no-suite] [--results FILE] [--write-doc]`
 *
 * The fault harness of seed 001: up to 20 real OS processes enqueue, plan, drain, save checkpoints
 * (to a directory source and to a bare-repository branch), run crew leases and leave torn lines,
 * concurrently, against one state directory. Each is SIGKILLed at a random delay after its spawn
 * and replaced, to keep the pressure. Then a reconciliation and a clean final drain (short grading
 * lease, clock moved past it, so jobs claimed by the dead come back), and the invariants are checked
 * against the acks (test/harness/invariants.ts). Finally the regression suite runs and the report
 * prints per dimension. Exits non-zero on any violation or failing node test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { BranchSource } from '../../src/checkpoint/branch-source.js';
import { DirectorySource } from '../../src/checkpoint/directory-source.js';
import { verify } from '../../src/checkpoint/manifest.js';
import { parseConfig } from '../../src/config/load.js';
import { runAssignments } from '../../src/crew/driver/driver.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { drain } from '../../src/grading/drain.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { initBareRemote, initRepo, tempDir } from '../support/tmp.js';
import { checkHistory, checkSecrets, readAcks, type Violation } from './invariants.js';
import { regressionResults, renderSummary } from './report.js';
import { plantSecrets } from './secrets.js';
import type { Op } from './worker.js';

const { values } = parseArgs({
  options: {
    short: { type: 'boolean' },
    iterations: { type: 'string' },
    'no-suite': { type: 'boolean' },
    results: { type: 'string' },
    'write-doc': { type: 'boolean' },
    keep: { type: 'boolean' },
  },
});
// One iteration = one pool of 20 processes running until 20 more kills were injected.
const iterations = Number(values.iterations ?? (values.short ? 10 : 40));
if (!Number.isInteger(iterations) || iterations < 1) {
  process.stderr.write(`--iterations: expected a positive integer, found "${values.iterations}"\n`);
  process.exit(2);
}
const POOL = 20;
const started = performance.now();
const here = import.meta.dirname;
const root = tempDir('school-resilience-');
const secrets = plantSecrets();

const repo = initRepo(join(root.path, 'repo'));
const { bare } = initBareRemote(join(root.path, 'remote'));
const stateDir = join(root.path, 'state');
const directory = join(root.path, 'checkpoints');
const acks = join(root.path, 'acks');
const scratch = join(root.path, 'scratch');
for (const d of [stateDir, directory, acks, scratch]) mkdirSync(d, { recursive: true });

const rawConfig = {
  stateDir,
  repoPath: repo,
  fleet: { daemons: [1, 2, 3, 4].map((i) => ({ id: `d${i}`, worktrees: 16 })) },
  agents: ['alpha', 'beta', 'gamma'].map((id) => ({ id, command: ['node', '-e', '0'], roles: ['coding'] })),
  dispatch: { maxCrews: 10_000, minFreeDiskGiB: 0, leaseSeconds: 10 },
  grading: { maxAttempts: 100, leaseSeconds: 5, maxWorkers: 8 },
};
const config = parseConfig(rawConfig, 'harness');
const layout = new StateLayout(stateDir);

// The curriculum: issues carrying the planted secrets and hostile text in titles and bodies.
const issues = Array.from({ length: 300 }, (_, i) => ({
  number: i + 1,
  title: `Issue ${i + 1} \u202e${secrets[i % secrets.length]!.value.split('\n')[0]}`,
  body: `Use ${secrets[(i + 3) % secrets.length]!.value} please.\u0000\n`,
  state: 'open',
  labels: [],
  updated_at: '2026-11-01T00:00:00Z',
  author_association: 'MEMBER',
}));
writeFileSync(join(root.path, 'issues.json'), JSON.stringify(issues));
await fetchCurriculum({
  layout,
  config,
  source: { kind: 'file', path: join(root.path, 'issues.json') },
  logger: silentLogger,
});

// One bundle of the worker, so each spawn is a plain `node` start (tens of milliseconds).
const worker = join(root.path, 'worker.mjs');
await build({
  entryPoints: [join(here, 'worker.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: worker,
  logLevel: 'error',
  banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
});

// Operation mix: every slot of the pool has a fixed kind, so all kinds run side by side.
const MIX: Op[] = [
  'enqueue',
  'enqueue',
  'enqueue',
  'enqueue',
  'plan',
  'plan',
  'plan',
  'drain',
  'drain',
  'drain',
  'drain',
  'save-dir',
  'save-dir',
  'save-branch',
  'save-branch',
  'crew',
  'crew',
  'crew',
  'tear',
  'enqueue',
];
const killsByOp: Record<string, number> = {};
let kills = 0;
let exits = 0;
let spawned = 0;
const target = iterations * POOL;
let seed = 1;

function launch(slot: number): Promise<void> {
  const op = MIX[slot % MIX.length]!;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      worker,
      JSON.stringify({
        op,
        stateDir,
        ackFile: join(acks, `${op}-${slot}-${spawned}.jsonl`),
        config: rawConfig,
        ops: 1_000_000,
        seed: seed++,
        remote: bare,
        directory,
        scratch,
        secrets: secrets.map((s) => s.value),
      }),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  spawned++;
  // The kill lands at a random point of the operation stream: 0–3 s after the worker is ready
  // (its start-up varies with the machine's load, so the delay counts from READY, not from spawn).
  let timer: NodeJS.Timeout | undefined;
  child.stdout!.once('data', () => {
    timer = setTimeout(() => child.kill('SIGKILL'), Math.random() * 3000);
  });
  child.stdout!.resume();
  return new Promise((done) =>
    child.on('close', (_code, signal) => {
      if (timer) clearTimeout(timer);
      if (signal === 'SIGKILL') {
        kills++;
        killsByOp[op] = (killsByOp[op] ?? 0) + 1;
      } else exits++;
      done();
    }),
  );
}

let inflight = 0;
async function slotLoop(slot: number): Promise<void> {
  // Stop spawning once the processes alive can deliver the remaining kills.
  while (kills + inflight < target) {
    inflight++;
    await launch(slot);
    inflight--;
  }
}
await Promise.all(Array.from({ length: POOL }, (_, i) => slotLoop(i)));
const chaosMs = performance.now() - started;

// Reconciliation: each daemon's driver adopts or marks lost the crews whose runner is gone
// (releasing their leases); then drains with the clock past every grading lease.
for (const d of config.fleet.daemons)
  await runAssignments({
    config,
    layout,
    daemon: d.id,
    assignments: [],
    logger: silentLogger,
    launch: { launcher: ['true'] },
  });
const later = new Date(Date.now() + 3_600_000);
for (let i = 0; i < 10; i++) {
  const r = await drain({ config, layout, logger: silentLogger, now: () => later, worker: { id: 'final' } });
  if (r.fatal) throw new Error(`final drain: ${r.fatal}`);
  if (r.snapshot === 0) break;
}

const violations: Violation[] = [...checkHistory(layout, readAcks(acks))];
for (const source of [
  new DirectorySource(directory),
  new BranchSource({ remote: bare, scratchRoot: scratch }),
]) {
  const snap = await source.load().catch((e: Error) => {
    violations.push({ invariant: 'checkpoint-unverifiable', detail: `${source.name}: ${e.message}` });
    return undefined;
  });
  if (snap)
    for (const p of verify(snap))
      violations.push({ invariant: 'checkpoint-unverifiable', detail: `${source.name}: ${p}` });
}
violations.push(...checkSecrets([stateDir, directory], [bare], secrets));
const allAcks = readAcks(acks);
const errors = allAcks.filter((a) => a.error).length;

const resultsFile = values.results ?? join(tmpdir(), `school-regression-${process.pid}.json`);
const tests = regressionResults(resultsFile, !values['no-suite'] && !values.results);
const faults: Record<number, number> = {
  1: secrets.length * issues.length, // planted secrets and hostile issue text
  2: (killsByOp.enqueue ?? 0) + (killsByOp.drain ?? 0),
  3: killsByOp.crew ?? 0, // leases left to expire by killed crews
  5:
    (killsByOp.tear ?? 0) +
    allAcks.filter((a) => a.op === 'tear' && !a.error).length +
    (killsByOp['save-dir'] ?? 0) +
    (killsByOp['save-branch'] ?? 0),
  6: kills,
  7: allAcks.filter((a) => a.op === 'drain').length, // drains whose judge crashed on some jobs
  8: killsByOp.crew ?? 0,
};
const summary = renderSummary({
  heading: `school-core resilience (${values.short ? 'short' : 'full'}: ${iterations} iteration(s) of ${POOL} processes)`,
  kills: { total: kills, byOp: killsByOp },
  processes: { spawned, exits },
  seconds: { chaos: chaosMs / 1000, total: (performance.now() - started) / 1000 },
  operations: { acknowledged: allAcks.filter((a) => !a.error && !a.violation).length, errors },
  violations,
  tests,
  faults,
});
process.stdout.write(summary + '\n');

if (values['write-doc']) {
  const doc = resolve(here, '../../docs/resilience.md');
  const { renderDoc } = await import('./doc.js');
  writeFileSync(doc, renderDoc(summary, tests));
  process.stdout.write(`wrote ${doc}\n`);
}
if (!values.keep) root.cleanup();
const failing = tests.filter((t) => !t.passed && !t.knownGap).length;
process.exitCode = violations.length > 0 || failing > 0 || kills < target ? 1 : 0;
