import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { git } from '../../process/git.js';
import { writeJsonAtomic } from '../../state/atomic.js';
import { removeTreeSync } from '../../process/remove-tree.js';
import { readUntrusted } from '../../security/untrusted-file.js';

/**
 * The control files of a repository's shared git directory — `config`, `hooks/`, `info/attributes`,
 * `info/exclude`, `objects/info/alternates`, each worktree's `config.worktree` — and its refs decide
 * what the toolkit's own git commands read and build on. Inside the sandbox a student sees the
 * common directory read-only; without it (`sandbox.kind: none`), or for a slot's own admin
 * directory, this guard puts them back: the driver records a baseline before it launches any crew,
 * each crew reads it once before its student runs (and keeps it in memory, out of the student's
 * reach) and restores it after every turn and at teardown, so a hook or a ref one crew planted is
 * gone before the next crew — or the operator's own git — meets it.
 *
 * Refs under the delivery namespaces (`refs/heads/school/`, `refs/school-delivery/`) are the
 * school's own writes during a run and are left alone.
 */
export interface GitControlBaseline {
  commonDir: string;
  /** Control file (relative to the common dir) → content (base64), or null when absent. */
  files: Record<string, string | null>;
  /** hooks/<name> → content (base64), mode. */
  hooks: Record<string, { content: string; mode: number }>;
  /** refname → object id, outside the delivery namespaces. */
  refs: Record<string, string>;
}

const CONTROL_FILES = [
  'config',
  'config.worktree',
  'info/attributes',
  'info/exclude',
  'objects/info/alternates',
];
const SCHOOL_REFS = /^refs\/(heads\/school\/|school-delivery\/)/;

export async function gitCommonDir(repoPath: string): Promise<string> {
  const out = (await git(repoPath, 'rev-parse', '--git-common-dir')).trim();
  return isAbsolute(out) ? out : resolve(repoPath, out);
}

/**
 * Reads a control file without following a symlink a student may have put in its place. Anything
 * but a plain file within the bound reads as none: teardown then puts the baseline back.
 */
function readControl(path: string): Buffer | null {
  const r = readUntrusted(path, { maxBytes: MAX_CONTROL_BYTES });
  return r.ok ? r.bytes : null;
}
const MAX_CONTROL_BYTES = 16 * 1024 * 1024;

function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function listHooks(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => {
      const st = lstatSync(join(dir, f));
      return st.isFile() || st.isSymbolicLink();
    });
  } catch {
    return [];
  }
}

async function listRefs(commonDir: string): Promise<Record<string, string>> {
  const out = await git(commonDir, 'for-each-ref', '--format=%(refname) %(objectname)');
  const refs: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const [name, sha] = line.split(' ');
    if (name && sha && !SCHOOL_REFS.test(name)) refs[name] = sha;
  }
  return refs;
}

export async function captureBaseline(repoPath: string): Promise<GitControlBaseline> {
  const commonDir = await gitCommonDir(repoPath);
  const hooks: GitControlBaseline['hooks'] = {};
  for (const f of listHooks(join(commonDir, 'hooks'))) {
    const p = join(commonDir, 'hooks', f);
    const content = readControl(p);
    if (content) hooks[f] = { content: content.toString('base64'), mode: lstatSync(p).mode & 0o777 };
  }
  const files: GitControlBaseline['files'] = {};
  for (const f of CONTROL_FILES) files[f] = readControl(join(commonDir, f))?.toString('base64') ?? null;
  return { commonDir, files, hooks, refs: await listRefs(commonDir) };
}

export function baselinePath(runtimeDir: string, daemon: string): string {
  return join(runtimeDir, 'git-baseline', `${daemon}.json`);
}

export function writeBaseline(path: string, b: GitControlBaseline): void {
  writeJsonAtomic(path, b);
}

export function readBaseline(path: string): GitControlBaseline | undefined {
  try {
    const b = JSON.parse(readFileSync(path, 'utf8')) as GitControlBaseline;
    return b && typeof b.files === 'object' && typeof b.refs === 'object' ? b : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces whatever is at `path` (a file, a link, a directory) with `content`, or removes it. */
function put(path: string, content: Buffer | null, mode?: number): void {
  removeTreeSync(path); // a directory in its place may be of any depth or mode
  if (content === null) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content, mode === undefined ? {} : { mode });
}

/**
 * Puts the control files, hooks and refs back as recorded and removes each slot's
 * `config.worktree` (the toolkit never writes one). Returns what had changed, for the crew's alerts.
 */
export async function restoreBaseline(b: GitControlBaseline): Promise<string[]> {
  const changed: string[] = [];
  for (const [f, want] of Object.entries(b.files)) {
    const p = join(b.commonDir, f);
    const have = readControl(p);
    const wanted = want === null ? null : Buffer.from(want, 'base64');
    const same = have === null ? wanted === null && !present(p) : wanted !== null && have.equals(wanted);
    if (same) continue;
    changed.push(f);
    put(p, wanted);
  }
  const hooksDir = join(b.commonDir, 'hooks');
  if (present(hooksDir) && !lstatSync(hooksDir).isDirectory()) {
    changed.push('hooks');
    rmSync(hooksDir, { force: true });
  }
  for (const f of listHooks(hooksDir)) {
    const p = join(hooksDir, f);
    const want = b.hooks[f];
    const have = readControl(p);
    if (want && have && have.toString('base64') === want.content && (lstatSync(p).mode & 0o777) === want.mode)
      continue;
    changed.push(`hooks/${f}`);
    put(p, want ? Buffer.from(want.content, 'base64') : null, want?.mode);
  }
  for (const [f, want] of Object.entries(b.hooks)) {
    const p = join(hooksDir, f);
    if (present(p)) continue;
    put(p, Buffer.from(want.content, 'base64'), want.mode);
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
    if (present(p)) {
      removeTreeSync(p);
      changed.push(`worktrees/${w}/config.worktree`);
    }
  }
  const refs = await listRefs(b.commonDir).catch(() => undefined);
  if (refs) {
    for (const [name, sha] of Object.entries(b.refs)) {
      if (refs[name] === sha) continue;
      changed.push(name);
      await git(b.commonDir, 'update-ref', '--no-deref', name, sha);
    }
    for (const name of Object.keys(refs)) {
      if (name in b.refs) continue;
      changed.push(name);
      await git(b.commonDir, 'update-ref', '--no-deref', '-d', name);
    }
  }
  return changed;
}
