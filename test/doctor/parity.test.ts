import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runDoctor } from '../../src/doctor/doctor.js';
import { verdict } from '../../src/doctor/finding.js';
import { interpreterOf } from '../../src/doctor/parity.js';
import { tempDir } from '../support/tmp.js';
import { noSandbox, warnSkipped } from '../security/helpers.js';

/**
 * `school doctor` runs what the crews will run inside the real sandbox (bubblewrap) and compares it
 * with outside. The failing machine: a Node.js unpacked into the runner user's HOME and first on
 * PATH. Outside, `#!/usr/bin/env node` finds it; inside, HOME is never shown, so the same script
 * finds the system's node (or none) — every crew's verification would run another node.
 */

warnSkipped('school doctor: what the crews run');
const tmp = tempDir('school-doctor-parity-');
const home = join(tmp.path, 'home');
// nodejs.org's tarball unpacked by hand: no version manager's layout the sandbox would recognize.
const nodeBin = join(home, 'node-v20.0.0-linux-x64', 'bin');
// The layout of nvm: ~/.nvm/versions/node/<version>/bin.
const nvmBin = join(home, '.nvm', 'versions', 'node', 'v20.0.0', 'bin');
const runtime = join(home, 'runtime', 'bin');
const bin = join(tmp.path, 'bin');
const savedHome = process.env.HOME;

function script(file: string, text: string) {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}

beforeAll(() => {
  for (const d of [nodeBin, nvmBin, runtime, bin]) mkdirSync(d, { recursive: true });
  for (const d of [nodeBin, nvmBin]) {
    copyFileSync(process.execPath, join(d, 'node'));
    chmodSync(join(d, 'node'), 0o755);
    script(join(d, 'mynode'), '#!/usr/bin/env node\nconsole.log(process.version);\n');
  }
  // An interpreter of its own under HOME, named by its absolute path in the agent CLI's #! line.
  copyFileSync(realpathSync('/bin/sh'), join(runtime, 'sh'));
  chmodSync(join(runtime, 'sh'), 0o755);
  script(join(bin, 'claude'), `#!${join(runtime, 'sh')}\necho "2.1.12 (Claude Code)"\n`);
  script(join(bin, 'plain-claude'), '#!/bin/sh\necho "2.1.12 (Claude Code)"\n');
});
afterEach(() => {
  process.env.HOME = savedHome;
});
afterAll(() => tmp.cleanup());

let n = 0;
function configFile(config: unknown): string {
  const p = join(tmp.path, `school-${++n}.yml`);
  writeFileSync(p, stringify(config));
  return p;
}

/** The doctor as the runner user whose HOME holds the toolchain (os.homedir() reads $HOME). */
async function doctor(config: Record<string, unknown>, path: string, env: Record<string, string> = {}) {
  process.env.HOME = home;
  const r = await runDoctor({
    configPath: configFile({ dispatch: { minFreeDiskGiB: 0 }, sandbox: { network: 'none' }, ...config }),
    cwd: tmp.path,
    env: { PATH: path, HOME: home, ...env },
  });
  return { r, f: Object.fromEntries(r.findings.map((x) => [x.check, x])) };
}

const agents = [{ id: 'mine', command: ['sh'] }];

