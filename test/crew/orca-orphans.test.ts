import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildView } from '../../src/board/view.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { runAssignments } from '../../src/crew/driver/driver.js';
import { writeSpec } from '../../src/crew/spec.js';
import { issueStates, MAX_ORPHANINGS } from '../../src/dispatch/logs/history.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { planStep } from '../../src/loop/steps.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { isRunning } from '../../src/process/liveness.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { git } from '../support/tmp.js';
import { item, launcher, plan, registry, spec, writeCurriculum } from './helpers.js';
import { orcaSchool, read, turnDirs, waitFor, type OrcaSchool } from './orca-helpers.js';
import { claude, installFakes, uid } from '../agents/fake.js';

/**
 * N7.1 with the fake Orca, real student processes and real SIGKILL crashes: a crew whose student
 * finished is collected and graded whatever crashed around it; one whose student had not finished is
 * swept and orphaned, which never costs the student an attempt; orphanings in a row are bounded.
 */
let school: OrcaSchool | undefined;
afterEach(() => school?.cleanup());

const jobs = (s: OrcaSchool) =>
  readJsonl<{ key: string }>(s.layout.file('grading')).records.map((j) => j.key);
const audits = (s: OrcaSchool) =>
  readJsonl<{ type: string; kind?: string; crewId?: string }>(s.layout.file('audit')).records;

/**
 * A crew runner started as the driver starts one, its student under way in an Orca terminal, then
 * the machine's crash: the runner and the Orca runtime both SIGKILLed. The student lives on in the
 * terminal's shell (Orca's terminals outlive the app).
 */
async function crashUnder(s: OrcaSchool, crewId: string, studentUnderway: () => boolean) {
  const [node, ...script] = await launcher();
  const runner = spawn(node!, [...script, writeSpec(await spec(s, crewId))], { stdio: 'ignore' });
  await waitFor(() => turnDirs(s, crewId).some((d) => existsSync(join(d, 'started'))), 'the start');
  await waitFor(studentUnderway, 'the student');
  runner.kill('SIGKILL');
  await new Promise((r) => runner.once('exit', r));
  s.fake('crash');
}

const driver = async (s: OrcaSchool) =>
  runAssignments({
    config: s.config,
    layout: s.layout,
    daemon: 'd1',
    assignments: [],
    logger: memoryLogger(),
    launch: { launcher: await launcher() },
  });

