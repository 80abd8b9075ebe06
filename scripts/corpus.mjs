#!/usr/bin/env node
// Builds the real-repository corpus (test/fixtures/corpus/) from pinned upstream commits.
//
//   node scripts/corpus.mjs <mirrors>
//
// <mirrors> is a directory of git clones (bare or not) of the manifest's repositories, each found as
// <mirrors>/<owner>+<name>/repo, <mirrors>/<owner>+<name>, <mirrors>/<name>.git or <mirrors>/<name>.
// For each repository the script writes, next to manifest.json:
//
//   <repo>/LICENSE            the upstream licence, as it is at the snapshot
//   <repo>/snapshot.patch     the snapshot commit's kept files (`files`), as a patch from nothing
//   <repo>/<task>/task.json   the task: the fix, its base, the fix's message, which files are which
//   <repo>/<task>/base.patch  the snapshot to the task's base (only when they differ)
//   <repo>/<task>/test.patch  the base to the fix, test files only (the fix's tests)
//   <repo>/<task>/gold.patch  the base to the fix, the rest of the kept files (the fix itself)
//   <repo>/<task>/half.patch  when the task names one: half of the fix, written for the corpus
//
// Only the kept files travel (source, tests, package.json or pyproject.toml), never the repository:
// CI has no GitHub, and the tests build each task's repository from these patches. Every patch is
// checked before it is written: applied in a scratch repository, the result must be upstream's tree
// (same paths, modes and blobs) at the snapshot, the base and the fix. Re-running the script over the
// same mirrors writes the same bytes.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CORPUS = join(ROOT, 'test', 'fixtures', 'corpus');
/** git's empty tree: a patch from it holds every kept file. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

class CorpusError extends Error {
  constructor(message) {
    super(message);
    this.name = 'CorpusError';
  }
}

/** git with argv (never a shell), a fixed identity and no user or system config. */
function git(args, o = {}) {
  const r = spawnSync('git', args, {
    cwd: o.cwd,
    input: o.input,
    // Patches stay bytes: upstream test files in other encodings (cp1251, gbk) must survive as written.
    encoding: o.raw ? 'buffer' : 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      PATH: process.env.PATH,
      HOME: tmpdir(),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'corpus',
      GIT_AUTHOR_EMAIL: 'corpus@example.invalid',
      GIT_COMMITTER_NAME: 'corpus',
      GIT_COMMITTER_EMAIL: 'corpus@example.invalid',
    },
  });
  if (r.status !== 0 && !o.allowFail)
    throw new CorpusError(
      `git ${args.join(' ')} failed: ${String(r.stderr || r.error?.message || '').trim()}`,
    );
  return r;
}

function findMirror(mirrors, url) {
  const [owner, name] = new URL(url).pathname.replace(/^\/|\.git$/g, '').split('/');
  const candidates = [
    join(mirrors, `${owner}+${name}`, 'repo'),
    join(mirrors, `${owner}+${name}`),
    join(mirrors, `${name}.git`),
    join(mirrors, name),
  ];
  const found = candidates.find(
    (c) =>
      existsSync(c) &&
      git(['--git-dir', gitDir(c), 'rev-parse', '--git-dir'], { allowFail: true }).status === 0,
  );
  if (!found)
    throw new CorpusError(
      `no clone of ${url} under ${mirrors}: looked for ${candidates.join(', ')}; clone it there (git clone --bare ${url} ${candidates[2]})`,
    );
  return gitDir(found);
}

/** A bare clone is its own git dir; a work tree's is `.git`. */
const gitDir = (path) => (existsSync(join(path, '.git')) ? join(path, '.git') : path);

/** The patch from `a` to `b` over `paths`, as git writes it (binary-safe, no renames, no colour). */
function diff(dir, a, b, paths) {
  if (!paths.length) return Buffer.alloc(0);
  return git(
    [
      '--git-dir',
      dir,
      '-c',
      'core.quotepath=off',
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--no-renames',
      '--binary',
      a,
      b,
      '--',
      ...paths,
    ],
    { raw: true },
  ).stdout;
}

