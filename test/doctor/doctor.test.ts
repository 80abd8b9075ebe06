import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { TESTED_VERSIONS } from '../../src/agents/tested-versions.js';
import { checkRunnerOwner, compareVersions, versionIn } from '../../src/doctor/checks.js';
import { runDoctor } from '../../src/doctor/doctor.js';
import { doctorSummary } from '../../src/doctor/finding.js';
import { tempDir } from '../support/tmp.js';

/**
 * `school doctor` on a runner machine: real programs on PATH (agent CLIs and an Orca that answer
 * as the real ones do), the real bwrap self-test, the real egress proxy against local servers, real
 * file owners.
 */

const tmp = tempDir('school-doctor-');
const bin = join(tmp.path, 'bin');
const PATH = `${bin}:/usr/local/bin:/usr/bin:/bin`;
let open: Server; // a host on the allow-list that answers
let openPort = 0;
let closedPort = 0; // a port nothing listens on

function tool(name: string, script: string) {
  writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`);
  chmodSync(join(bin, name), 0o755);
}

beforeAll(async () => {
  mkdirSync(bin);
  tool('claude', 'echo "2.1.12 (Claude Code)"');
  tool('codex', 'echo "codex-cli 0.160.0"');
  // Orca as `orca status --json` prints it: its JSON envelope (exit 0 even when the runtime is
  // down); the profile argument says which runtime answers.
  tool(
    'orca',
    'if [ "$2" = up ]; then echo \'{"id":"1","ok":true,"result":{"runtime":{"reachable":true,"state":"ready","runtimeId":"rt-1"},"graph":{"state":"ready"}},"_meta":{"runtimeId":"rt-1"}}\'; else echo \'{"id":"1","ok":true,"result":{"runtime":{"reachable":false,"state":"not_running"}}}\'; fi',
  );
  open = createServer((s) => s.end());
  await new Promise<void>((r) => open.listen(0, '127.0.0.1', r));
  openPort = (open.address() as { port: number }).port;
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
});
afterAll(async () => {
  await new Promise<void>((r) => open.close(() => r()));
  tmp.cleanup();
});

let n = 0;
function configFile(config: unknown): string {
  const p = join(tmp.path, `school-${++n}.yml`);
  writeFileSync(p, typeof config === 'string' ? config : stringify(config));
  return p;
}

const base = {
  agents: [
    { id: 'claude', kind: 'claude-code', passEnv: ['ANTHROPIC_API_KEY'] },
    { id: 'codex', kind: 'codex', passEnv: ['OPENAI_API_KEY'] },
  ],
  dispatch: { minFreeDiskGiB: 0.001 },
  sandbox: { network: 'none' },
};

const byCheck = (r: Awaited<ReturnType<typeof runDoctor>>) =>
  Object.fromEntries(r.findings.map((f) => [f.check, f]));

describe('school doctor', () => {
  it('a ready machine: versions, agents against their tested releases, the sandbox, the disk', async () => {
    const r = await runDoctor({ configPath: configFile(base), cwd: tmp.path, env: { PATH } });
    const f = byCheck(r);
    expect(f.node).toMatchObject({ status: 'ok', detail: `Node.js ${process.versions.node}` });
    expect(f.git!.status).toBe('ok');
    expect(f['agent:claude']).toMatchObject({ status: 'ok', detail: 'claude 2.1.12 (tested: 2.1)' });
    // codex 0.160 is older than the 0.171 the adapters know: a warning that says how to upgrade.
    expect(f['agent:codex']).toMatchObject({
      status: 'warning',
      fix: `upgrade: ${TESTED_VERSIONS.codex.install}`,
    });
    expect(f['agent:codex']!.detail).toMatch(/codex 0\.160\.0, older than the 0\.171/);
    expect(f.sandbox).toMatchObject({ status: 'ok' });
    expect(f.disk!.status).toBe('ok');
    expect(r).toMatchObject({ blockers: 0, warnings: 1 });
    for (const x of r.findings.filter((x) => x.status === 'warning' || x.status === 'blocker'))
      expect(x.fix, x.check).toBeTruthy();
  });

  it('blockers: an agent CLI missing, Node too old, the disk under the floor, no bwrap', async () => {
    const r = await runDoctor({
      configPath: configFile({
        ...base,
        agents: [
          { id: 'c2', kind: 'claude-code', bin: 'claude-not-here' },
          { id: 'mine', command: ['my-agent'] },
        ],
        dispatch: { minFreeDiskGiB: 1e9 },
        sandbox: { network: 'none', bwrap: 'bwrap-not-here' },
      }),
      cwd: tmp.path,
      env: { PATH },
      nodeVersion: '18.19.0',
    });
    const f = byCheck(r);
    expect(f['agent:c2']).toMatchObject({
      status: 'blocker',
      fix: expect.stringContaining('npm install -g @anthropic-ai/claude-code@2.1'),
    });
    expect(f['agent:mine']).toMatchObject({ status: 'blocker', detail: 'command my-agent is not on PATH' });
    expect(f.node).toMatchObject({
      status: 'blocker',
      detail: 'Node.js 18.19.0; school-core needs 20 or newer',
    });
    expect(f.disk!.detail).toMatch(/under the floor of 1000000000 GiB \(dispatch\.minFreeDiskGiB\)/);
    expect(f.sandbox!.detail).toMatch(/bwrap-not-here.*not found on PATH/);
    expect(r.blockers).toBe(5);
  });

  it("Orca: the classroom's probe per orca daemon (status --json read as Orca's envelope); --daemon checks only its own", async () => {
    const config = configFile({
      ...base,
      fleet: {
        daemons: [
          { id: 'up', classroom: 'orca', orca: { binary: join(bin, 'orca'), args: ['--profile', 'up'] } },
          { id: 'down', classroom: 'orca', orca: { binary: join(bin, 'orca'), args: ['--profile', 'down'] } },
          { id: 'gone', classroom: 'orca', orca: { binary: 'orca-not-installed' } },
        ],
      },
    });
    const f = byCheck(await runDoctor({ configPath: config, cwd: tmp.path, env: { PATH } }));
    expect(f['orca:up']).toMatchObject({ status: 'ok' });
    expect(f['orca:down']).toMatchObject({
      status: 'blocker',
      detail: expect.stringContaining('Orca is not running on daemon down (runtime not_running)'),
    });
    expect(f['orca:gone']).toMatchObject({
      status: 'blocker',
      fix: expect.stringContaining('install the Orca CLI'),
    });
    const only = await runDoctor({ configPath: config, cwd: tmp.path, env: { PATH }, daemon: 'up' });
    expect(only.findings.filter((x) => x.check.startsWith('orca:')).map((x) => x.check)).toEqual(['orca:up']);
    expect(only.blockers).toBe(0);
  });

  it('each allow-listed host through the sandbox proxy: reachable is ok, unreachable a warning, never a blocker', async () => {
    const r = await runDoctor({
      configPath: configFile({
        agents: [{ id: 'mine', command: ['sh'] }],
        dispatch: { minFreeDiskGiB: 0 },
        sandbox: { allow: [`127.0.0.1:${openPort}`, `127.0.0.1:${closedPort}`, '*.npmjs.org:443'] },
      }),
      cwd: tmp.path,
      env: { PATH },
      connectTimeoutMs: 10_000,
    });
    const f = byCheck(r);
    expect(f[`network:127.0.0.1:${openPort}`]).toMatchObject({ status: 'ok' });
    expect(f[`network:127.0.0.1:${closedPort}`]).toMatchObject({
      status: 'warning',
      detail: expect.stringContaining('connection refused'),
    });
    expect(f['network:*.npmjs.org:443']!.status).toBe('skipped');
    expect(r.blockers).toBe(0);
  });

  it("an agent's API host is on the list it checks (offline or not, only a warning)", async () => {
    const r = await runDoctor({
      configPath: configFile({ ...base, sandbox: {} }),
      cwd: tmp.path,
      env: { PATH },
      connectTimeoutMs: 2000,
    });
    const f = byCheck(r);
    for (const host of ['api.anthropic.com:443', 'api.openai.com:443'])
      expect(['ok', 'warning']).toContain(f[`network:${host}`]?.status);
  });

  it('the runner install owned by the job user is a warning; owned by another user it is fine', () => {
    const mine = join(tmp.path, 'runner-mine');
    const theirs = join(tmp.path, 'runner-theirs');
    for (const d of [mine, theirs]) mkdirSync(join(d, 'bin'), { recursive: true });
    const uid = process.getuid!();
    if (uid === 0) {
      chownSync(theirs, 4242, 4242);
      chownSync(join(theirs, 'bin'), 4242, 4242);
    }
    const other = uid === 0 ? 0 : uid + 1; // the job user in the second case
    expect(checkRunnerOwner([mine], uid)).toMatchObject({
      status: 'warning',
      fix: expect.stringContaining('chown'),
    });
    expect(checkRunnerOwner([uid === 0 ? theirs : mine], other).status).toBe('ok');
    expect(checkRunnerOwner([], uid).status).toBe('skipped');
  });

  it('an unreadable school.yml is one blocker that names the field; bad YAML says so', async () => {
    const r = await runDoctor({
      configPath: configFile({ dispatch: { minFreeDiskGiB: 'lots' } }),
      env: { PATH },
    });
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({ check: 'config', status: 'blocker' });
    expect(r.findings[0]!.detail).toMatch(/dispatch\.minFreeDiskGiB: .*found "lots"/);
    const yaml = await runDoctor({ configPath: configFile('agents: [\n'), env: { PATH } });
    expect(yaml.findings[0]!.detail).toMatch(/is not valid YAML/);
    const daemon = await runDoctor({ configPath: configFile(base), env: { PATH }, daemon: 'nope' });
    expect(daemon.findings[0]!.detail).toMatch(
      /--daemon nope: no daemon with that id in fleet\.daemons \(local\)/,
    );
  });

  it('reads versions as the CLIs print them', () => {
    expect(versionIn('2.1.12 (Claude Code)')).toBe('2.1.12');
    expect(versionIn('codex-cli 0.171.0')).toBe('0.171.0');
    expect(versionIn('git version 2.39.5')).toBe('2.39.5');
    expect(compareVersions('2.1.12', '2.1')).toBe(0);
    expect(compareVersions('2.0.9', '2.1')).toBe(-1);
    expect(compareVersions('0.200.0', '0.171')).toBe(1);
    expect(compareVersions('2.25.0', '2.25')).toBe(0);
  });
});

describe('school doctor (the command)', () => {
  const TSX = pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href;
  // The runner user's HOME beside the programs' directory, as on a machine whose CLIs are installed
  // system-wide: a PATH entry under HOME is private inside the sandbox and is a warning of its own.
  const home = join(tmp.path, 'home');
  beforeAll(() => mkdirSync(home));
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', TSX, resolve('src/cli/index.ts'), 'doctor', ...args], {
      cwd: tmp.path,
      encoding: 'utf8',
      env: { PATH, HOME: home },
    });

  it('exit 0 with warnings, 1 on a blocker; --json; --summary appends a table for the job summary', () => {
    const summary = join(tmp.path, 'summary.md');
    writeFileSync(summary, '');
    const ok = run('--config', configFile(base), '--json', '--summary', summary);
    expect(ok.status, ok.stderr).toBe(0);
    const r = JSON.parse(ok.stdout) as {
      blockers: number;
      warnings: number;
      findings: { check: string; status: string }[];
    };
    expect(r).toMatchObject({ blockers: 0, warnings: 1 });
    expect(r.findings.filter((f) => f.status === 'warning').map((f) => f.check)).toEqual(['agent:codex']);
    const md = readFileSync(summary, 'utf8');
    expect(md).toContain('| Status | Check | Found | What to do |');
    expect(md).toMatch(/\| warning \| `agent:codex` \|/);
    expect(md).toContain('**Ready, with 1 warning(s).**');

    const bad = run('--config', configFile({ ...base, dispatch: { minFreeDiskGiB: 1e9 } }));
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/BLOCKER\s+disk/);
    expect(bad.stdout).toMatch(/Not ready: 1 blocker\(s\)/);
    const unreadable = run('--config', join(tmp.path, 'missing.yml'));
    expect(unreadable.status).toBe(1);
    expect(unreadable.stdout).toMatch(/missing\.yml does not exist/);
  });

  it('the summary escapes what a finding quotes', () => {
    const md = doctorSummary({
      findings: [{ check: 'agent:x', status: 'blocker', detail: 'said <b>|x', fix: 'do it' }],
      blockers: 1,
      warnings: 0,
    });
    expect(md).toContain('said &lt;b&gt;\\|x');
  });
});
