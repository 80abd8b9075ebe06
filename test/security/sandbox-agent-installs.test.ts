import { testHost } from '../support/host.js';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCrew } from '../../src/crew/run/crew.js';
import { silentLogger } from '../../src/log.js';
import { childEnv } from '../../src/process/env.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { sandboxSchema } from '../../src/config/schema.js';
import { item, makeSchool, plan, spec, writeCurriculum } from '../crew/helpers.js';
import { openaiServer, type OpenAIServer } from '../support/model-servers/openai.js';
import { git } from '../support/tmp.js';
import { nodeTree, npmInstallOffline } from '../support/toolchains.js';
import {
  CLAUDE,
  CODEX,
  CODEX_ENV,
  claudeBin,
  codexAgent,
  realSchool,
  type RealSchool,
} from '../agents/real/support.js';
import { findings, noSandbox, runCrews, setEnv } from './helpers.js';
// @ts-expect-error -- a plain ESM script of the project, without types
import { binaryPath } from '../../scripts/install-agents.mjs';
import { policyFrom } from '../../src/config/sandbox-policy.js';

/**
 * Claude Code and Codex installed the ways npm installs them, built for real in a HOME of the test's:
 * globally under an nvm version (`~/.nvm/versions/node/<v>/bin/codex` → `../lib/node_modules/…`,
 * dependencies nested), with `npm install --prefix` (`node_modules/.bin/codex`, Codex's platform
 * package a sibling of `@openai/codex`), and the project's own agent cache. Each starts inside the
 * sandbox, and a whole crew runs Codex from the `--prefix` install while seeing nothing else of HOME.
 */
const SPECS = [`${CODEX.pkg}@${CODEX.version}`, `${CLAUDE.pkg}@${CLAUDE.version}`];

let base = '';
let home = '';
let nvmBin = '';
let tools = '';
let skip: string | undefined = noSandbox && `the sandbox cannot run here: ${noSandbox}`;

beforeAll(() => {
  if (skip) return;
  base = mkdtempSync(join(process.env.SCHOOL_REAL_AGENT_TMP ?? tmpdir(), 'school-installs-'));
  home = join(base, 'home');
  const prefix = join(home, '.nvm', 'versions', 'node', 'v20.x');
  nvmBin = nodeTree(prefix);
  tools = join(home, 'tools');
  skip =
    npmInstallOffline(prefix, SPECS, true) ??
    npmInstallOffline(tools, SPECS, false) ??
    (existsSync(join(tools, 'node_modules', '.bin', 'codex')) ? undefined : 'npm made no codex link');
  if (skip) skip += ' (run `node scripts/install-agents.mjs` once, online, to fill the npm cache)';
  writeFileSync(join(home, 'secret.txt'), 'the host user secret\n');
}, 300_000);
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

const restores: Array<() => void> = [];
afterEach(() => {
  while (restores.length) restores.pop()!();
});

