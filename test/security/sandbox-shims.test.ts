import { testHost } from '../support/host.js';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { childEnv } from '../../src/process/env.js';
import { runProcess } from '../../src/process/run.js';
import { which } from '../../src/process/which.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { toolchainMounts } from '../../src/sandbox/toolchains.js';
import { tempDir } from '../support/tmp.js';
import { noSandbox, setEnv, warnSkipped } from './helpers.js';
import { policyFrom } from '../../src/config/sandbox-policy.js';

/**
 * Version managers whose shims alone are on PATH (pyenv, asdf, volta, rustup's ~/.cargo/bin, and the
 * real rbenv when this machine has it), each laid out as the manager lays it out in the runner
 * user's HOME: a shim that finds the manager's root and picks a version from the working
 * directory's version file or the global one. Inside the sandbox the same shim, run from the same
 * worktree, starts the same real program as outside; the manager's root is read-only, and what
 * beside it may hold a secret (~/.cargo's credentials and config, npm's global config of an
 * installed version, the rest of HOME) is not there.
 */
warnSkipped('version managers’ shims on PATH');

const tmp = tempDir('school-shims-');
afterAll(() => tmp.cleanup());
const restores: Array<() => void> = [];
afterEach(() => {
  while (restores.length) restores.pop()!();
});

function file(path: string, text: string, mode = 0o644): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}
const script = (path: string, text: string) => file(path, text, 0o755);

/** An installed version's program: it says which real file it is, so inside and outside compare. */
const REAL = '#!/bin/sh\necho "$(readlink -f "$0") $*"\n';

interface Machine {
  home: string;
  /** The repository's worktree (under HOME, as a runner's workspace is), with its version file. */
  work: string;
  path: string;
  /** The program as the crew names it. */
  program: string;
  /** The file the shim must start, inside as outside. */
  expected: string;
  /** What of HOME must stay out of view. */
  secrets: string[];
  /** Variables the shims need inside, with their values. */
  vars: Record<string, string>;
}

