import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { configVisibilityProblems } from '../../src/config/sandbox-policy.js';
import { tempDir } from '../support/tmp.js';

/**
 * A `passEnv` whose value is a host path the sandbox does not show (CODEX_HOME, CLAUDE_CONFIG_DIR
 * under the runner user's HOME) would reach the CLI as a path to nothing: `config check` refuses
 * it with the fix, and the same problems feed `school doctor`.
 */
const tmp = tempDir('school-visibility-');
afterAll(() => tmp.cleanup());
const home = join(tmp.path, 'home');
const nvmBin = join(home, '.nvm', 'versions', 'node', 'v20.x', 'bin');
for (const d of [join(home, '.codex'), nvmBin, join(home, '.local', 'bin'), join(home, 'opt-creds')])
  mkdirSync(d, { recursive: true });
writeFileSync(join(home, '.codex', 'auth.json'), '{}\n');

const config = (extra: Record<string, unknown> = {}) =>
  parseConfig({
    agents: [{ id: 'codex', kind: 'codex', passEnv: ['CODEX_HOME', 'OPENAI_API_KEY'], ...extra }],
  });
const env = (more: Record<string, string> = {}) => ({
  HOME: home,
  PATH: `${nvmBin}:/usr/bin:/bin`,
  OPENAI_API_KEY: 'sk-not-a-path',
  ...more,
});

describe('configVisibilityProblems', () => {
  it('a passEnv path under HOME is an error whose fix is agents[].homeFiles or sandbox.readOnly', () => {
    const problems = configVisibilityProblems(config(), env({ CODEX_HOME: join(home, '.codex') }));
    expect(problems).toEqual([
      expect.objectContaining({
        severity: 'error',
        field: 'agents[codex].passEnv',
        detail: expect.stringContaining(`CODEX_HOME=${join(home, '.codex')}`),
        fix: expect.stringMatching(
          /agents\[codex\]\.homeFiles \(e\.g\. \[\.codex\/auth\.json\]\).*sandbox\.readOnly/,
        ),
      }),
    ]);
  });

  it('the same path declared in sandbox.readOnly, a system path, or an unset variable is no problem', () => {
    const shown = parseConfig({
      agents: [{ id: 'codex', kind: 'codex', passEnv: ['CODEX_HOME'] }],
      sandbox: { readOnly: [join(home, '.codex')] },
    });
    expect(configVisibilityProblems(shown, env({ CODEX_HOME: join(home, '.codex') }))).toEqual([]);
    expect(configVisibilityProblems(config(), env({ CODEX_HOME: '/usr/share' }))).toEqual([]);
    expect(configVisibilityProblems(config(), env())).toEqual([]);
  });

  it('a path outside HOME that is not shown (a private /tmp, /opt) says sandbox.readOnly; the reviewer too', () => {
    const c = parseConfig({
      agents: [{ id: 'claude', kind: 'claude-code', passEnv: ['CLAUDE_CONFIG_DIR'] }],
      grading: { reviewer: { kind: 'claude-code', passEnv: ['CLAUDE_CONFIG_DIR'] } },
    });
    const problems = configVisibilityProblems(c, env({ CLAUDE_CONFIG_DIR: '/tmp/claude-config' }));
    expect(problems.map((p) => [p.severity, p.field, p.fix])).toEqual([
      ['error', 'agents[claude].passEnv', 'add /tmp/claude-config to sandbox.readOnly to show it read-only'],
      [
        'error',
        'grading.reviewer.passEnv',
        'add /tmp/claude-config to sandbox.readOnly to show it read-only',
      ],
    ]);
  });

  it('with sandbox.kind none nothing is hidden', () => {
    const c = parseConfig({
      agents: [{ id: 'codex', kind: 'codex', passEnv: ['CODEX_HOME'] }],
      sandbox: { kind: 'none' },
    });
    expect(configVisibilityProblems(c, env({ CODEX_HOME: join(home, '.codex') }))).toEqual([]);
  });

  it('PATH entries left out (~/.local/bin) and a missing homeFiles entry are warnings; an nvm version is shown', () => {
    const c = config({ homeFiles: ['.codex/auth.json', '.claude/.credentials.json'] });
    const problems = configVisibilityProblems(
      c,
      env({ PATH: `${nvmBin}:${join(home, '.local', 'bin')}:/usr/bin` }),
    );
    expect(problems.map((p) => [p.severity, p.field])).toEqual([
      ['warning', 'agents[codex].homeFiles'],
      ['warning', 'PATH'],
    ]);
    expect(problems[0]!.detail).toContain('.claude/.credentials.json');
    expect(problems[1]!.detail).toContain('.local/bin (~/.local/bin');
  });

  it("nvm's `current` link on PATH is shown through its link: no warning", () => {
    const current = join(home, '.nvm', 'current');
    symlinkSync(join('versions', 'node', 'v20.x'), current);
    expect(configVisibilityProblems(config(), env({ PATH: `${join(current, 'bin')}:/usr/bin` }))).toEqual([]);
  });

  it('homeFiles must stay inside HOME', () => {
    expect(() => config({ homeFiles: ['../.ssh/id_ed25519'] })).toThrow(
      /homeFiles\.0: a path relative to HOME/,
    );
    expect(() => config({ homeFiles: ['/root/.codex/auth.json'] })).toThrow(/homeFiles\.0/);
  });
});

describe('school config check', () => {
  const CLI = resolve('src/cli/index.ts');
  const TSX = pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href;
  const check = (yml: string, more: Record<string, string>) => {
    const dir = join(tmp.path, `check-${Math.random().toString(36).slice(2)}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'school.yml'), yml);
    const r = spawnSync(process.execPath, ['--import', TSX, CLI, 'config', 'check'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...env(), ...more, NODE_PATH: '' },
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const yml = 'agents:\n  - { id: codex, kind: codex, passEnv: [CODEX_HOME] }\n';

  it('refuses a passEnv naming a host path the sandbox hides, with the fix', () => {
    const r = check(yml, { CODEX_HOME: join(home, '.codex') });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/agents\[codex\]\.passEnv: CODEX_HOME=.*does not show/);
    expect(r.err).toMatch(/fix: .*homeFiles/);
    expect(r.out).not.toMatch(/valid/);
  });

  it('accepts it once the path is in sandbox.readOnly', () => {
    const r = check(`${yml}sandbox:\n  readOnly: [${join(home, '.codex')}]\n`, {
      CODEX_HOME: join(home, '.codex'),
    });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/school\.yml: valid/);
  });
});
