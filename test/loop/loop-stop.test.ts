import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { childGroups } from '../../src/loop/stop.js';
import { tempDir } from '../support/tmp.js';
import { firstCrew, startLoop } from '../support/first-crew.js';
import { killAll, noSandbox, processesWith, warnSkipped } from '../security/helpers.js';
import { until } from '../support/wait-and-read.js';

/**
 * Stopping `school loop` stops its crews (src/loop/stop.ts): a real `school loop` process, SIGTERMed
 * while its student (in the default sandbox) sleeps, forwards the signal to its crew runner, whose
 * crew ends its student and finishes `cancelled`; the loop exits 143. Afterwards no runner, sandbox or
 * student process is left, the crew's lease is released, and the next `school loop` plans the issue
 * again on the same slot, where its crew succeeds.
 */
warnSkipped('stopping school loop stops its crews');

const tmp = tempDir('school-loop-stop-');
afterAll(() => tmp.cleanup());
const leftovers: number[] = [];
afterEach(() => killAll(leftovers.splice(0)));

/** A student that says it started (a file in its worktree), then sleeps far past the test. */
const SLOW = [
  "import { writeFileSync } from 'node:fs';",
  "writeFileSync('started.txt', String(process.pid));",
  'setInterval(() => {}, 1000);',
  '',
].join('\n');

/** A live process (a zombie has ended: it waits only for its parent, or init, to reap it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe.skipIf(!!noSandbox)('school loop: SIGTERM stops its crews', () => {
  it('forwards the signal to its crew runner, which cancels its crew; nothing survives; the next loop reclaims the slot', async () => {
    const env = { PATH: '/usr/bin:/bin', HOME: join(tmp.path, 'home') };
    const crew = firstCrew(tmp.path, join(tmp.path, 'app'), '/usr/bin', env);
    const student = join(tmp.path, 'student.mjs');
    const honest = readFileSync(student, 'utf8');
    writeFileSync(student, SLOW);
    const state = join(crew.repo, '.school', 'state');

    const loop = startLoop(crew.repo, env);
    leftovers.push(loop.child.pid!);

    // The student runs: its runner is a child group of the loop, the student a process of its own.
    const students = await until('the student to start', () => {
      const p = processesWith(student);
      return p.length ? p : undefined;
    });
    leftovers.push(...students);
    const runners = childGroups(loop.child.pid!);
    expect(runners.length, loop.out()).toBeGreaterThan(0);
    leftovers.push(...runners);

    // The runner names this school's state in its command line (its spec): what is checked after.
    expect(processesWith(join(crew.repo, '.school')).length, loop.out()).toBeGreaterThan(0);

    loop.child.kill('SIGTERM');
    const end = await loop.ended;
    expect(end.code, loop.out()).toBe(143);
    expect(loop.out()).toContain('SIGTERM received');

    // Nothing the loop started survives it: the runner's group, the student (and its sandbox).
    const desc = (pid: number) => {
      try {
        return `${readFileSync(`/proc/${pid}/stat`, 'utf8')} ${readFileSync(`/proc/${pid}/cmdline`, 'latin1')}`;
      } catch {
        return 'gone';
      }
    };
    for (const pid of [...runners, ...students])
      expect(alive(pid), `pid ${pid} survived: ${desc(pid)}\n${loop.out()}`).toBe(false);
    expect(processesWith(student)).toEqual([]);
    // (Other tests on the machine run crew runners too: this school's are those naming its state.)
    expect(processesWith(join(crew.repo, '.school'))).toEqual([]);

    // The crew ended cancelled (not failed, not lost), its lease released; nothing paused the school.
    const crews = readFileSync(join(state, 'crews.jsonl'), 'utf8');
    const finished = crews
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === 'crew.finished');
    expect(finished, crews).toHaveLength(1);
    expect(finished[0].data.outcome).toBe('cancelled');
    expect(finished[0].data.reason).toContain('SIGTERM');
    expect(crews).toContain('lease.released');
    const school = join(state, 'school.jsonl');
    expect(existsSync(school) ? readFileSync(school, 'utf8') : '').not.toContain('school.paused');

    // The next loop plans the issue again on the freed slot, and the honest student is accepted.
    writeFileSync(student, honest);
    const next = crew.school('loop');
    expect(next.code, next.out).toBe(0);
    // (Whether the judges accept it is theirs to say: the slot took the crew and it succeeded.)
    expect(next.out).toMatch(/\[local slot 0\] c1-\S+ #1 finished \S+ succeeded/);
    expect(next.out).not.toContain('lost');
  }, 900_000);
});
