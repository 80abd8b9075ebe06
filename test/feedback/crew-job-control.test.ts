import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { readControl } from '../../src/dispatch/logs/control-log.js';
import {
  CrewJobControl,
  type ControlComments,
  type ControlPort,
} from '../../src/feedback/crew-job-control.js';
import type { Comment, RepoRole } from '../../src/feedback/port.js';
import { memoryLogger } from '../../src/log.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * The crew job's reader of `/school stop|steer` (src/feedback/crew-job-control.ts), one read at a
 * time against a scripted port: what it asks (only while a crew of its own runs; conditional on the
 * last ETag; the revised pull request too), what it records, and how it backs off.
 */

const tmp = tempDir('school-crew-job-control-');
afterAll(() => tmp.cleanup());

const PLANNED = '2026-12-07T10:00:00.000Z';
const owner = { kind: 'actions' as const, runId: '1', runAttempt: '1', job: 'crew' };

async function state(name: string, crews: Array<{ id: string; issue: number; daemon: string; pr?: number }>) {
  const layout = new StateLayout(join(tmp.path, name));
  await new EventLog<CrewEvent>(layout.file('crews')).append(
    crews.flatMap((c) => [
      event(
        'crew.planned',
        `planned:${c.id}`,
        {
          crewId: c.id,
          issueNumber: c.issue,
          daemon: c.daemon,
          agent: 'a',
          weight: 'standard' as const,
          fences: [],
          repair: false,
          attempt: 1,
          ...(c.pr
            ? {
                revision: {
                  round: 1,
                  of: 2,
                  pr: c.pr,
                  branch: `school/issue-${c.issue}`,
                  headSha: 'a'.repeat(40),
                  revises: 'c9-00000009',
                  feedback: [],
                },
              }
            : {}),
        },
        new Date(PLANNED),
      ) as CrewEvent,
      event(
        'crew.started',
        `started:${c.id}`,
        { crewId: c.id, daemon: c.daemon, slot: 0, worktree: 'w', owner },
        new Date('2026-12-07T10:05:00.000Z'),
      ) as CrewEvent,
    ]),
  );
  return layout;
}

/** A port answering from a script, recording each question. */
function scripted(answers: Array<ControlComments | Error>, roles: Record<string, RepoRole> = {}) {
  const asked: Array<{ n: number; since: string; etag?: string }> = [];
  const port: ControlPort & { asked: typeof asked } = {
    asked,
    get requests() {
      return asked.length;
    },
    comments(n, q) {
      asked.push({ n, ...q });
      const a = answers.shift() ?? { status: 'not-modified' };
      return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
    },
    role: (login) => Promise.resolve(roles[login] ?? 'none'),
  };
  return port;
}

const comment = (id: number, login: string, body: string, association = 'MEMBER'): Comment => ({
  id,
  author: { login, bot: false, association },
  body,
  updatedAt: '2026-12-07T10:06:00Z',
});

const config = parseConfig({ stateDir: tmp.path, repoPath: tmp.path });

describe("the crew job's /school stop|steer reader", () => {
  it("asks only about its own running crews, conditionally, and records a writer's stop once", async () => {
    const layout = await state('own', [
      { id: 'c1-00000001', issue: 1, daemon: 'd1' },
      { id: 'c2-00000002', issue: 2, daemon: 'd2' }, // another daemon's: not this job's
    ]);
    const port = scripted(
      [
        { status: 'ok', comments: [comment(11, 'ann', '/school stop not this way')], etag: 'W/"e1"' },
        { status: 'not-modified' },
      ],
      { ann: 'write' },
    );
    const logger = memoryLogger();
    const c = new CrewJobControl({ layout, config, daemon: 'd1', logger, port, since: new Date(0) });
    await c.tick();
    expect(port.asked).toEqual([{ n: 1, since: '2026-12-07T09:59:00.000Z' }]);
    const stop = Object.values(readControl(layout).entries);
    expect(stop).toMatchObject([
      { verb: 'stop', issueNumber: 1, crewId: 'c1-00000001', text: 'not this way', by: { login: 'ann' } },
    ]);
    await c.tick();
    expect(port.asked[1]).toEqual({ n: 1, since: '2026-12-07T09:59:00.000Z', etag: 'W/"e1"' });
    expect(Object.keys(readControl(layout).entries)).toHaveLength(1);
  });

  it('asks nothing while none of its crews runs (one started before the job is not its own)', async () => {
    const layout = await state('idle', [{ id: 'c1-00000001', issue: 1, daemon: 'd1' }]);
    const port = scripted([]);
    const c = new CrewJobControl({
      layout,
      config,
      daemon: 'd1',
      logger: memoryLogger(),
      port,
      since: new Date('2026-12-07T11:00:00.000Z'),
    });
    await c.tick();
    expect(port.asked).toEqual([]);
  });

  it("reads a revision crew's pull request too, recording the command as on it", async () => {
    const layout = await state('revision', [{ id: 'c3-00000003', issue: 3, daemon: 'd1', pr: 7 }]);
    const port = scripted(
      [
        { status: 'not-modified' },
        { status: 'ok', comments: [comment(21, 'bob', '/school steer keep the API', 'COLLABORATOR')] },
      ],
      { bob: 'maintain' },
    );
    const c = new CrewJobControl({
      layout,
      config,
      daemon: 'd1',
      logger: memoryLogger(),
      port,
      since: new Date(0),
    });
    await c.tick();
    expect(port.asked.map((a) => a.n)).toEqual([3, 7]);
    expect(Object.values(readControl(layout).entries)).toMatchObject([
      {
        verb: 'steer',
        issueNumber: 3,
        crewId: 'c3-00000003',
        text: 'keep the API',
        by: { login: 'bob', on: 7 },
      },
    ]);
  });

  it("refuses a reader's command and records why; a rate limit or a failure backs off, says so, and never throws", async () => {
    const layout = await state('limits', [{ id: 'c1-00000001', issue: 1, daemon: 'd1' }]);
    let now = Date.parse('2026-12-07T10:10:00.000Z');
    const port = scripted(
      [
        { status: 'ok', comments: [comment(31, 'rita', '/school stop', 'COLLABORATOR')], etag: 'W/"a"' },
        { status: 'limited', code: 429, waitMs: 30_000 },
        new Error('connect ECONNREFUSED'),
        { status: 'not-modified' },
      ],
      { rita: 'read' },
    );
    const logger = memoryLogger();
    const c = new CrewJobControl({
      layout,
      config,
      daemon: 'd1',
      logger,
      port,
      everyMs: 1_000,
      since: new Date(0),
      now: () => new Date(now),
    });
    await c.tick();
    expect(Object.values(readControl(layout).entries)).toMatchObject([
      {
        verb: 'stop',
        refused: expect.stringContaining('has read access to the repository, not write or higher'),
      },
    ]);
    await c.tick();
    expect(logger.lines.at(-1)).toEqual({
      level: 'warning',
      message:
        "dispatch-crew: /school stop|steer not read: GitHub's rate limit (429) on the comments of #1; next read in 30s (the crews run on)",
    });
    // Before the wait is over, nothing is asked.
    now += 29_000;
    await c.tick();
    expect(port.asked).toHaveLength(2);
    now += 1_000;
    await expect(c.tick()).resolves.toBeUndefined();
    expect(logger.lines.at(-1)?.message).toMatch(
      /the comments of #1 failed: connect ECONNREFUSED; next read in 4s \(the crews run on\)$/,
    );
    now += 4_000;
    await c.tick();
    expect(port.asked).toHaveLength(4);
    expect(port.asked[3]!.etag).toBe('W/"a"');
  });
});
