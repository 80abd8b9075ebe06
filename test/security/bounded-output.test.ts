import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freeDiskBytes } from '../../src/crew/machine/disk.js';
import { crewRuntimeDir, defaultRuntimeDir } from '../../src/crew/spec.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain } from '../../src/grading/drain.js';
import { importHandoffs } from '../../src/handoff/import.js';
import { silentLogger } from '../../src/log.js';
import { planStep } from '../../src/loop/steps.js';
import { StateLayout } from '../../src/state/layout.js';
import { BOOKBAG_FILES } from '../../src/bookbag/schema.js';
import { runCrew } from '../../src/crew/run/crew.js';
import {
  FIXTURES,
  item,
  plan,
  spec,
  writeCurriculum,
  makeSchool as makeCrewSchool,
  type School as CrewSchool,
} from '../crew/helpers.js';
import { crewJobHandoff, filesUnder, makeSchool, writeIssues, type School } from '../regression/helpers.js';

/**
 * What a hostile student makes the school record is bounded where it is recorded, and its output
 * does not outlive its crew. One crew job on GitHub's path (plan, crew job, handoff, import in a job
 * that runs no student code) with two crews beside each other on one daemon: a flooder, sandboxed,
 * that asks the proxy for ten 30,000-character host names, prints 80 MiB and fills its HOME; and an
 * honest one. Before: the refused names went whole into `crew.finished` (a 300 KB line the import
 * refuses, so the crew stayed running with its slot taken forever), and the 80 MiB stayed in
 * `student.log`, tripping the next cycle's disk floor.
 */
const CAP = 1024 * 1024;
const FLOOD = 80 * 1024 * 1024;
const SLACK = 256 * 1024;

let s: School | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

function flooder() {
  return {
    id: 'flooder',
    command: [
      'node',
      join(FIXTURES, 'flood-student.mjs'),
      '--connects',
      '10',
      '--host-length',
      '30000',
      '--flood',
      String(FLOOD),
      '--home-bytes',
      String(8 * 1024 * 1024),
      '{brief}',
    ],
    roles: ['coding'],
  };
}

describe('bounded records and output of a hostile student (GitHub path)', () => {
  it('its crew.finished is imported, its slot frees, its log keeps the tail within the cap, its runtime is pruned; the honest crew is accepted', async () => {
    s = makeSchool({ daemons: [{ id: 'd1', worktrees: 2 }], extraAgents: [flooder()], timeout: 120 });
    s.config.dispatch.maxCrews = 2;
    s.config.dispatch.logMaxBytes = CAP;
    // An allow-list starts the sandbox's egress proxy (as any CLI agent's API host does).
    s.config.sandbox.allow = ['allowed.example.test:443'];
    const issues = [
      { number: 1, title: 'Flood', body: '```school\nagent: flooder\n```\n' },
      { number: 2, title: 'Honest', body: '```school\nagent: editor\n```\n' },
    ];
    const source = writeIssues(s, issues);
    // A disk floor 48 MiB under what is free now: the flood, kept, would trip it.
    s.config.dispatch.minFreeDiskGiB = Math.max(0, freeDiskBytes(s.root) - 48 * 1024 * 1024) / 1024 ** 3;
    await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
    const first = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    expect(first.assignments.map((a) => a.issueNumber).sort()).toEqual([1, 2]);
    const byIssue = new Map(first.assignments.map((a) => [a.issueNumber, a.crewId]));
    const restored = new StateLayout(join(s.root, 'grade-job-state'));
    cpSync(s.layout.root, restored.root, { recursive: true });
    const { root } = await crewJobHandoff(s);

    const imported = await importHandoffs(restored, root, { config: s.config, logger: silentLogger });
    expect(imported.refused).toEqual([]);
    const crews = readCrewState(restored).registry.crews;
    const flood = crews[byIssue.get(1)!]!;
    expect(flood.status).toBe('finished');
    expect(flood.outcome).toBe('succeeded');
    // Every refused name is named, cut with its marker; the whole reason stays a few KiB.
    expect(flood.reason).toContain('egress-refused');
    expect(flood.reason).toMatch(/…\[\d+ more characters\]/);
    expect(flood.reason!.length).toBeLessThanOrEqual(16 * 1024);
    for (const line of readFileSync(restored.file('crews'), 'utf8').split('\n'))
      expect(Buffer.byteLength(line)).toBeLessThan(64 * 1024);
    for (const line of readFileSync(restored.file('audit'), 'utf8').split('\n'))
      expect(Buffer.byteLength(line)).toBeLessThan(64 * 1024);
    expect(crews[byIssue.get(2)!]).toMatchObject({ status: 'finished', outcome: 'succeeded' });
    expect(readCrewState(restored).registry.leases).toEqual({});

    // The flood: the log kept its tail, within the cap; nothing the student grew stayed behind.
    const dir = crewRuntimeDir(defaultRuntimeDir(s.layout.root), byIssue.get(1)!);
    const log = join(dir, 'student.log');
    expect(statSync(log).size).toBeLessThanOrEqual(CAP + SLACK);
    const text = readFileSync(log, 'utf8');
    expect(text).toMatch(/^\[school\] log cut: \d+ earlier bytes dropped/);
    expect(text.trimEnd().endsWith('LAST-LINE-OF-THE-FLOOD #1')).toBe(true);
    expect(existsSync(join(dir, 'sandbox'))).toBe(false);
    expect(existsSync(join(dir, 'checkouts'))).toBe(false);
    const left = filesUnder(dir).reduce((n, f) => n + statSync(f).size, 0);
    expect(left).toBeLessThanOrEqual(3 * (CAP + SLACK));
    expect(readdirSync(dir)).toContain('runner.log');

    // The next cycle: the disk floor the 80 MiB flood would have tripped holds, and issue 3 gets a slot.
    const more = writeIssues(s, [
      ...issues,
      { number: 3, title: 'Next', body: '```school\nagent: editor\n```\n' },
    ]);
    await fetchCurriculum({ layout: restored, config: s.config, source: more, logger: silentLogger });
    const next = await planStep({ config: s.config, layout: restored, logger: silentLogger, beat: ['d1'] });
    expect(next.assignments.map((a) => a.issueNumber)).toEqual([3]);

    // The honest crew beside it is accepted.
    const graded = await drain({
      config: s.config,
      layout: restored,
      logger: silentLogger,
      judging: { verifyOnCleanCheckout },
    });
    const verdicts = new Map(graded.verdicts.map((v) => [v.crewId, v.accepted]));
    expect(verdicts.get(byIssue.get(2)!)).toBe(true);
  }, 300_000);
});

