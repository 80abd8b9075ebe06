import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initRepo, git, tempDir } from '../support/tmp.js';

/**
 * scripts/build.mjs in a scratch copy of the checkout (the committed sources and action.yml files,
 * this build script; node_modules linked), so dist/ can be built, tampered with and checked without touching
 * the real one: one esbuild build with shared chunks, deterministic, and `--check` naming every file
 * that differs from a fresh build.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const tmp = tempDir('school-build-');
const repo = join(tmp.path, 'repo');
const dist = join(repo, 'dist');
const SLOW = 180_000;
const ACTIONS = readdirSync(join(ROOT, 'actions')).filter((n) => {
  try {
    return statSync(join(ROOT, 'actions', n, 'action.yml')).isFile();
  } catch {
    return false;
  }
});

function build(...args: string[]) {
  const r = spawnSync(process.execPath, ['scripts/build.mjs', ...args], {
    cwd: repo,
    encoding: 'utf8',
    timeout: SLOW,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Every file under dist/, relative to it. */
function files(): string[] {
  return readdirSync(dist, { recursive: true, withFileTypes: true })
    .filter((d) => !d.isDirectory())
    .map((d) => relative(dist, join(d.parentPath, d.name)))
    .sort();
}

beforeAll(() => {
  initRepo(repo);
  // The committed sources (a file being edited in the checkout may not build yet; lab/ holds the
  // simulator's bin), this build script.
  const archive = spawnSync(
    'git',
    ['archive', 'HEAD', 'src', 'lab', 'actions', 'package.json', 'tsconfig.json'],
    {
      cwd: ROOT,
      maxBuffer: 1 << 30,
    },
  );
  expect(archive.status, String(archive.stderr)).toBe(0);
  const untar = spawnSync('tar', ['-x', '-C', repo], { input: archive.stdout });
  expect(untar.status, String(untar.stderr)).toBe(0);
  cpSync(join(ROOT, 'scripts/build.mjs'), join(repo, 'scripts/build.mjs'));
  symlinkSync(join(ROOT, 'node_modules'), join(repo, 'node_modules'));
  const built = build();
  expect(built.code, built.err).toBe(0);
}, SLOW);
afterAll(() => tmp.cleanup());

describe('npm run build', () => {
  it('writes every entry, its shared chunks in dist/chunks/, one licences file, all under 10 MB', () => {
    const all = files();
    for (const name of [...ACTIONS, 'cli', 'simulate']) expect(all, name).toContain(`${name}/index.js`);
    expect(all).toContain('licenses.txt');
    expect(JSON.parse(readFileSync(join(dist, 'package.json'), 'utf8'))).toEqual({ type: 'module' });
    // One level below dist/: src/sandbox/sandbox.ts finds the toolkit two levels above its module.
    for (const f of all) expect(f.split('/').length, f).toBeLessThanOrEqual(2);
    expect(
      all.filter((f) => f.endsWith('.node')),
      'native addons',
    ).toEqual([]);
    const chunks = all.filter((f) => f.startsWith('chunks/') && f.endsWith('.js'));
    expect(chunks.length).toBeGreaterThan(1);
    // Shared code is in the chunks, once: each entry is a thin module that imports them.
    for (const name of [...ACTIONS, 'cli'])
      expect(readFileSync(join(dist, name, 'index.js'), 'utf8')).toMatch(
        /from "\.\.\/chunks\/chunk-[A-Z0-9]+\.js"/,
      );
    // The Octokit client is in one file of dist/, not in one per entry.
    const octokit = all.filter((f) => readFileSync(join(dist, f), 'utf8').includes('octokit-core.js/'));
    expect(octokit).toHaveLength(1);
    const bytes = all.reduce((n, f) => n + statSync(join(dist, f)).size, 0);
    expect(bytes).toBeLessThan(10 * 1024 * 1024);
    const licences = readFileSync(join(dist, 'licenses.txt'), 'utf8');
    for (const pkg of ['@actions/core', '@octokit/core', 'zod'])
      expect(licences).toMatch(new RegExp(`^${pkg}@\\d`, 'm'));
  });

  it('builds entries that run: the CLI as an executable bin, an action from its chunks', () => {
    expect(statSync(join(dist, 'cli/index.js')).mode & 0o111).not.toBe(0);
    const version = spawnSync(join(dist, 'cli/index.js'), ['--version'], { cwd: tmp.path, encoding: 'utf8' });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^school-core \d+\.\d+\.\d+/);
    // No inputs: the action loads all it imports and reports its first missing input.
    const action = spawnSync(process.execPath, [join(dist, 'checkpoint-state/index.js')], {
      cwd: tmp.path,
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    expect(action.stdout).toContain('::error::Input required and not supplied: mode');
  });

  it('keeps the chunks only the actions import out of the npm package', () => {
    const ignored = readFileSync(join(dist, 'chunks/.npmignore'), 'utf8').split('\n').filter(Boolean);
    expect(ignored.some((f) => f.startsWith('artifact-'))).toBe(true);
    expect(ignored.some((f) => f.startsWith('cache-'))).toBe(true);
    // Every chunk the CLI imports stays in the package.
    const cli = readFileSync(join(dist, 'cli/index.js'), 'utf8');
    for (const m of cli.matchAll(/"\.\.\/chunks\/([^"]+)"/g)) expect(ignored).not.toContain(m[1]);
  });
});

describe('npm run check-dist', () => {
  it('passes on what the build wrote: the same sources give the same bytes', () => {
    const r = build('--check');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^check-dist: dist\/ matches a fresh build of cli, /);
  });

  it(
    'names each file that differs, is missing, is stale or lost its executable bit, and leaves dist/ as it was',
    () => {
      // A committed file the build no longer writes, removed from the disk but still in git.
      mkdirSync(join(dist, 'gone'));
      writeFileSync(join(dist, 'gone/index.js'), 'old\n');
      git(repo, 'add', 'dist');
      git(repo, 'commit', '-qm', 'dist');
      rmSync(join(dist, 'gone'), { recursive: true });
      const chunk = files().find((f) => f.startsWith('chunks/chunk-'))!;
      appendFileSync(join(dist, chunk), '// edited\n');
      chmodSync(join(dist, 'cli/index.js'), 0o644);
      rmSync(join(dist, 'fetch-curriculum/index.js'));
      writeFileSync(join(dist, 'stray.js'), 'stray\n');
      const before = files();

      const r = build('--check');
      expect(r.code).toBe(1);
      expect(r.err).toContain('check-dist: dist/ does not match a fresh build (5 file(s)).');
      expect(r.err).toContain(`  differs: dist/${chunk}\n`);
      expect(r.err).toContain('  differs: dist/cli/index.js (executable bit)\n');
      expect(r.err).toContain('  missing: dist/fetch-curriculum/index.js (the build writes it)\n');
      expect(r.err).toContain('  not written by the build: dist/gone/index.js\n');
      expect(r.err).toContain('  not written by the build: dist/stray.js\n');
      expect(files()).toEqual(before);

      const rebuilt = build();
      expect(rebuilt.code, rebuilt.err).toBe(0);
      expect(files()).not.toContain('stray.js');
      // Committing the rebuilt dist/ removes the stale file from git too.
      git(repo, 'add', '-A', 'dist');
      git(repo, 'commit', '-qm', 'rebuilt');
      const again = build('--check');
      expect(again.code, again.err).toBe(0);
    },
    SLOW,
  );
});
