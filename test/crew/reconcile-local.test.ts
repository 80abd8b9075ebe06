import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { planStep } from '../../src/loop/steps.js';
import { acquireDriverLock } from '../../src/crew/driver/driver-lock.js';
import { localIdentity } from '../../src/dispatch/leases/liveness.js';
import { defaultRuntimeDir } from '../../src/crew/spec.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { item, nodeFixture } from './helpers.js';

/**
 * Locally, a planned crew's owner is the planning process. A planner killed after planning (its
 * crews never started) must not leave them "planned" forever: the next plan cancels and re-plans.
 */
let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function school() {
  const t = tempDir('school-reconcile-local-');
  cleanup = t.cleanup;
  const raw = {
    stateDir: join(t.path, 'state'),
    repoPath: t.path,
    fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
    agents: [{ id: 'alpha', command: ['node', 'a.mjs'], roles: ['coding'] }],
    dispatch: { maxCrews: 1, minFreeDiskGiB: 0 },
  };
  const config = parseConfig(raw, 'test');
  const layout = new StateLayout(config.stateDir);
  mkdirSync(layout.root, { recursive: true });
  writeFileSync(layout.file('curriculum'), JSON.stringify(item(9)) + '\n');
  const configPath = join(t.path, 'config.json');
  writeFileSync(configPath, JSON.stringify(raw));
  return { config, layout, configPath };
}

/** Starts the planner fixture; resolves with its pid and planned crew ids once it has planned. */
async function startPlanner(configPath: string) {
  const [file, ...args] = await nodeFixture('../crew/fixtures/plan-and-hang.ts');
  // A local planner, even when the suite itself runs inside a workflow job.
  const env = { ...process.env };
  delete env.GITHUB_RUN_ID;
  delete env.GITHUB_RUN_ATTEMPT;
  const child = spawn(file!, [...args, configPath], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const planned = await new Promise<string[]>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as string[]);
    });
    child.once('exit', (code) => reject(new Error(`planner exited ${code}: ${err}`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return { child, planned, exited };
}

describe('a planner killed after planning', () => {
  it('its crews are left alone while it lives; once it is SIGKILLed the next plan cancels and re-plans', async () => {
    const s = school();
    const p = await startPlanner(s.configPath);
    expect(p.planned).toHaveLength(1);
    const c1 = p.planned[0]!;
    const me = localIdentity(process.pid);
    const plan = () =>
      planStep({
        config: s.config,
        layout: s.layout,
        logger: silentLogger,
        beat: ['d1'],
        owners: { plannedBy: me },
      });

    const alive = await plan();
    expect(alive.reconciled).toEqual([]);
    expect(alive.refused).toEqual([expect.objectContaining({ issue: 9, code: 'active-crew' })]);

    p.child.kill('SIGKILL');
    await p.exited;
    const next = await plan();
    expect(next.reconciled).toEqual([
      expect.objectContaining({ crewId: c1, issueNumber: 9, outcome: 'cancelled' }),
    ]);
    expect(next.reconciled[0]!.reason).toMatch(new RegExp(`planned by process ${p.child.pid} .* is gone`));
    // maxCrews 1: the dead planner's crew no longer holds the only place; a first attempt, not a repair.
    expect(next.assignments.map((a) => [a.issueNumber, a.attempt])).toEqual([[9, 1]]);
    const reg = readRegistry(s.layout);
    expect(reg.crews[c1]).toMatchObject({ status: 'finished', outcome: 'cancelled' });
    expect(reg.crews[next.assignments[0]!.crewId]!.plannedBy).toMatchObject({
      kind: 'local',
      pid: process.pid,
    });
  });

  it('a live driver of the daemon may still start a dead planner’s crew: left alone', async () => {
    const s = school();
    const p = await startPlanner(s.configPath);
    p.child.kill('SIGKILL');
    await p.exited;
    const lock = await acquireDriverLock(defaultRuntimeDir(s.layout.root), s.layout.root, 'd1');
    try {
      const r = await planStep({
        config: s.config,
        layout: s.layout,
        logger: silentLogger,
        beat: ['d1'],
        owners: { plannedBy: localIdentity(process.pid) },
      });
      expect(r.reconciled).toEqual([]);
      expect(readRegistry(s.layout).crews[p.planned[0]!]!.status).toBe('planned');
    } finally {
      await lock.release();
    }
  });
});
