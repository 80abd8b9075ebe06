import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { VERSION } from '../../src/cli/version.js';
import { git, tempDir } from '../support/tmp.js';

/**
 * What a user gets from npm, not the repository: the package packed as `npm pack` packs it,
 * installed offline from the tarball into a scratch git repository, its bins run through npx.
 * Needs a built dist/ (npm run build); it packs whatever dist/ holds.
 */

const tmp = tempDir('school-package-');
const SLOW = 180_000;
let tarball = '';
let files: string[] = [];
let app = '';

function run(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '',
      HOME: join(tmp.path, 'home'),
      npm_config_cache: join(tmp.path, 'npm-cache'), // empty: nothing may come from a registry
      npm_config_update_notifier: 'false',
      GIT_CONFIG_NOSYSTEM: '1',
    },
    timeout: SLOW,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(() => {
  mkdirSync(join(tmp.path, 'home'));
  const cli = resolve('dist/cli/index.js');
  if (!existsSync(cli) || !readFileSync(cli, 'utf8').includes('school doctor'))
    throw new Error('dist/cli is missing or older than src/cli: run npm run build');
  const packed = run('npm', ['pack', '--pack-destination', tmp.path, '--json'], resolve('.'));
  expect(packed.code, packed.err).toBe(0);
  const [info] = JSON.parse(packed.out) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(tmp.path, info!.filename);
  files = info!.files.map((f) => f.path);
  app = join(tmp.path, 'app');
  mkdirSync(app);
  git(app, 'init', '-q', '-b', 'main');
  git(app, 'remote', 'add', 'origin', 'https://github.com/acme/app.git');
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'app', private: true, scripts: { test: 'node --test' } }),
  );
}, SLOW);
afterAll(() => tmp.cleanup());

describe('the school-core package', () => {
  it('holds the bundled CLI, the example, the docs and the licence, and nothing of the build', () => {
    expect(tarball).toMatch(new RegExp(`school-core-${VERSION.replace(/\./g, '\\.')}\\.tgz$`));
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'dist/cli/index.js',
      'examples/school.yml',
      'docs/agents.md',
    ])
      expect(files, f).toContain(f);
    for (const f of files) expect(f, f).not.toMatch(/^(src|test|bench|scripts|node_modules|\.github)\//);
    // The action entries run from the git tag (`uses: …@v1`), never from npm: of dist/ the package
    // holds the two bins (the CLI and school-simulate), the chunks they import and the licences;
    // dist/chunks/.npmignore leaves out the chunks only the actions import (the cache and artifact SDKs).
    const dist = files.filter((f) => f.startsWith('dist/'));
    expect(dist.filter((f) => !/^dist\/(cli\/|simulate\/|chunks\/|licenses\.txt$)/.test(f))).toEqual([]);
    expect(dist.filter((f) => /^dist\/chunks\/(artifact|cache)-/.test(f))).toEqual([]);
    for (const bin of ['dist/cli/index.js', 'dist/simulate/index.js']) {
      expect(files).toContain(bin);
      for (const [, chunk] of readFileSync(bin, 'utf8').matchAll(/"\.\.\/chunks\/([^"]+)"/g))
        expect(files, `${bin} imports ${chunk}`).toContain(`dist/chunks/${chunk}`);
    }
  });

  it('is publishable: not private, its bins, provenance, and no dependency to fetch at run time', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as Record<string, unknown>;
    expect(pkg.private).toBeUndefined();
    expect(pkg.bin).toEqual({
      school: 'dist/cli/index.js',
      'school-core': 'dist/cli/index.js',
      'school-simulate': 'dist/simulate/index.js',
    });
    expect(pkg.publishConfig).toEqual({ access: 'public', provenance: true });
    expect(pkg.repository).toMatchObject({
      type: 'git',
      url: expect.stringMatching(/^git\+https:\/\/github\.com\/.+\/school-core\.git$/),
    });
    // The CLI is bundled (scripts/build.mjs): everything it imports is in dist/.
    expect(pkg.dependencies).toBeUndefined();
  });

  it(
    'installs offline from the tarball; `npx school-core init` sets the repository up, `npx school --version` answers',
    () => {
      const install = run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], app);
      expect(install.code, install.err).toBe(0);
      expect(existsSync(join(app, 'node_modules/.bin/school-core'))).toBe(true);

      const version = run('npx', ['--offline', 'school', '--version'], app);
      expect(version.code, version.err).toBe(0);
      expect(version.out).toBe(`school-core ${VERSION}\n`);

      const init = run('npx', ['--offline', 'school-core', 'init'], app);
      expect(init.code, init.err).toBe(0);
      expect(init.out).toContain('verification: npm test');
      // The first run's daemon is on GitHub's hosted runner: no runner to register, so no runner steps.
      expect(init.out).not.toContain('./config.sh');
      expect(readFileSync(join(app, 'school.yml'), 'utf8')).toContain('hosted: ubuntu-latest');
      const workflow = parseYaml(readFileSync(join(app, '.github/workflows/school.yml'), 'utf8')) as {
        jobs: { school: { uses: string } };
      };
      expect(workflow.jobs.school.uses).toMatch(
        new RegExp(`/\\.github/workflows/school-loop\\.yml@v${VERSION}$`),
      );
      const check = run('npx', ['--offline', 'school-core', 'config', 'check'], app);
      expect(check.code, check.err).toBe(0);

      // The example ships too: a whole loop from the installed package, no network.
      const example = run('npx', ['--offline', 'school-core', 'loop', '--example'], app);
      expect(example.code, example.err).toBe(0);
      expect(example.out).toMatch(/Leaderboard:/);
    },
    SLOW,
  );
});

describe('release.yml', () => {
  const text = readFileSync('.github/workflows/release.yml', 'utf8');
  const wf = parseYaml(text) as {
    jobs: {
      release: {
        permissions: Record<string, string>;
        steps: Array<{ name?: string; run?: string; env?: Record<string, string> }>;
      };
    };
  };
  const steps = wf.jobs.release.steps;
  const at = (re: RegExp) => steps.findIndex((s) => re.test(s.name ?? ''));

  it('publishes with provenance from the commit the tag names, before the tags are pushed and the release made', () => {
    expect(wf.jobs.release.permissions).toEqual({ contents: 'write', 'id-token': 'write' });
    const publish = steps[at(/npm/)]!;
    expect(publish.run).toContain('npm publish --provenance --access public');
    expect(publish.run).toContain('"$(git rev-parse HEAD)" = "$(git rev-parse "$TAG^{commit}")"');
    expect(publish.env).toMatchObject({ NODE_AUTH_TOKEN: '${{ secrets.NPM_TOKEN }}' });
    expect(at(/^Tag vX\.Y\.Z/)).toBeLessThan(at(/npm/));
    expect(at(/npm/)).toBeLessThan(at(/^Push the tags/));
    expect(at(/^Push the tags/)).toBeLessThan(at(/^Publish the release/));
    // The token reaches npm through the environment, never a file or argv.
    expect(publish.run).not.toMatch(/_authToken=[^$]/);
  });
});
