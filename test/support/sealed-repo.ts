import { join } from 'node:path';
import { git, initRepo, writeFiles } from './tmp.js';

/**
 * A graded repository and its sealed suite, as a sealed judge meets them: `<root>/repo` holds
 * `files` in one commit (`baseSha`); `<root>/<suiteDir>` (the suite the student never sees) holds
 * `suite`, each file given as its lines joined with newlines.
 */
export function sealedRepo(
  root: string,
  files: Record<string, string>,
  suite: Record<string, string[]>,
  suiteDir = 'suite',
): { repo: string; baseSha: string; suite: string } {
  const repo = initRepo(join(root, 'repo'), files);
  const dir = join(root, suiteDir);
  writeFiles(dir, Object.fromEntries(Object.entries(suite).map(([path, lines]) => [path, lines.join('\n')])));
  return { repo, baseSha: git(repo, 'rev-parse', 'HEAD'), suite: dir };
}
