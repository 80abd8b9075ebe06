import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { git, tempDir } from '../support/tmp.js';
import { nodeTree } from '../support/toolchains.js';
import { noSandbox, warnSkipped } from '../security/helpers.js';

/**
 * A machine where the sandbox would run another node than the host: nodejs.org's tarball unpacked
 * into HOME and first on PATH (no layout the sandbox recognizes), while /usr/bin/node exists. Every
 * crew's `npm test` would run the other node (or none) and be blamed on its student. `school loop`
 * checks before its first crew (src/loop/preflight.ts): it places no crew, says in one sentence what
 * to change, counts nothing against the agent; with that change made, the next loop accepts the
 * honest crew, and the check passed is remembered.
 */
warnSkipped('school loop refuses a machine whose sandbox runs another node');

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const tmp = tempDir('school-preflight-');
afterAll(() => tmp.cleanup());

const STUDENT = [
  "import { writeFileSync } from 'node:fs';",
  "writeFileSync('src/value.txt', 'solved #' + process.env.SCHOOL_ISSUE + '\\n');",
  "writeFileSync(process.env.SCHOOL_REPORT_FILE, 'Wrote src/value.txt.\\n');",
  '',
].join('\n');

function setUp() {
  const home = join(tmp.path, 'home');
  const bin = nodeTree(join(home, 'node-v20.20.2-linux-x64'));
  const repo = join(home, 'app');
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
      "import { readFileSync } from 'node:fs';",
      "test('the value', () => assert.match(readFileSync('src/value.txt', 'utf8'), /solved #1/));",
      `test('the node of PATH', () => assert.equal(process.execPath, ${JSON.stringify(join(bin, 'node'))}));`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(repo, '.gitignore'), '.school/\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'an app with a test');
  const student = join(tmp.path, 'student.mjs');
  writeFileSync(student, STUDENT);
  const issues = join(tmp.path, 'issues.json');
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
  const config: Record<string, unknown> = {
    curriculum: { issuesFile: issues },
    agents: [{ id: 'student', command: ['node', student, '{brief}'], roles: ['coding'] }],
    dispatch: { verify: ['npm', 'test'], correctionTurns: 0, minFreeDiskGiB: 0 },
  };
  const write = () => writeFileSync(join(repo, 'school.yml'), stringify(config));
  write();
  const school = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/index.ts'), ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: home },
      timeout: 600_000,
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const state = join(repo, '.school', 'state');
  return { bin, repo, school, config, write, state };
}

describe.skipIf(!!noSandbox || !existsSync('/usr/bin/node'))(
  'school loop: the sandbox check before the first crew',
  () => {
    it('a tarball node in HOME with /usr/bin/node on the machine: refused with one sentence, no crew; after the fix, accepted', () => {
      const m = setUp();
      const refused = m.school('loop');
      const sentence = refused.out.split('\n').find((l) => l.includes('No crew was started on this machine'));
      expect(sentence, refused.out).toBeDefined();
      // A script or cron running the loop sees that nothing was placed.
      expect(refused.code, refused.out).toBe(1);
      // One sentence that says what to change: the directory to show.
      expect(sentence).toContain(`add \`sandbox.readOnly: [`);
      expect(sentence).toContain(m.bin);
      expect(refused.out).not.toMatch(/ACCEPTED|REJECTED/);
      // No crew was planned or run, nothing is counted against the agent.
      const crews = existsSync(join(m.state, 'crews.jsonl'))
        ? readFileSync(join(m.state, 'crews.jsonl'), 'utf8')
        : '';
      expect(crews).not.toContain('crew.planned');
      expect(
        existsSync(join(m.state, 'scores.jsonl')) ? readFileSync(join(m.state, 'scores.jsonl'), 'utf8') : '',
      ).toBe('');
      const audit = readFileSync(join(m.state, 'events.jsonl'), 'utf8');
      expect(audit).toContain('dispatch.preflight-refused');

      // The change the sentence names, as written.
      const dirs = /sandbox\.readOnly: \[([^\]]+)\]/.exec(sentence!)![1]!.split(', ');
      m.config.sandbox = { readOnly: dirs };
      m.write();
      const loop = m.school('loop');
      expect(loop.code, loop.out).toBe(0);
      expect(loop.out).not.toContain('No crew was started');
      expect(loop.out, loop.out).toMatch(/#1 \S+ ACCEPTED by /);
      // The same state file holds the crew this time: the refusal above planned none.
      expect(readFileSync(join(m.state, 'crews.jsonl'), 'utf8')).toContain('crew.planned');
      // The check that passed is remembered for the next cycle.
      expect(existsSync(join(m.repo, '.school', 'runtime', 'preflight.json'))).toBe(true);
    }, 900_000);
  },
);
