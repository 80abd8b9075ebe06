import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchoolError } from '../errors.js';
import { childEnv } from '../process/env.js';
import { runProcessSync } from '../process/run.js';

/**
 * The embedded default needs a real git repository to make worktrees from, but a committed directory
 * cannot carry its own `.git`. `prepareExampleRepo` turns `examples/repo-template/` into one: a copy
 * of the template with a single commit, made with git argv (never a shell, N1.2).
 *
 * The commit is reproducible (fixed author, committer, dates and message), so the same template
 * always yields the same base sha on every machine, and preparing is idempotent: an existing
 * repository whose HEAD tree equals the template and whose working tree is clean is reused as is.
 * Anything else at the target is refused with a message naming the fix; nothing is overwritten.
 */

export class ExampleRepoError extends SchoolError {
  override readonly code = 'example-repo';
  constructor(message: string) {
    super(message);
    this.name = 'ExampleRepoError';
  }
}

export interface PreparedExampleRepo {
  path: string;
  /** The single commit's sha: the base every crew of the example starts from. */
  head: string;
  /** False when an identical repository was already there. */
  created: boolean;
}

export interface PrepareOptions {
  /** Defaults to `examples/repo-template` of this package. */
  templateDir?: string;
}

const COMMIT_MESSAGE = 'school-core example repository';
const IDENTITY = { name: 'school-core', email: 'school-core@example.invalid', date: '2026-01-01T00:00:00Z' };

/** git with argv, an isolated identity and no system/user config that could change the commit. */
function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  const r = runProcessSync(
    [
      'git',
      '-c',
      'commit.gpgsign=false',
      '-c',
      'core.autocrlf=false',
      '-c',
      'core.fileMode=true',
      '-c',
      'core.hooksPath=/dev/null',
      ...args,
    ],
    {
      cwd,
      env: childEnv({
        set: {
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_TERMINAL_PROMPT: '0',
          GIT_AUTHOR_NAME: IDENTITY.name,
          GIT_AUTHOR_EMAIL: IDENTITY.email,
          GIT_AUTHOR_DATE: IDENTITY.date,
          GIT_COMMITTER_NAME: IDENTITY.name,
          GIT_COMMITTER_EMAIL: IDENTITY.email,
          GIT_COMMITTER_DATE: IDENTITY.date,
          ...env,
        },
      }),
    },
  );
  if (r.spawnError) throw new ExampleRepoError(`git could not be started (${r.spawnError}); install git.`);
  if (r.exitCode !== 0)
    throw new ExampleRepoError(`git ${args.join(' ')} failed in ${cwd}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** The package root: the nearest ancestor whose package.json is school-core (works from src/ and dist/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'school-core')
          return dir;
      } catch {
        // Not ours; keep walking up.
      }
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new ExampleRepoError('cannot find the school-core package root for the template.');
    dir = parent;
  }
}

/** Absolute paths of the embedded example, wherever the command runs from. */
export interface ExamplePaths {
  root: string;
  template: string;
  issues: string;
  config: string;
  student: string;
}

export function examplePaths(): ExamplePaths {
  const root = join(packageRoot(), 'examples');
  return {
    root,
    template: join(root, 'repo-template'),
    issues: join(root, 'issues.json'),
    config: join(root, 'school.yml'),
    student: join(root, 'student.mjs'),
  };
}

export function defaultTemplateDir(): string {
  return examplePaths().template;
}

/** Tree sha of `templateDir` as git would commit it, computed in `repo` with a throwaway index. */
function templateTree(repo: string, templateDir: string): string {
  const index = join(tmpdir(), `school-example-index-${process.pid}-${Date.now()}`);
  try {
    const env = { GIT_INDEX_FILE: index, GIT_WORK_TREE: templateDir, GIT_DIR: join(repo, '.git') };
    git(templateDir, ['add', '-A', '--', '.'], env);
    return git(templateDir, ['write-tree'], env);
  } finally {
    rmSync(index, { force: true });
  }
}

/** Reuses an identical existing repository or explains why the target cannot be used. */
function reuse(target: string, templateDir: string): PreparedExampleRepo {
  if (!existsSync(join(target, '.git'))) {
    throw new ExampleRepoError(
      `${target} exists and is not empty, but it is not a git repository. Remove it (or pick another ` +
        'directory) and run again: the example repository is created there from the template.',
    );
  }
  const headTree = git(target, ['rev-parse', 'HEAD^{tree}']);
  if (headTree !== templateTree(target, templateDir)) {
    throw new ExampleRepoError(
      `${target} is a git repository whose HEAD does not match ${templateDir}. Remove it and run again ` +
        'to recreate the example repository from the current template.',
    );
  }
  const dirty = git(target, ['status', '--porcelain', '--untracked-files=all']);
  if (dirty) {
    throw new ExampleRepoError(
      `${target} has uncommitted changes (${dirty.split('\n').length} paths). Crews start from a clean ` +
        'base: commit or discard them, or remove the directory and run again.',
    );
  }
  return { path: target, head: git(target, ['rev-parse', 'HEAD']), created: false };
}

function isEmptyDir(path: string): boolean {
  return statSync(path).isDirectory() && readdirSync(path).length === 0;
}

/**
 * Makes `targetDir` a git repository holding the template in one reproducible commit on `main`.
 * Built in a sibling scratch directory and renamed into place, so a crash never leaves a half-made
 * repository and two processes preparing at once both end with the same repository.
 */
export function prepareExampleRepo(targetDir: string, options: PrepareOptions = {}): PreparedExampleRepo {
  const target = resolve(targetDir);
  const templateDir = resolve(options.templateDir ?? defaultTemplateDir());
  if (!existsSync(templateDir) || !statSync(templateDir).isDirectory()) {
    throw new ExampleRepoError(`the example template ${templateDir} does not exist.`);
  }
  if (existsSync(target) && !isEmptyDir(target)) return reuse(target, templateDir);

  mkdirSync(dirname(target), { recursive: true });
  const scratch = join(dirname(target), `.${basename(target)}.prepare-${process.pid}-${Date.now()}`);
  try {
    cpSync(templateDir, scratch, { recursive: true });
    git(scratch, ['init', '-q', '-b', 'main']);
    git(scratch, ['add', '-A', '--', '.']);
    git(scratch, ['commit', '-q', '--no-verify', '-m', COMMIT_MESSAGE]);
    try {
      // Replaces an empty directory; fails when another process already put a repository there.
      renameSync(scratch, target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
      return reuse(target, templateDir);
    }
    return { path: target, head: git(target, ['rev-parse', 'HEAD']), created: true };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
