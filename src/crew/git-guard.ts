import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { git } from '../process/git.js';
import { writeJsonAtomic } from '../state/atomic.js';

/**
 * The control files of a repository's shared git directory — `config`, `hooks/`, `info/attributes`
 * and each worktree's `config.worktree` — are writable by every student working in one of its
 * worktrees. The hardened git wrapper never runs what they name; this module also puts them back:
 * the driver records a baseline before it launches any crew, and every crew's teardown restores it,
 * so a hook or a setting one crew planted is gone before the next crew (or the operator's own git)
 * meets it.
 */
export interface GitControlBaseline {
  commonDir: string;
  config: string | null;
  attributes: string | null;
  /** hooks/<name> → content (base64), mode. */
  hooks: Record<string, { content: string; mode: number }>;
}

export async function gitCommonDir(repoPath: string): Promise<string> {
  const out = (await git(repoPath, 'rev-parse', '--git-common-dir')).trim();
  return isAbsolute(out) ? out : resolve(repoPath, out);
}

function readOrNull(path: string): string | null {
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

function listHooks(dir: string): string[] {
  try {
    return readdirSync(dir).filter(
      (f) => statSync(join(dir, f)).isFile() || statSync(join(dir, f)).isSymbolicLink(),
    );
  } catch {
    return [];
  }
}

export async function captureBaseline(repoPath: string): Promise<GitControlBaseline> {
  const commonDir = await gitCommonDir(repoPath);
  const hooks: GitControlBaseline['hooks'] = {};
  for (const f of listHooks(join(commonDir, 'hooks'))) {
    const p = join(commonDir, 'hooks', f);
    hooks[f] = { content: readFileSync(p).toString('base64'), mode: statSync(p).mode & 0o777 };
  }
  return {
    commonDir,
    config: readOrNull(join(commonDir, 'config')),
    attributes: readOrNull(join(commonDir, 'info', 'attributes')),
    hooks,
  };
}

export function baselinePath(runtimeDir: string, daemon: string): string {
  return join(runtimeDir, 'git-baseline', `${daemon}.json`);
}

export function writeBaseline(path: string, b: GitControlBaseline): void {
  writeJsonAtomic(path, b);
}

export function readBaseline(path: string): GitControlBaseline | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as GitControlBaseline;
  } catch {
    return undefined;
  }
}

/**
 * Puts the control files back as recorded and removes each `config.worktree` (the toolkit never
 * writes one). Returns what had changed, for the crew's alerts.
 */
export function restoreBaseline(b: GitControlBaseline): string[] {
  const changed: string[] = [];
  const put = (path: string, want: string | null, label: string) => {
    const have = readOrNull(path);
    if (have === want) return;
    changed.push(label);
    if (want === null) rmSync(path, { force: true });
    else writeFileSync(path, want);
  };
  put(join(b.commonDir, 'config'), b.config, 'config');
  mkdirSync(join(b.commonDir, 'info'), { recursive: true });
  put(join(b.commonDir, 'info', 'attributes'), b.attributes, 'info/attributes');
  const hooksDir = join(b.commonDir, 'hooks');
  for (const f of listHooks(hooksDir)) {
    const p = join(hooksDir, f);
    const want = b.hooks[f];
    if (!want) {
      changed.push(`hooks/${f}`);
      rmSync(p, { force: true });
    } else if (
      readFileSync(p).toString('base64') !== want.content ||
      (statSync(p).mode & 0o777) !== want.mode
    ) {
      changed.push(`hooks/${f}`);
      rmSync(p, { force: true });
      writeFileSync(p, Buffer.from(want.content, 'base64'), { mode: want.mode });
    }
  }
  for (const [f, want] of Object.entries(b.hooks)) {
    const p = join(hooksDir, f);
    if (existsSync(p)) continue;
    mkdirSync(hooksDir, { recursive: true });
    writeFileSync(p, Buffer.from(want.content, 'base64'), { mode: want.mode });
    changed.push(`hooks/${f}`);
  }
  let admins: string[] = [];
  try {
    admins = readdirSync(join(b.commonDir, 'worktrees'));
  } catch {
    /* no linked worktrees */
  }
  for (const w of admins) {
    const p = join(b.commonDir, 'worktrees', w, 'config.worktree');
    if (existsSync(p)) {
      rmSync(p, { force: true });
      changed.push(`worktrees/${w}/config.worktree`);
    }
  }
  return changed;
}
