import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain, fleetCapacity } from '../../src/grading/drain.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { crewsOnly, loop, makeSchool, writeIssues, type School } from './helpers.js';

/**
 * Dimension 6 — concurrent load: graders racing over one ledger, crews racing for worktrees, and
 * the CI lock of the crew job. Cross-process contention under SIGKILL is the fault harness's job
 * (test/harness/resilience.ts); here the wired paths run side by side in one school.
 */
let s: School | undefined;
afterEach(() => s?.cleanup());

const issues = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ number: i + 1, title: `t${i + 1}`, body: 'b' }));

describe('D6 concurrent load', () => {
  it('N6.1 graders are bounded by the fleet capacity and four racing drains grade each job once', async () => {
    s = makeSchool({ worktrees: 2 });
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.dispatch.maxCrews = 4;
    s.config.grading.maxWorkers = 64;
    // Two passes fill the queue with four finished crews on a two-slot fleet.
    const src = writeIssues(s, issues(4));
    await crewsOnly(s, src);
    await crewsOnly(s, src);
    const jobs = Object.keys(new GradingQueue(s.layout).state().jobs);
    expect(jobs).toHaveLength(4);
    const results = await Promise.all(
      [1, 2, 3, 4].map((w) =>
        drain({
          config: s!.config,
          layout: s!.layout,
          logger: silentLogger,
          limits: { maxWorkers: 64 },
          judging: { verifyOnCleanCheckout },
          worker: { id: `grader-${w}` },
        }),
      ),
    );
    for (const r of results) {
      expect(r.workers).toBeLessThanOrEqual(fleetCapacity(s.config));
      expect(r.fatal).toBeUndefined();
    }
    const graded = results.flatMap((r) => r.verdicts.map((v) => v.jobKey));
    expect(graded.sort()).toEqual([...jobs].sort());
    const applied = readJsonl<{ type: string; data: { crewId: string } }>(
      s.layout.file('scores'),
    ).records.filter((e) => e.type === 'score.applied');
    expect(applied).toHaveLength(4);
    expect(Object.values(new ScoreLedger(s.layout).state().agents).reduce((n, a) => n + a.count, 0)).toBe(4);
  }, 90_000);

  it('N6.2 crews racing for worktrees each get their own slot: no two share one at a time, every lease released', async () => {
    s = makeSchool({
      ledger: true,
      daemons: [
        { id: 'd1', worktrees: 2 },
        { id: 'd2', worktrees: 2 },
      ],
    });
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.dispatch.maxCrews = 4;
    s.config.agents = s.config.agents.filter((a) => a.id === 'slow');
    s.config.agents[0]!.command = s.config.agents[0]!.command!.map((a) => (a === '2500' ? '1500' : a));
    const r = await loop(s, writeIssues(s, issues(4)));
    expect(r.plan.assignments).toHaveLength(4);
    const lines = readFileSync(s.ledger, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(4);
    const worktrees = lines.map((l) => l.split(' ')[2]);
    // Four crews ran at once on four slots: four distinct worktrees, two per daemon.
    expect(new Set(worktrees).size).toBe(4);
    expect(worktrees.filter((w) => w!.includes('/d1/')).length).toBe(2);
    const reg = readCrewState(s.layout).registry;
    expect(Object.keys(reg.leases)).toEqual([]);
    expect(Object.values(reg.crews).every((c) => c.status === 'finished')).toBe(true);
  }, 90_000);

  it('N6.3 the crew job of the loop workflow locks per daemon, never one global group', () => {
    const wf = parseYaml(
      readFileSync(resolve(import.meta.dirname, '../../.github/workflows/school-loop.yml'), 'utf8'),
    );
    type Job = {
      strategy?: { matrix?: { daemon?: unknown } };
      concurrency?: { group?: string; 'cancel-in-progress'?: boolean };
      'timeout-minutes'?: unknown;
    };
    const jobs = Object.entries(wf.jobs as Record<string, Job>);
    const crewJobs = jobs.filter(([, j]) => j.strategy?.matrix?.daemon !== undefined);
    expect(crewJobs.length).toBeGreaterThan(0);
    for (const [name, j] of crewJobs) {
      const group = String(j.concurrency?.group ?? '');
      expect(group, `${name}: concurrency group`).toMatch(/\$\{\{\s*matrix\.daemon\s*\}\}/);
      expect(j.concurrency?.['cancel-in-progress'], `${name}: a running crew is never cancelled`).toBe(false);
      expect(j['timeout-minutes'], `${name}: explicit timeout`).toBeDefined();
    }
    // No other job holds a live-orca group that would serialize the fleet.
    for (const [name, j] of jobs) {
      const group = typeof j.concurrency === 'string' ? j.concurrency : String(j.concurrency?.group ?? '');
      if (/live-orca/.test(group)) expect(group, name).toMatch(/matrix\.daemon/);
    }
  });
});
