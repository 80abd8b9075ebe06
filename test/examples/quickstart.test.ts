import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';

/**
 * The README's quickstart as a user runs it: `school loop --example` in a fresh directory, twice,
 * then the board it points at. The real CLI in a child process.
 */
const ROOT = resolve(import.meta.dirname, '../..');
/** tsx by path: the fresh directory has no node_modules to resolve it from. */
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const dir = tempDir('school-quickstart-');
afterAll(() => dir.cleanup());

function school(...args: string[]) {
  return schoolIn(dir.path, process.env.PATH, ...args);
}

function schoolIn(cwd: string, path: string | undefined, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/index.ts'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: path, HOME: cwd },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A PATH like this machine's, without bubblewrap: every program of the system's bin directories and
 * Node.js's, linked into one directory, except `bwrap`.
 */
function pathWithoutBwrap(into: string): string {
  const bin = join(into, 'bin');
  mkdirSync(bin);
  for (const d of [dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin']) {
    if (!existsSync(d)) continue;
    for (const name of readdirSync(d)) {
      if (name === 'bwrap' || existsSync(join(bin, name))) continue;
      symlinkSync(join(d, name), join(bin, name));
    }
  }
  return bin;
}

describe('quickstart: school loop --example', () => {
  it('runs the example school, runs again without dispatching anything twice, and shows its board', () => {
    const first = school('loop', '--example');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/Planned 4 crew\(s\)/);
    expect(first.stdout).toMatch(/#6 \S+ REJECTED by verification/);
    expect(first.stdout).toMatch(/#6 branch school\/issue-6/);
    const board = /^Board: school status --config (.+)$/m.exec(first.stdout)?.[1];
    expect(board).toBeDefined();

    const again = school('loop', '--example');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toMatch(/Planned [1-9]/);

    // The command it prints shows the example's own daemons, online, and every issue it delivered.
    const status = school('status', '--config', board!);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/Accepted\s+7/);
    expect(status.stdout).toMatch(/alpha\s+2\s+0\s+0\s+0%\s+online/);
    expect(status.stdout).not.toContain('not configured');
  }, 180_000); // real crews, git and verification: wall time depends on the machine's load

  it('runs on a machine without bubblewrap: the example says so in one line and grades as it does with it', () => {
    const fresh = tempDir('school-quickstart-nobwrap-');
    try {
      const r = schoolIn(fresh.path, pathWithoutBwrap(fresh.path), 'loop', '--example');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.match(/^sandbox: .*$/gm)).toEqual([
        expect.stringMatching(/bubblewrap is not available here.*unsandboxed.*real agents need it/),
      ]);
      expect(r.stdout).toMatch(/Planned 4 crew\(s\)/);
      expect(r.stdout).toMatch(/#6 \S+ REJECTED by verification/);
      expect(r.stdout).toMatch(/#6 branch school\/issue-6/);
    } finally {
      fresh.cleanup();
    }
  }, 180_000);
});
