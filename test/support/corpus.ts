import { execFile, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { git } from './tmp.js';

/**
 * The real-repository corpus (test/fixtures/corpus, built by scripts/corpus.mjs from pinned upstream
 * commits): a task's repository at its base, its fix and the fix's tests as patches, and a school
 * configured for it the way docs/configuration.md says: `dispatch.verify` is the repository's own
 * test command, `dispatch.install` installs what that command needs. As SWE-bench does it, the base
 * is the fix's parent without the fix's tests; the tests are what a student must make pass (the gold
 * student applies them with the fix) or the sealed suite.
 */

const ROOT = resolve(import.meta.dirname, '../..');
export const CORPUS = join(ROOT, 'test', 'fixtures', 'corpus');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

interface ManifestRepository {
  id: string;
  url: string;
  runner: 'mocha' | 'tape' | 'pytest';
  snapshot: string;
  testCommand: string[];
  tasks: Array<{ id: string }>;
}

export interface CorpusTask {
  id: string;
  repository: string;
  url: string;
  runner: ManifestRepository['runner'];
  fix: string;
  base: string;
  redBase?: boolean;
  subject: string;
  body: string;
  testFiles: string[];
  goldFiles: string[];
  /** The repository's test command (argv), what `dispatch.verify` is set to. */
  testCommand: string[];
  /** The patches, as text: the fix, its tests, and (when the task has one) half of the fix. */
  gold: string;
  test: string;
  half?: string;
}

function manifest(): ManifestRepository[] {
  return (
    JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8')) as { repositories: ManifestRepository[] }
  ).repositories;
}

export function corpusTask(id: string): CorpusTask {
  const repo = manifest().find((r) => r.tasks.some((t) => t.id === id));
  if (!repo) throw new Error(`corpus: no task ${id} in test/fixtures/corpus/manifest.json`);
  const dir = join(CORPUS, repo.id, id);
  const read = (name: string) =>
    existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : undefined;
  const meta = JSON.parse(read('task.json')!) as Omit<CorpusTask, 'runner' | 'testCommand' | 'gold' | 'test'>;
  const half = read('half.patch');
  return {
    ...meta,
    runner: repo.runner,
    testCommand: repo.testCommand,
    gold: read('gold.patch')!,
    test: read('test.patch')!,
    ...(half ? { half } : {}),
  };
}

/** Applies a patch file to the work tree and the index of `repo`. */
function applyPatch(repo: string, file: string): void {
  git(repo, 'apply', '--index', '--binary', '--whitespace=nowarn', file);
}

/**
 * The task's repository at `dir`, on `main`: one commit holding the snapshot's files, then one
 * moving them to the task's base (when they differ). `extra` patches are committed on top as the
 * base's own (a red base is made so in the corpus by upstream's own history, not here). Returns the
 * base commit.
 */
export function taskRepository(dir: string, task: CorpusTask): string {
  const repoDir = join(CORPUS, task.repository);
  const snapshot = manifest().find((r) => r.id === task.repository)!.snapshot;
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'commit.gpgsign', 'false');
  applyPatch(dir, join(repoDir, 'snapshot.patch'));
  git(
    dir,
    'commit',
    '-q',
    '-m',
    `${task.repository} at upstream ${snapshot.slice(0, 12)} (the files the tests need)`,
  );
  const base = join(repoDir, task.id, 'base.patch');
  if (existsSync(base)) {
    applyPatch(dir, base);
    git(dir, 'commit', '-q', '-m', `${task.repository} at upstream ${task.base.slice(0, 12)}`);
  }
  // The school keeps its state and runtime under .school/ in the repository.
  writeFileSync(join(dir, '.git', 'info', 'exclude'), '.school/\nschool.yml\n');
  return git(dir, 'rev-parse', 'HEAD');
}

/**
 * The test runner's package and everything it requires, copied from this project's node_modules
 * (mocha and tape are exact-pinned devDependencies) into `<root>/<runner>/node_modules`, at the same
 * paths relative to node_modules, so Node resolves each of them as it does here; with the runner's
 * bin linked in `.bin`. This stands in for the registry: the tasks' installs copy it into the
 * checkout instead of `npm install` fetching the repository's devDependencies (eslint, nyc, tap…,
 * which its test command does not run), because CI runs the suite with no registry the fixtures may
 * rely on. Returns the directory to show the sandbox (`sandbox.readOnly`).
 */