describe('at daemon start: a crew whose runner and Orca died (N7.1)', () => {
  it('its student had written its exit file: collected, verified, bookbag complete, graded — not lost, school not paused', async () => {
    const s = (school = orcaSchool());
    s.fake('start');
    writeCurriculum(s, [item(9)]);
    // `slow`: sleeps 2.5 s, then edits, writes its usage and report, exits 0.
    await plan(s, [{ crewId: 'c9-coll0001', issue: 9, agent: 'slow' }]);
    await crashUnder(s, 'c9-coll0001', () => true);
    const [turn] = turnDirs(s, 'c9-coll0001');
    // The student finishes in its terminal with nobody watching: the launch script's files hold it.
    await waitFor(() => existsSync(join(turn!, 'exit-code')), 'the exit file', 20_000);
    expect(read(join(turn!, 'exit-code')).trim()).toBe('0');
    expect(registry(s).crews['c9-coll0001']!.status).toBe('running');
    s.fake('start'); // the daemon comes back: a new Orca runtime, then the driver
    const r = await driver(s);
    expect(r.lost).toEqual([]);
    expect(r.paused).toBeUndefined();
    const crew = registry(s).crews['c9-coll0001']!;
    expect(crew).toMatchObject({ status: 'finished', outcome: 'succeeded' });
    expect(crew.orphaned).toBeUndefined();
    expect(jobs(s)).toEqual(['grade:9:c9-coll0001']);
    // The bookbag as any crew's: done flag last, the change, the verification on a clean checkout.
    const bag = s.layout.bookbag('c9-coll0001');
    expect(existsSync(join(bag, 'done.flag'))).toBe(true);
    expect(readFileSync(join(bag, 'diff.patch'), 'utf8')).toContain('+solved #9');
    expect(readFileSync(join(bag, 'report.md'), 'utf8')).toContain('solved #9');
    const record = JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8'));
    expect(record.verification).toMatchObject({ passed: true, exitCode: 0, diffSha: record.diffSha });
    expect(record.usage).toMatchObject({ inputTokens: 1200, costUsd: 0.25 });
    expect(record.briefSha).toMatch(/^[0-9a-f]{64}$/);
    // Its spend is recorded once, under the crew's first-turn key.
    const spend = readJsonl<{ key: string }>(s.layout.file('spend')).records.map((e) => e.key);
    expect(spend.filter((k) => k.includes('c9-coll0001'))).toEqual(['spend:c9-coll0001']);
    // Lease released, slot reset and clean, no terminal left, nothing paused, no lost crew.
    expect(Object.keys(registry(s).leases)).toEqual([]);
    expect(git(crew.worktree!, 'status', '--porcelain', '--ignored')).toBe('');
    expect(s.orca('terminal', 'list', '--worktree', `path:${crew.worktree}`).result!.terminals).toEqual([]);
    expect(readSchool(s.layout).pauses ?? []).toEqual([]);
    expect(audits(s).some((e) => e.type === 'crew.lost')).toBe(false);
    expect(issueStates(registry(s)).get(9)).toEqual({ kind: 'done', crewId: 'c9-coll0001' });
  }, 120_000);

  it('a student that keeps printing after Orca died is not killed with its terminal: it finishes and is graded', async () => {
    // Prints a line every 100 ms for 2.5 s, then makes the change: its output outlives the terminal.
    const chatty = [
      'node',
      '-e',
      "const fs = require('fs'); let n = 0; const t = setInterval(() => { console.log('line ' + n++); if (n === 25) { clearInterval(t); fs.appendFileSync(process.env.SCHOOL_WORKTREE + '/src/value.txt', 'solved #9\\n'); } }, 100);",
      '{brief}',
    ];
    const s = (school = orcaSchool({ extraAgents: [{ id: 'chatty', command: chatty, roles: ['coding'] }] }));
    s.fake('start');
    writeCurriculum(s, [item(9)]);
    await plan(s, [{ crewId: 'c9-chat0001', issue: 9, agent: 'chatty' }]);
    const log = join(s.layout.root, '..', 'runtime', 'crews', 'c9-chat0001', 'student.log');
    await crashUnder(s, 'c9-chat0001', () => existsSync(log) && read(log).includes('line 2'));
    const [turn] = turnDirs(s, 'c9-chat0001');
    await waitFor(() => existsSync(join(turn!, 'exit-code')), 'the exit file', 20_000);
    expect(read(join(turn!, 'exit-code')).trim()).toBe('0');
    expect(read(log)).toContain('line 24');
    s.fake('start');
    const r = await driver(s);
    expect(r.lost).toEqual([]);
    expect(registry(s).crews['c9-chat0001']).toMatchObject({ status: 'finished', outcome: 'succeeded' });
    expect(jobs(s)).toEqual(['grade:9:c9-chat0001']);
  }, 120_000);

  it('a CLI agent (claude) that finished while Orca and its runner were down: its turn is read from its part of the log', async () => {
    // Unconfined: the fake CLI records its calls next to itself (test/agents runs it the same way).
    const s = (school = orcaSchool({
      unconfined: true,
      extraAgents: [{ id: 'claude', kind: 'claude-code', model: 'claude-sonnet-4-5', passEnv: [] }],
    }));
    const session = uid('sess-coll');
    const fake = installFakes(join(s.root, 'bin'), [
      {
        sleepMs: 2500,
        append: { file: 'src/value.txt', text: 'solved #9\n' },
        stdout: claude.result({ session, cost: 0.0425, turns: 3 }),
      },
    ]);
    const path = process.env.PATH;
    process.env.PATH = `${fake.bin}:${path}`;
    try {
      s.fake('start');
      writeCurriculum(s, [item(9)]);
      await plan(s, [{ crewId: 'c9-clic0001', issue: 9, agent: 'claude' }]);
      await crashUnder(s, 'c9-clic0001', () => fake.calls().length === 1);
      const [turn] = turnDirs(s, 'c9-clic0001');
      await waitFor(() => existsSync(join(turn!, 'exit-code')), 'the exit file', 20_000);
      s.fake('start');
      const r = await driver(s);
      expect(r.lost).toEqual([]);
      expect(registry(s).crews['c9-clic0001']).toMatchObject({ status: 'finished', outcome: 'succeeded' });
      expect(jobs(s)).toEqual(['grade:9:c9-clic0001']);
      // Read back, not run again: one call; its result line gives the session and the usage.
      expect(fake.calls()).toHaveLength(1);
      const record = JSON.parse(readFileSync(join(s.layout.bookbag('c9-clic0001'), 'bookbag.json'), 'utf8'));
      expect(record.agentSession).toBe(session);
      expect(record.usage.costUsd).toBeCloseTo(0.0425);
    } finally {
      process.env.PATH = path;
    }
  }, 120_000);

  it('its student was still working (no exit file): swept, slot clean, orphaned — not counted, not lost, planned again', async () => {
    const s = (school = orcaSchool({ unconfined: true }));
    s.fake('start');
    writeCurriculum(s, [item(9)]);
    await plan(s, [{ crewId: 'c9-dead0001', issue: 9, agent: 'hanger' }]);
    const pidfile = join(s.root, 'hang.pid');
    // Both pids written (the student writes its own and its child's).
    await crashUnder(
      s,
      'c9-dead0001',
      () => existsSync(pidfile) && read(pidfile).trim().split('\n').length === 2,
    );
    const pids = read(pidfile).trim().split('\n').map(Number);
    expect(pids.every((p) => isRunning(p))).toBe(true);
    s.fake('start');
    const slot = registry(s).crews['c9-dead0001']!.worktree!;
    const r = await driver(s);
    expect(r.lost).toEqual([]);
    expect(r.paused).toBeUndefined();
    for (const p of pids) await waitFor(() => !isRunning(p), `pid ${p} to end`, 5_000);
    const crew = registry(s).crews['c9-dead0001']!;
    expect(crew).toMatchObject({ status: 'finished', outcome: 'aborted', orphaned: true });
    expect(crew.reason).toMatch(
      /^interrupted: orphaned: its runner is gone and its student had not finished; \d+ process\(es\) left in its Orca terminal stopped; the slot was reset; its unfinished change is not graded/,
    );
    expect(existsSync(join(s.layout.bookbag('c9-dead0001'), 'done.flag'))).toBe(false);
    expect(jobs(s)).toEqual([]);
    expect(Object.keys(registry(s).leases)).toEqual([]);
    expect(git(slot, 'status', '--porcelain', '--ignored')).toBe('');
    expect(s.orca('terminal', 'list', '--worktree', `path:${slot}`).result!.terminals).toEqual([]);
    expect(
      audits(s).some((e) => e.type === 'crew.alert' && e.kind === 'orphaned' && e.crewId === 'c9-dead0001'),
    ).toBe(true);
    expect(audits(s).some((e) => e.type === 'crew.lost')).toBe(false);
    expect(readSchool(s.layout).pauses ?? []).toEqual([]);
    // Not the student's failed run: the issue is ready as a first attempt, and the planner plans it.
    expect(issueStates(registry(s)).get(9)).toEqual({ kind: 'ready', attempt: 1 });
    const again = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    expect(again.assignments).toEqual([expect.objectContaining({ issueNumber: 9, daemon: 'd1' })]);
    expect(registry(s).crews[again.assignments[0]!.crewId]).toMatchObject({ attempt: 1, repair: false });
  }, 120_000);
});

