import { lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { globMatcher } from '../curriculum/glob.js';
import { runGit } from '../process/git.js';
import { indexFiles, type PatchFile } from '../process/patch-files.js';

/**
 * The crew's patch, as git itself applies it. What a patch changes is read back from the index of
 * the checkout it was applied to, never from the patch text: git unquotes C-style paths
 * (`"a/package\056json"`), takes renames from their `rename to` lines whatever the `diff --git`
 * header says, and applies modes, symlinks and gitlinks, so only its own listing of the result
 * names what a patch really touched (src/process/patch-files.ts).
 */

/** One path the applied patch changed (a rename is a delete and an add). */
export type PatchChange = PatchFile;

export async function git(
  cwd: string,
  args: string[],
): Promise<{ ok: boolean; output: string; stdout: Buffer }> {
  const r = await runGit(args, { cwd, timeoutMs: 120_000 });
  return {
    ok: r.exitCode === 0 && !r.overflowed,
    output: (r.spawnError ?? '') + r.stderr.toString('utf8') + r.stdout.toString('utf8'),
    stdout: r.stdout,
  };
}

/**
 * Applies `patchFile` to the checkout `wt` (at `baseSha`) and its index, and lists what changed.
 * `ok: false` when git refuses the patch.
 */
export async function applyPatch(
  wt: string,
  patchFile: string,
  baseSha: string,
): Promise<{ ok: true; changes: PatchChange[] } | { ok: false; output: string }> {
  const applied = await git(wt, ['apply', '--index', '--binary', '--whitespace=nowarn', patchFile]);
  if (!applied.ok) return { ok: false, output: applied.output };
  const listed = await indexFiles(wt, baseSha);
  if (!listed.ok) return { ok: false, output: `could not list the applied changes: ${listed.output}` };
  return { ok: true, changes: listed.files };
}

const SYMLINK = '120000';
const LIST = 10;

function outside(rel: string): boolean {
  return rel === '..' || rel.startsWith('../') || isAbsolute(rel);
}

/** Where an added symlink leads when that is outside the checkout, else undefined. */
function escapingTarget(wt: string, path: string): string | undefined {
  const abs = join(wt, path);
  let target: string;
  try {
    // With core.symlinks=false git writes the target as the file's content.
    target = lstatSync(abs).isSymbolicLink() ? readlinkSync(abs) : readFileSync(abs, 'utf8');
  } catch {
    return '(unreadable)';
  }
  if (isAbsolute(target) || outside(relative(wt, resolve(dirname(abs), target)))) return target;
  try {
    // Lexically inside, but through a symlink the base already has: where it really leads.
    if (outside(relative(realpathSync(wt), realpathSync(abs)))) return target;
  } catch {
    // Dangling: the lexical check decided.
  }
  return undefined;
}

/**
 * Why the applied patch is tampering with the sealed run, one reason per kind; empty when it is not.
 * - a path matching `protect` (`grading.sealedProtect`, plus a results file the judge reads). Also
 *   compared lower-cased: on a case-insensitive file system `PACKAGE.JSON` is `package.json`;
 * - an added or changed symlink whose target leaves the checkout (absolute, `..`, or through a
 *   symlink of the base);
 * - a submodule (gitlink, mode 160000) added, changed or removed;
 * - any `.gitattributes`: attributes select filters, diff and merge drivers and conversions for
 *   whatever runs git in the checkout;
 * - any `.gitmodules` added or changed: it names where submodules come from (a URL, a path, an
 *   `update` command) for whatever runs `git submodule` in the checkout — a submodule by the back
 *   door, even without a gitlink in the same patch.
 */
export function tampering(wt: string, changes: readonly PatchChange[], protect: readonly string[]): string[] {
  const matchers = protect.flatMap((g) => [globMatcher(g), globMatcher(g.toLowerCase())]);
  const isProtected = (p: string) => matchers.some((m) => m(p) || m(p.toLowerCase()));
  const list = (xs: string[]) => xs.slice(0, LIST).join(', ') + (xs.length > LIST ? ', …' : '');
  const sealed = changes.filter((c) => isProtected(c.path)).map((c) => c.path);
  const links = changes
    .filter((c) => c.newMode === SYMLINK)
    .flatMap((c) => {
      const to = escapingTarget(wt, c.path);
      return to === undefined ? [] : [`${c.path} -> ${to}`];
    });
  const gitlinks = changes.filter((c) => c.gitlink).map((c) => c.path);
  const attributes = changes
    .filter((c) => basename(c.path).toLowerCase() === '.gitattributes')
    .map((c) => c.path);
  const modules = changes.filter((c) => basename(c.path).toLowerCase() === '.gitmodules').map((c) => c.path);
  const reasons: string[] = [];
  if (sealed.length) reasons.push(`the patch changes sealed path(s) ${list(sealed)} (grading.sealedProtect)`);
  if (links.length) reasons.push(`the patch adds symlink(s) leading outside the checkout: ${list(links)}`);
  if (gitlinks.length) reasons.push(`the patch adds or changes submodule(s) (gitlink): ${list(gitlinks)}`);
  if (modules.length)
    reasons.push(`the patch changes ${list(modules)} (it names submodules' sources and update commands)`);
  if (attributes.length)
    reasons.push(
      `the patch changes ${list(attributes)} (attributes select filters and drivers for git in the checkout)`,
    );
  return reasons;
}
