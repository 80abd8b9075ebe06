import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TAIL_LIMIT } from '../../src/board/board-fold.js';
import { foldBodySchema, readFoldCache, writeFoldCache, type FoldBody } from '../../src/board/fold-cache.js';
import { buildView } from '../../src/board/view.js';
import { compact } from '../../src/checkpoint/compact.js';
import { readTree } from '../../src/checkpoint/tree.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { clearPause } from '../../src/dispatch/gates/pause.js';
import { recordSpend } from '../../src/dispatch/gates/spend.js';
import type { OutboxEvent } from '../../src/outbox/outbox.js';
import { writeFileAtomic } from '../../src/state/atomic.js';
import { EventLog, event, type StateEvent } from '../../src/state/event-log.js';
import { VIEW_FILES } from '../../src/state/layout.js';
import { EXPECTED_COUNTS, NOW, StateWriter, verdict, knownSchoolCopies } from './fixture.js';

/**
 * The board's persisted fold (src/board/board-fold.ts) against the only thing that matters: the
 * view built from it is byte for byte the view a fold from scratch builds, whatever happened to
 * the logs or to the persisted file in between.
 */
const copies = knownSchoolCopies('board-fold-');

function knownSchool(name = 'state') {
  const { layout, config } = copies.copy(name);
  return { layout, config, persisted: layout.view(VIEW_FILES.boardFold) };
}

type School = ReturnType<typeof knownSchool>;

const board = (s: School) => JSON.stringify(buildView(s.layout, s.config, NOW));

/** The view folded from scratch (no persisted fold), leaving the persisted fold as it was. */
function scratch(s: School): string {
  const saved = existsSync(s.persisted) ? readFileSync(s.persisted) : undefined;
  rmSync(s.persisted, { force: true });
  const view = board(s);
  if (saved) writeFileSync(s.persisted, saved);
  else rmSync(s.persisted, { force: true });
  return view;
}

function readPersisted(s: School): { code: string; body: FoldBody } {
  // The file is one JSON document (a user can read it with jq).
  const { header } = JSON.parse(readFileSync(s.persisted, 'utf8')) as { header: { code: string } };
  const body = readFoldCache(s.persisted, header.code);
  if (!body) throw new Error('the persisted fold is not readable');
  return { code: header.code, body };
}

/**
 * Marks the persisted fold: crew c3 (agent bob, running) gets another agent, with a valid header
 * and digest. A view showing the mark was built from the persisted crews fold; `unmarked` undoes it
 * so the view can be compared with one folded from scratch.
 */
const MARK = 'from-the-persisted-fold';
function mark(s: School): void {
  const { code, body } = readPersisted(s);
  const fold = body.logs.crews!.fold as { crews: Record<string, { agent: string }> };
  fold.crews['c3-00000003']!.agent = MARK;
  writeFoldCache(s.persisted, code, body);
}
const unmarked = (view: string) => view.replaceAll(`"agent":"${MARK}"`, '"agent":"bob"');

const item = (view: string, issue: number) =>
  (
    JSON.parse(view) as { lanes: Array<{ id: string; items: Array<{ issue: number; agent?: string }> }> }
  ).lanes
    .flatMap((l) => l.items.map((i) => ({ lane: l.id, ...i })))
    .find((i) => i.issue === issue)!;

