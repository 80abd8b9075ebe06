import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { literalPrefix } from '../../src/dispatch/gates/fences.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { activeCrews, readRegistry } from '../../src/dispatch/logs/registry.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { GiB, TEST_AGENT, config, item } from './helpers.js';

const PLANNER = fileURLToPath(new URL('./fixtures/planner.ts', import.meta.url));
const PROCESSES = 4;
const ROUNDS = 2;

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', PLANNER, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

type Planned = Array<{ crewId: string; issueNumber: number; daemon: string }>;

/**
 * Starts PROCESSES planners over the given schools (one state dir each), releases them together at a
 * barrier, and returns what each school's log and the processes say was planned.
 */
async function race(schools: Array<Record<string, unknown>>, issues: number) {
  const d = tempDir('school-race-');
  dirs.push(d);
  const layouts: StateLayout[] = [];
  const pairs: string[] = [];
  for (const [i, raw] of schools.entries()) {
    const layout = new StateLayout(join(d.path, `state-${i}`));
    const cfg = config(raw);
    for (const dm of cfg.fleet.daemons) {
      await recordHeartbeat(layout, cfg, { daemon: dm.id, observedClass: 'xl', freeDiskBytes: 50 * GiB });
    }
    writeFileSync(join(d.path, `config-${i}.json`), JSON.stringify({ agents: [TEST_AGENT], ...raw }));
    layouts.push(layout);
    pairs.push(layout.root, join(d.path, `config-${i}.json`));
  }
  const curriculum = Array.from({ length: issues }, (_, i) =>
    item(i + 1, { priority: i % 5, fences: i % 3 === 0 ? [] : [`pkg/${i % 7}/**`] }),
  );
  writeFileSync(join(d.path, 'curriculum.json'), JSON.stringify(curriculum));
  const barrier = join(d.path, 'barrier');
  mkdirSync(barrier);
  const children = Array.from({ length: PROCESSES }, (_, i) =>
    run([join(d.path, 'curriculum.json'), String(ROUNDS), barrier, String(i), ...pairs]),
  );
  const deadline = Date.now() + 45_000;
  while (readdirSync(barrier).length < PROCESSES && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  writeFileSync(join(barrier, 'go'), '');
  const results = await Promise.all(children);
  for (const r of results) expect(r.stderr, r.stderr).toBe('');
  for (const r of results) expect(r.code).toBe(0);
  const outputs = results.map((r) => JSON.parse(r.stdout) as Planned[]);
  return layouts.map((layout, s) => ({ layout, planned: outputs.flatMap((o) => o[s]!) }));
}

function checkInvariants(
  layout: StateLayout,
  planned: Array<{ crewId: string; issueNumber: number; daemon: string }>,
) {
  const registry = readRegistry(layout);
  const crews = Object.values(registry.crews);
  // What the processes reported is exactly what the log holds.
  expect(crews.map((c) => c.crewId).sort()).toEqual(planned.map((p) => p.crewId).sort());
  // N2.1: no issue planned twice.
  const issues = crews.map((c) => c.issueNumber);
  expect(new Set(issues).size).toBe(issues.length);
  // No two concurrent crews share a fence.
  const fences = activeCrews(registry).flatMap((c) => c.fences.map(literalPrefix));
  for (let i = 0; i < fences.length; i++)
    for (let j = i + 1; j < fences.length; j++)
      expect(fences[i]!.startsWith(fences[j]!) || fences[j]!.startsWith(fences[i]!)).toBe(false);
  return crews;
}

describe('planDispatch: concurrent planner processes over one state', () => {
  it(`${PROCESSES} processes never plan an issue twice, nor exceed the global cap or a daemon's slots`, async () => {
    const [capped, slotted] = await race(
      [
        // The global cap binds: 4 crews, 6 slots.
        {
          fleet: {
            daemons: [
              { id: 'a', worktrees: 2 },
              { id: 'b', worktrees: 2 },
              { id: 'c', worktrees: 2 },
            ],
          },
          dispatch: { maxCrews: 4 },
        },
        // The slots bind: 6 slots, cap 100.
        {
          fleet: {
            daemons: [
              { id: 'a', worktrees: 2 },
              { id: 'b', worktrees: 1 },
              { id: 'c', worktrees: 3 },
            ],
          },
          dispatch: { maxCrews: 100 },
        },
      ],
      30,
    );
    expect(checkInvariants(capped!.layout, capped!.planned)).toHaveLength(4);
    const crews = checkInvariants(slotted!.layout, slotted!.planned);
    const per = (id: string) => crews.filter((c) => c.daemon === id).length;
    expect([per('a'), per('b'), per('c')]).toEqual([2, 1, 3]);
  });
});
