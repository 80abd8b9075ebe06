import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The npm that came with this machine's node (its package directory). */
const SYSTEM_NPM = dirname(dirname(realpathSync('/usr/bin/npm')));

/**
 * This node and its npm, copied once per test process (100 MB and 2,000 files): every tree of
 * `nodeTree` hard-links to the copy, never to the machine's own files, so nothing a test does in a
 * tree can reach them.
 */
let copies: { node: string; npm: string } | undefined;
function installationCopy(): { node: string; npm: string } {
  if (copies) return copies;
  const dir = mkdtempSync(join(tmpdir(), 'school-node-copy-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(process.execPath, join(dir, 'node'));
  cpSync(SYSTEM_NPM, join(dir, 'npm'), { recursive: true });
  return (copies = { node: join(dir, 'node'), npm: join(dir, 'npm') });
}

/** A hard link of a file (a real file, as a copy is), or a copy across file systems. */
function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/** `from`'s tree at `to`: directories made, files hard-linked, symbolic links made again. */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const [a, b] = [join(from, e.name), join(to, e.name)];
    if (e.isDirectory()) linkTree(a, b);
    else if (e.isSymbolicLink()) symlinkSync(readlinkSync(a), b);
    else linkOrCopy(a, b);
  }
}

/**
 * A node installation as nvm and setup-node unpack one, built for real: `bin/node` (a real file:
 * a hard link to a copy of this node), `lib/node_modules/npm` and the `bin/npm` link into it.
 * Returns its `bin`.
 */
export function nodeTree(root: string): string {
  const copy = installationCopy();
  mkdirSync(join(root, 'bin'), { recursive: true });
  linkOrCopy(copy.node, join(root, 'bin', 'node'));
  linkTree(copy.npm, join(root, 'lib', 'node_modules', 'npm'));
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'bin', 'npm'));
  return join(root, 'bin');
}

/**
 * `npm install` of `specs` from the local npm cache only (`--offline`: the packages must have been
 * installed once on this machine). `global`: into `<prefix>/lib/node_modules` with links in
 * `<prefix>/bin`, as `npm install -g` under nvm; else `<prefix>/node_modules` (`--prefix`).
 * Returns why it failed, or undefined.
 */
export function npmInstallOffline(
  prefix: string,
  specs: readonly string[],
  global: boolean,
): string | undefined {
  mkdirSync(prefix, { recursive: true });
  const r = spawnSync(
    'npm',
    [
      'install',
      ...(global ? ['-g'] : []),
      '--offline',
      '--no-audit',
      '--no-fund',
      '--no-save',
      '--no-package-lock',
      '--loglevel=error',
      '--prefix',
      prefix,
      ...specs,
    ],
    { encoding: 'utf8', timeout: 240_000, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
  );
  if (r.status === 0) return undefined;
  return `npm install --offline ${specs.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout || '').trim().split('\n')[0]}`;
}
