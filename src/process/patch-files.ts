import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGit } from './git.js';

/**
 * The one reader of what a patch touches, by git. A patch's text is never read for its paths: git
 * quotes a path with a tab, a newline, a quote or a non-ASCII byte (`"a/\303\251t\tx"`), takes a
 * rename from its `rename from` / `rename to` lines whatever the `diff --git` header says, and
 * applies modes, symlinks and gitlinks. Only git's own listing of the applied result names what a
 * patch really touches, so the rubric and its fences, sealed-test protection, delivery and the
 * continuation of an interrupted crew all ask git here.
 *
 * Listed with `git diff --cached --raw --numstat -z --no-renames`: paths verbatim (NUL-terminated,
 * never quoted), a rename as its two sides (the old path deleted, the new one added), a binary file
 * without line counts, each side's mode (a mode change, a symlink `120000`, a gitlink `160000`).
 */
export interface PatchFile {
  path: string;
  /** A (added), D (deleted), M (modified) or T (type changed: file, symlink, gitlink). */
  status: string;
  oldMode: string;
  newMode: string;
  /** The blobs (all zeros for a side that does not exist): an unchanged blob under two paths is a move. */
  oldSha: string;
  newSha: string;
  /** Lines added and removed; both 0 for a binary file. */
  added: number;
  removed: number;
  binary: boolean;
  /** A submodule's commit (mode 160000) on either side. */
  gitlink: boolean;
}

export type PatchFiles = { ok: true; files: PatchFile[] } | { ok: false; output: string };

export const GITLINK_MODE = '160000';

/**
 * What `patch` touches when git applies it to `base` in `repo`: applied to a private index of
 * `base` (the repository's own index, HEAD and work tree are untouched) and listed back. `ok: false`
 * with git's words when the patch does not apply there. An empty patch touches nothing.
 */
export async function patchFiles(repo: string, base: string, patch: string | Buffer): Promise<PatchFiles> {
  if (patch.length === 0) return { ok: true, files: [] };
  const dir = mkdtempSync(join(tmpdir(), 'school-patch-'));
  const env = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    const steps: Array<[string[], string | Buffer | undefined]> = [
      [['read-tree', base], undefined],
      [['apply', '--cached', '--binary', '--whitespace=nowarn', '-'], patch],
    ];
    for (const [args, input] of steps) {
      const r = await runGit(args, { cwd: repo, env, input, timeoutMs: 120_000 });
      if (r.exitCode !== 0) return { ok: false, output: (r.spawnError ?? '') + r.stderr.toString('utf8') };
    }
    return await indexFiles(repo, base, env);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What the index (the repository's, or `env.GIT_INDEX_FILE`) changes against `base`: the listing
 * `patchFiles` reads, for a caller that applied the patch itself (to a checkout, or to the index a
 * commit is written from).
 */
export async function indexFiles(
  repo: string,
  base: string,
  env: Record<string, string> = {},
): Promise<PatchFiles> {
  const listed = await runGit(
    [
      'diff',
      '--cached',
      // Index against tree: no work tree is read, and a gitlink must show.
      '--ignore-submodules=none',
      '--raw',
      '--numstat',
      '-z',
      '--no-renames',
      '--no-abbrev',
      base,
      '--',
    ],
    { cwd: repo, env, timeoutMs: 120_000 },
  );
  if (listed.exitCode !== 0 || listed.overflowed)
    return {
      ok: false,
      output:
        (listed.spawnError ?? '') +
        (listed.overflowed ? 'the listing of the changes is over its bound' : listed.stderr.toString('utf8')),
    };
  return { ok: true, files: parseListing(listed.stdout) };
}

/**
 * `:<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0` for each path, then
 * `<added>\t<removed>\t<path>\0` (`-\t-\t` for a binary file) for each path.
 */
export function parseListing(raw: Buffer): PatchFile[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== 0) continue;
    parts.push(raw.subarray(start, i).toString('utf8'));
    start = i + 1;
  }
  const files = new Map<string, PatchFile>();
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.startsWith(':')) {
      const [oldMode = '', newMode = '', oldSha = '', newSha = '', status = ''] = part.slice(1).split(' ');
      const path = parts[++i] ?? '';
      files.set(path, {
        path,
        status,
        oldMode,
        newMode,
        oldSha,
        newSha,
        added: 0,
        removed: 0,
        binary: false,
        gitlink: oldMode === GITLINK_MODE || newMode === GITLINK_MODE,
      });
      continue;
    }
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]*)$/.exec(part);
    const f = m && files.get(m[3]!);
    if (!m || !f) continue;
    f.binary = m[1] === '-';
    f.added = f.binary ? 0 : Number(m[1]);
    f.removed = f.binary ? 0 : Number(m[2]);
  }
  return [...files.values()];
}
