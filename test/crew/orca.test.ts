import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCrew } from '../../src/crew/run/crew.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { git } from '../support/tmp.js';
import { isRunning } from '../../src/process/liveness.js';
import { item, plan, registry, spec, writeCurriculum } from './helpers.js';
import { claude, installFakes, uid } from '../agents/fake.js';
import { orcaSchool, read, turnDirs, waitFor, type OrcaSchool } from './orca-helpers.js';

let school: OrcaSchool | undefined;
afterEach(() => school?.cleanup());

const jobs = (s: OrcaSchool) =>
  readJsonl<{ key: string }>(s.layout.file('grading')).records.map((j) => j.key);

describe('the orca classroom runs students in Orca terminals (fake Orca, real shells, real students)', () => {
  it('the launch script lingering after its exit code (the terminal shows the last lines) is not a leftover of the student', async () => {
    // Short wait slices: the school sees the exit code while the script still shows the log tail.
    const s = (school = orcaSchool({ waitSliceSeconds: 0.1 }));
    s.fake('start');
    writeCurriculum(s, [item(7)]);
    await plan(s, [{ crewId: 'c7-orca0003', issue: 7 }]);
    const r = await runCrew(await spec(s, 'c7-orca0003'), { logger: silentLogger });
    expect(r.outcome).toBe('succeeded');
    expect(r.alerts).toEqual([]);
  });

  it('a student runs in a terminal of its slot, confined, and the school keeps the start, output and exit code', async () => {
    const s = (school = orcaSchool({
      extraAgents: [
        {
          id: 'probe',
          command: [
            'node',
            '-e',
            "const fs = require('fs'), p = require('path'); fs.writeFileSync(process.env.SCHOOL_REPORT_FILE, JSON.stringify({ pid: process.pid, orcaDir: fs.existsSync(p.resolve(process.env.SCHOOL_WORKTREE, '../../../orca-ud')), env: process.env })); console.log('probe output line')",
            '{brief}',
          ],
          roles: ['coding'],
        },
      ],
    }));
    s.fake('start');
    writeCurriculum(s, [item(7), item(8)]);
    await plan(s, [
      { crewId: 'c7-orca0001', issue: 7 },
      { crewId: 'c8-orca0002', issue: 8, agent: 'probe' },
    ]);
    const r = await runCrew(await spec(s, 'c7-orca0001'), { logger: silentLogger });
    expect(r.outcome).toBe('succeeded');
    expect(r.alerts).toEqual([]);
    const [turn] = turnDirs(s, 'c7-orca0001');
    expect(read(join(turn!, 'exit-code')).trim()).toBe('0');
    expect(Number(read(join(turn!, 'started')))).toBeGreaterThan(1);
    // The launch script held the student's environment: gone once its shell opened it.
    expect(existsSync(join(turn!, 'launch.sh'))).toBe(false);
    const terminal = JSON.parse(read(join(turn!, 'terminal.json')));
    expect(terminal.handle).toMatch(/^term_/);
    expect(terminal.title).toBe('school:c7-orca0001:1');
    // The bookbag is the crew's as usual; Orca's terminals of the slot are closed; the slot is clean.
    const diff = readFileSync(join(s.layout.bookbag('c7-orca0001'), 'diff.patch'), 'utf8');
    expect(diff).toContain('+solved #7');
    const slot = registry(s).crews['c7-orca0001']!.worktree!;
    expect(git(slot, 'status', '--porcelain', '--ignored')).toBe('');
    expect(s.orca('terminal', 'list', '--worktree', `path:${slot}`).result!.terminals).toEqual([]);
    expect(jobs(s)).toEqual(['grade:7:c7-orca0001']);
    expect(Object.keys(registry(s).leases)).toEqual([]);

    // The student's environment is the school's, not the Orca terminal's, and the sandbox wraps it.
    // (the probe changes nothing, so its verification fails: the report is what this looks at.)
    await runCrew(await spec(s, 'c8-orca0002'), { logger: silentLogger });
    const probe = JSON.parse(readFileSync(join(s.layout.bookbag('c8-orca0002'), 'report.md'), 'utf8'));
    const env = probe.env;
    // Its output went to the school's student log (through the script's tee), not only to Orca's screen.
    expect(read(join(s.layout.root, '..', 'runtime', 'crews', 'c8-orca0002', 'student.log'))).toContain(
      'probe output line',
    );
    expect(env.SCHOOL_CREW_ID).toBe('c8-orca0002');
    expect(env.ORCA_TERMINAL_HANDLE).toBeUndefined();
    expect(env.ORCA_USER_DATA_PATH).toBeUndefined();
    expect(env.PS1).toBeUndefined();
    expect(env.HOME).not.toBe(process.env.HOME);
    // The sandbox wraps it inside the Orca terminal: its own PID namespace, and the Orca runtime's
    // directory (its socket and token) does not exist in there, though it does out here.
    expect(s.config.sandbox.kind).not.toBe('none');
    expect(probe.pid).toBeLessThan(10);
    expect(probe.orcaDir).toBe(false);
    expect(existsSync(s.userData)).toBe(true);
  }, 120_000);

  it('the argv is quoted once, inside the script: quotes, $(…), backticks and newlines reach the student verbatim', async () => {
    const nasty = `it's "$(touch PWNED)" \`touch PWNED2\` $HOME ; exit 9\nline two \\ end`;
    const s = (school = orcaSchool({
      extraAgents: [
        {
          id: 'argv',
          command: [
            'node',
            '-e',
            "require('fs').writeFileSync(process.env.SCHOOL_REPORT_FILE, JSON.stringify(process.argv.slice(1)))",
            nasty,
            '--',
            '{brief}',
          ],
          roles: ['coding'],
        },
      ],
      verify: false,
    }));
    s.fake('start');
    writeCurriculum(s, [item(3)]);
    await plan(s, [{ crewId: 'c3-orca0003', issue: 3, agent: 'argv' }]);
    const r = await runCrew(await spec(s, 'c3-orca0003'), { logger: silentLogger });
    expect(r.outcome).toBe('succeeded');
    const got = JSON.parse(readFileSync(join(s.layout.bookbag('c3-orca0003'), 'report.md'), 'utf8'));
    expect(got[0]).toBe(nasty);
    const slot = registry(s).crews['c3-orca0003']!.worktree!;
    expect(existsSync(join(slot, 'PWNED'))).toBe(false);
    expect(existsSync(join(slot, 'PWNED2'))).toBe(false);
  }, 120_000);

  it("the file's exit code wins over Orca's: a failing student stays failed when Orca reports 0", async () => {
    const s = (school = orcaSchool());
    s.fake('start');
    s.faults({ lieExitCode: 0 });
    writeCurriculum(s, [item(4)]);
    await plan(s, [{ crewId: 'c4-orca0004', issue: 4, agent: 'failer' }]);
    const r = await runCrew(await spec(s, 'c4-orca0004'), { logger: silentLogger });
    expect(r.outcome).toBe('failed');
    expect(read(join(turnDirs(s, 'c4-orca0004')[0]!, 'exit-code')).trim()).toBe('1');
    expect(jobs(s)).toEqual(['grade:4:c4-orca0004']);
  }, 120_000);

  it('a command Orca typed but never ran: the crew ends as an interruption, nothing graded, lease released, slot clean', async () => {
    const s = (school = orcaSchool({ startTimeoutSeconds: 2 }));
    s.fake('start');
    s.faults({ typedNotRun: true });
    writeCurriculum(s, [item(5)]);
    await plan(s, [{ crewId: 'c5-orca0005', issue: 5 }]);
    const r = await runCrew(await spec(s, 'c5-orca0005'), { logger: silentLogger });
    expect(r.outcome).toBe('aborted');
    expect(r.reason).toMatch(
      /^interrupted: the student never started in its Orca terminal term_\w+ within 2 s/,
    );
    expect(r.alerts.join('\n')).toMatch(/classroom-interrupted/);
    expect(existsSync(join(s.layout.bookbag('c5-orca0005'), 'done.flag'))).toBe(false);
    expect(jobs(s)).toEqual([]);
    expect(Object.keys(registry(s).leases)).toEqual([]);
    const slot = registry(s).crews['c5-orca0005']!.worktree!;
    expect(git(slot, 'status', '--porcelain', '--ignored')).toBe('');
    // The shell Orca left waiting at its prompt was closed with the slot's terminals.
    expect(s.orca('terminal', 'list', '--worktree', `path:${slot}`).result!.terminals).toEqual([]);
  }, 120_000);

  it('a stale handle (Orca reloaded its panes) is found again by title and the crew goes on', async () => {
    const s = (school = orcaSchool());
    s.fake('start');
    writeCurriculum(s, [item(6)]);
    await plan(s, [{ crewId: 'c6-orca0006', issue: 6, agent: 'slow' }]);
    const running = runCrew(await spec(s, 'c6-orca0006'), { logger: silentLogger });
    await waitFor(() => turnDirs(s, 'c6-orca0006').some((d) => existsSync(join(d, 'started'))), 'the start');
    const reloaded = JSON.parse(s.fake('reload'));
    expect(reloaded.handles).toHaveLength(1);
    const r = await running;
    expect(r.outcome).toBe('succeeded');
    expect(jobs(s)).toEqual(['grade:6:c6-orca0006']);
  }, 120_000);

  it('a student that outlives its timeout is stopped in its terminal and the crew times out', async () => {
    // Unconfined: the hanger writes its pid where the test reads it, outside its worktree.
    const s = (school = orcaSchool({ timeout: 3, unconfined: true }));
    s.fake('start');
    writeCurriculum(s, [item(2)]);
    await plan(s, [{ crewId: 'c2-orca0007', issue: 2, agent: 'hanger' }]);
    const r = await runCrew(await spec(s, 'c2-orca0007'), { logger: silentLogger });
    expect(r.outcome).toBe('timed_out');
    for (const pid of read(join(s.root, 'hang.pid')).trim().split('\n').map(Number))
      expect(isRunning(pid), `pid ${pid}`).toBe(false);
    const slot = registry(s).crews['c2-orca0007']!.worktree!;
    expect(s.orca('terminal', 'list', '--worktree', `path:${slot}`).result!.terminals).toEqual([]);
    expect(Object.keys(registry(s).leases)).toEqual([]);
  }, 120_000);

  it('a CLI agent gets its brief on stdin and its key in its environment, and its output is read from the log', async () => {
    // Unconfined: the fake CLI records its calls next to itself (test/agents runs it the same way).
    const s = (school = orcaSchool({
      unconfined: true,
      extraAgents: [
        { id: 'claude', kind: 'claude-code', model: 'claude-sonnet-4-5', passEnv: ['ANTHROPIC_API_KEY'] },
      ],
    }));
    const fake = installFakes(join(s.root, 'bin'), [
      {
        append: { file: 'src/value.txt', text: 'solved #5\n' },
        stdout: claude.result({ session: uid('sess-orca'), cost: 0.0425, turns: 3 }),
      },
    ]);
    const saved = { PATH: process.env.PATH, KEY: process.env.ANTHROPIC_API_KEY };
    process.env.PATH = `${fake.bin}:${saved.PATH}`;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-orca-canary';
    try {
      s.fake('start');
      writeCurriculum(s, [item(5, { title: 'Make the value say solved' })]);
      await plan(s, [{ crewId: 'c5-orca0008', issue: 5, agent: 'claude' }]);
      const r = await runCrew(await spec(s, 'c5-orca0008'), { logger: silentLogger });
      expect(r.outcome).toBe('succeeded');
      const [call] = fake.calls();
      expect(call!.stdin).toContain('Make the value say solved');
      expect(call!.env.ANTHROPIC_API_KEY).toBe('sk-ant-orca-canary');
      expect(call!.env.ORCA_TERMINAL_HANDLE).toBeUndefined();
      const record = JSON.parse(readFileSync(join(s.layout.bookbag('c5-orca0008'), 'bookbag.json'), 'utf8'));
      expect(record.usage.costUsd).toBeCloseTo(0.0425);
      // The key was in the launch script, which is gone; it is nowhere else in the turn's files.
      for (const f of ['stdin', 'started', 'exit-code', 'terminal.json'])
        expect(read(join(turnDirs(s, 'c5-orca0008')[0]!, f))).not.toContain('sk-ant-orca-canary');
      expect(existsSync(join(turnDirs(s, 'c5-orca0008')[0]!, 'launch.sh'))).toBe(false);
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.KEY === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved.KEY;
    }
  }, 120_000);
});
