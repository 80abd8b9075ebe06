import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';

/** A temp directory removed after the test file (register with afterAll/afterEach as needed). */
export function tempDir(prefix = 'school-test-'): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** Runs git with argv (never a shell); throws with stderr on failure. */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'school-test',
      GIT_AUTHOR_EMAIL: 'school-test@example.invalid',
      GIT_COMMITTER_NAME: 'school-test',
      GIT_COMMITTER_EMAIL: 'school-test@example.invalid',
      GIT_CONFIG_NOSYSTEM: '1',
    },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Writes each of `files` (path below `dir` → text), making the directories they need. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
}

/** A real repository with one commit holding `files`; returns its path. */
export function initRepo(
  dir: string,
  files: Record<string, string> = { 'README.md': '# fixture\n' },
): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'school-test');
  git(dir, 'config', 'user.email', 'school-test@example.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'fixture');
  return dir;
}

/** A bare repository (a remote) seeded from a fresh `initRepo`. */
export function initBareRemote(root: string, files?: Record<string, string>): { bare: string; seed: string } {
  const seed = initRepo(join(root, 'seed'), files);
  const bare = join(root, 'remote.git');
  git(root, 'clone', '-q', '--bare', seed, bare);
  return { bare, seed };
}

/**
 * A crew's diff made the way dispatch-crew makes it: `edit` (or these files written) in a detached
 * worktree of `repo` at `base`, then `git diff --binary --cached`; the worktree is removed after.
 */
export function worktreeDiff(
  repo: string,
  base: string,
  edit: ((dir: string) => void) | Record<string, string>,
  wt = join(dirname(repo), `wt-${Math.random().toString(36).slice(2)}`),
): string {
  git(repo, 'worktree', 'add', '--detach', '-q', wt, base);
  if (typeof edit === 'function') edit(wt);
  else writeFiles(wt, edit);
  git(wt, 'add', '-A');
  const diff = git(wt, 'diff', '--binary', '--cached', base) + '\n';
  git(repo, 'worktree', 'remove', '--force', wt);
  return diff;
}