describe('at daemon start: a crash during a correction turn (N7.1)', () => {
  it('its student finished the correction, but the session before it died with the runner: swept as an orphan, never graded', async () => {
    // Turn 1 exits 0 with no change (verification fails); the correction turn makes the change slowly.
    const corrector = [
      'node',
      '-e',
      "const fs = require('fs'); if (process.env.SCHOOL_CORRECTION_TURN === '1') setTimeout(() => fs.appendFileSync(process.env.SCHOOL_WORKTREE + '/src/value.txt', 'solved #9\\n'), 2500); ",
      '{brief}',
    ];
    const s = (school = orcaSchool({
      extraAgents: [{ id: 'corrector', command: corrector, roles: ['coding'] }],
    }));
    s.fake('start');
    writeCurriculum(s, [item(9)]);
    await plan(s, [{ crewId: 'c9-corr0001', issue: 9, agent: 'corrector' }]);
    await crashUnder(s, 'c9-corr0001', () => {
      const turns = turnDirs(s, 'c9-corr0001');
      return turns.length === 2 && existsSync(join(turns[1]!, 'started'));
    });
    const second = turnDirs(s, 'c9-corr0001')[1]!;
    await waitFor(() => existsSync(join(second, 'exit-code')), 'the correction turn to finish', 20_000);
    s.fake('start');
    const r = await driver(s);
    expect(r.lost).toEqual([]);
    const crew = registry(s).crews['c9-corr0001']!;
    expect(crew).toMatchObject({ status: 'finished', outcome: 'aborted', orphaned: true });
    expect(crew.reason).toMatch(
      /orphaned: its runner is gone and its student had finished correction turn 1, whose session died with its runner/,
    );
    expect(jobs(s)).toEqual([]);
    expect(existsSync(join(s.layout.bookbag('c9-corr0001'), 'done.flag'))).toBe(false);
    expect(git(crew.worktree!, 'status', '--porcelain', '--ignored')).toBe('');
    expect(Object.keys(registry(s).leases)).toEqual([]);
    expect(issueStates(registry(s)).get(9)).toEqual({ kind: 'ready', attempt: 1 });
  }, 120_000);
});

