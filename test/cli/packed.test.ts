import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { git, tempDir } from '../support/tmp.js';

/**
 * The install path before the package is on the registry, as the README gives it: the package
 * packed from this checkout (`npm pack`, what `npm publish` would upload), installed into a scratch
 * repository without the network, and its `school-core init --ref main` run there. The committed
 * dist/ is what runs, as it is for a user.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const tmp = tempDir('school-packed-');
afterAll(() => tmp.cleanup());

function run(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: tmp.path, npm_config_cache: join(tmp.path, 'npm-cache') },
    timeout: 170_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('the packed package', () => {
  it('installs offline into a repository and its init pins the loop to the ref it is given', () => {
    const pack = run('npm', ['pack', '--ignore-scripts', '--pack-destination', tmp.path], ROOT);
    expect(pack.code, pack.err).toBe(0);
    const tarball = readdirSync(tmp.path).find((f) => /^school-core-.*\.tgz$/.test(f));
    expect(tarball).toBeDefined();
    const repo = join(tmp.path, 'repo');
    git(tmp.path, 'init', '-q', '-b', 'main', 'repo');
    writeFileSync(
      join(repo, 'package.json'),
      JSON.stringify({ name: 'app', scripts: { test: 'node --test' } }),
    );
    const install = run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(tmp.path, tarball!)],
      repo,
    );
    expect(install.code, install.err).toBe(0);
    const init = run(join(repo, 'node_modules/.bin/school-core'), ['init', '--ref', 'main'], repo);
    expect(init.code, init.err).toBe(0);
    expect(init.out).toMatch(/pinned to school-core\/school-core@main \(not checked: no GITHUB_TOKEN/);
    const caller = parseYaml(readFileSync(join(repo, '.github/workflows/school.yml'), 'utf8')) as {
      jobs: { school: { uses: string; with: Record<string, string> } };
    };
    expect(caller.jobs.school.uses).toBe('school-core/school-core/.github/workflows/school-loop.yml@main');
    expect(caller.jobs.school.with['toolkit-ref']).toBe('main');
    const version = run(join(repo, 'node_modules/.bin/school'), ['--version'], repo);
    expect(version.out).toMatch(/^school-core \d+\.\d+\.\d+/);
    // The simulator is its own bin in the same package (lab/simulate, outside the `school` CLI).
    const sim = run(
      join(repo, 'node_modules/.bin/school-simulate'),
      ['--issues', '12', '--daemons', '1', '--slots', '2', '--json'],
      repo,
    );
    expect(sim.code, sim.err).toBe(0);
    expect((JSON.parse(sim.out) as { students: number }).students).toBe(2);
  }, 180_000);
});
