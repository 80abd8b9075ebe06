import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAssignments, type Progress } from '../../src/crew/driver/driver.js';

import { deliveryFor } from '../../src/delivery/setup.js';
import { runLoop } from '../../src/loop/loop.js';
import { memoryLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { git } from '../support/tmp.js';
import {
  item,
  launcher,
  makeSchool,
  nodeFixture,
  plan,
  registry,
  writeCurriculum,
  type School,
} from './helpers.js';
import { crewStep } from '../support/crew-step.js';

let school: School | undefined;
afterEach(() => school?.cleanup());

type Ev = { key: string; type: string; at: string; data: Record<string, unknown> };
const events = (s: School) => readJsonl<Ev>(s.layout.file('crews')).records;

/** Issues in GitHub's REST shape, for the loop's file source. */
function issuesFile(s: School, numbers: number[]): string {
  const path = join(s.root, 'issues.json');
  writeFileSync(
    path,
    JSON.stringify(
      numbers.map((n) => ({
        number: n,
        title: `Fix thing ${n}`,
        body: `Please fix thing ${n}.`,
        labels: [],
        state: 'open',
        html_url: `https://github.com/o/r/issues/${n}`,
        author_association: 'OWNER',
        updated_at: '2026-01-01T00:00:00Z',
      })),
    ),
  );
  return path;
}

describe('continuous refill', () => {
  it(
    'one slot, three ready issues, one loop run: all three run, one after another, and become branches',
    { timeout: 180_000 },
    async () => {
      const s = (school = makeSchool({ worktrees: 1 }));
      const config = { ...s.config, delivery: { ...s.config.delivery, mode: 'branch' as const } };
      const logger = memoryLogger();
      const phases: Array<{ phase: Progress['phase']; crewId: string; at: number }> = [];
      const r = await runLoop({
        config,
        layout: s.layout,
        logger,
        source: { kind: 'file', path: issuesFile(s, [1, 2, 3]) },
        launcher: await launcher(),
        ports: { delivery: deliveryFor({ config, layout: s.layout, logger, actions: false }) },
        onProgress: (_l, p) => phases.push({ phase: p.phase, crewId: p.crewId, at: performance.now() }),
      });
      // The cycle's plan fits one crew (one slot); the driver refilled the other two as the slot freed.
      expect(r.plan.assignments).toHaveLength(1);
      const run = r.runs[0]!.result;
      expect(run.refilled).toHaveLength(2);
      expect(run.finished.map((f) => f.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      const crews = Object.values(registry(s).crews);
      expect(crews.map((c) => c.issueNumber).sort()).toEqual([1, 2, 3]);
      // One after another: each launch comes after the previous crew finished (one slot, never two).
      const order = phases
        .filter((p) => p.phase === 'launched' || p.phase === 'finished')
        .map((p) => p.phase);
      expect(order).toEqual(['launched', 'finished', 'launched', 'finished', 'launched', 'finished']);
      const started = events(s)
        .filter((e) => e.type === 'crew.started')
        .map((e) => Date.parse(e.at));
      const finished = events(s)
        .filter((e) => e.type === 'crew.finished')
        .map((e) => Date.parse(e.at));
      for (let i = 1; i < 3; i++) expect(started[i]!).toBeGreaterThanOrEqual(finished[i - 1]!);
      // Graded and delivered in the same run: one branch per accepted issue.
      expect(r.drain.accepted).toBe(3);
      const branches = git(s.repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/school/');
      expect(branches.split('\n').sort()).toEqual(['school/issue-1', 'school/issue-2', 'school/issue-3']);
    },
  );

  it(
    'two daemons refilling at once in two OS processes never take the same issue',
    { timeout: 240_000 },
    async () => {
      const s = (school = makeSchool({
        daemons: [
          { id: 'd1', worktrees: 2 },
          { id: 'd2', worktrees: 2 },
        ],
      }));
      const config = { ...s.config, dispatch: { ...s.config.dispatch, maxCrews: 4 } };
      const issues = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
      writeCurriculum(
        s,
        issues.map((n) => item(n)),
      );
      const [node, ...args] = await nodeFixture('refill-daemon.ts');
      const start = async (daemon: string) => {
        const opts = join(s.root, `refill-${daemon}.json`);
        writeFileSync(
          opts,
          JSON.stringify({ config, stateDir: s.layout.root, daemon, launcher: await launcher() }),
        );
        const child = spawn(node!, [...args, opts], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (b: Buffer) => (out += b.toString()));
        return new Promise<{ ok: boolean; result: { launched: string[]; refilled: string[] } }>((resolve) =>
          child.once('exit', () => resolve(JSON.parse(out.trim().split('\n').pop()!))),
        );
      };
      const [a, b] = await Promise.all([start('d1'), start('d2')]);
      expect(a.ok && b.ok).toBe(true);
      // Nothing was planned beforehand: every crew came from a refill, under the crew log's lock.
      const planned = events(s).filter((e) => e.type === 'crew.planned');
      const perIssue = new Map<number, number>();
      for (const e of planned)
        perIssue.set(e.data.issueNumber as number, (perIssue.get(e.data.issueNumber as number) ?? 0) + 1);
      expect([...perIssue.keys()].sort((x, y) => x - y)).toEqual(issues);
      expect([...perIssue.values()].every((n) => n === 1)).toBe(true);
      const mine = new Set(a.result.launched);
      expect(b.result.launched.some((id) => mine.has(id))).toBe(false);
      expect(a.result.launched.length + b.result.launched.length).toBe(issues.length);
      expect(a.result.launched.length).toBeGreaterThan(0);
      expect(b.result.launched.length).toBeGreaterThan(0);
      const reg = registry(s);
      expect(
        Object.values(reg.crews).every((c) => c.status === 'finished' && c.outcome === 'succeeded'),
      ).toBe(true);
    },
  );
});

describe('disk floor at launch', () => {
  it(
    'reads the daemon’s free disk right before each launch, waits below the floor and says so',
    { timeout: 120_000 },
    async () => {
      const s = (school = makeSchool({ worktrees: 1 }));
      writeCurriculum(s, [item(1), item(2)]);
      await plan(s, [
        { crewId: 'c1-aaaaaaaa', issue: 1 },
        { crewId: 'c2-bbbbbbbb', issue: 2 },
      ]);
      const GiB = 1024 ** 3;
      // Enough for the first launch; then low for three readings (the worktree of crew 1 filled it).
      const readings = [20 * GiB, 1 * GiB, 1 * GiB, 1 * GiB];
      let reads = 0;
      const logger = memoryLogger();
      const phases: Progress[] = [];
      const r = await runAssignments({
        config: s.config,
        layout: s.layout,
        daemon: 'd1',
        assignments: [{ crewId: 'c1-aaaaaaaa' }, { crewId: 'c2-bbbbbbbb' }],
        logger,
        launch: { launcher: await launcher(), graceMs: 300, freeDisk: () => readings[reads++] ?? 20 * GiB },
        clock: { pollMs: 50 },
        onProgress: (p) => phases.push(p),
      });
      expect(r.launched).toEqual(['c1-aaaaaaaa', 'c2-bbbbbbbb']);
      expect(r.diskWaits).toBe(1);
      expect(reads).toBeGreaterThanOrEqual(5);
      const wait = phases.find((p) => p.phase === 'waiting')!;
      expect(wait.crewId).toBe('c2-bbbbbbbb');
      expect(wait.detail).toMatch(/free disk 1\.0 GiB below the 8\.0 GiB floor/);
      expect(
        logger.lines.some(
          (l) =>
            l.level === 'warning' && /below the 8\.0 GiB floor.*waiting before launching c2/.test(l.message),
        ),
      ).toBe(true);
      // Crew 2 launched only after the reading rose again, never while it was low.
      const i2 = phases.findIndex((p) => p.phase === 'launched' && p.crewId === 'c2-bbbbbbbb');
      expect(i2).toBeGreaterThan(phases.indexOf(wait));
    },
  );

  it(
    'with nothing running that could free space, the daemon stops launching after its wait',
    { timeout: 60_000 },
    async () => {
      const s = (school = makeSchool({ worktrees: 1 }));
      writeCurriculum(s, [item(1)]);
      const logger = memoryLogger();
      const r = await crewStep(s, {
        logger,
        launch: { freeDisk: () => 2 * 1024 ** 3, diskWaitMs: 500 },
        office: { refill: true },
      });
      // The refill itself waited on the floor: nothing was planned, nothing launched.
      expect(r.launched).toEqual([]);
      expect(r.diskWaits).toBe(1);
      expect(events(s).filter((e) => e.type === 'crew.planned')).toHaveLength(0);
    },
  );
});
