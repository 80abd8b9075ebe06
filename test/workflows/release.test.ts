import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { VERSION } from '../../src/cli/version.js';
import { tempDir } from '../support/tmp.js';

/** Releases and the supply-chain files: what a user checks before trusting `@v1`. */

const tmp = tempDir('school-release-');
afterAll(() => tmp.cleanup());
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; license: string };

describe('version, licence, updates', () => {
  it("`school --version` prints package.json's version", () => {
    expect(VERSION).toBe(pkg.version);
    const r = spawnSync(process.execPath, ['--import', 'tsx', resolve('src/cli/index.ts'), '--version'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`school-core ${pkg.version}\n`);
  });

  it('ships the licence package.json names', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync('LICENSE', 'utf8')).toMatch(/^MIT License\n/);
  });

  it('Dependabot updates the pinned actions and the npm packages', () => {
    const config = parseYaml(readFileSync('.github/dependabot.yml', 'utf8')) as {
      version: number;
      updates: { 'package-ecosystem': string; directory: string }[];
    };
    expect(config.version).toBe(2);
    expect(config.updates.map((u) => [u['package-ecosystem'], u.directory]).sort()).toEqual([
      ['github-actions', '/'],
      ['npm', '/'],
    ]);
  });
});

describe('release-check.mjs', () => {
  /** A copy of the files the check reads, with the given changes. */
  function repo(over: { pkg?: string; cli?: string; changelog?: string }) {
    const dir = join(tmp.path, `r${Math.random().toString(16).slice(2)}`);
    mkdirSync(join(dir, 'src/cli'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ version: over.pkg ?? '1.2.0' }));
    writeFileSync(join(dir, 'src/cli/version.ts'), `export const VERSION = '${over.cli ?? '1.2.0'}';\n`);
    writeFileSync(
      join(dir, 'CHANGELOG.md'),
      over.changelog ?? '# Changelog\n\n## Unreleased\n\n## 1.2.0\n\n- Faster plans.\n\n## 1.1.0\n\n- Old.\n',
    );
    return dir;
  }
  function check(dir: string, version: string) {
    const output = join(dir, 'output');
    writeFileSync(output, '');
    const r = spawnSync(
      process.execPath,
      [resolve('.github/scripts/release-check.mjs'), join(dir, 'notes.md')],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', RELEASE_VERSION: version, GITHUB_OUTPUT: output },
      },
    );
    return { ...r, output: readFileSync(output, 'utf8') };
  }

  it('accepts a version that package.json, the CLI and the changelog agree on, and writes its notes', () => {
    const dir = repo({});
    const r = check(dir, '1.2.0');
    expect(r.status, r.stderr).toBe(0);
    expect(r.output).toBe('tag=v1.2.0\nmajor=v1\n');
    expect(readFileSync(join(dir, 'notes.md'), 'utf8')).toBe('- Faster plans.\n');
  });

  it('refuses, naming the fix, when anything disagrees', () => {
    expect(check(repo({}), 'v1.2.0').stderr).toMatch(/is not X\.Y\.Z/);
    expect(check(repo({}), '1.2.0; rm -rf ~').stderr).toMatch(/is not X\.Y\.Z/);
    expect(check(repo({ pkg: '1.1.0' }), '1.2.0').stderr).toMatch(/package\.json says 1\.1\.0, not 1\.2\.0/);
    expect(check(repo({ cli: '1.1.0' }), '1.2.0').stderr).toMatch(/src\/cli\/version\.ts says 1\.1\.0/);
    const none = repo({ changelog: '# Changelog\n\n## Unreleased\n\n- x\n' });
    expect(check(none, '1.2.0').stderr).toMatch(/no "## 1\.2\.0" section/);
    const empty = repo({ changelog: '## 1.2.0\n\n## 1.1.0\n- y\n' });
    const r = check(empty, '1.2.0');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/section of CHANGELOG\.md is empty/);
    expect(r.output).toBe('');
  });

  it('the repository itself has a changelog entry for its current version', () => {
    const dir = join(tmp.path, 'self');
    mkdirSync(join(dir, 'src/cli'), { recursive: true });
    for (const f of ['package.json', 'CHANGELOG.md', 'src/cli/version.ts']) cpSync(f, join(dir, f));
    const r = check(dir, pkg.version);
    expect(r.status, r.stderr).toBe(0);
  });
});
