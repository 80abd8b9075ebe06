import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { git, tempDir } from '../support/tmp.js';
import { nodeTree } from '../support/toolchains.js';
import { noSandbox, warnSkipped } from './helpers.js';

/**
 * A team's first crew on the machine it has, through the real CLI with the default configuration
 * (the sandbox on): Node.js under the runner user's HOME (nvm's layout, or a self-hosted runner's
 * tool cache inside its install in HOME), a repository whose `npm test` runs `node --test` and
 * checks it runs that node. `school doctor` says Ready, and one `school loop` accepts the honest
 * crew: its verification and the judge's ran that npm and that node, and saw nothing else of HOME.
 */
warnSkipped('the first crew on an ordinary machine');

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const tmp = tempDir('school-first-crew-');
afterAll(() => tmp.cleanup());

/** The student: writes the answer the issue asks for, nothing else. */
const STUDENT = [
  "import { writeFileSync } from 'node:fs';",
  "writeFileSync('src/value.txt', 'solved #' + process.env.SCHOOL_ISSUE + '\\n');",
  "writeFileSync(process.env.SCHOOL_REPORT_FILE, 'Wrote src/value.txt.\\n');",
  '',
].join('\n');

interface Machine {
  home: string;
  /** The toolchain's bin (node and npm). */
  bin: string;
  env: Record<string, string>;
  /** What of HOME must stay out of view. */
  secrets: string[];
}

function nvmMachine(dir: string): Machine {
  const home = join(dir, 'home');
  const bin = nodeTree(join(home, '.nvm', 'versions', 'node', 'v20.x'));
  return { home, bin, env: {}, secrets: [join(home, '.ssh'), join(home, '.nvm', 'nvm.sh')] };
}

function runnerMachine(dir: string): Machine {
  const home = join(dir, 'home');
  const runner = join(home, 'actions-runner');
  const bin = nodeTree(join(runner, '_work', '_tool', 'node', '20.20.2', 'x64'));
  writeFileSync(join(runner, '.credentials'), '{"scheme":"OAuth"}\n');
  return { home, bin, env: {}, secrets: [join(home, '.ssh'), join(runner, '.credentials')] };
}

/** nodejs.org's tarball unpacked by hand into HOME: no layout the sandbox recognizes by itself. */
function tarballMachine(dir: string): Machine {
  const home = join(dir, 'home');
  const bin = nodeTree(join(home, 'node-v20.20.2-linux-x64'));
  return { home, bin, env: {}, secrets: [join(home, '.ssh')] };
}

function setUp(make: (dir: string) => Machine) {
  const dir = join(tmp.path, Math.random().toString(36).slice(2));
  mkdirSync(dir);
  const m = make(dir);
  mkdirSync(join(m.home, '.ssh'), { recursive: true });
  writeFileSync(join(m.home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
  const repo = join(m.home, 'app');
  mkdirSync(join(repo, 'src'), { recursive: true });
  mkdirSync(join(repo, 'test'));
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'src', 'value.txt'), 'todo\n');
  writeFileSync(
    join(repo, 'package.json'),
    JSON.stringify({ name: 'app', private: true, scripts: { test: 'node --test' } }, null, 2),
  );
  writeFileSync(
    join(repo, 'test', 'value.test.mjs'),
    [
      "import test from 'node:test';",
      "import assert from 'node:assert';",
      "import { existsSync, readFileSync } from 'node:fs';",
      "test('the value', () => assert.match(readFileSync('src/value.txt', 'utf8'), /solved #1/));",
      `test('the node of PATH', () => assert.equal(process.execPath, ${JSON.stringify(join(m.bin, 'node'))}));`,
      `test('nothing else of HOME', () => { for (const p of ${JSON.stringify(m.secrets)}) assert.equal(existsSync(p), false, p); });`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(repo, '.gitignore'), '.school/\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'an app with a test');
  const student = join(dir, 'student.mjs');
  writeFileSync(student, STUDENT);
  const issues = join(dir, 'issues.json');
  writeFileSync(
    issues,
    JSON.stringify([
      {
        id: 1,
        number: 1,
        title: 'Solve the value',
        body: 'src/value.txt must say it is solved.',
        labels: [],
        state: 'open',
        user: { login: 'owner', type: 'User' },
        author_association: 'OWNER',
        created_at: '2026-11-01T09:00:00Z',
        updated_at: '2026-11-01T09:00:00Z',
      },
    ]),
  );
  // The defaults but for what a first run names: its student, its test command, its curriculum.
  writeFileSync(
    join(repo, 'school.yml'),
    stringify({
      curriculum: { issuesFile: issues },
      agents: [{ id: 'student', command: ['node', student, '{brief}'], roles: ['coding'] }],
      dispatch: { verify: ['npm', 'test'], correctionTurns: 0, minFreeDiskGiB: 0 },
    }),
  );
  const school = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/index.ts'), ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: `${m.bin}:/usr/bin:/bin`, HOME: m.home, ...m.env },
      timeout: 600_000,
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const config = (extra: Record<string, unknown>) =>
    writeFileSync(
      join(repo, 'school.yml'),
      `${readFileSync(join(repo, 'school.yml'), 'utf8')}${stringify(extra)}`,
    );
  return { school, config, machine: m };
}

describe.skipIf(!!noSandbox)('the first crew, sandbox on, Node.js under HOME', () => {
  for (const [name, make] of [
    ['nvm (~/.nvm/versions/node/<v>)', nvmMachine],
    ["a self-hosted runner's tool cache in HOME (RUNNER_TOOL_CACHE unset)", runnerMachine],
  ] as const) {
    it(`${name}: doctor says Ready, and school loop accepts the honest crew`, () => {
      const { school } = setUp(make);
      const doctor = school('doctor');
      expect(doctor.out).toMatch(/inside:dispatch\.verify.*ok|ok.*inside:dispatch\.verify/);
      expect(doctor.out, doctor.out).toMatch(/^Ready\.$/m);
      const loop = school('loop');
      expect(loop.code, loop.out).toBe(0);
      expect(loop.out, loop.out).toMatch(/#1 \S+ ACCEPTED by /);
      expect(loop.out).toMatch(/#1 branch school\/issue-1/);
    }, 600_000);
  }

  it('a Node.js unpacked by hand into HOME: doctor is not ready and names what to add; after it, Ready and accepted', () => {
    const { school, config, machine } = setUp(tarballMachine);
    const before = school('doctor');
    expect(before.out).toMatch(/^Not ready/m);
    const fix = /add `sandbox\.readOnly: \[([^\]]+)\]` to school\.yml/.exec(before.out);
    expect(fix, before.out).not.toBeNull();
    expect(fix![1]!.split(', ')).toContain(machine.bin);
    // The one change the doctor asked for, as written.
    config({ sandbox: { readOnly: fix![1]!.split(', ') } });
    const after = school('doctor');
    expect(after.out, after.out).toMatch(/^Ready\.$/m);
    const loop = school('loop');
    expect(loop.code, loop.out).toBe(0);
    expect(loop.out, loop.out).toMatch(/#1 \S+ ACCEPTED by /);
  }, 600_000);
});
