import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { runAssignments, type Progress } from '../../src/crew/driver/driver.js';
import { ClassroomUnavailableError } from '../../src/crew/errors.js';
import { createClassroom } from '../../src/crew/classroom.js';
import { memoryLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { pauseStatus } from '../../src/dispatch/gates/pause.js';
import {
  launcher,
  nodeFixture,
  item,
  makeSchool,
  plan,
  registry,
  writeCurriculum,
  writeDriverOptions,
  type School,
} from './helpers.js';
import { FAKE_ORCA, orcaDaemon } from './orca-helpers.js';

let school: School | undefined;
afterEach(() => school?.cleanup());

async function drive(s: School, crews: string[], over: Partial<Parameters<typeof runAssignments>[0]> = {}) {
  return runAssignments({
    config: s.config,
    layout: s.layout,
    daemon: 'd1',
    assignments: crews.map((crewId) => ({ crewId })),
    logger: memoryLogger(),
    launch: { launcher: await launcher(), graceMs: 300 },
    ...over,
    clock: { pollMs: 100, ...over.clock },
  });
}

type Ev = { key: string; type: string; at: string; data: Record<string, unknown> };
const events = (s: School) => readJsonl<Ev>(s.layout.file('crews')).records;

/** Starts the driver fixture in its own process; resolves with its parsed stdout line. */
async function driverProcess(s: School, crews: string[]) {
  const opts = await writeDriverOptions(s, crews, `driver-${Math.random().toString(16).slice(2)}.json`);
  const [node, ...args] = await nodeFixture('driver.ts');
  const child = spawn(node!, [...args, opts], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const done = new Promise<{ code: number | null; out: Record<string, unknown> | undefined }>((resolve) =>
    child.once('exit', (code) =>
      resolve({ code, out: out.trim() ? JSON.parse(out.trim().split('\n').pop()!) : undefined }),
    ),
  );
  return { child, done };
}

async function until(test: () => boolean, ms = 30_000) {
  const end = performance.now() + ms;
  while (!test()) {
    if (performance.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the driver', () => {
  it('refills a slot the moment it frees, not when the batch ends; reports progress', async () => {
    const s = (school = makeSchool({ worktrees: 2 }));
    writeCurriculum(s, [item(1), item(2), item(3)]);
    await plan(s, [
      { crewId: 'c1-slow', issue: 1, agent: 'slow' },
      { crewId: 'c2-fast', issue: 2 },
      { crewId: 'c3-next', issue: 3 },
    ]);
    const seen: Progress[] = [];
    const r = await drive(s, ['c1-slow', 'c2-fast', 'c3-next'], {
      onProgress: (p) => seen.push(p),
      clock: { progressEveryMs: 500 },
    });
    expect(r.finished.map((f) => [f.crewId, f.outcome]).sort(), JSON.stringify(r.finished)).toEqual([
      ['c1-slow', 'succeeded'],
      ['c2-fast', 'succeeded'],
      ['c3-next', 'succeeded'],
    ]);
    // The third crew was launched right after the fast one finished, while the slow one still ran:
    // the freed slot was refilled at once, not at the end of the batch.
    const marks = seen.filter((p) => p.phase !== 'running').map((p) => `${p.phase}:${p.crewId}`);
    expect(marks.indexOf('launched:c3-next')).toBe(marks.indexOf('finished:c2-fast') + 1);
    expect(marks.indexOf('launched:c3-next')).toBeLessThan(marks.indexOf('finished:c1-slow'));
    const order = events(s).map((e) => e.key);
    expect(order.indexOf('started:c3-next')).toBeGreaterThan(order.indexOf('finished:c2-fast'));
    expect(seen.filter((p) => p.phase === 'launched').map((p) => p.crewId)).toEqual([
      'c1-slow',
      'c2-fast',
      'c3-next',
    ]);
    expect(seen.some((p) => p.phase === 'running' && p.slot !== undefined && p.elapsedMs > 0)).toBe(true);
  });

  it('an issue titled `; rm -rf ~ $(id)` with a backticked body goes through the whole path inert', async () => {
    const s = (school = makeSchool());
    const canary = join(s.root, 'CANARY');
    const title = '; rm -rf ~ $(id)';
    const body = `Run \`touch ${canary}\` and $(touch ${canary}) then \`\`\`\n$(id)\n\`\`\` ; echo pwned > ${canary}`;
    writeCurriculum(s, [item(66, { title, body })]);
    await plan(s, [{ crewId: 'c66-evil', issue: 66 }]);
    const home = process.env.HOME;
    process.env.HOME = join(s.root, 'home'); // were anything to run it, `~` is a scratch directory
    try {
      const r = await drive(s, ['c66-evil']);
      expect(r.finished[0]!.outcome).toBe('succeeded');
    } finally {
      process.env.HOME = home;
    }
    expect(existsSync(canary)).toBe(false);
    const brief = readFileSync(join(s.root, 'runtime', 'crews', 'c66-evil', 'brief.md'), 'utf8');
    expect(brief).toContain(title);
    expect(brief).toContain(body);
    // Fenced as data: the fence is longer than the body's own backtick run.
    expect(brief).toContain('````text\n' + body + '\n````');
  });

  it('a second driver on the same state and daemon exits at once without launching anything', async () => {
    const s = (school = makeSchool());
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-slow', issue: 1, agent: 'slow' },
      { crewId: 'c2-other', issue: 2 },
    ]);
    const first = drive(s, ['c1-slow']);
    await until(() => events(s).some((e) => e.key === 'started:c1-slow'));
    const t = performance.now();
    const second = await driverProcess(s, ['c2-other']);
    const { code, out } = await second.done;
    expect(code).toBe(4);
    expect(out).toMatchObject({ ok: false, error: 'DriverBusyError' });
    expect(String(out!.message)).toMatch(/another driver \(pid \d+/);
    // Refused, not queued behind the first driver (whose slow crew runs far longer): a bound that
    // a loaded machine's process start cannot reach (10 s was reached).
    expect(performance.now() - t).toBeLessThan(60_000);
    await first;
    expect(events(s).some((e) => e.key === 'started:c2-other')).toBe(false);
    expect(registry(s).crews['c2-other']!.status).toBe('planned');
  }, 180_000);

  it('a restarted driver adopts a live crew instead of relaunching it', async () => {
    const s = (school = makeSchool({ ledger: true }));
    const ledger = s.ledger;
    writeCurriculum(s, [item(5)]);
    await plan(s, [{ crewId: 'c5-live', issue: 5, agent: 'slow' }]);
    const a = await driverProcess(s, ['c5-live']);
    await until(() => events(s).some((e) => e.key === 'process:c5-live'));
    a.child.kill('SIGKILL'); // the driver dies; the crew runner lives on in its own session
    await a.done;
    const r = await drive(s, ['c5-live']);
    expect(r.adopted).toEqual(['c5-live']);
    expect(r.launched).toEqual([]);
    expect(r.finished).toEqual([expect.objectContaining({ crewId: 'c5-live', outcome: 'succeeded' })]);
    expect(r.lost).toEqual([]);
    await until(() => existsSync(ledger));
    expect(readFileSync(ledger, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('an unexplained exit marks the crew lost and pauses new launches', async () => {
    const s = (school = makeSchool());
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-ghost', issue: 1 },
      { crewId: 'c2-next', issue: 2 },
    ]);
    // A crew recorded running by a runner process that no longer exists.
    const log = new EventLog(s.layout.file('crews'));
    const owner = { kind: 'local', host: hostname(), pid: 2 ** 22 + 7, start: '1' };
    await log.append([
      event('lease.acquired', 'lease:d1/0:c1-ghost', {
        crewId: 'c1-ghost',
        daemon: 'd1',
        slot: 0,
        owner,
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
      }),
      event('crew.started', 'started:c1-ghost', {
        crewId: 'c1-ghost',
        daemon: 'd1',
        slot: 0,
        worktree: 'x',
        owner,
      }),
      event('crew.process', 'process:c1-ghost', {
        crewId: 'c1-ghost',
        host: owner.host,
        pid: owner.pid,
        start: '1',
      }),
    ]);
    const r = await drive(s, ['c2-next']);
    expect(r.lost).toEqual(['c1-ghost']);
    expect(r.launched).toEqual([]);
    expect(r.skipped[0]).toMatchObject({
      crewId: 'c2-next',
      reason: expect.stringMatching(/school paused .*unexplained exit/),
    });
    expect(registry(s).crews['c1-ghost']!.outcome).toBe('lost');
    expect(registry(s).leases).toEqual({});
    expect(pauseStatus(s.layout).pauses.map((p) => p.reason)).toEqual([
      expect.stringMatching(/crew c1-ghost .* ended with lost: unexplained exit/),
    ]);
  });

  it('a usage limit its student reported pauses that agent alone and is not a failure; its next crew waits, another agent runs', async () => {
    const s = (school = makeSchool());
    writeCurriculum(s, [item(1), item(2), item(3)]);
    await plan(s, [
      { crewId: 'c1-limit', issue: 1, agent: 'limited' },
      { crewId: 'c3-same', issue: 3, agent: 'limited' },
      { crewId: 'c2-other', issue: 2 },
    ]);
    const r = await drive(s, ['c1-limit', 'c3-same', 'c2-other']);
    expect(r.finished).toEqual([
      expect.objectContaining({ crewId: 'c1-limit', outcome: 'usage_limit' }),
      expect.objectContaining({ crewId: 'c2-other', outcome: 'succeeded' }),
    ]);
    expect(r.paused).toBeUndefined();
    expect(r.skipped).toEqual([
      { crewId: 'c3-same', reason: expect.stringMatching(/^agent limited paused/) },
    ]);
    expect(registry(s).crews['c3-same']!.status).toBe('planned');
    const jobs = readJsonl(s.layout.file('grading')).records;
    expect(jobs).toHaveLength(1);
    expect(JSON.stringify(jobs[0])).toContain('"crewId":"c2-other"');
  });

  it('N3.3: no crew starts when the remaining job time cannot fit one', async () => {
    const s = (school = makeSchool());
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-late', issue: 1 }]);
    const r = await drive(s, ['c1-late'], { clock: { remainingMs: () => 10_000 } });
    expect(r.launched).toEqual([]);
    expect(r.skipped[0]!.reason).toMatch(/soft deadline/);
  });
});

describe('the orca classroom fails closed', () => {
  it('a missing orca binary fails at once (no wait for Orca) with a clear error, and nothing is leased', async () => {
    const s = (school = makeSchool({
      daemons: [{ id: 'd1', classroom: 'orca', orca: { binary: 'orca-not-installed' } }],
    }));
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-orca', issue: 1 }]);
    const t = performance.now();
    const err = await drive(s, ['c1-orca']).catch((e: unknown) => e);
    // A PATH lookup, not a wait for Orca to answer (its probe's timeout is far longer); a second
    // was within reach of a loaded machine's scheduling, ten are not.
    expect(performance.now() - t).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(ClassroomUnavailableError);
    expect((err as Error).message).toMatch(/`orca-not-installed` not found on PATH/);
    expect(events(s).map((e) => e.type)).toEqual(['crew.planned']);
  });

  it('a missing node is named too for a Node-script install of the CLI (the seed’s `node: command not found`)', () => {
    const s = (school = makeSchool());
    const room = createClassroom({
      daemon: orcaDaemon({ binary: FAKE_ORCA }),
      repoPath: s.repo,
      root: s.root,
      path: join(s.root, 'empty-bin'),
    });
    expect(() => room.preflight()).toThrow(/`node` not found on PATH/);
  });
});
