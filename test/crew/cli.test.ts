import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { item, makeSchool, nodeFixture, registry, writeCurriculum, type School } from './helpers.js';

let school: School | undefined;
afterEach(() => school?.cleanup());

/** `school dispatch` from the bundled CLI, as a user runs it. */
async function school_(s: School, ...args: string[]) {
  const cfg = join(s.root, 'school.yml');
  const raw = { ...s.config, dispatch: { ...s.config.dispatch, maxCrews: 4, minFreeDiskGiB: 0 } };
  writeFileSync(cfg, stringify(raw));
  const [node, ...pre] = await nodeFixture('../../src/cli/index.ts');
  const r = spawnSync(node!, [...pre, 'dispatch', '--config', cfg, ...args], {
    encoding: 'utf8',
    cwd: s.root,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('school dispatch', () => {
  it('plans from the curriculum and runs the crews here, printing progress; --plan-only runs nothing', async () => {
    const s = (school = makeSchool({ worktrees: 2 }));
    writeCurriculum(s, [item(1), item(2)]);
    const planned = await school_(s, '--plan-only');
    expect(planned.code).toBe(0);
    expect(planned.out).toMatch(/planned 2 crew\(s\)/);
    const ids = Object.keys(registry(s).crews);
    expect(ids).toHaveLength(2);
    expect(Object.values(registry(s).crews).every((c) => c.status === 'planned')).toBe(true);
    const ran = await school_(s, '--run-only');
    expect(ran.err).toBe('');
    expect(ran.code).toBe(0);
    for (const id of ids) {
      expect(ran.out).toMatch(new RegExp(`\\[d1\\] ${id} #\\d launched`));
      expect(ran.out).toMatch(new RegExp(`\\[d1 slot \\d\\] ${id} #\\d finished \\d+s succeeded`));
    }
    expect(ran.out).toMatch(/d1: finished 2/);
    expect(Object.values(registry(s).crews).map((c) => c.outcome)).toEqual(['succeeded', 'succeeded']);
  });

  it('names a daemon that is not in the fleet', async () => {
    const s = (school = makeSchool());
    const r = await school_(s, '--daemon', 'nope');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--daemon: "nope" is not in fleet.daemons \(known: d1\)/);
  });
});