describe.skipIf(!!noSandbox)('school doctor: what the crews run, inside the sandbox', () => {
  it('a node in HOME first on PATH: not ready, naming the PATH entry; with sandbox.readOnly it is ready', async () => {
    const path = `${nodeBin}:/usr/local/bin:/usr/bin:/bin`;
    const bad = await doctor(
      { agents, dispatch: { minFreeDiskGiB: 0, verify: ['mynode', '--version'] } },
      path,
    );
    const v = bad.f['inside:dispatch.verify']!;
    expect(v.status).toBe('blocker');
    expect(v.detail).toContain(`its interpreter \`node\` (its #! line) is`);
    expect(v.detail).toContain(`${join(nodeBin, 'node')} outside`);
    expect(v.fix).toContain(`sandbox.readOnly: [${nodeBin}]`);
    expect(v.fix).toContain(`under ${home}`);
    expect(verdict(bad.r)).toMatch(/^Not ready/);

    const good = await doctor(
      {
        agents,
        dispatch: { minFreeDiskGiB: 0, verify: ['mynode', '--version'] },
        sandbox: { network: 'none', readOnly: [nodeBin] },
      },
      path,
    );
    expect(good.f['inside:dispatch.verify']).toMatchObject({ status: 'ok' });
    expect(good.f['inside:dispatch.verify']!.detail).toContain(`its interpreter ${join(nodeBin, 'node')}`);
    expect(good.r.blockers).toBe(0);
    expect(verdict(good.r)).toBe('Ready.');
  });

  it('one finding for the programs verify, install and sealed tests share; a missing one is a blocker', async () => {
    const path = `${nodeBin}:/usr/local/bin:/usr/bin:/bin`;
    const { f } = await doctor(
      {
        agents,
        dispatch: { minFreeDiskGiB: 0, verify: ['mynode'], install: { command: ['mynode', 'x'] } },
        grading: { sealedTests: ['no-such-runner', '{sealed}'] },
        sandbox: { network: 'none', readOnly: [nodeBin] },
      },
      path,
    );
    expect(f['inside:dispatch.verify']!.detail).toMatch(/^dispatch\.verify, dispatch\.install: /);
    expect(f['inside:dispatch.install']).toBeUndefined();
    expect(f['inside:grading.sealedTests']).toMatchObject({
      status: 'blocker',
      detail: 'grading.sealedTests: `no-such-runner` is not on PATH of this machine',
    });
  });

  it("an nvm node: the doctor says what the sandbox shows of nvm's version directory", async () => {
    const path = `${nvmBin}:/usr/local/bin:/usr/bin:/bin`;
    const { f } = await doctor({ agents, dispatch: { minFreeDiskGiB: 0, verify: ['mynode'] } }, path);
    // The sandbox shows a version manager's version directory (src/sandbox/toolchains.ts): the
    // same node inside as outside, found by asking the sandbox, not by a rule of the doctor's.
    expect(f['inside:dispatch.verify']).toMatchObject({ status: 'ok' });
  });

  it('an agent CLI whose interpreter is hidden inside: a blocker naming it, agents[].bin or readOnly as the fix', async () => {
    const path = `${bin}:/usr/local/bin:/usr/bin:/bin`;
    const { f, r } = await doctor({ agents: [{ id: 'claude', kind: 'claude-code' }] }, path);
    // Outside the CLI answers: the old checks see nothing wrong.
    expect(f['agent:claude']).toMatchObject({ status: 'ok' });
    const inside = f['inside:agent:claude']!;
    expect(inside.status).toBe('blocker');
    expect(inside.detail).toContain(
      `its interpreter \`${join(runtime, 'sh')}\` (its #! line) is not found inside`,
    );
    expect(inside.detail).toMatch(
      /`claude --version` says "(exit|could not start)[^"]*" inside, "2\.1\.12 \(Claude Code\)" outside/,
    );
    expect(inside.fix).toContain(`sandbox.readOnly: [${runtime}]`);
    expect(inside.fix).toContain('agents[].bin');
    expect(verdict(r)).toMatch(/^Not ready/);

    const fine = await doctor({ agents: [{ id: 'claude', kind: 'claude-code', bin: 'plain-claude' }] }, path);
    expect(fine.f['inside:agent:claude'], fine.f['inside:agent:claude']?.detail).toMatchObject({
      status: 'ok',
    });
  });

  it('a passEnv value that is a host path must be visible inside', async () => {
    const key = join(home, 'keys', 'service-account.json');
    mkdirSync(join(home, 'keys'), { recursive: true });
    writeFileSync(key, '{}');
    const path = `${bin}:/usr/local/bin:/usr/bin:/bin`;
    const config = (readOnly: string[]) => ({
      agents: [
        {
          id: 'claude',
          kind: 'claude-code',
          bin: 'plain-claude',
          passEnv: ['GOOGLE_APPLICATION_CREDENTIALS', 'MODEL'],
        },
      ],
      sandbox: { network: 'none', readOnly },
    });
    const env = { GOOGLE_APPLICATION_CREDENTIALS: key, MODEL: 'not-a-path' };
    const hidden = await doctor(config([]), path, env);
    expect(hidden.f['inside:passEnv:GOOGLE_APPLICATION_CREDENTIALS']).toMatchObject({
      status: 'blocker',
      // Under HOME: the file copied into the crew's private HOME, or the path shown read-only.
      fix: expect.stringMatching(
        /list the files the CLI needs in agents\[claude\]\.homeFiles \(e\.g\. \[keys\/service-account\.json\]\)/,
      ),
    });
    expect(hidden.f['inside:passEnv:GOOGLE_APPLICATION_CREDENTIALS']!.fix).toContain(
      `add ${key} to sandbox.readOnly`,
    );
    expect(verdict(hidden.r)).toMatch(/^Not ready/);
    expect(hidden.f['inside:passEnv:MODEL']).toBeUndefined();
    const shown = await doctor(config([join(home, 'keys')]), path, env);
    expect(shown.f['inside:passEnv:GOOGLE_APPLICATION_CREDENTIALS']).toMatchObject({ status: 'ok' });
  });

  it("nvm's `current` link first on PATH: the same node inside, Ready", async () => {
    const current = join(home, '.nvm', 'current');
    if (!existsSync(current)) symlinkSync(join('versions', 'node', 'v20.0.0'), current);
    const path = `${join(current, 'bin')}:/usr/local/bin:/usr/bin:/bin`;
    const { f, r } = await doctor({ agents, dispatch: { minFreeDiskGiB: 0, verify: ['mynode'] } }, path);
    expect(f['inside:dispatch.verify'], f['inside:dispatch.verify']?.detail).toMatchObject({ status: 'ok' });
    expect(f['visibility:PATH']).toBeUndefined();
    expect(r.blockers).toBe(0);
    expect(verdict(r)).toBe('Ready.');
  });

  it("a version manager's shims first on PATH: Ready when the version is chosen where the sandbox looks; else the fix names where to choose it", async () => {
    // pyenv as `pyenv rehash` writes its shims: PYENV_ROOT in the shim, `libexec/pyenv exec` picks
    // the version from PYENV_VERSION, a .python-version up the tree, or <root>/version.
    const root = join(home, '.pyenv');
    const shims = join(root, 'shims');
    for (const v of ['3.11.9', '3.12.4']) {
      mkdirSync(join(root, 'versions', v, 'bin'), { recursive: true });
      script(join(root, 'versions', v, 'bin', 'mytool'), `#!/bin/sh\necho "mytool ${v}"\n`);
    }
    mkdirSync(join(root, 'libexec'), { recursive: true });
    mkdirSync(shims, { recursive: true });
    script(
      join(root, 'libexec', 'pyenv'),
      '#!/bin/sh\nprogram="$2"; shift 2\nv="${PYENV_VERSION:-$(cat "$PYENV_ROOT/version")}"\nexec "$PYENV_ROOT/versions/$v/bin/$program" "$@"\n',
    );
    script(
      join(shims, 'mytool'),
      `#!/bin/sh\nprogram="\${0##*/}"\nexport PYENV_ROOT="${root}"\nexec "${root}/libexec/pyenv" exec "$program" "$@"\n`,
    );
    writeFileSync(join(root, 'version'), '3.12.4\n');
    const path = `${shims}:/usr/local/bin:/usr/bin:/bin`;
    const config = { agents, dispatch: { minFreeDiskGiB: 0, verify: ['mytool'] } };
    const good = await doctor(config, path);
    expect(good.f['inside:dispatch.verify'], good.f['inside:dispatch.verify']?.detail).toMatchObject({
      status: 'ok',
    });
    expect(good.f['visibility:PATH']).toBeUndefined();
    // mise: shims link to the mise binary; a version chosen only in ~/.config/mise (never shown:
    // its [env] may hold secrets) is not found inside.
    const data = join(home, '.local', 'share', 'mise');
    mkdirSync(join(data, 'installs', 'mytool', '2.0.0', 'bin'), { recursive: true });
    script(join(data, 'installs', 'mytool', '2.0.0', 'bin', 'mytool'), '#!/bin/sh\necho "mytool 2.0.0"\n');
    mkdirSync(join(home, '.local', 'bin'), { recursive: true });
    script(
      join(home, '.local', 'bin', 'mise'),
      [
        '#!/bin/sh',
        'tool="${0##*/}"',
        'pick() { sed -n "s/^$tool *= *\\"\\{0,1\\}\\([^\\" ]*\\).*/\\1/p;s/^$tool \\(.*\\)/\\1/p" "$1" 2>/dev/null | head -n 1; }',
        'v=$(pick "$HOME/.tool-versions")',
        '[ -n "$v" ] || v=$(pick "$HOME/.config/mise/config.toml")',
        '[ -n "$v" ] || { echo "mise ERROR No version is set for shim: $tool" >&2; exit 1; }',
        'exec "${MISE_DATA_DIR:-$HOME/.local/share/mise}/installs/$tool/$v/bin/$tool" "$@"',
        '',
      ].join('\n'),
    );
    mkdirSync(join(data, 'shims'), { recursive: true });
    symlinkSync(join(home, '.local', 'bin', 'mise'), join(data, 'shims', 'mytool'));
    mkdirSync(join(home, '.config', 'mise'), { recursive: true });
    writeFileSync(join(home, '.config', 'mise', 'config.toml'), '[tools]\nmytool = "2.0.0"\n');
    const misePath = `${join(data, 'shims')}:/usr/local/bin:/usr/bin:/bin`;
    const bad = await doctor(config, misePath);
    const v = bad.f['inside:dispatch.verify']!;
    expect(v.status).toBe('blocker');
    expect(v.detail).toContain('"mytool 2.0.0" outside');
    expect(v.fix).toContain(`${join(data, 'shims')} (mise's shims) chose another version inside`);
    expect(v.fix).toContain('.tool-versions');
    expect(v.fix).not.toContain('sandbox.readOnly');
    expect(verdict(bad.r)).toMatch(/^Not ready/);
    // The fix as said: the version in a file the sandbox shows (the global ~/.tool-versions).
    writeFileSync(join(home, '.tool-versions'), 'mytool 2.0.0\n');
    const fixed = await doctor(config, misePath);
    expect(fixed.f['inside:dispatch.verify'], fixed.f['inside:dispatch.verify']?.detail).toMatchObject({
      status: 'ok',
    });
  });
});

describe('the interpreter a program names', () => {
  it('reads the interpreter of a #! line', () => {
    const f = join(tmp.path, 'shebang');
    const cases: Array<[string, string | undefined]> = [
      ['#!/usr/bin/env node\n', 'node'],
      ['#!/usr/bin/env -S node --no-warnings\n', 'node'],
      ['#!/usr/bin/env FOO=1 python3\n', 'python3'],
      ['#! /opt/py/bin/python3 -u\n', '/opt/py/bin/python3'],
      ['\x7fELF', undefined],
    ];
    for (const [text, want] of cases) {
      writeFileSync(f, text);
      expect(interpreterOf(f), text).toBe(want);
    }
  });
});