describe('the persisted fold', () => {
  it('continues with events appended by the real writers and builds the view a fold from scratch builds', async () => {
    const s = knownSchool();
    const cold = board(s);
    expect(existsSync(s.persisted)).toBe(true);
    mark(s);

    const w = new StateWriter(s.layout);
    // A new crew for issue 12, the running crew on issue 2 finishes and is graded and scored, the
    // pause is cleared, a heartbeat, spend, and the delivery of issue 5.
    await w.crew({ issue: 12, crewId: 'c12-0000000e', daemon: 'beta', agent: 'bob', plannedAgo: 1 });
    await w.crews.append([
      event('lease.released', 'released:c2-00000002', { crewId: 'c2-00000002', reason: 'done' }, NOW),
      event(
        'crew.finished',
        'finished:c2-00000002',
        { crewId: 'c2-00000002', issueNumber: 2, outcome: 'succeeded' as const, reason: '' },
        NOW,
      ),
    ]);
    await w.enqueue(2, 'c2-00000002', 'ada', 'cli', 3, 0);
    await w.drain(2, 'c2-00000002', 0, verdict(true, 'approved', 'all judges passed', 0.7));
    await w.score('c2-00000002', 2, 'ada', 'cli', 3, 0.7, true, 0);
    await clearPause(s.layout, 'limit reset', undefined, NOW);
    await recordHeartbeat(s.layout, s.config, {
      daemon: 'beta',
      observedClass: 'light',
      freeDiskBytes: 1e9,
      at: NOW,
    });
    await recordSpend(s.layout, 'c2', { costUsd: 0.5, crewId: 'c2-00000002' }, NOW);
    await deliver(s, 5, 'c5-00000005');

    const warm = board(s);
    // The crews log was continued from the persisted fold, not folded again.
    expect(item(warm, 3).agent).toBe(MARK);
    expect(unmarked(warm)).not.toBe(unmarked(cold));
    expect(item(warm, 2)).toMatchObject({ lane: 'accepted' });
    expect(item(warm, 12)).toMatchObject({ lane: 'planned', agent: 'bob' });
    expect(item(warm, 5)).toMatchObject({ lane: 'accepted', delivery: { branch: 'school/issue-5' } });
    expect(unmarked(warm)).toBe(scratch(s));

    // Below TAIL_LIMIT the persisted fold is not rewritten; the next build folds the same tail again.
    await recordSpend(s.layout, 'c12', { costUsd: 0.25, crewId: 'c12-0000000e' }, NOW);
    const again = board(s);
    expect(item(again, 3).agent).toBe(MARK);
    expect(unmarked(again)).toBe(scratch(s));
  });

  it('folds a compacted log again', () => {
    const s = knownSchool();
    board(s);
    mark(s);
    // Checkpoint compaction rewrites the log (a new file with a `$snapshot` first line).
    const files = new Map([['crews.jsonl', readFileSync(s.layout.file('crews'))]]);
    const compacted = compact(files, { horizon: NOW }).files.get('crews.jsonl')!;
    expect(compacted.toString('utf8')).toMatch(/^\{"key":"[^"]*","type":"\$snapshot"/);
    writeFileAtomic(s.layout.file('crews'), compacted);
    const after = board(s);
    expect(after).not.toContain(MARK);
    expect(after).toBe(scratch(s));
  });

  it('folds a log again when it is rewritten in place, truncated or replaced by the same bytes', async () => {
    for (const change of ['rewritten in place', 'its last line edited', 'truncated', 'replaced'] as const) {
      const s = knownSchool(change.replace(/ /g, '-'));
      board(s);
      mark(s);
      const crews = s.layout.file('crews');
      const bytes = readFileSync(crews);
      if (change === 'rewritten in place') {
        // Same file, same size, one byte in its first line changed (the agent of crew c1).
        expect(bytes.toString('utf8').indexOf('"agent":"bob"')).toBeLessThan(200);
        writeFileSync(crews, bytes.toString('utf8').replace('"agent":"bob"', '"agent":"bot"'));
      } else if (change === 'its last line edited') {
        // Same file, same size, a byte far past the first 4 KiB changed (crew c11's reason).
        const at = bytes.lastIndexOf('credit limit reached');
        expect(at).toBeGreaterThan(4096);
        writeFileSync(
          crews,
          bytes
            .toString('utf8')
            .replace(/credit limit reached(?![\s\S]*credit limit)/, 'credit limit REACHED'),
        );
      } else if (change === 'truncated') {
        truncateSync(crews, bytes.lastIndexOf('\n', bytes.length - 2) + 1);
      } else {
        writeFileAtomic(crews, bytes);
      }
      const view = board(s);
      expect(view, change).not.toContain(MARK);
      expect(view, change).toBe(scratch(s));
    }
  });

  it('leaves a torn last line for the next read and folds it once it is complete', async () => {
    const s = knownSchool();
    board(s);
    mark(s);
    const line = JSON.stringify(
      event('crew.started', 'started:c1-00000001', {
        crewId: 'c1-00000001',
        daemon: 'beta',
        slot: 0,
        worktree: '/tmp/wt/c1',
        owner: { kind: 'local', host: 'board-test', pid: 1 },
      }),
    );
    appendFileSync(s.layout.file('crews'), line.slice(0, 40));
    // A fetch in the meantime (the same curriculum, a new file): the persisted fold is rewritten
    // now, with the crews log marked before the torn line.
    writeFileAtomic(s.layout.file('curriculum'), readFileSync(s.layout.file('curriculum')));
    const torn = board(s);
    expect(item(torn, 3).agent).toBe(MARK);
    expect(item(torn, 1)).toMatchObject({ lane: 'planned' });
    expect(unmarked(torn)).toBe(scratch(s));

    appendFileSync(s.layout.file('crews'), line.slice(40) + '\n');
    const whole = board(s);
    expect(item(whole, 3).agent).toBe(MARK);
    expect(item(whole, 1)).toMatchObject({ lane: 'running' });
    expect(unmarked(whole)).toBe(scratch(s));

    // A writer cuts a torn tail before it appends (appendJsonl): the mark before it still holds.
    appendFileSync(s.layout.file('crews'), '{"key":"torn","type":"crew.fin');
    board(s);
    await new StateWriter(s.layout).crew({
      issue: 12,
      crewId: 'c12-0000000e',
      daemon: 'beta',
      agent: 'bob',
      plannedAgo: 1,
    });
    const cut = board(s);
    expect(item(cut, 3).agent).toBe(MARK);
    expect(item(cut, 12)).toMatchObject({ lane: 'planned' });
    expect(unmarked(cut)).toBe(scratch(s));
  });

  it('decides an appended replay of a folded key on the whole log, as the fold does', async () => {
    const s = knownSchool();
    board(s);
    mark(s);
    // Same key as crew c2's start: a fold skips it, so crew c2 is still running.
    appendFileSync(
      s.layout.file('crews'),
      JSON.stringify(
        event('crew.finished', 'started:c2-00000002', {
          crewId: 'c2-00000002',
          issueNumber: 2,
          outcome: 'failed',
          reason: 'replayed key',
        }),
      ) + '\n',
    );
    const view = board(s);
    expect(view).not.toContain(MARK);
    expect(item(view, 2)).toMatchObject({ lane: 'running' });
    expect(view).toBe(scratch(s));
  });

  it('counts a key repeated in the appended part once', () => {
    const s = knownSchool();
    board(s);
    mark(s);
    const finished = (outcome: 'succeeded' | 'failed') =>
      JSON.stringify(
        event(
          'crew.finished',
          'finished:c2-00000002',
          { crewId: 'c2-00000002', issueNumber: 2, outcome, reason: outcome },
          NOW,
        ),
      );
    appendFileSync(s.layout.file('crews'), `${finished('succeeded')}\n${finished('failed')}\n`);
    const view = board(s);
    expect(item(view, 3).agent).toBe(MARK);
    expect(item(view, 2)).toMatchObject({ lane: 'grading', reason: 'awaiting enqueue' });
    expect(unmarked(view)).toBe(scratch(s));
  });

  it("drops appended events below a compacted log's watermark and a key repeated in the appended part", async () => {
    const s = knownSchool();
    // The grading log compacted (a watermark fold): every event before NOW is folded.
    const files = new Map([['grading.jsonl', readFileSync(s.layout.file('grading'))]]);
    writeFileAtomic(s.layout.file('grading'), compact(files, { horizon: NOW }).files.get('grading.jsonl')!);
    board(s);
    mark(s);
    const job = (issue: number, crewId: string, at: Date) =>
      event(
        'job.enqueued',
        `grade:${issue}:${crewId}`,
        {
          jobKey: `grade:${issue}:${crewId}`,
          issueNumber: issue,
          crewId,
          agent: 'ada',
          domain: 'web',
          difficulty: 1,
          fences: [],
          bookbag: `bookbags/${crewId}`,
        },
        at,
      );
    appendFileSync(
      s.layout.file('grading'),
      [
        // A stale copy from before the watermark: already folded, never applied again.
        job(1, 'c1-stale', new Date(NOW.getTime() - 60_000)),
        // A new job, then the same key again with other data: the first one counts.
        job(3, 'c3-00000003', NOW),
        { ...job(3, 'c3-00000003', NOW), data: { ...job(3, 'c3-00000003', NOW).data, agent: 'bob' } },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n',
    );
    const view = board(s);
    expect(item(view, 3).agent).toBe(MARK);
    expect(view).not.toContain('c1-stale');
    expect(unmarked(view)).toBe(scratch(s));
  });

  it('reads the curriculum again when a fetch replaced it', () => {
    const s = knownSchool();
    board(s);
    const text = readFileSync(s.layout.file('curriculum'), 'utf8');
    writeFileAtomic(s.layout.file('curriculum'), text.replace('Add a --verbose flag', 'Add a --quiet flag'));
    const view = board(s);
    expect(item(view, 1)).toMatchObject({ title: 'Add a --quiet flag' });
    expect(view).toBe(scratch(s));
  });

  it('reports a corrupt line appended after the mark exactly as a read from scratch does', () => {
    const warm = knownSchool('warm');
    board(warm);
    const cold = knownSchool('cold');
    const bad = '{"key":"broken","type":"crew.pla\n';
    for (const s of [warm, cold]) {
      appendFileSync(s.layout.file('crews'), JSON.stringify(event('x', 'k1', {})) + '\n' + bad);
    }
    const lines = readFileSync(cold.layout.file('crews'), 'utf8').split('\n').length - 1;
    const views = [warm, cold].map((s) => {
      const view = buildView(s.layout, s.config, NOW);
      expect(view.healthy).toBe(false);
      expect(view.problems[0]!.message).toContain(`line ${lines}`);
      expect(existsSync(view.problems[0]!.quarantinedTo!)).toBe(true);
      return JSON.stringify(view)
        .replaceAll(s.layout.root, '<root>')
        .replace(/corrupt-[0-9TZ-]+/g, 'corrupt-<ts>');
    });
    expect(views[0]).toBe(views[1]);
  });

  it('ignores a persisted fold that is truncated, corrupt, foreign or not a file, and rebuilds it', () => {
    const damages: Array<[string, (s: School) => void]> = [
      ['truncated', (s) => truncateSync(s.persisted, Math.floor(statSync(s.persisted).size / 2))],
      [
        'a flipped byte',
        (s) => {
          const b = readFileSync(s.persisted);
          const at = b.length - 100;
          b[at] = b[at] === 0x31 ? 0x32 : 0x31;
          writeFileSync(s.persisted, b);
        },
      ],
      ['empty', (s) => writeFileSync(s.persisted, '')],
      ['not JSON', (s) => writeFileSync(s.persisted, 'garbage\nmore garbage\n')],
      ['another format', (s) => writeFileSync(s.persisted, '{"format":"something-else","version":1}\n{}\n')],
      ['written by other fold code', (s) => writeFoldCache(s.persisted, 'other-code', readPersisted(s).body)],
      [
        'a body of the wrong shape with a valid digest',
        (s) => writeFoldCache(s.persisted, readPersisted(s).code, { logs: 'no' } as unknown as FoldBody),
      ],
      [
        'a state of the wrong shape with a valid digest',
        (s) => {
          const { code, body } = readPersisted(s);
          body.logs.crews!.fold = { crews: 42 };
          body.logs.grading!.fold = null;
          writeFoldCache(s.persisted, code, body);
        },
      ],
    ];
    for (const [damage, apply] of damages) {
      const s = knownSchool(damage.replace(/ /g, '-'));
      const expected = board(s);
      apply(s);
      const view = buildView(s.layout, s.config, NOW);
      expect(view.healthy, damage).toBe(true);
      expect(JSON.stringify(view), damage).toBe(expected);
      expect(readPersisted(s).body, damage).toEqual(foldBodySchema.parse(readPersisted(s).body));
    }

    // Something that is not a file where the persisted fold goes: the board is built, never an error.
    const s = knownSchool('a-directory');
    mkdirSync(s.persisted, { recursive: true });
    writeFileSync(join(s.persisted, 'x'), 'x');
    const view = buildView(s.layout, s.config, NOW);
    expect(view.healthy).toBe(true);
    expect(JSON.stringify(view)).toBe(JSON.stringify(buildView(s.layout, s.config, NOW)));
  });

  it('is rewritten once more than TAIL_LIMIT bytes were appended, and still equals a fold from scratch', async () => {
    const s = knownSchool();
    board(s);
    mark(s);
    const before = readPersisted(s).body.logs.school!.mark!.bytes;
    const beats: StateEvent[] = [];
    for (let i = 0, bytes = 0; bytes < TAIL_LIMIT * 1.2; i++) {
      const beat = event(
        'roster.heartbeat',
        `heartbeat:alpha:${i}`,
        { daemon: 'alpha', observedClass: 'standard', freeDiskBytes: 5e10 + i },
        new Date(NOW.getTime() - 1000 + (i % 1000)),
      );
      beats.push(beat);
      bytes += JSON.stringify(beat).length + 1;
    }
    await new EventLog(s.layout.file('school')).append(beats);
    const view = board(s);
    const after = readPersisted(s).body.logs.school!.mark!.bytes;
    expect(after - before).toBeGreaterThan(TAIL_LIMIT);
    expect(after).toBe(statSync(s.layout.file('school')).size);
    expect(item(view, 3).agent).toBe(MARK);
    expect(unmarked(view)).toBe(scratch(s));
  });

  it('keeps only delivery items of an outbox whose ids name their kind, and folds any other outbox whole', async () => {
    const s = knownSchool();
    await deliver(s, 5, 'c5-00000005');
    await new EventLog<OutboxEvent>(s.layout.file('outbox')).append([
      event('outbox.recorded', 'outbox:grade:5:c5-00000005:labels', {
        id: 'outbox:grade:5:c5-00000005:labels',
        jobKey: 'grade:5:c5-00000005',
        issueNumber: 5,
        kind: 'labels',
        labels: ['school:accepted'],
      }),
    ]);
    board(s);
    const items = (readPersisted(s).body.logs.outbox!.fold as { items: Record<string, unknown> }).items;
    expect(Object.keys(items)).toEqual(['outbox:grade:5:c5-00000005:delivery']);
    // The next build links the delivery from the persisted outbox.
    const warm = board(s);
    expect(item(warm, 5)).toMatchObject({ delivery: { branch: 'school/issue-5' } });
    expect(warm).toBe(scratch(s));

    const odd = knownSchool('odd-ids');
    await deliver(odd, 5, 'c5-00000005', 'delivery-of-5');
    const view = board(odd);
    expect(readPersisted(odd).body.logs.outbox).toBeUndefined();
    expect(item(view, 5)).toMatchObject({ delivery: { branch: 'school/issue-5' } });
    // Folded whole on every build, but that is no news: the persisted fold is not rewritten.
    const written = statSync(odd.persisted).ino;
    expect(board(odd)).toBe(view);
    expect(statSync(odd.persisted).ino).toBe(written);
    expect(view).toBe(scratch(odd));
  });

  // Eight real CLI processes, four at a time, each starting Node with tsx transpiling the CLI: 14 s
  // measured on a two-core machine at a load of 4, 36 s at a load of 20, over the default 60 s at
  // 25 (each process gets a fraction of a core). 300 s leaves that margin; a hung run still fails.
  it(
    'lets concurrent `school status` runs each print the whole board and leaves a whole persisted fold',
    { timeout: 300_000 },
    async () => {
      const s = knownSchool();
      const configFile = join(copies.dir(), 'school.yml');
      writeFileSync(
        configFile,
        JSON.stringify({
          stateDir: s.layout.root,
          fleet: { daemons: s.config.fleet.daemons },
          agents: s.config.agents,
          dispatch: { spendCap: 10 },
        }),
      );
      const statusRuns = () =>
        Promise.all(
          Array.from({ length: 4 }, () => statusJson(configFile)).map(async (run) => {
            const r = await run;
            expect(r.stderr).toBe('');
            expect(r.code).toBe(0);
            return (JSON.parse(r.stdout) as { counts: Record<string, number> }).counts;
          }),
        );
      // No persisted fold yet: every run folds from scratch and writes one.
      for (const counts of await statusRuns()) expect(counts).toEqual(EXPECTED_COUNTS);
      expect(readPersisted(s).body.logs.crews).toBeDefined();
      // Appended since: every run continues the persisted fold (and reads the same board).
      await new StateWriter(s.layout).crew({
        issue: 12,
        crewId: 'c12-0000000e',
        daemon: 'beta',
        agent: 'bob',
        plannedAgo: 1,
      });
      for (const counts of await statusRuns()) {
        expect(counts).toEqual({ ...EXPECTED_COUNTS, ready: EXPECTED_COUNTS.ready - 1, planned: 2 });
      }
      expect(readPersisted(s).body.logs.crews).toBeDefined();
      expect(readdirSync(join(s.layout.root, 'views')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    },
  );

  it('is never saved by checkpoint-state', () => {
    const s = knownSchool();
    board(s);
    const tree = readTree(s.layout.root);
    expect([...tree.files.keys()].some((p) => p.startsWith('views/'))).toBe(false);
    expect(tree.skipped).toContainEqual({ path: 'views', reason: 'views are rebuilt from the event logs' });
    expect(readdirSync(s.layout.root)).toContain('views');
  });
});

/** `school status --json` as a user runs it: the real CLI in a child process. */
function statusJson(configFile: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const root = resolve(import.meta.dirname, '../..');
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'src/cli/index.ts'), 'status', '--json', '--config', configFile],
      { cwd: root },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Records and marks delivered a delivery outbox entry, as the drain and the deliverer write them. */
async function deliver(
  s: School,
  issue: number,
  crewId: string,
  id = `outbox:grade:${issue}:${crewId}:delivery`,
) {
  const jobKey = `grade:${issue}:${crewId}`;
  await new EventLog<OutboxEvent>(s.layout.file('outbox')).append([
    event('outbox.recorded', id, { id, jobKey, issueNumber: issue, kind: 'delivery', crewId }, NOW),
    event(
      'outbox.delivered',
      `delivered:${id}`,
      {
        id,
        result: {
          mode: 'branch' as const,
          branch: `school/issue-${issue}`,
          sha: 'a'.repeat(40),
          updated: true,
        },
      },
      NOW,
    ),
  ]);
}
