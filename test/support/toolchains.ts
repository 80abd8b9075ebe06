import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The npm that came with this machine's node (its package directory). */
const SYSTEM_NPM = dirname(dirname(realpathSync('/usr/bin/npm')));

/**
 * A node installation as nvm and setup-node unpack one, built for real: `bin/node` (a copy of this
 * node, a real file), `lib/node_modules/npm` and the `bin/npm` link into it. Returns its `bin`.
 */
export function nodeTree(root: string): string {
  mkdirSync(join(root, 'bin'), { recursive: true });
  copyFileSync(process.execPath, join(root, 'bin', 'node'));
  cpSync(SYSTEM_NPM, join(root, 'lib', 'node_modules', 'npm'), { recursive: true });
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
