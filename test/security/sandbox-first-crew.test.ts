import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';
import { firstCrew } from '../support/first-crew.js';
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

const tmp = tempDir('school-first-crew-');
afterAll(() => tmp.cleanup());

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
  const crew = firstCrew(
    dir,
    join(m.home, 'app'),
    m.bin,
    { PATH: `${m.bin}:/usr/bin:/bin`, HOME: m.home, ...m.env },
    [
      `test('nothing else of HOME', () => { for (const p of ${JSON.stringify(m.secrets)}) assert.equal(existsSync(p), false, p); });`,
    ],
  );
  const config = (extra: Record<string, unknown>) => {
    Object.assign(crew.config, extra);
    crew.write();
  };
  return { school: crew.school, config, machine: m };
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
