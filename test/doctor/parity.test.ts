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

  it("a version manager's shims first on PATH: not ready, the fix is the version directory, not the shims", async () => {
    // A pyenv-like shim: it finds the real program through the manager's state in HOME.
    const shims = join(home, '.pyenv', 'shims');
    const version = join(home, '.pyenv', 'versions', '3.12.0', 'bin');
    mkdirSync(shims, { recursive: true });
    mkdirSync(version, { recursive: true });
    script(join(version, 'mytool'), '#!/bin/sh\necho "mytool 3.12.0"\n');
    script(join(shims, 'mytool'), '#!/bin/sh\nexec "$HOME/.pyenv/versions/3.12.0/bin/mytool" "$@"\n');
    const path = `${shims}:/usr/local/bin:/usr/bin:/bin`;
    const bad = await doctor({ agents, dispatch: { minFreeDiskGiB: 0, verify: ['mytool'] } }, path);
    const v = bad.f['inside:dispatch.verify']!;
    expect(v.status).toBe('blocker');
    expect(v.fix).toContain(`${shims} (a version manager's shims) cannot work inside`);
    expect(v.fix).toContain('$(pyenv prefix)/bin');
    expect(v.fix).not.toContain('sandbox.readOnly');
    expect(bad.f['visibility:PATH']).toMatchObject({ status: 'warning' });
    expect(verdict(bad.r)).toMatch(/^Not ready/);
    // The fix as said: the version directory on PATH.
    const good = await doctor(
      { agents, dispatch: { minFreeDiskGiB: 0, verify: ['mytool'] } },
      `${version}:${path}`,
    );
    expect(good.f['inside:dispatch.verify']).toMatchObject({ status: 'ok' });
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
