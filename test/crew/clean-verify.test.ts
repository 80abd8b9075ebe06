import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { silentLogger } from '../../src/log.js';
import { childEnv } from '../../src/process/env.js';
import { runProcess } from '../../src/process/run.js';
import { FIXTURES, item, plan, spec, writeCurriculum, type School, schoolAround } from './helpers.js';
import { initRepo, tempDir } from '../support/tmp.js';

/**
 * Verification runs on a clean checkout of the base with exactly the crew's frozen patch: what the
 * student left outside its patch, or changed once the tests had passed, is not what is judged and
 * not what is delivered.
 */
const CHEAT = join(FIXTURES, 'cheat-student.mjs');

let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
});

function cheatSchool(over: Record<string, unknown> = {}, files: Record<string, string> = {}): School {
  const t = tempDir('school-clean-');
  const repo = initRepo(join(t.path, 'repo'), {
    'package.json': JSON.stringify({ name: 'fixture', type: 'module', scripts: { test: 'node --test' } }),
    '.gitignore': 'node_modules/\n',
    'sum.mjs': 'export const sum = (a, b) => a * b;\n',
    'sum.test.mjs':
      "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { sum } from './sum.mjs';\ntest('sum adds', () => assert.strictEqual(sum(2, 3), 5));\n",
    ...files,
  });
  const agent = (mode: string) => ({ id: mode, command: ['node', CHEAT, '--mode', mode, '{brief}'] });
  const config = parseConfig({
    stateDir: join(t.path, 'state'),
    repoPath: repo,
    fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
    agents: [agent('shim'), agent('swap'), agent('honest')],
    dispatch: {
      crewTimeoutSeconds: 60,
      leaseSeconds: 60,
      verify: ['npm', 'test'],
      correctionTurns: 0,
      ...over,
    },
  });
  return schoolAround(t, repo, config);
}

async function crew(s: School, n: number, agent: string) {
  writeCurriculum(s, [item(n)]);
  await plan(s, [{ crewId: `c${n}-${agent}`, issue: n, agent }]);
  await runCrew(await spec(s, `c${n}-${agent}`), { logger: silentLogger });
  const dir = s.layout.bookbag(`c${n}-${agent}`);
  return {
    record: JSON.parse(readFileSync(join(dir, 'bookbag.json'), 'utf8')),
    diff: readFileSync(join(dir, 'diff.patch'), 'utf8'),
    log: readFileSync(join(dir, 'verification.log'), 'utf8'),
  };
}

describe('verification on a clean checkout of the base with exactly the patch', () => {
  it('a fake node planted in the ignored node_modules/.bin does not make a broken change pass', async () => {
    const s = (school = cheatSchool());
    // The attack is real: in a tree with the shim, `npm test` passes on the broken sum.
    const tree = join(s.root, 'student-tree');
    cpSync(s.repo, tree, { recursive: true });
    writeFileSync(join(tree, 'sum.mjs'), 'export const sum = (a, b) => a - b;\n');
    mkdirSync(join(tree, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(tree, 'node_modules', '.bin', 'node'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const fooled = await runProcess(['npm', 'test'], { cwd: tree, env: childEnv(), timeoutMs: 60_000 });
    expect(fooled.exitCode).toBe(0);

    const r = await crew(s, 1, 'shim');
    expect(r.diff).toContain('a - b');
    expect(r.diff).not.toContain('node_modules');
    expect(r.record.verification).toMatchObject({ passed: false, exitCode: 1 });
    expect(r.log).toMatch(/sum adds/);
    expect(r.log).not.toMatch(/all tests passed/);
  }, 120_000);

  it('a test that rewrites the code once the tests passed changes neither what was verified nor what is delivered', async () => {
    const s = (school = cheatSchool());
    const r = await crew(s, 2, 'swap');
    expect(r.record.verification).toMatchObject({ passed: true });
    // The verification record names the patch it verified, and that is the bookbag's.
    expect(r.record.verification.diffSha).toBe(r.record.diffSha);
    expect(r.diff).toContain('\n+export const sum = (a, b) => a + b;');
    expect(r.diff).not.toContain('\n+export const sum = (a, b) => a - b;');
    expect(r.diff).toContain('zz-swap.test.mjs');
  }, 120_000);

  it('dependencies come from dispatch.install, run once per base and lockfile, shown read-only', async () => {
    const install = [
      'node',
      '-e',
      "const fs=require('fs');fs.mkdirSync('node_modules/five',{recursive:true});fs.writeFileSync('node_modules/five/package.json','{\"name\":\"five\",\"main\":\"index.js\"}');fs.writeFileSync('node_modules/five/index.js','module.exports=5')",
    ];
    const s = (school = cheatSchool(
      { install: { command: install } },
      {
        'package-lock.json': '{"lockfileVersion":3}\n',
        'five.test.mjs':
          "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport five from 'five';\nimport { sum } from './sum.mjs';\ntest('sum is five', () => assert.strictEqual(sum(2, 3), five));\n",
      },
    ));
    const first = await crew(s, 3, 'honest');
    expect(first.record.verification).toMatchObject({ passed: true });
    expect(first.log).toMatch(/installing dependencies at the base/);
    const second = await crew(s, 4, 'honest');
    expect(second.record.verification).toMatchObject({ passed: true });
    expect(second.log).not.toMatch(/installing dependencies/);
  }, 120_000);
});