function machine(name: string): { home: string; work: string } {
  const home = join(tmp.path, name, 'home');
  const work = join(home, 'work', 'app');
  mkdirSync(work, { recursive: true });
  file(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
  return { home, work };
}

/** pyenv: `<root>/shims/<program>` as `pyenv rehash` writes it, `libexec/pyenv exec` choosing the version. */
function pyenvMachine(): Machine {
  const { home, work } = machine('pyenv');
  const root = join(home, '.pyenv');
  script(
    join(root, 'libexec', 'pyenv'),
    [
      '#!/usr/bin/env bash',
      'set -e',
      '[ "$1" = exec ] || { echo "pyenv: no such command \'$1\'" >&2; exit 1; }',
      'program="$2"; shift 2',
      'version="${PYENV_VERSION:-}"',
      'dir="$PWD"',
      'while [ -z "$version" ] && [ -n "$dir" ]; do',
      '  [ -f "$dir/.python-version" ] && version="$(cat "$dir/.python-version")"',
      '  dir="${dir%/*}"',
      'done',
      '[ -n "$version" ] || version="$(cat "$PYENV_ROOT/version")"',
      'exec "$PYENV_ROOT/versions/$version/bin/$program" "$@"',
      '',
    ].join('\n'),
  );
  for (const v of ['3.11.9', '3.12.4']) script(join(root, 'versions', v, 'bin', 'mytool'), REAL);
  file(join(root, 'version'), '3.12.4\n');
  script(
    join(root, 'shims', 'mytool'),
    [
      '#!/usr/bin/env bash',
      'set -e',
      '[ -n "$PYENV_DEBUG" ] && set -x',
      'program="${0##*/}"',
      `export PYENV_ROOT="${root}"`,
      `exec "${root}/libexec/pyenv" exec "$program" "$@"`,
      '',
    ].join('\n'),
  );
  file(join(work, '.python-version'), '3.11.9\n');
  // pip's user configuration may name an index with its password: HOME's, never shown.
  file(
    join(home, '.config', 'pip', 'pip.conf'),
    '[global]\nindex-url = https://u:secret@pypi.example/simple\n',
  );
  return {
    home,
    work,
    path: `${join(root, 'shims')}:/usr/bin:/bin`,
    program: 'mytool',
    expected: join(root, 'versions', '3.11.9', 'bin', 'mytool'),
    secrets: [join(home, '.ssh'), join(home, '.config', 'pip', 'pip.conf')],
    vars: { PYENV_ROOT: root },
  };
}

/**
 * asdf 0.16 and later: a single `asdf` binary installed outside the data directory (here ~/bin),
 * shims that run `asdf exec`, the global versions in ~/.tool-versions.
 */
function asdfMachine(): Machine {
  const { home, work } = machine('asdf');
  const data = join(home, '.asdf');
  script(
    join(home, 'bin', 'asdf'),
    [
      '#!/usr/bin/env bash',
      'set -e',
      '[ "$1" = exec ] || exit 2',
      'cmd="$2"; shift 2',
      'data="${ASDF_DATA_DIR:-$HOME/.asdf}"',
      'plugin=$(sed -n "s/^# asdf-plugin: \\([^ ]*\\) .*/\\1/p" "$data/shims/$cmd" | head -n 1)',
      'pick() { awk -v p="$plugin" \'$1 == p { print $2 }\' "$1" 2>/dev/null | head -n 1; }',
      'version=""; dir="$PWD"',
      'while [ -z "$version" ] && [ -n "$dir" ]; do',
      '  [ -f "$dir/.tool-versions" ] && version=$(pick "$dir/.tool-versions")',
      '  dir="${dir%/*}"',
      'done',
      '[ -n "$version" ] || version=$(pick "$HOME/.tool-versions")',
      '[ -n "$version" ] || { echo "No version is set for command $cmd" >&2; exit 126; }',
      'exec "$data/installs/$plugin/$version/bin/$cmd" "$@"',
      '',
    ].join('\n'),
  );
  for (const v of ['20.1.0', '22.3.0']) script(join(data, 'installs', 'nodejs', v, 'bin', 'mynode'), REAL);
  script(
    join(data, 'shims', 'mynode'),
    '#!/usr/bin/env bash\n# asdf-plugin: nodejs 20.1.0\n# asdf-plugin: nodejs 22.3.0\nexec asdf exec "mynode" "$@"\n',
  );
  file(join(home, '.tool-versions'), 'nodejs 22.3.0\n');
  // `npm config set -g` inside an installed version writes its own npmrc: a registry token.
  const npmrc = file(
    join(data, 'installs', 'nodejs', '22.3.0', 'etc', 'npmrc'),
    '//registry.npmjs.org/:_authToken=npm_secret\n',
  );
  file(join(home, 'bin', 'deploy-token'), 'not a program of asdf\n');
  return {
    home,
    work,
    path: `${join(data, 'shims')}:${join(home, 'bin')}:/usr/bin:/bin`,
    program: 'mynode',
    expected: join(data, 'installs', 'nodejs', '22.3.0', 'bin', 'mynode'),
    secrets: [join(home, '.ssh'), npmrc, join(home, 'bin', 'deploy-token')],
    vars: { ASDF_DATA_DIR: data },
  };
}

/** volta: `~/.volta/bin/<tool>` links to `volta-shim`, which reads VOLTA_HOME and the project's package.json. */
function voltaMachine(): Machine {
  const { home, work } = machine('volta');
  const root = join(home, '.volta');
  script(
    join(root, 'bin', 'volta-shim'),
    [
      '#!/bin/sh',
      'root="${VOLTA_HOME:-$HOME/.volta}"',
      'tool="${0##*/}"',
      'pin() { sed -n \'s/.*"node": *"\\([^"]*\\)".*/\\1/p\' "$1" 2>/dev/null | head -n 1; }',
      'v=$(pin "$PWD/package.json")',
      '[ -n "$v" ] || v=$(pin "$root/tools/user/platform.json")',
      'exec "$root/tools/image/node/$v/bin/$tool" "$@"',
      '',
    ].join('\n'),
  );
  symlinkSync('volta-shim', join(root, 'bin', 'mynode'));
  for (const v of ['18.20.0', '20.15.0'])
    script(join(root, 'tools', 'image', 'node', v, 'bin', 'mynode'), REAL);
  file(join(root, 'tools', 'user', 'platform.json'), '{"node":{"runtime":"20.15.0","npm":null}}\n');
  file(join(work, 'package.json'), '{"name":"app","volta":{"node": "18.20.0"}}\n');
  return {
    home,
    work,
    path: `${join(root, 'bin')}:/usr/bin:/bin`,
    program: 'mynode',
    expected: join(root, 'tools', 'image', 'node', '18.20.0', 'bin', 'mynode'),
    secrets: [join(home, '.ssh')],
    vars: { VOLTA_HOME: root },
  };
}

/** rustup: its proxies in ~/.cargo/bin read RUSTUP_HOME; ~/.cargo also holds the registry token. */
function rustupMachine(): Machine {
  const { home, work } = machine('rustup');
  const cargo = join(home, '.cargo');
  const rustup = join(home, '.rustup');
  const proxy = [
    '#!/bin/sh',
    'home="${RUSTUP_HOME:-$HOME/.rustup}"',
    't=$(sed -n \'s/^channel *= *"\\(.*\\)"/\\1/p\' "$PWD/rust-toolchain.toml" 2>/dev/null)',
    '[ -n "$t" ] || t=$(sed -n \'s/^default_toolchain *= *"\\(.*\\)"/\\1/p\' "$home/settings.toml")',
    'exec "$home/toolchains/$t/bin/${0##*/}" "$@"',
    '',
  ].join('\n');
  script(join(cargo, 'bin', 'cargo'), proxy);
  script(join(cargo, 'bin', 'rustc'), proxy);
  for (const t of ['stable-x86_64-unknown-linux-gnu', '1.80.0-x86_64-unknown-linux-gnu'])
    script(join(rustup, 'toolchains', t, 'bin', 'cargo'), REAL);
  file(join(rustup, 'settings.toml'), 'default_toolchain = "stable-x86_64-unknown-linux-gnu"\n');
  file(join(work, 'rust-toolchain.toml'), '[toolchain]\nchannel = "1.80.0-x86_64-unknown-linux-gnu"\n');
  const credentials = file(join(cargo, 'credentials.toml'), '[registry]\ntoken = "cio_secret"\n');
  const config = file(join(cargo, 'config.toml'), '[registry]\ncredential-provider = "cargo:token"\n');
  file(join(cargo, 'registry', 'index', 'x', 'config.json'), '{}\n');
  return {
    home,
    work,
    path: `${join(cargo, 'bin')}:/usr/bin:/bin`,
    program: 'cargo',
    expected: join(rustup, 'toolchains', '1.80.0-x86_64-unknown-linux-gnu', 'bin', 'cargo'),
    secrets: [join(home, '.ssh'), credentials, config, join(cargo, 'registry')],
    vars: { RUSTUP_HOME: rustup },
  };
}

/** The real rbenv (Debian's package): `rbenv rehash` writes the shims, `rbenv global` the version file. */
const RBENV = which('rbenv', '/usr/bin:/usr/local/bin');
function rbenvMachine(): Machine {
  const { home, work } = machine('rbenv');
  const root = join(home, '.rbenv');
  for (const v of ['3.2.4', '3.3.1']) script(join(root, 'versions', v, 'bin', 'myruby'), REAL);
  const env = { HOME: home, RBENV_ROOT: root, PATH: '/usr/bin:/bin' };
  for (const args of [['global', '3.2.4'], ['rehash']]) {
    const r = spawnSync(RBENV!, args, { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`rbenv ${args.join(' ')}: ${r.stderr}`);
  }
  file(join(work, '.ruby-version'), '3.3.1\n');
  return {
    home,
    work,
    path: `${join(root, 'shims')}:/usr/bin:/bin`,
    program: 'myruby',
    expected: join(root, 'versions', '3.3.1', 'bin', 'myruby'),
    secrets: [join(home, '.ssh')],
    vars: { RBENV_ROOT: root },
  };
}

/** The crew's environment: the allow-list of a crew, with the machine's PATH and HOME. */
const crewEnv = (m: Machine, set: Record<string, string> = {}) =>
  childEnv({ from: { PATH: m.path, HOME: m.home, LANG: 'C' }, set });

async function inside(m: Machine, argv: string[], set: Record<string, string> = {}) {
  const sandbox = new Sandbox({
    host: testHost(),
    policy: policyFrom(parseConfig({ sandbox: { network: 'none' } }).sandbox),
    root: join(dirname(m.home), 'sandbox'),
  });
  try {
    const c = await sandbox.confine(argv, crewEnv(m, set), {
      cwd: m.work,
      writable: [m.work],
      home: sandbox.freshHome('crew'),
      allow: [],
    });
    const r = await runProcess(c.argv, { cwd: m.work, env: c.env, timeoutMs: 120_000 });
    return { code: r.exitCode, out: r.stdout.toString('utf8').trim(), err: r.stderr.toString('utf8') };
  } finally {
    await sandbox.close();
  }
}

async function outside(m: Machine, argv: string[]) {
  const r = await runProcess([which(argv[0]!, m.path)!, ...argv.slice(1)], {
    cwd: m.work,
    env: crewEnv(m),
    timeoutMs: 120_000,
  });
  return { code: r.exitCode, out: r.stdout.toString('utf8').trim() };
}

const MACHINES: Array<[string, () => Machine]> = [
  ['pyenv (~/.pyenv/shims, the version from .python-version)', pyenvMachine],
  ['asdf (~/.asdf/shims and asdf in ~/bin, the version from ~/.tool-versions)', asdfMachine],
  ["volta (~/.volta/bin links to volta-shim, the version from package.json's volta key)", voltaMachine],
  ["rustup's proxies (~/.cargo/bin, the toolchain from rust-toolchain.toml)", rustupMachine],
];

describe('the mounts of a version manager’s shims on PATH', () => {
  it('pyenv: its root is shown read-only with PYENV_ROOT set; the rest of HOME is not', () => {
    const m = pyenvMachine();
    const t = toolchainMounts({
      path: m.path,
      programs: [],
      protect: [m.home],
      env: { HOME: m.home, PATH: m.path },
    });
    expect(t.readOnly).toEqual([join(m.home, '.pyenv')]);
    expect(t.env).toEqual({ PYENV_ROOT: join(m.home, '.pyenv') });
  });

  it('rustup: ~/.cargo/bin and ~/.rustup only, never ~/.cargo itself', () => {
    const m = rustupMachine();
    const t = toolchainMounts({ path: m.path, programs: [], protect: [m.home], env: { HOME: m.home } });
    expect(t.readOnly.sort()).toEqual([join(m.home, '.cargo', 'bin'), join(m.home, '.rustup')].sort());
    expect(t.env).toEqual({ RUSTUP_HOME: join(m.home, '.rustup') });
  });

  it('asdf: the data directory, the asdf program as a file, ~/.tool-versions; npm config of a version hidden', () => {
    const m = asdfMachine();
    const t = toolchainMounts({ path: m.path, programs: [], protect: [m.home], env: { HOME: m.home } });
    expect(t.readOnly.sort()).toEqual([join(m.home, '.asdf'), join(m.home, 'bin', 'asdf')].sort());
    expect(t.masked).toEqual([join(m.home, '.asdf', 'installs', 'nodejs', '22.3.0', 'etc')]);
    expect(t.homeFiles).toEqual([{ source: join(m.home, '.tool-versions'), name: '.tool-versions' }]);
  });

  it('without the host environment no shims directory is recognized (the old shape)', () => {
    const m = pyenvMachine();
    expect(toolchainMounts({ path: m.path, programs: [], protect: [m.home] }).readOnly).toEqual([]);
  });
});

describe.skipIf(!!noSandbox)('a version manager’s shims on PATH, in bubblewrap', () => {
  const cases = [...MACHINES];
  if (RBENV) cases.push(['the real rbenv (Debian’s, shims by rbenv rehash, .ruby-version)', rbenvMachine]);
  else console.warn('SKIPPED (the real rbenv): rbenv is not installed here (apt-get install rbenv)');
  for (const [name, make] of cases) {
    it(`${name}: the shim starts the same program inside as outside; nothing else of HOME is there`, async () => {
      const m = make();
      restores.push(setEnv({ HOME: m.home, PATH: m.path }));
      const out = await outside(m, [m.program, 'arg']);
      expect(out).toEqual({ code: 0, out: `${realpathSync(m.expected)} arg` });
      const inn = await inside(m, [m.program, 'arg']);
      expect(inn.err).toBe('');
      expect(inn).toMatchObject({ code: 0, out: out.out });
      // The manager's root is named inside; the secrets beside it are not there.
      const probe = await inside(
        m,
        ['/bin/sh', '-c', 'env; for f in $SECRETS; do [ -e "$f" ] && echo "SEEN $f"; done; echo end'],
        {
          SECRETS: m.secrets.join(' '),
        },
      );
      expect(probe.out).toMatch(/end$/);
      expect(probe.out).not.toContain('SEEN ');
      for (const [k, v] of Object.entries(m.vars)) expect(probe.out).toContain(`${k}=${v}`);
      // Read-only: the crew cannot change which version the next crew gets.
      const root = Object.values(m.vars)[0]!;
      const write = await inside(m, ['/bin/sh', '-c', 'echo x > "$ROOT/planted" && echo wrote'], {
        ROOT: root,
      });
      expect(write.out).not.toContain('wrote');
      expect(existsSync(join(root, 'planted'))).toBe(false);
    }, 300_000);
  }
});