/**
 * A student that leaves trees Node's `rmSync` cannot remove (600 levels of 200-byte names, deeper
 * than PATH_MAX) in its HOME, its /tmp and its hand-back directory. Before: the sandbox's close threw
 * ENAMETOOLONG, so the proxy's refusals were never alerted, and the pruning stopped there, leaving
 * the student's trees in the runtime directory.
 */
describe('a finished crew leaves no tree of its student behind (in bubblewrap)', () => {
  let sc: CrewSchool | undefined;
  afterEach(() => {
    sc?.cleanup();
    sc = undefined;
  });
  it('its refusals are still alerted, its HOME, /tmp and hand-back trees are removed, its report kept', async () => {
    sc = makeCrewSchool({
      worktrees: 1,
      timeout: 120,
      extraAgents: [
        {
          id: 'deep',
          command: [
            'node',
            join(FIXTURES, 'flood-student.mjs'),
            '--connects',
            '1',
            '--deep',
            '600',
            '{brief}',
          ],
          roles: ['coding'],
        },
      ],
    });
    sc.config.sandbox.allow = ['allowed.example.test:443'];
    writeCurriculum(sc, [item(4)]);
    await plan(sc, [{ crewId: 'c4-deeptree', issue: 4, agent: 'deep' }]);
    const r = await runCrew(await spec(sc, 'c4-deeptree'), { logger: silentLogger });
    expect(r.outcome, r.reason).toBe('succeeded');
    expect(r.alerts.some((a) => a.startsWith('egress-refused:') && a.includes('axxxx'))).toBe(true);
    const dir = crewRuntimeDir(defaultRuntimeDir(sc.layout.root), 'c4-deeptree');
    expect(existsSync(join(dir, 'sandbox'))).toBe(false);
    expect(readdirSync(join(dir, 'out')).sort()).toEqual(['report.md', 'usage.json']);
    expect(readFileSync(join(sc.layout.bookbag('c4-deeptree'), BOOKBAG_FILES.report), 'utf8')).toContain(
      'solved #4',
    );
  }, 300_000);
});

/**
 * A change is output too: a student that writes 40 MiB of random bytes into its worktree made a
 * 54 MB patch that was read into memory, written into its bookbag and kept in every checkpoint (and
 * a gigabyte would have been read whole). The collection stops at the bookbag's bound: the crew is
 * failed, saying why, nothing of the change is kept, and the slot serves the next crew.
 */
describe('a change over the bound a bookbag keeps', () => {
  let sc: CrewSchool | undefined;
  afterEach(() => {
    sc?.cleanup();
    sc = undefined;
  });
  it('fails its crew with the bound named, keeps nothing of it, and the next crew in the slot is accepted', async () => {
    sc = makeCrewSchool({
      worktrees: 1,
      timeout: 120,
      extraAgents: [
        {
          id: 'big',
          command: [
            'node',
            join(FIXTURES, 'flood-student.mjs'),
            '--worktree-bytes',
            String(40 * 1024 * 1024),
            '{brief}',
          ],
          roles: ['coding'],
        },
      ],
    });
    writeCurriculum(sc, [item(5), item(6)]);
    await plan(sc, [
      { crewId: 'c5-bigdiff1', issue: 5, agent: 'big' },
      { crewId: 'c6-honest01', issue: 6, agent: 'editor' },
    ]);
    const big = await runCrew(await spec(sc, 'c5-bigdiff1'), { logger: silentLogger });
    expect(big.outcome).toBe('failed');
    expect(big.reason).toContain('the change is over 32 MiB as a patch');
    expect(big.alerts).toEqual([]);
    expect(existsSync(join(sc.layout.bookbag('c5-bigdiff1'), BOOKBAG_FILES.diff))).toBe(false);
    const honest = await runCrew(await spec(sc, 'c6-honest01'), { logger: silentLogger });
    expect(honest.outcome, honest.reason).toBe('succeeded');
    const d = await drain({
      config: sc.config,
      layout: sc.layout,
      logger: silentLogger,
      judging: { verifyOnCleanCheckout },
    });
    expect(d.verdicts.find((v) => v.crewId === 'c6-honest01')).toMatchObject({ accepted: true });
  }, 300_000);
});
