import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { which } from '../../src/process/which.js';
import { toolchainMounts, toolchainRoot } from '../../src/sandbox/toolchains.js';
import { makeSchool, type School } from '../crew/helpers.js';
import { git, tempDir } from '../support/tmp.js';
import { nodeTree } from '../support/toolchains.js';
import { noSandbox, runCrews, setEnv, warnSkipped } from './helpers.js';

/**
 * Toolchains under the runner user's HOME, built for real: an nvm tree (`~/.nvm/versions/node/<v>`
 * with a real node binary and npm in it) and a self-hosted runner installed in HOME with
 * `actions/setup-node`'s tool cache (`~/actions-runner/_work/_tool/node/<v>/x64`). A repository whose
 * `npm test` runs `node --test` must run with that npm and that node inside the sandbox, the same
 * files as outside, while nothing else of HOME or of the runner install is visible.
 */
warnSkipped('sandbox-toolchains');

const cleanups: Array<() => void> = [];

/** Removes variables from the environment until the returned function puts them back. */
function unsetEnv(...names: string[]): () => void {
  const saved = names.map((n) => [n, process.env[n]] as const);
  for (const n of names) delete process.env[n];
  return () => {
    for (const [n, v] of saved) if (v !== undefined) process.env[n] = v;
  };
}
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

interface Host {
  home: string;
  /** The toolchain's real `bin` (where node and npm are). */
  bin: string;
  /** The PATH entry that reaches it, when not `bin` itself (a link). */
  pathEntry?: string;
  /** Files of HOME that must stay out of view. */
  secrets: string[];
}

function nvmHost(): Host {
  const t = tempDir('school-nvm-');
  cleanups.push(t.cleanup);
  const home = join(t.path, 'home');
  const nvm = join(home, '.nvm');
  const bin = nodeTree(join(nvm, 'versions', 'node', 'v20.x'));
  // `npm config set -g` writes the prefix's own npmrc: a registry token may be there.
  const npmrc = join(nvm, 'versions', 'node', 'v20.x', 'etc', 'npmrc');
  mkdirSync(dirname(npmrc));
  writeFileSync(npmrc, '//registry.npmjs.org/:_authToken=npm_secret\n');
  mkdirSync(join(nvm, 'versions', 'node', 'v18.x', 'bin'), { recursive: true });
  writeFileSync(join(nvm, 'nvm.sh'), '# nvm\n');
  writeFileSync(join(home, 'secret.txt'), 'the host user secret\n');
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
  return {
    home,
    bin,
    secrets: [
      join(home, 'secret.txt'),
      join(home, '.ssh', 'id_ed25519'),
      join(nvm, 'nvm.sh'),
      join(nvm, 'versions', 'node', 'v18.x'),
      npmrc,
    ],
  };
}

/** nvm with its `current` link on PATH (`~/.nvm/current` -> `versions/node/<v>`, `nvm alias default`). */
function nvmCurrentHost(): Host {
  const host = nvmHost();
  const current = join(host.home, '.nvm', 'current');
  symlinkSync(join('versions', 'node', 'v20.x'), current);
  return { ...host, pathEntry: join(current, 'bin') };
}

/** `~/.local/bin/node` and `npm` linking into nvm's version directory; `~/.local/bin` holds more. */
function localBinHost(): Host {
  const host = nvmHost();
  const local = join(host.home, '.local', 'bin');
  mkdirSync(local, { recursive: true });
  for (const name of ['node', 'npm']) symlinkSync(join(host.bin, name), join(local, name));
  const helper = join(local, 'git-credential-store-token');
  writeFileSync(helper, '#!/bin/sh\necho password=secret\n', { mode: 0o755 });
  return { ...host, pathEntry: local, secrets: [...host.secrets, helper] };
}

function runnerHost(): Host {
  const t = tempDir('school-runner-');
  cleanups.push(t.cleanup);
  const home = join(t.path, 'home');
  const runner = join(home, 'actions-runner');
  const bin = nodeTree(join(runner, '_work', '_tool', 'node', '20.20.2', 'x64'));
  mkdirSync(join(runner, '_work', '_tool', 'Python', '3.12.0', 'x64'), { recursive: true });
  mkdirSync(join(runner, '_work', '_temp'), { recursive: true });
  mkdirSync(join(runner, 'bin'), { recursive: true });
  writeFileSync(join(runner, '.credentials'), '{"scheme":"OAuth"}\n');
  // Another repository's checkout in the same runner's work directory.
  mkdirSync(join(runner, '_work', 'other', 'other'), { recursive: true });
  writeFileSync(join(runner, '_work', 'other', 'other', '.env'), 'TOKEN=other\n');
  writeFileSync(join(runner, '_work', '_temp', 'secret.sh'), 'export TOKEN=x\n');
  writeFileSync(join(home, 'secret.txt'), 'the host user secret\n');
  return {
    home,
    bin,
    secrets: [
      join(home, 'secret.txt'),
      join(runner, '.credentials'),
      join(runner, 'bin'),
      join(runner, '_work', '_temp', 'secret.sh'),
      join(runner, '_work', '_tool', 'Python'),
      join(runner, '_work', 'other'),
    ],
  };
}

