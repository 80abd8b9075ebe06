import { afterEach, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOKBAG_FILES, type Bookbag } from '../../src/bookbag/schema.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { silentLogger } from '../../src/log.js';
import type { CrewEvent, CrewPlanned } from '../../src/schemas/crew.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { item, makeSchool, plan, spec, writeCurriculum, type School } from './helpers.js';

/**
 * A revision crew of a `command` agent: there is no session to resume, so its first turn is a fresh
 * one on the brief, and the bookbag says so; a command crew keeps no session store.
 */
let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
});

it('a command agent gets a fresh turn, recorded with the reason; no session store is kept', async () => {
  const s = (school = makeSchool());
  writeCurriculum(s, [item(7)]);
  await plan(s, [{ crewId: 'c7-first', issue: 7 }]);
  expect((await runCrew(await spec(s, 'c7-first'), { logger: silentLogger })).outcome).toBe('succeeded');
  const base = (await spec(s, 'c7-rev')).baseSha;
  await new EventLog<CrewEvent>(s.layout.file('crews')).append([
    event('crew.planned', 'planned:c7-rev', {
      crewId: 'c7-rev',
      issueNumber: 7,
      daemon: 'd1',
      agent: 'editor',
      weight: 'standard',
      fences: [],
      repair: false,
      attempt: 2,
      revision: {
        round: 1,
        of: 2,
        pr: 9,
        branch: 'school/issue-7',
        headSha: base,
        revises: 'c7-first',
        feedback: [],
      },
    } satisfies CrewPlanned),
  ]);
  const r = await runCrew(await spec(s, 'c7-rev'), { logger: silentLogger });
  expect(r.outcome, r.reason).toBe('succeeded');
  const record = (id: string) =>
    JSON.parse(readFileSync(join(s.layout.bookbag(id), BOOKBAG_FILES.record), 'utf8')) as Bookbag;
  expect(record('c7-rev').revision).toEqual({
    revises: 'c7-first',
    round: 1,
    pr: 9,
    session: 'fresh',
    why: 'a command agent has no session to resume',
  });
  expect(record('c7-first').revision).toBeUndefined();
  expect(record('c7-first').sessionStore).toBeUndefined();
}, 60_000);