describe('orphanings in a row are bounded: the issue then waits with a plain reason (N7.1)', () => {
  it(`${MAX_ORPHANINGS} crews lost to Orca restarts: each planned again as a first attempt, then the plan and the board say why it waits`, async () => {
    const s = (school = orcaSchool({ unconfined: true }));
    s.config.agents = s.config.agents.filter((a) => a.id === 'hanger');
    s.fake('start');
    writeCurriculum(s, [item(9)]);
    const pidfile = join(s.root, 'hang.pid');
    const lost: string[] = [];
    for (let i = 0; i < MAX_ORPHANINGS; i++) {
      const p = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
      expect(p.assignments).toHaveLength(1);
      const crewId = p.assignments[0]!.crewId;
      // Never a repair: an orphaning is not the student's failed run.
      expect(registry(s).crews[crewId]).toMatchObject({ issueNumber: 9, attempt: 1, repair: false });
      const running = runCrew(await spec(s, crewId), { logger: silentLogger });
      await waitFor(() => turnDirs(s, crewId).some((d) => existsSync(join(d, 'started'))), 'the start');
      await waitFor(
        () => existsSync(pidfile) && read(pidfile).trim().split('\n').length === 2,
        'the student',
      );
      s.fake('restart');
      const r = await running;
      expect(r.outcome).toBe('aborted');
      expect(r.reason).toMatch(/^interrupted: orphaned: Orca restarted under the crew/);
      expect(registry(s).crews[crewId]).toMatchObject({ orphaned: true });
      for (const pid of read(pidfile).trim().split('\n').map(Number))
        await waitFor(() => !isRunning(pid), `pid ${pid} to end`, 5_000);
      lost.push(crewId);
    }
    expect(issueStates(registry(s)).get(9)).toEqual({
      kind: 'stopped',
      crewIds: lost.slice(-2),
      orphaned: MAX_ORPHANINGS,
    });
    const p = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    expect(p.assignments).toEqual([]);
    expect(p.refused).toEqual([
      expect.objectContaining({
        issue: 9,
        code: 'stopped-after-orphanings',
        reason: expect.stringMatching(
          new RegExp(
            `^its classroom lost ${MAX_ORPHANINGS} crews in a row .*none counted as an attempt.*school requeue 9`,
          ),
        ),
      }),
    ]);
    const stopped = buildView(s.layout, s.config).lanes.find((l) => l.id === 'stopped')!.items;
    expect(stopped).toEqual([
      expect.objectContaining({
        issue: 9,
        reason: expect.stringMatching(/^stopped-after-orphanings: its classroom kept losing its crews/),
      }),
    ]);
    expect(readSchool(s.layout).pauses ?? []).toEqual([]);
  }, 180_000);
});
