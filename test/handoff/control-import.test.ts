import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { readControl } from '../../src/dispatch/logs/control-log.js';
import { recordControl } from '../../src/feedback/control-scan.js';
import { importHandoffs } from '../../src/handoff/import.js';
import { memoryLogger } from '../../src/log.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * A crew job's control log in its handoff (src/handoff/import-rules.ts): the `/school stop|steer`
 * its driver read for its own crews, the refusals and what became of each steer reach the state;
 * a command about another daemon's crew, another issue, a local operator or under another key does
 * not, whoever rewrote the handoff.
 */
const tmp = tempDir('school-control-import-');
afterAll(() => tmp.cleanup());

const D1 = 'c1-00000001';
const D2 = 'c2-00000002';

async function school() {
  const root = join(tmp.path, String(Math.random()).slice(2));
  const config = parseConfig({
    stateDir: join(root, 'state'),
    repoPath: root,
    fleet: { daemons: [{ id: 'd1' }, { id: 'd2' }] },
  });
  const layout = new StateLayout(config.stateDir);
  await new EventLog<CrewEvent>(layout.file('crews')).append(
    [
      [D1, 1, 'd1'],
      [D2, 2, 'd2'],
    ].map(
      ([crewId, issueNumber, daemon]) =>
        event('crew.planned', `planned:${crewId}`, {
          crewId: crewId as string,
          issueNumber: issueNumber as number,
          daemon: daemon as string,
          agent: 'a',
          weight: 'standard' as const,
          fences: [],
          repair: false,
          attempt: 1,
        }) as CrewEvent,
    ),
  );
  return { root, config, layout };
}

/** A handoff of daemon d1 holding these control events. */
function handoff(root: string, events: object[]): string {
  const dir = join(root, 'in', 'school-handoff-9-1-1-d1');
  mkdirSync(join(dir, 'events'), { recursive: true });
  const text = events.map((e) => JSON.stringify(e)).join('\n') + '\n';
  writeFileSync(join(dir, 'events', 'control.jsonl'), text);
  const digest = createHash('sha256').update(text).digest('hex');
  writeFileSync(
    join(dir, 'handoff.json'),
    JSON.stringify({
      schema: 1,
      daemon: 'd1',
      files: { 'control.jsonl': { sha256: digest, bytes: Buffer.byteLength(text) } },
    }),
  );
  return join(root, 'in');
}

const by = (login: string, id: number) => ({ login, source: 'github', ref: `comment:${id}`, on: 1 });

describe("a crew job's control log, imported", () => {
  it('takes the commands, refusals and steer outcomes of its own crews, once', async () => {
    const { root, config, layout } = await school();
    const steerKey = `steer:1:comment:12:${D1}`;
    const dir = handoff(root, [
      event('crew.stop-requested', `stop:1:comment:11:${D1}`, {
        issueNumber: 1,
        crewId: D1,
        reason: 'wrong way',
        ...by('ann', 11),
      }),
      event('crew.steered', steerKey, { issueNumber: 1, crewId: D1, text: 'keep the API', ...by('ann', 12) }),
      event('crew.steer-delivered', `steer-delivered:${steerKey}`, { steer: steerKey, crewId: D1, turn: 1 }),
      event('control.refused', 'control-refused:comment:13', {
        issueNumber: 1,
        verb: 'stop',
        reason: 'rita has read access',
        ...by('rita', 13),
      }),
    ]);
    const r = await importHandoffs(layout, dir, { config, logger: memoryLogger() });
    expect(r.refused).toEqual([]);
    expect(r.dirs[0]!.accepted).toBe(4);
    const entries = readControl(layout).entries;
    expect(entries[`stop:1:comment:11:${D1}`]).toMatchObject({ verb: 'stop', by: { login: 'ann' } });
    expect(entries[steerKey]).toMatchObject({ delivered: { turn: 1 } });
    expect(entries['control-refused:comment:13']).toMatchObject({ refused: 'rita has read access' });
    const again = await importHandoffs(layout, dir, { config, logger: memoryLogger() });
    expect(again.dirs[0]!.accepted).toBe(0);

    // The next plan's scan reads the same comments while the issue's crew is still active in the
    // state: a comment the log holds records nothing more; a new one records.
    const found = (id: number) => ({
      control: [
        {
          issue: 1,
          on: 1,
          id: `comment:${id}`,
          author: 'ann',
          command: { verb: 'stop' as const, reason: '' },
        },
      ],
      refused: [],
    });
    expect(await recordControl(layout, memoryLogger(), found(11), new Date())).toEqual([]);
    expect(Object.keys(readControl(layout).entries)).toHaveLength(3);
    const fresh = await recordControl(layout, memoryLogger(), found(14), new Date());
    expect(fresh.map((e) => e.key)).toEqual([`stop:1:comment:14:${D1}`]);
  });

  it("refuses another daemon's crew, another issue, a local command, a forged key or login", async () => {
    const { root, config, layout } = await school();
    const stop = (key: string, data: Record<string, unknown>) =>
      event('crew.stop-requested', key, {
        issueNumber: 1,
        crewId: D1,
        reason: '',
        ...by('ann', 21),
        ...data,
      });
    const dir = handoff(root, [
      stop(`stop:2:comment:21:${D2}`, { issueNumber: 2, crewId: D2 }),
      stop(`stop:2:comment:21:${D1}`, { issueNumber: 2 }),
      stop(`stop:1:local-abc:${D1}`, { source: 'local', ref: 'local-abc' }),
      stop(`stop:1:comment:99:${D1}`, {}),
      stop(`stop:1:comment:21:${D1}`, { login: 'ann" onerror=' }),
      event('crew.steer-delivered', `steer-delivered:steer:2:comment:5:${D2}`, {
        steer: `steer:2:comment:5:${D2}`,
        crewId: D1,
        turn: 0,
      }),
      event('control.refused', 'control-refused:comment:30', {
        issueNumber: 2,
        verb: 'stop',
        reason: 'x',
        ...by('rita', 30),
      }),
    ]);
    const r = await importHandoffs(layout, dir, { config, logger: memoryLogger() });
    expect(r.dirs[0]!.accepted).toBe(0);
    expect(r.refused.map((x) => x.reason)).toEqual([
      `crew ${D2} is not planned for daemon d1`,
      `issue #2 is not crew ${D1}'s`,
      'a crew job records commands from GitHub comments only',
      'its key is not stop:<issue>:<ref>:<crew>',
      'its login is not a GitHub login',
      `names no steer of crew ${D1}`,
      'issue #2 has no crew planned for daemon d1',
    ]);
    expect(readControl(layout).entries).toEqual({});
  });
});