/** The files a diff from `a` to `b` touches, limited to `paths`. */
function changed(dir, a, b, paths) {
  const out = git([
    '--git-dir',
    dir,
    'diff',
    '--no-renames',
    '--name-only',
    '-z',
    a,
    b,
    '--',
    ...paths,
  ]).stdout;
  return out.split('\0').filter(Boolean);
}

/** `mode sha path` of every kept file of `commit`, sorted: what a rebuilt tree must equal. */
function upstreamTree(dir, commit, paths) {
  return git(['--git-dir', dir, 'ls-tree', '-r', '-z', commit, '--', ...paths])
    .stdout.split('\0')
    .filter(Boolean)
    .map((l) => {
      const [meta, path] = l.split('\t');
      const [mode, , sha] = meta.split(' ');
      return `${mode} ${sha} ${path}`;
    })
    .sort();
}

function rebuiltTree(repo) {
  return git(['ls-files', '-s', '-z'], { cwd: repo })
    .stdout.split('\0')
    .filter(Boolean)
    .map((l) => {
      const [meta, path] = l.split('\t');
      const [mode, sha] = meta.split(' ');
      return `${mode} ${sha} ${path}`;
    })
    .sort();
}

function sameTree(repo, dir, commit, paths, what) {
  const want = upstreamTree(dir, commit, paths);
  const got = rebuiltTree(repo);
  const missing = want.filter((l) => !got.includes(l));
  const extra = got.filter((l) => !want.includes(l));
  if (missing.length || extra.length)
    throw new CorpusError(
      `${what}: the rebuilt tree is not upstream's ${commit.slice(0, 12)} (missing: ${missing.slice(0, 5).join('; ') || 'none'}; extra: ${extra.slice(0, 5).join('; ') || 'none'})`,
    );
}

function apply(repo, patch, what) {
  if (!patch.length) return;
  const file = join(repo, '..', 'p.patch');
  writeFileSync(file, patch);
  const r = git(['apply', '--index', '--binary', '--whitespace=nowarn', file], {
    cwd: repo,
    allowFail: true,
  });
  if (r.status !== 0) throw new CorpusError(`${what} does not apply: ${String(r.stderr).trim()}`);
}

const isTest = (repo, path) => repo.tests.some((t) => (t.endsWith('/') ? path.startsWith(t) : path === t));

/** A task's JSON, formatted as the repository's Prettier settings say (`npm run lint` checks it). */
async function json(value, file) {
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(JSON.stringify(value), { ...options, parser: 'json', filepath: file });
}

