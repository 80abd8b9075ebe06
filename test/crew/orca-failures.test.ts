import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCrew } from '../../src/crew/run/crew.js';
import { createClassroom } from '../../src/crew/classroom.js';
import { ClassroomUnavailableError } from '../../src/crew/errors.js';
import { defaultOrcaBinary, orcaSettings } from '../../src/crew/orca/cli.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { isRunning } from '../../src/process/liveness.js';
import { git } from '../support/tmp.js';
import { FIXTURES, item, plan, registry, spec, writeCurriculum } from './helpers.js';
import { execFileSync } from 'node:child_process';
import { orcaSchool, read, turnDirs, waitFor, type OrcaSchool } from './orca-helpers.js';

let school: OrcaSchool | undefined;
afterEach(() => school?.cleanup());

const types = (s: OrcaSchool) =>
  readJsonl<{ type: string }>(s.layout.file('crews')).records.map((e) => e.type);
const jobs = (s: OrcaSchool) =>
  readJsonl<{ key: string }>(s.layout.file('grading')).records.map((j) => j.key);

async function refused(s: OrcaSchool, crewId: string): Promise<Error> {
  const err = await runCrew(await spec(s, crewId), { logger: silentLogger }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ClassroomUnavailableError);
  // Nothing was leased: the crew is still planned and no lease event exists.
  expect(types(s)).toEqual(['crew.planned']);
  expect(registry(s).crews[crewId]!.status).toBe('planned');
  return err as Error;
}