/** A school whose repository's `npm test` runs `node --test`, checking it runs the host's toolchain. */
function toolchainSchool(host: Host): School {
  const s = makeSchool();
  cleanups.push(s.cleanup);
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.dispatch.correctionTurns = 0;
  s.config.dispatch.verify = ['npm', 'test'];
  const node = join(host.bin, 'node');
  const lines = [
    "import test from 'node:test';",
    "import assert from 'node:assert';",
    "import { existsSync, readFileSync } from 'node:fs';",
    "test('the value is solved', () => assert.match(readFileSync('src/value.txt', 'utf8'), /solved #\\d+/));",
    `test('the toolchain of PATH', () => assert.equal(process.execPath, ${JSON.stringify(node)}));`,
    `test('nothing else of HOME', () => { for (const p of ${JSON.stringify(host.secrets)}) assert.equal(existsSync(p), false, p); });`,
    '',
  ];
  mkdirSync(join(s.repo, 'test'), { recursive: true });
  writeFileSync(join(s.repo, 'test', 'value.test.mjs'), lines.join('\n'));
  writeFileSync(
    join(s.repo, 'package.json'),
    JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'node --test' } }, null, 2),
  );
  git(s.repo, 'add', '-A');
  git(s.repo, 'commit', '-q', '-m', 'a test of the value');
  return s;
}

function verification(s: School, crewId: string): { record: { passed: boolean }; log: string } {
  const bag = s.layout.bookbag(crewId);
  return {
    record: JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8')).verification,
    log: readFileSync(join(bag, 'verification.log'), 'utf8'),
  };
}

describe('toolchain roots', () => {
  it('an nvm version directory, never ~/.nvm; a tool cache entry, never the rest of _work', () => {
    expect(toolchainRoot('/h/.nvm/versions/node/v20.1.0/bin')).toBe('/h/.nvm/versions/node/v20.1.0');
    expect(toolchainRoot('/h/.nvm/nvm.sh')).toBeUndefined();
    expect(toolchainRoot('/h/actions-runner/_work/_tool/node/20.1.0/x64/bin')).toBe(
      '/h/actions-runner/_work/_tool/node/20.1.0/x64',
    );
    expect(toolchainRoot('/h/actions-runner/_work/repo/repo')).toBeUndefined();
    expect(toolchainRoot('/cache/go/1.22.0/x64/bin', ['/cache'])).toBe('/cache/go/1.22.0/x64');
    expect(toolchainRoot('/h/.pyenv/versions/3.12.1/bin')).toBe('/h/.pyenv/versions/3.12.1');
    expect(toolchainRoot('/h/.asdf/installs/nodejs/20.1.0/bin')).toBe('/h/.asdf/installs/nodejs/20.1.0');
    expect(toolchainRoot('/h/.local/share/mise/installs/node/20/bin')).toBe(
      '/h/.local/share/mise/installs/node/20',
    );
    expect(toolchainRoot('/h/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin')).toBe(
      '/h/.rustup/toolchains/stable-x86_64-unknown-linux-gnu',
    );
    for (const shim of [
      '/h/.pyenv/shims',
      '/h/.asdf/shims',
      '/h/.cargo/bin',
      '/h/.local/bin',
      '/h/.volta/bin',
    ])
      expect(toolchainRoot(shim)).toBeUndefined();
  });

  it('binds the version directory read-only, leaves shims and ~/.local/bin out, hides npm global config', () => {
    const host = nvmHost();
    const root = dirname(host.bin);
    mkdirSync(join(host.home, '.local', 'bin'), { recursive: true });
    mkdirSync(join(host.home, '.pyenv', 'shims'), { recursive: true });
    const m = toolchainMounts({
      path: [host.bin, join(host.home, '.local', 'bin'), join(host.home, '.pyenv', 'shims'), '/usr/bin'].join(
        ':',
      ),
      programs: [join(host.bin, 'npm')],
      protect: [host.home],
    });
    expect(m.readOnly).toEqual([root]);
    expect(m.masked).toEqual([join(root, 'etc')]);
  });

  it('a PATH entry or program reached through links keeps its links inside; a left-out entry shows only its links', () => {
    const host = localBinHost();
    const root = dirname(host.bin);
    const current = join(host.home, '.nvm', 'current');
    symlinkSync(join('versions', 'node', 'v20.x'), current);
    const local = host.pathEntry!;
    const m = toolchainMounts({
      path: [join(current, 'bin'), local, '/usr/bin'].join(':'),
      programs: [join(current, 'bin', 'npm')],
      protect: [host.home],
    });
    expect(m.readOnly).toEqual([root]);
    expect(m.links).toEqual(
      expect.arrayContaining([
        { path: current, target: join('versions', 'node', 'v20.x') },
        { path: join(local, 'node'), target: join(host.bin, 'node') },
        { path: join(local, 'npm'), target: join(host.bin, 'npm') },
      ]),
    );
    // The credential helper of ~/.local/bin is a file, not a link into a toolchain: not shown.
    expect(m.links.map((l) => l.path)).not.toContain(join(local, 'git-credential-store-token'));
    expect(m.readOnly.some((p) => p.startsWith(local))).toBe(false);
  });

  it('a protected directory inside a version directory (the toolkit installed globally) is emptied', () => {
    const host = nvmHost();
    const root = dirname(host.bin);
    const toolkit = join(root, 'lib', 'node_modules', 'school-core');
    mkdirSync(toolkit, { recursive: true });
    const m = toolchainMounts({ path: host.bin, programs: [], protect: [host.home, toolkit] });
    expect(m.readOnly).toEqual([root]);
    expect(m.masked.sort()).toEqual([join(root, 'etc'), toolkit].sort());
  });
});