async function buildRepository(mirrors, repo, scratch) {
  const dir = findMirror(mirrors, repo.url);
  for (const sha of [repo.snapshot, ...repo.tasks.flatMap((t) => [t.fix, t.base])])
    if (git(['--git-dir', dir, 'cat-file', '-e', `${sha}^{commit}`], { allowFail: true }).status !== 0)
      throw new CorpusError(
        `${repo.url}: commit ${sha} is not in ${dir}; fetch it (git fetch origin ${sha})`,
      );
  const out = join(CORPUS, repo.id);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'LICENSE'), git(['--git-dir', dir, 'show', `${repo.snapshot}:LICENSE`]).stdout);
  const snapshot = diff(dir, EMPTY_TREE, repo.snapshot, repo.files);
  writeFileSync(join(out, 'snapshot.patch'), snapshot);
  const sizes = [`snapshot ${(snapshot.length / 1024).toFixed(0)} KiB`];

  for (const task of repo.tasks) {
    const work = mkdtempSync(join(scratch, `${task.id}-`));
    const tree = join(work, 'tree');
    mkdirSync(tree);
    git(['init', '-q'], { cwd: tree });
    apply(tree, snapshot, `${repo.id}: snapshot.patch`);
    sameTree(tree, dir, repo.snapshot, repo.files, `${repo.id}: the snapshot`);
    const base = diff(dir, repo.snapshot, task.base, repo.files);
    apply(tree, base, `${task.id}: base.patch`);
    sameTree(tree, dir, task.base, repo.files, `${task.id}: the base`);
    git(['commit', '-q', '-m', 'base'], { cwd: tree });

    const touched = changed(dir, task.base, task.fix, repo.files);
    const testFiles = touched.filter((p) => isTest(repo, p));
    const goldFiles = touched.filter((p) => !isTest(repo, p));
    if (!testFiles.length || !goldFiles.length)
      throw new CorpusError(
        `${task.id}: a task needs both a fix and its tests; from ${task.base.slice(0, 12)} to ${task.fix.slice(0, 12)} the kept files changed are tests: [${testFiles.join(', ')}], the rest: [${goldFiles.join(', ')}]`,
      );
    const test = diff(dir, task.base, task.fix, testFiles);
    const gold = diff(dir, task.base, task.fix, goldFiles);
    apply(tree, gold, `${task.id}: gold.patch`);
    apply(tree, test, `${task.id}: test.patch`);
    sameTree(tree, dir, task.fix, repo.files, `${task.id}: base + gold + test`);

    let half;
    if (task.half) {
      git(['reset', '-q', '--hard', 'HEAD'], { cwd: tree });
      const file = join(tree, task.half.file);
      const [from, to] = task.half.replace;
      const text = readFileSync(file, 'utf8');
      if (text.split(from).length !== 2)
        throw new CorpusError(`${task.id}: half.replace[0] must occur exactly once in ${task.half.file}`);
      writeFileSync(
        file,
        text.replace(from, () => to),
      );
      half = git(['-c', 'core.quotepath=off', 'diff', '--no-color', '--no-ext-diff', 'HEAD'], {
        cwd: tree,
        raw: true,
      }).stdout;
    }

    const message = git(['--git-dir', dir, 'log', '-1', '--format=%B', task.fix]).stdout.trim();
    const [subject, ...rest] = message.split('\n');
    const taskDir = join(out, task.id);
    mkdirSync(taskDir);
    const meta = {
      id: task.id,
      repository: repo.id,
      url: repo.url,
      fix: task.fix,
      base: task.base,
      ...(task.redBase ? { redBase: true } : {}),
      subject,
      body: rest.join('\n').trim(),
      testFiles,
      goldFiles,
      ...(task.note ? { note: task.note } : {}),
      ...(task.half ? { half: task.half.about } : {}),
    };
    writeFileSync(join(taskDir, 'task.json'), await json(meta, join(taskDir, 'task.json')));
    if (base.length) writeFileSync(join(taskDir, 'base.patch'), base);
    writeFileSync(join(taskDir, 'test.patch'), test);
    writeFileSync(join(taskDir, 'gold.patch'), gold);
    if (half) writeFileSync(join(taskDir, 'half.patch'), half);
    sizes.push(
      `${task.id} ${((base.length + test.length + gold.length + (half?.length ?? 0)) / 1024).toFixed(1)} KiB`,
    );
  }
  console.log(`corpus: ${repo.id} (${repo.url}): ${sizes.join(', ')}`);
}

async function main() {
  const mirrors = process.argv[2];
  if (!mirrors || process.argv.length > 3) {
    console.error('usage: node scripts/corpus.mjs <directory of clones of the manifest repositories>');
    process.exit(2);
  }
  const manifest = JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8'));
  const scratch = mkdtempSync(join(tmpdir(), 'school-corpus-'));
  try {
    for (const repo of manifest.repositories) await buildRepository(resolve(mirrors), repo, scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e instanceof CorpusError ? `corpus: ${e.message}` : e);
  process.exit(1);
});
