import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { git } from './tmp.js';

/**
 * A team's first repository and school, as the first-crew tests build it: an app whose `npm test`
 * runs `node --test` (and checks which node runs it), one issue, an honest command student, and the
 * defaults but for what a first run names (its student, its test command, its curriculum).
 */

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

/** The student: writes the answer the issue asks for, nothing else. */
const STUDENT = [
  "import { writeFileSync } from 'node:fs';",
  "writeFileSync('src/value.txt', 'solved #' + process.env.SCHOOL_ISSUE + '\\n');",
  "writeFileSync(process.env.SCHOOL_REPORT_FILE, 'Wrote src/value.txt.\\n');",
  '',
].join('\n');

export interface FirstCrew {
  repo: string;
  /** The school.yml written (mutable: change it and `write` again). */
  config: Record<string, unknown>;
  write(): void;
  /** `school <args>` through the real CLI in the repository, with exactly `env`. */
  school(...args: string[]): { code: number | null; out: string };
}

/**
 * The app at `repo` (committed), its student and issue in `dir`. `node`: the bin directory whose
 * node the app's test insists on; `tests`: more lines for the app's test file.
 */
export function firstCrew(
  dir: string,
  repo: string,
  node: string,
  env: Record<string, string>,
  tests: readonly string[] = [],
): FirstCrew {
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
      "import { existsSync, readFileSync } from 'node:fs';",
      "test('the value', () => assert.match(readFileSync('src/value.txt', 'utf8'), /solved #1/));",
      `test('the node of PATH', () => assert.equal(process.execPath, ${JSON.stringify(join(node, 'node'))}));`,
      ...tests,
      '',
    ].join('\n'),
  );
  writeFileSync(join(repo, '.gitignore'), '.school/\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'an app with a test');
  const student = join(dir, 'student.mjs');
  writeFileSync(student, STUDENT);
  const issues = join(dir, 'issues.json');
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
  const write = () => writeFileSync(join(repo, 'school.yml'), JSON.stringify(config, null, 2));
  write();
  const school = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/index.ts'), ...args], {
      cwd: repo,
      encoding: 'utf8',
      env,
      timeout: 600_000,
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  };
  return { repo, config, write, school };
}

export interface LoopProcess {
  child: ChildProcess;
  /** What it printed so far (stdout and stderr). */
  out(): string;
  /** Its exit code once it exits. */
  exited: Promise<number | null>;
  /** Its exit code and signal once it exits. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `school loop` through the real CLI as a background process in `repo`, with exactly `env`. */
export function startLoop(repo: string, env: Record<string, string>): LoopProcess {
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/index.ts'), 'loop'], {
    cwd: repo,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  return { child, out: () => out, exited: ended.then((e) => e.code), ended };
}
