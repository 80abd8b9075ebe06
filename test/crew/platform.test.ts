import { afterEach, describe, expect, it } from 'vitest';
import { createClassroom } from '../../src/crew/classroom.js';
import { ClassroomUnavailableError } from '../../src/crew/errors.js';
import { ptraceWarning, requireProcFs } from '../../src/crew/machine/host.js';
import { makeSchool, type School } from './helpers.js';

/**
 * The process sweep reads /proc. On a macOS or Windows runner it would find nothing and stop
 * nothing, silently; the preflight fails instead, before anything is leased, and says why.
 */
let school: School | undefined;
afterEach(() => school?.cleanup());

const daemon = (classroom: 'worktree' | 'bot') => ({
  id: 'd1',
  labels: [],
  worktrees: 1,
  class: 'standard' as const,
  classroom,
});

describe('runner platform preflight', () => {
  it('names the platform and the fix on macOS and Windows, and on Linux without /proc', () => {
    expect(() => requireProcFs('darwin')).toThrow(ClassroomUnavailableError);
    expect(() => requireProcFs('darwin')).toThrow(
      /this runner is darwin: school-core needs Linux with \/proc/,
    );
    expect(() => requireProcFs('win32')).toThrow(/this runner is win32: .*Run the daemons on Linux runners/);
    expect(() => requireProcFs('linux', '/nonexistent-proc')).toThrow(
      /linux without a readable \/nonexistent-proc/,
    );
    expect(() => requireProcFs('linux')).not.toThrow(); // this machine
  });

  it('every classroom preflight runs the check', () => {
    const s = (school = makeSchool());
    const real = process.platform;
    Object.defineProperty(process, 'platform', { value: 'darwin' });
    try {
      for (const kind of ['worktree', 'bot'] as const) {
        const room = createClassroom({ daemon: daemon(kind), repoPath: s.repo, root: s.root });
        expect(() => room.preflight(), kind).toThrow(/this runner is darwin/);
      }
    } finally {
      Object.defineProperty(process, 'platform', { value: real });
    }
    expect(() =>
      createClassroom({ daemon: daemon('worktree'), repoPath: s.repo, root: s.root }).preflight(),
    ).not.toThrow();
  });
});

describe('ptraceWarning', () => {
  it('warns where any process of the user may read another one, and not where Yama restricts it', () => {
    expect(ptraceWarning(() => '0\n')).toMatch(/ptrace_scope 0/);
    expect(
      ptraceWarning(() => {
        throw new Error('ENOENT');
      }),
    ).toMatch(/ptrace_scope absent/);
    for (const safe of ['1', '2', '3']) expect(ptraceWarning(() => safe)).toBeUndefined();
  });
});