/** `bin --version` run inside a fresh sandbox, under `host` as HOME and `path` as PATH. */
async function versionInside(bin: string, path: string, host: string): Promise<string> {
  restores.push(setEnv({ HOME: host, PATH: path }));
  const root = mkdtempSync(join(tmpdir(), 'school-sbx-'));
  const sandbox = new Sandbox({
    policy: policyFrom(sandboxSchema.parse({})),
    root: join(root, 'sandbox'),
    host: testHost(),
  });
  try {
    const cwd = join(root, 'cwd');
    mkdirSync(cwd);
    const env = childEnv({ from: { PATH: path, HOME: host } });
    const c = await sandbox.confine([bin, '--version'], env, {
      cwd,
      writable: [cwd],
      home: sandbox.freshHome('probe'),
      allow: [],
    });
    const r = spawnSync(c.argv[0]!, c.argv.slice(1), { encoding: 'utf8', env: c.env, timeout: 60_000 });
    return `${r.stdout}${r.stderr}`;
  } finally {
    await sandbox.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const SYSTEM_PATH = '/usr/bin:/bin';
const VERSION = {
  codex: new RegExp(`codex-cli ${CODEX.version}`),
  claude: new RegExp(`${CLAUDE.version} \\(Claude Code\\)`),
};

describe('agent CLIs installed by npm, `--version` inside the sandbox', () => {
  for (const cli of ['codex', 'claude'] as const) {
    it(`${cli}: installed globally under an nvm version in HOME, found on PATH`, async (t) => {
      if (skip) return t.skip(skip);
      const out = await versionInside(cli, `${nvmBin}:${SYSTEM_PATH}`, home);
      expect(out).toMatch(VERSION[cli]);
    }, 120_000);

    it(`${cli}: installed with npm install --prefix in HOME, bin is the node_modules/.bin link`, async (t) => {
      if (skip) return t.skip(skip);
      const out = await versionInside(join(tools, 'node_modules', '.bin', cli), SYSTEM_PATH, home);
      expect(out).toMatch(VERSION[cli]);
    }, 120_000);

    it(`${cli}: the project's own agent cache (scripts/install-agents.mjs), bin is the package's own file`, async (t) => {
      const bin = String(binaryPath(cli === 'codex' ? CODEX : CLAUDE));
      if (noSandbox) return t.skip(noSandbox);
      if (!existsSync(bin) || (cli === 'claude' && !claudeBin()))
        return t.skip(`${bin} not installed: run \`node scripts/install-agents.mjs\``);
      const out = await versionInside(bin, SYSTEM_PATH, process.env.HOME ?? dirname(bin));
      expect(out).toMatch(VERSION[cli]);
    }, 120_000);
  }
});

describe('a whole crew with Codex from npm install --prefix in HOME', () => {
  let school: RealSchool | undefined;
  let server: OpenAIServer | undefined;
  afterEach(async () => {
    await server?.close();
    school?.cleanup();
    school = server = undefined;
  });

  it("edits, and its `npm test` runs nvm's npm and node, with nothing else of HOME in view", async (t) => {
    if (skip) return t.skip(skip);
    // Codex asks for its own default model, which no price names: the server answers as
    // gpt-5-codex, a priced model, so the key proxy meters it without the model-unpriced alert
    // (that alert has its own test in test/sandbox/key-proxy-meter.test.ts); no alert is expected here.
    server = await openaiServer(
      [
        {
          actions: [{ write: { path: 'src/value.txt', content: 'solved #7\n' } }],
          usage: { input: 10, output: 2 },
        },
        { text: 'Done.', usage: { input: 10, output: 2 } },
      ],
      { model: 'gpt-5-codex' },
    );
    const bin = join(tools, 'node_modules', '.bin', 'codex');
    const s = (school = realSchool({ agents: [codexAgent(bin, server.url)], correctionTurns: 0 }));
    s.config.dispatch.verify = ['npm', 'test'];
    s.config.dispatch.minFreeDiskGiB = 0;
    const node = join(nvmBin, 'node');
    // The agent's own install is the student's, not the verification's.
    const secrets = [join(home, 'secret.txt'), join(tools, 'node_modules', '.bin')];
    mkdirSync(join(s.repo, 'test'));
    writeFileSync(
      join(s.repo, 'test', 'value.test.mjs'),
      [
        "import test from 'node:test';",
        "import assert from 'node:assert';",
        "import { existsSync, readFileSync } from 'node:fs';",
        "test('solved', () => assert.match(readFileSync('src/value.txt', 'utf8'), /solved #7/));",
        `test('the node of PATH', () => assert.equal(process.execPath, ${JSON.stringify(node)}));`,
        `test('nothing else of HOME', () => { for (const p of ${JSON.stringify(secrets)}) assert.equal(existsSync(p), false, p); });`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(s.repo, 'package.json'),
      JSON.stringify({ name: 'tiny', private: true, scripts: { test: 'node --test' } }),
    );
    git(s.repo, 'add', '-A');
    git(s.repo, 'commit', '-q', '-m', 'tests');
    restores.push(setEnv({ ...CODEX_ENV, HOME: home, PATH: `${nvmBin}:${SYSTEM_PATH}` }));
    type School = Parameters<typeof writeCurriculum>[0];
    writeCurriculum(s as unknown as School, [item(7)]);
    await plan(s as unknown as School, [{ crewId: 'c7-install1', issue: 7, agent: 'codex' }]);
    const r = await runCrew(await spec(s as unknown as School, 'c7-install1'), { logger: silentLogger });
    const log = s.studentLog('c7-install1');
    expect(log).not.toMatch(/Missing optional dependency/);
    expect(r.outcome, `${r.reason}\n${log}`).toBe('succeeded');
    expect(r.alerts).toEqual([]);
    const verified = readFileSync(join(s.layout.bookbag('c7-install1'), 'verification.log'), 'utf8');
    expect(verified).toMatch(/# pass 3/);
  }, 240_000);
});

describe.skipIf(!!noSandbox)('agents[].homeFiles: a login file reaches the student, and only it', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    while (cleanups.length) cleanups.pop()!();
  });

  it("copies ~/.codex/auth.json into the student's private HOME (0600); verification's HOME has none", async () => {
    const host = mkdtempSync(join(tmpdir(), 'school-login-'));
    cleanups.push(() => rmSync(host, { recursive: true, force: true }));
    mkdirSync(join(host, '.codex'));
    writeFileSync(
      join(host, '.codex', 'auth.json'),
      '{"tokens":{"refresh_token":"rt-host-0123456789abcdef"}}\n',
      {
        mode: 0o644,
      },
    );
    writeFileSync(join(host, '.codex', 'config.toml'), 'model = "host"\n');
    writeFileSync(join(host, 'secret.txt'), 'the host user secret\n');
    cleanups.push(setEnv({ HOME: host }));
    // The student reports what its HOME holds; it edits the value so the crew is graded.
    const student = [
      "const fs = require('node:fs');",
      "const auth = process.env.HOME + '/.codex/auth.json';",
      "fs.appendFileSync(process.env.SCHOOL_WORKTREE + '/src/value.txt', 'solved #' + process.env.SCHOOL_ISSUE + '\\n');",
      'fs.writeFileSync(process.env.SCHOOL_REPORT_FILE, JSON.stringify({',
      "  auth: fs.readFileSync(auth, 'utf8'), mode: (fs.statSync(auth).mode & 0o777).toString(8),",
      "  config: fs.existsSync(process.env.HOME + '/.codex/config.toml'),",
      `  hostSecret: fs.existsSync(${JSON.stringify(join(host, 'secret.txt'))}),`,
      `  hostAuth: fs.existsSync(${JSON.stringify(join(host, '.codex', 'auth.json'))}),`,
      '}));',
    ].join('\n');
    const s = makeSchool({
      extraAgents: [{ id: 'login', command: ['node', '-e', student], homeFiles: ['.codex/auth.json'] }],
    });
    cleanups.push(s.cleanup);
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.dispatch.correctionTurns = 0;
    // Verification fails if it can see the login, in its HOME or in the host's.
    s.config.dispatch.verify = [
      'node',
      '-e',
      `const fs = require('node:fs'); process.exit([process.env.HOME + '/.codex/auth.json', ${JSON.stringify(join(host, '.codex', 'auth.json'))}].some((p) => fs.existsSync(p)) ? 1 : 0)`,
    ];
    const [r] = await runCrews(s, [{ crewId: 'c4-login001', issue: 4, agent: 'login' }]);
    expect(findings(s, 'c4-login001')).toEqual({
      auth: '{"tokens":{"refresh_token":"rt-host-0123456789abcdef"}}\n',
      mode: '600',
      config: false,
      hostSecret: false,
      hostAuth: false,
    });
    expect(r!.outcome, r!.reason).toBe('succeeded');
    // What the student copied out of the login is redacted in what the school keeps.
    const kept = readFileSync(join(s.layout.bookbag('c4-login001'), 'report.md'), 'utf8');
    expect(kept).not.toContain('rt-host-0123456789abcdef');
    expect(kept).toContain('[REDACTED]');
  }, 120_000);

  it('a homeFiles entry missing from HOME stops the crew with the field and the fix', async () => {
    const host = mkdtempSync(join(tmpdir(), 'school-login-'));
    cleanups.push(() => rmSync(host, { recursive: true, force: true }));
    cleanups.push(setEnv({ HOME: host }));
    const s = makeSchool({
      extraAgents: [{ id: 'login', command: ['node', '-e', '0'], homeFiles: ['.codex/auth.json'] }],
    });
    cleanups.push(s.cleanup);
    s.config.dispatch.minFreeDiskGiB = 0;
    const [r] = await runCrews(s, [{ crewId: 'c5-login002', issue: 5, agent: 'login' }]).catch((e: Error) => [
      { outcome: 'threw', reason: e.message },
    ]);
    expect(r!.outcome).not.toBe('succeeded');
    expect(String(r!.reason)).toMatch(/agents\[login\]\.homeFiles: .*auth\.json does not exist/);
  }, 120_000);
});
