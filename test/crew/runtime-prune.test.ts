import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCrew } from '../../src/crew/run/crew.js';
import { FINISHED_RUNTIME_KEEP_MS, sweepFinishedRuntimes } from '../../src/crew/machine/runtime-prune.js';
import { crewRuntimeDir, defaultRuntimeDir } from '../../src/crew/spec.js';
import { silentLogger } from '../../src/log.js';
import { tempDir } from '../support/tmp.js';
import { item, makeSchool, plan, spec, writeCurriculum, type School } from './helpers.js';

/**
 * A finished crew's runtime directory is pruned to a few MiB when it ends, and removed whole once it
 * is older than FINISHED_RUNTIME_KEEP_MS: a daemon that runs for months runs thousands of crews, and
 * their logs alone would fill its disk. A running crew's directory is never touched.
 */
const dirs: Array<{ cleanup(): void }> = [];
let school: School | undefined;
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
  school?.cleanup();
  school = undefined;
});

const DAY = 24 * 60 * 60 * 1000;
const age = (dir: string, ms: number) => {
  const at = new Date(Date.now() - ms);
  utimesSync(dir, at, at);
};

describe('runtime directories of finished crews', () => {
  it('are removed when old, kept when recent or when the crew is not finished', () => {
    const t = tempDir('school-runtime-');
    dirs.push(t);
    for (const id of ['old-done', 'new-done', 'old-running']) {
      mkdirSync(join(t.path, id));
      writeFileSync(join(t.path, id, 'student.log'), 'x\n');
    }
    age(join(t.path, 'old-done'), FINISHED_RUNTIME_KEEP_MS + DAY);
    age(join(t.path, 'old-running'), FINISHED_RUNTIME_KEEP_MS + DAY);
    let asked = 0;
    const finished = () => (asked++, new Set(['old-done', 'new-done']));
    expect(sweepFinishedRuntimes(t.path, finished)).toEqual(['old-done']);
    expect(existsSync(join(t.path, 'old-done'))).toBe(false);
    expect(existsSync(join(t.path, 'new-done'))).toBe(true);
    expect(existsSync(join(t.path, 'old-running'))).toBe(true);
    // Nothing old enough among finished crews' directories: the state is not read at all.
    age(join(t.path, 'old-running'), 0);
    expect(sweepFinishedRuntimes(t.path, finished)).toEqual([]);
    expect(asked).toBe(1);
  });

  it("a crew's end removes the runtime directory of a crew that finished over a week ago", async () => {
    const s = (school = makeSchool({ worktrees: 1 }));
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [{ crewId: 'c1-aaaaaaa1', issue: 1, agent: 'editor' }]);
    expect((await runCrew(await spec(s, 'c1-aaaaaaa1'), { logger: silentLogger })).outcome).toBe('succeeded');
    const first = crewRuntimeDir(defaultRuntimeDir(s.layout.root), 'c1-aaaaaaa1');
    expect(existsSync(join(first, 'student.log'))).toBe(true);
    age(first, FINISHED_RUNTIME_KEEP_MS + DAY);
    await plan(s, [{ crewId: 'c2-aaaaaaa2', issue: 2, agent: 'editor' }]);
    expect((await runCrew(await spec(s, 'c2-aaaaaaa2'), { logger: silentLogger })).outcome).toBe('succeeded');
    expect(existsSync(first)).toBe(false);
    expect(
      existsSync(join(crewRuntimeDir(defaultRuntimeDir(s.layout.root), 'c2-aaaaaaa2'), 'student.log')),
    ).toBe(true);
  });
});