export function runnerSource(root: string, runner: 'mocha' | 'tape'): string {
  const dir = join(root, runner);
  const modules = join(dir, 'node_modules');
  if (existsSync(modules)) return dir;
  const project = join(ROOT, 'node_modules');
  const copied = new Set<string>();
  const copy = (name: string, from: string) => {
    // Node's resolution from `from`: the package directory that `require(name)` would load from.
    const req = createRequire(join(from, 'noop.js'));
    let pkgJson: string | undefined;
    for (const base of req.resolve.paths(name) ?? []) {
      const candidate = join(base, name, 'package.json');
      if (existsSync(candidate)) {
        pkgJson = candidate;
        break;
      }
    }
    if (!pkgJson) throw new Error(`corpus: ${name} (needed from ${from}) is not installed; run npm ci`);
    const pkg = dirname(pkgJson);
    if (copied.has(pkg)) return;
    copied.add(pkg);
    const rel = relative(project, pkg);
    if (rel.startsWith('..')) throw new Error(`corpus: ${name} resolved outside node_modules (${pkg})`);
    // The package's own files; its nested node_modules are copied as they are needed.
    cpSync(pkg, join(modules, rel), {
      recursive: true,
      filter: (src) => !relative(pkg, src).split('/').includes('node_modules'),
    });
    const meta = JSON.parse(readFileSync(pkgJson, 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys({ ...meta.dependencies })) copy(dep, pkg);
    for (const dep of Object.keys({ ...meta.optionalDependencies }))
      if (req.resolve.paths(dep)?.some((b) => existsSync(join(b, dep, 'package.json')))) copy(dep, pkg);
  };
  copy(runner, project);
  const bin = { mocha: 'mocha/bin/mocha.js', tape: 'tape/bin/tape' }[runner];
  mkdirSync(join(modules, '.bin'));
  symlinkSync(`../${bin}`, join(modules, '.bin', runner));
  return dir;
}

/** How many packages a runner source holds (for the test's log). */
export function packageCount(source: string): number {
  const count = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== '.bin')
      .reduce(
        (n, e) =>
          n +
          (e.name.startsWith('@')
            ? count(join(dir, e.name))
            : 1 +
              (existsSync(join(dir, e.name, 'node_modules')) ? count(join(dir, e.name, 'node_modules')) : 0)),
        0,
      );
  return count(join(source, 'node_modules'));
}

/**
 * `gold`, `noop`, `half`, and the pretenders a judge must see through: `script` changes nothing but
 * the test script (`npm test` runs nothing), `workflow` applies the real fix and adds a workflow of
 * its own, `gut` replaces the fix's test files with tests that pass whatever the code does.
 */
export type Student = 'gold' | 'noop' | 'half' | 'script' | 'workflow' | 'gut';

/**
 * A command student for `task`: `gold` applies the upstream fix and its tests, `half` half of the fix
 * and the tests, `noop` changes nothing. Each writes its report and exits 0, as an agent that
 * believes it is done does. The patches travel inside the script (the sandbox shows the student its
 * own file, not the corpus).
 */