describe.skipIf(!!noSandbox)('toolchains under HOME, in bubblewrap', () => {
  const toolCache = (h: Host) => ({ RUNNER_TOOL_CACHE: join(h.home, 'actions-runner', '_work', '_tool') });
  for (const [name, make, env] of [
    ['nvm (~/.nvm/versions/node/<v>)', nvmHost, () => ({})],
    ["nvm's `current` link on PATH (~/.nvm/current/bin)", nvmCurrentHost, () => ({})],
    ['~/.local/bin/node and npm linking into nvm', localBinHost, () => ({})],
    [
      "a runner's tool cache (~/actions-runner/_work/_tool/node/<v>/x64), RUNNER_TOOL_CACHE set",
      runnerHost,
      toolCache,
    ],
    ["a runner's tool cache, RUNNER_TOOL_CACHE unset", runnerHost, () => ({})],
  ] as const) {
    it(`${name}: an honest crew's \`npm test\` runs that npm and that node; nothing else of HOME is visible`, async () => {
      const host = make();
      const restore = setEnv({
        HOME: host.home,
        PATH: `${host.pathEntry ?? host.bin}:/usr/bin:/bin`,
        ...env(host as Host),
      });
      cleanups.push(restore);
      if (!('RUNNER_TOOL_CACHE' in env(host as Host)))
        cleanups.push(unsetEnv('RUNNER_TOOL_CACHE', 'AGENT_TOOLSDIRECTORY'));
      const s = toolchainSchool(host);
      const [r] = await runCrews(s, [{ crewId: 'c1-toolchn1', issue: 1, agent: 'editor' }]);
      const v = verification(s, 'c1-toolchn1');
      // The repository's three tests and the one the student adds with its fix (src/issue-1.test.mjs).
      expect(v.log).toMatch(/^ok \d+ - \S*\/src\/issue-1\.test\.mjs$/m);
      expect(v.log).toMatch(/# pass 4/);
      expect(v.log).toMatch(/# fail 0/);
      expect(v.record).toMatchObject({ passed: true });
      expect(r!.outcome).toBe('succeeded');
    });
  }
});

describe('which', () => {
  it('never answers a directory named like the program (the sandbox binds what it finds)', () => {
    const t = tempDir('school-which-');
    cleanups.push(t.cleanup);
    mkdirSync(join(t.path, 'a', 'node'), { recursive: true });
    const bin = nodeTree(join(t.path, 'b'));
    expect(which('node', `${join(t.path, 'a')}:${bin}`)).toBe(join(bin, 'node'));
  });
});