describe('before a lease: an Orca that cannot take crews leases nothing and says what to start', () => {
  it('Orca not running (no runtime metadata): status --json exits 0, the school reads its JSON', async () => {
    const s = (school = orcaSchool());
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-down0001', issue: 1 }]);
    const e = await refused(s, 'c1-down0001');
    expect(e.message).toMatch(/Orca is not running on daemon d1 \(runtime not_running\)/);
    expect(e.message).toMatch(/`orca-ide serve`/);
    expect(e.message).toMatch(/Nothing was leased/);
  });

  it('a crashed Orca (metadata naming a dead socket) is down too', async () => {
    const s = (school = orcaSchool());
    s.fake('start');
    s.fake('crash');
    expect(existsSync(join(s.userData, 'orca-runtime.json'))).toBe(true);
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-down0002', issue: 1 }]);
    expect((await refused(s, 'c1-down0002')).message).toMatch(
      /Orca is not running on daemon d1 \(runtime stale_bootstrap\)/,
    );
  });

  it('a reply that is not the JSON envelope (a stack trace) is refused, with what it printed', async () => {
    const s = (school = orcaSchool());
    s.fake('start');
    s.faults({ nonJson: true });
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-down0003', issue: 1 }]);
    const e = await refused(s, 'c1-down0003');
    expect(e.message).toMatch(
      /did not answer with Orca's JSON envelope \(exit 1; it printed: .*Cannot find module/s,
    );
  });

  it('a hung runtime (runtime_timeout) is refused', async () => {
    const s = (school = orcaSchool());
    s.fake('start');
    s.faults({ hang: ['repo.add'], rpcTimeoutMs: 500 });
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-down0004', issue: 1 }]);
    expect((await refused(s, 'c1-down0004')).message).toMatch(
      /Orca is not running on daemon d1 \(runtime_timeout: Timed out waiting for the Orca runtime to respond\.\)/,
    );
  });

  it('the GNOME screen reader is refused by name, whether it is the Python program or a wrapper', async () => {
    for (const binary of [join(FIXTURES, 'orca', 'gnome-orca'), join(FIXTURES, 'orca', 'screen-reader')]) {
      const s = (school = orcaSchool({ binary }));
      writeCurriculum(s, [item(1)]);
      await plan(s, [{ crewId: 'c1-down0005', issue: 1 }]);
      const e = await refused(s, 'c1-down0005');
      expect(e.message).toMatch(/is the GNOME Orca screen reader, not the Orca coding app's CLI/);
      expect(e.message).toMatch(/`orca-ide`/);
      s.cleanup();
      school = undefined;
    }
  });

  it('a missing binary is named; the default binary is orca-ide on Linux and orca elsewhere', async () => {
    const s = (school = orcaSchool({ binary: 'orca-ide-not-installed' }));
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-down0006', issue: 1 }]);
    expect((await refused(s, 'c1-down0006')).message).toMatch(/`orca-ide-not-installed` not found on PATH/);
    expect(defaultOrcaBinary('linux')).toBe('orca-ide');
    expect(defaultOrcaBinary('darwin')).toBe('orca');
    const d = { ...s.config.fleet.daemons[0]!, orca: undefined };
    expect(orcaSettings(d, 'linux').binary).toBe('orca-ide');
  });

  it('a Node-script install needs node on PATH; the packaged CLI does not', () => {
    const s = (school = orcaSchool());
    s.fake('start');
    // A PATH with git and Orca's CLI but no node.
    const bin = join(s.root, 'bin');
    mkdirSync(bin);
    symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
    const room = (binary: string) =>
      createClassroom({
        daemon: { ...s.config.fleet.daemons[0]!, orca: { ...s.config.fleet.daemons[0]!.orca!, binary } },
        repoPath: s.repo,
        root: s.root,
        path: bin,
      });
    symlinkSync(join(FIXTURES, 'orca', 'orca.mjs'), join(bin, 'orca-dev'));
    expect(() => room('orca-dev').preflight()).toThrow(/is a Node script .* and `node` not found on PATH/);
    // The packaged launcher runs the CLI with its own runtime (Electron as node): no node needed.
    writeFileSync(
      join(bin, 'orca-ide'),
      `#!/bin/sh\nELECTRON_RUN_AS_NODE=1 exec '${process.execPath}' '${join(FIXTURES, 'orca', 'orca.mjs')}' "$@"\n`,
    );
    chmodSync(join(bin, 'orca-ide'), 0o755);
    expect(() => room('orca-ide').preflight()).not.toThrow();
  });
});

describe('during a crew: a lost Orca stops the student, ends the crew orphaned, releases the lease (N7.1)', () => {
  async function underway(s: OrcaSchool, crewId: string, agent: string) {
    writeCurriculum(s, [item(9)]);
    await plan(s, [{ crewId, issue: 9, agent }]);
    const running = runCrew(await spec(s, crewId), { logger: silentLogger });
    await waitFor(() => turnDirs(s, crewId).some((d) => existsSync(join(d, 'started'))), 'the start');
    await waitFor(() => existsSync(join(s.root, 'hang.pid')), 'the student');
    // Wrapped: an async function returning the promise itself would wait for the crew to end.
    return { running };
  }

  function orphaned(s: OrcaSchool, crewId: string, r: { outcome: string; reason: string; alerts: string[] }) {
    expect(r.outcome).toBe('aborted');
    expect(r.alerts.join('\n')).toMatch(/classroom-interrupted/);
    // The student (and the child it left in its group) is stopped.
    for (const pid of read(join(s.root, 'hang.pid')).trim().split('\n').map(Number))
      expect(isRunning(pid), `pid ${pid}`).toBe(false);
    // The half-made change is never graded; the lease is released; the slot is reset and clean.
    expect(existsSync(join(s.layout.bookbag(crewId), 'done.flag'))).toBe(false);
    expect(jobs(s)).toEqual([]);
    expect(Object.keys(registry(s).leases)).toEqual([]);
    expect(registry(s).crews[crewId]!.status).toBe('finished');
    expect(git(registry(s).crews[crewId]!.worktree!, 'status', '--porcelain', '--ignored')).toBe('');
    // Orphaned: planned again, and not the student's failed run (no repair; N7.1's own bound applies).
    expect(registry(s).crews[crewId]!.orphaned).toBe(true);
    expect(issueStates(registry(s)).get(9)).toEqual({ kind: 'ready', attempt: 1 });
  }

  it('Orca restarted with a new runtime id: the orphan is swept, reset and re-queued', async () => {
    const s = (school = orcaSchool({ unconfined: true }));
    s.fake('start');
    const { running } = await underway(s, 'c9-lost0001', 'hanger');
    const before = JSON.parse(read(join(turnDirs(s, 'c9-lost0001')[0]!, 'terminal.json'))).runtimeId;
    const after = s.fake('restart');
    expect(after).not.toBe(before);
    const r = await running;
    orphaned(s, 'c9-lost0001', r);
    expect(r.reason).toMatch(
      new RegExp(
        `^interrupted: orphaned: Orca restarted under the crew \\(runtime ${before} is now ${after}\\); the student was stopped`,
      ),
    );
  }, 120_000);

  it('Orca crashed (runtime_unavailable): the same', async () => {
    const s = (school = orcaSchool({ unconfined: true }));
    s.fake('start');
    const { running } = await underway(s, 'c9-lost0002', 'hanger');
    s.fake('crash');
    const r = await running;
    orphaned(s, 'c9-lost0002', r);
    expect(r.reason).toMatch(/orphaned: Orca stopped answering \(runtime_unavailable\)/);
  }, 120_000);

  it('Orca hung while the student finished: the exit file is there, so the crew is collected normally', async () => {
    const s = (school = orcaSchool());
    s.fake('start');
    s.faults({ hang: ['terminal.wait'], rpcTimeoutMs: 6_000 });
    writeCurriculum(s, [item(9)]);
    await plan(s, [{ crewId: 'c9-lost0003', issue: 9 }]);
    const r = await runCrew(await spec(s, 'c9-lost0003'), { logger: silentLogger });
    expect(r.outcome).toBe('succeeded');
    expect(jobs(s)).toEqual(['grade:9:c9-lost0003']);
  }, 120_000);

  it("a terminal a dead crew left in the slot is closed before the next crew's student runs", async () => {
    const s = (school = orcaSchool({ unconfined: true }));
    s.fake('start');
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-left0001', issue: 1 },
      { crewId: 'c2-left0002', issue: 2 },
    ]);
    expect((await runCrew(await spec(s, 'c1-left0001'), { logger: silentLogger })).outcome).toBe('succeeded');
    const slot = registry(s).crews['c1-left0001']!.worktree!;
    const pidfile = join(s.root, 'left.pid');
    const left = s.orca(
      'terminal',
      'create',
      '--worktree',
      `path:${slot}`,
      '--title',
      'school:c0-dead:1',
      '--command',
      `sh -c 'echo $$ > ${pidfile}; exec sleep 600'`,
    );
    expect(left.ok).toBe(true);
    await waitFor(() => existsSync(pidfile) && read(pidfile).trim() !== '', 'the leftover');
    const r = await runCrew(await spec(s, 'c2-left0002'), { logger: silentLogger });
    expect(r.outcome).toBe('succeeded');
    expect(s.orca('terminal', 'list', '--worktree', `path:${slot}`).result!.terminals).toEqual([]);
    const pid = Number(read(pidfile));
    await waitFor(() => !isRunning(pid), 'the leftover to end', 5_000);
  }, 120_000);
});