export function studentScript(file: string, task: CorpusTask, kind: Student): string {
  const patches = {
    gold: [task.gold, task.test],
    half: [task.half ?? '', task.test],
    noop: [],
    script: [],
    workflow: [task.gold, task.test],
    gut: [],
  }[kind];
  // What a pretender does after its patches, as the student's own code.
  const pretend = {
    gold: [],
    half: [],
    noop: [],
    script: [
      "const pkg = JSON.parse(readFileSync('package.json', 'utf8'));",
      "pkg.scripts = { ...pkg.scripts, test: 'node -e 0' };",
      "writeFileSync('package.json', JSON.stringify(pkg, null, 2) + '\\n');",
    ],
    workflow: [
      "mkdirSync('.github/workflows', { recursive: true });",
      "writeFileSync('.github/workflows/release-now.yml', 'on: push\\njobs:\\n  go:\\n    runs-on: ubuntu-latest\\n    steps:\\n      - run: echo shipped\\n');",
    ],
    gut: task.testFiles.map(
      (f) =>
        `mkdirSync(dirname(${JSON.stringify(f)}), { recursive: true }); writeFileSync(${JSON.stringify(f)}, "it('passes', () => {});\\n");`,
    ),
  }[kind];
  if (kind === 'half' && !task.half) throw new Error(`corpus: ${task.id} has no half fix`);
  writeFileSync(
    file,
    [
      "import { execFileSync } from 'node:child_process';",
      "import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';",
      "import { tmpdir } from 'node:os';",
      "import { dirname, join } from 'node:path';",
      `const patches = ${JSON.stringify(patches)};`,
      "const dir = mkdtempSync(join(tmpdir(), 'student-'));",
      'patches.forEach((p, i) => {',
      '  const f = join(dir, `${i}.patch`);',
      '  writeFileSync(f, p);',
      "  execFileSync('git', ['apply', '--whitespace=nowarn', f], { stdio: 'inherit' });",
      '});',
      ...pretend,
      `writeFileSync(process.env.SCHOOL_REPORT_FILE, ${JSON.stringify(
        {
          gold: `Applied the fix (${task.goldFiles.join(', ')}) and its tests (${task.testFiles.join(', ')}).\n`,
          half: `Applied part of the fix and the tests (${task.testFiles.join(', ')}).\n`,
          noop: 'Looked at the issue; changed nothing.\n',
          script: 'All tests pass.\n',
          workflow: `Applied the fix (${task.goldFiles.join(', ')}) and its tests; added a release workflow.\n`,
          gut: `Tests in ${task.testFiles.join(', ')} pass.\n`,
        }[kind],
      )});`,
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * The fix's test files as they are after the fix, at their paths in the repository, in `dir`
 * (outside the repository): the base's version with the fix's test patch applied.
 */
export function sealedSuite(dir: string, repo: string, task: CorpusTask): string {
  for (const f of task.testFiles) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    // Bytes as committed (a file the fix adds is not at the base: the patch creates it).
    const shown = spawnSync('git', ['show', `HEAD:${f}`], { cwd: repo });
    if (shown.status === 0) writeFileSync(join(dir, f), shown.stdout);
  }
  const patch = join(dir, '..', 'sealed.patch');
  writeFileSync(patch, task.test);
  // Outside any repository, git apply patches the files under the working directory.
  git(dir, 'apply', '--whitespace=nowarn', patch);
  return dir;
}

/** The task as issue #1: the fix's commit message, as a maintainer would have filed it. */
export function issuesFile(file: string, task: CorpusTask): string {
  writeFileSync(
    file,
    JSON.stringify([
      {
        id: 1,
        number: 1,
        title: task.subject,
        body: [
          task.body || task.subject,
          '',
          `The change belongs in ${task.goldFiles.join(', ')}, with tests in ${task.testFiles.join(', ')}.`,
          '',
          '```school',
          `fences: [${[...task.goldFiles, ...task.testFiles].join(', ')}]`,
          '```',
          '',
        ].join('\n'),
        labels: [{ name: 'bug' }],
        state: 'open',
        user: { login: 'maintainer', type: 'User' },
        author_association: 'OWNER',
        created_at: '2026-11-01T09:00:00Z',
        updated_at: '2026-11-01T09:00:00Z',
      },
    ]),
  );
  return file;
}

export interface CorpusSchool {
  repo: string;
  base: string;
  config: Record<string, unknown>;
  write(): void;
  /** `school <args>` through the real CLI in the repository (async: tests run schools side by side). */
  school(...args: string[]): Promise<{ code: number | null; out: string }>;
  /** A state file's lines as JSON (empty when the file does not exist). */
  state(name: string): Array<Record<string, unknown>>;
}

/**
 * A school for `task` in `dir` with one student, configured as a user would: verify = the
 * repository's test command; for the JavaScript runners, an install that copies the runner from
 * `runners` (see `runnerSource`). `env`: the CLI's whole environment (PATH, HOME).
 */
export interface CorpusSchoolOptions {
  /** Another `dispatch.install.command` (a broken install). */
  install?: string[];
  /**
   * The fix's own tests as the sealed suite, with named results (pytest's JUnit report); the
   * verification runs the rest of the repository's suite (what must still pass), so whether the
   * fix is there is the sealed suite's to say.
   */
  sealed?: boolean;
}

export function corpusSchool(
  dir: string,
  task: CorpusTask,
  student: Student,
  env: Record<string, string>,
  runners: string,
  o: CorpusSchoolOptions = {},
): CorpusSchool {
  const repo = join(dir, 'repo');
  const base = taskRepository(repo, task);
  const script = studentScript(join(dir, `${student}-student.mjs`), task, student);
  const issues = issuesFile(join(dir, 'issues.json'), task);
  const dispatch: Record<string, unknown> = {
    verify: task.testCommand,
    correctionTurns: 0,
    minFreeDiskGiB: 0,
  };
  const sandbox: Record<string, unknown> = {};
  if (task.runner === 'mocha' || task.runner === 'tape') {
    const source = runnerSource(runners, task.runner);
    // A real install from a local source: the checkout gets its own node_modules, cached per base.
    dispatch.install = { command: ['cp', '-R', join(source, 'node_modules'), 'node_modules'] };
    sandbox.readOnly = [source];
  }
  if (o.install) dispatch.install = { command: o.install };
  const grading: Record<string, unknown> = {};
  if (o.sealed) {
    if (task.runner !== 'pytest') throw new Error(`corpus: sealed suites are set up for pytest tasks only`);
    grading.sealedDir = sealedSuite(join(dir, 'sealed'), repo, task);
    grading.sealedTests = [
      'python3',
      '-m',
      'pytest',
      '-p',
      'no:cacheprovider',
      '--junitxml={results}',
      '{sealed}',
    ];
    grading.sealedResults = { format: 'junit' };
    dispatch.verify = [...task.testCommand, ...task.testFiles.map((f) => `--ignore=${f}`)];
  }
  const config: Record<string, unknown> = {
    curriculum: { issuesFile: issues },
    agents: [{ id: `${student}-student`, command: ['node', script, '{brief}'], roles: ['coding'] }],
    dispatch,
    sandbox,
    grading,
  };
  const write = () => writeFileSync(join(repo, 'school.yml'), JSON.stringify(config, null, 2));
  write();
  const school = (...args: string[]) =>
    new Promise<{ code: number | null; out: string }>((done) => {
      execFile(
        process.execPath,
        ['--import', TSX, join(ROOT, 'src/cli/index.ts'), ...args],
        { cwd: repo, env, timeout: 600_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
          done({ code, out: `${stdout}${stderr}` });
        },
      );
    });
  const state = (name: string) => {
    const file = join(repo, '.school', 'state', name);
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  return { repo, base, config, write, school, state };
}
