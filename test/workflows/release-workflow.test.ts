import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { git, tempDir } from '../support/tmp.js';

/**
 * release.yml as far as it can be tested without the registry: GitHub's parser reads the job (its
 * permissions, its steps and their order), then its shell steps run as the runner runs them (`bash
 * -e`, the step's env with its expressions given their values) in a clone of a scratch "origin"
 * that already has a v1 release. `npm` and `gh` are recorders on PATH: what reaches them, and with
 * which commit checked out, is what would reach the registry and GitHub. The tag, the moved major
 * tag and the published tarball all name the run's commit; a failed publish pushes no tag; a
 * version already tagged publishes nothing.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const FILE = join(ROOT, '.github/workflows/release.yml');
const tmp = tempDir('school-release-wf-');
afterAll(() => tmp.cleanup());

interface Step {
  name: string;
  id?: string;
  uses?: string;
  run?: string;
  env: Record<string, string>;
  with?: Record<string, string>;
}

/** The job's steps as GitHub's parser reads them, each `run` and env value as written. */
let steps: Step[] = [];
let yaml: {
  permissions: unknown;
  on: Record<string, unknown>;
  jobs: { release: { if: string; permissions: Record<string, string>; steps: Step[] } };
};

beforeAll(async () => {
  const content = readFileSync(FILE, 'utf8');
  const parsed = parseWorkflow({ name: 'release.yml', content }, new NoOperationTraceWriter());
  expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
  const template = await convertWorkflowTemplate(parsed.context, parsed.value!);
  expect(template.errors ?? []).toEqual([]);
  yaml = parseYaml(content) as typeof yaml;
  const job = template.jobs.find(
    (j) => (j as { id: { value: string } }).id.value === 'release',
  ) as unknown as {
    steps: Array<{ name?: { toString(): string }; uses?: { value: string } }>;
  };
  expect(job.steps.length).toBe(yaml.jobs.release.steps.length);
  // The parser's order and names; the values as written (its tokens keep expressions unevaluated).
  steps = job.steps.map((s, i) => {
    const raw = yaml.jobs.release.steps[i]!;
    expect(s.uses?.value ?? raw.uses).toBe(raw.uses);
    return { ...raw, name: raw.name ?? s.name?.toString() ?? '', env: raw.env ?? {} };
  });
});

const at = (re: RegExp) => {
  const i = steps.findIndex((s) => re.test(s.name));
  expect(i, String(re)).toBeGreaterThanOrEqual(0);
  return i;
};

describe('release.yml, as GitHub parses it', () => {
  it('runs by hand on main only, with the permissions the tag push and provenance need and no more', () => {
    expect(Object.keys(yaml.on)).toEqual(['workflow_dispatch']);
    expect(yaml.permissions).toEqual({});
    expect(yaml.jobs.release.if).toBe("${{ github.ref == 'refs/heads/main' }}");
    expect(yaml.jobs.release.permissions).toEqual({ contents: 'write', 'id-token': 'write' });
  });

  it('checks out the run commit, checks the version and the tag, tags, publishes, pushes, releases — in that order', () => {
    expect(steps[0]!.uses).toMatch(/^actions\/checkout@[0-9a-f]{40}$/);
    expect(steps[0]!.with).toMatchObject({ ref: '${{ github.sha }}', 'persist-credentials': false });
    const order = [
      at(/^Check the version/),
      at(/^Refuse a version already tagged/),
      at(/^Tag vX\.Y\.Z and move vX/),
      at(/^Publish the package to npm/),
      at(/^Push the tags/),
      at(/^Publish the release/),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('the tag, the major tag and the publish all name github.sha; npm publishes with provenance', () => {
    const tag = steps[at(/^Tag vX/)]!;
    expect(tag.env.RELEASE_SHA).toBe('${{ github.sha }}');
    expect(tag.run).toContain('git tag -a "$TAG" -m "$TAG" "$RELEASE_SHA"');
    expect(tag.run).toContain('git tag -f -a "$MAJOR" -m "$MAJOR (follows $TAG)" "$RELEASE_SHA"');
    const publish = steps[at(/^Publish the package/)]!;
    expect(publish.env.RELEASE_SHA).toBe('${{ github.sha }}');
    expect(publish.run).toMatch(/npm publish --provenance --access public --ignore-scripts$/m);
    // Secrets reach the steps through env only, never written into a script.
    for (const s of steps) expect(s.run ?? '', s.name).not.toMatch(/\$\{\{\s*(secrets|github\.token)/);
  });
});

/** The values the runner gives the steps' expressions. */
const SECRET = 'npm_Secret0123456789abcdef';
function contextFor(sha: string, outputs: Record<string, string>): Record<string, string> {
  return {
    'github.sha': sha,
    'github.token': 'ghs_runnerToken0123456789',
    'github.repository': 'acme/school-core',
    'inputs.version': '1.2.0',
    'secrets.NPM_TOKEN': SECRET,
    'steps.check.outputs.tag': outputs.tag ?? '',
    'steps.check.outputs.major': outputs.major ?? '',
  };
}

function evaluate(value: string, context: Record<string, string>): string {
  return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    if (!(expr in context)) throw new Error(`the test gives no value to \${{ ${expr} }}`);
    return context[expr]!;
  });
}

/** A scratch origin with release 1.1.0 (tags v1.1.0 and v1 on its commit) and the 1.2.0 commit on main. */
function scratch(name: string) {
  const dir = join(tmp.path, name);
  const seed = join(dir, 'seed');
  mkdirSync(join(seed, 'src/cli'), { recursive: true });
  mkdirSync(join(seed, '.github/scripts'), { recursive: true });
  cpSync(join(ROOT, '.github/scripts/release-check.mjs'), join(seed, '.github/scripts/release-check.mjs'));
  const files = (version: string) => {
    writeFileSync(
      join(seed, 'package.json'),
      JSON.stringify({
        name: 'school-core',
        version,
        repository: { type: 'git', url: 'git+https://github.com/acme/school-core.git' },
      }),
    );
    writeFileSync(join(seed, 'src/cli/version.ts'), `export const VERSION = '${version}';\n`);
    writeFileSync(
      join(seed, 'CHANGELOG.md'),
      `# Changelog\n\n## ${version}\n\n- What ${version} brings.\n\n## 1.0.0\n\n- First.\n`,
    );
  };
  git(dir, 'init', '-q', '-b', 'main', 'seed');
  files('1.1.0');
  git(seed, 'add', '-A');
  git(seed, 'commit', '-q', '-m', '1.1.0');
  const previous = git(seed, 'rev-parse', 'HEAD');
  git(seed, 'tag', '-a', 'v1.1.0', '-m', 'v1.1.0');
  git(seed, 'tag', '-a', 'v1', '-m', 'v1');
  files('1.2.0');
  git(seed, 'commit', '-q', '-am', '1.2.0');
  const sha = git(seed, 'rev-parse', 'HEAD');
  const origin = join(dir, 'origin.git');
  git(dir, 'clone', '-q', '--bare', seed, origin);
  // What actions/checkout leaves: the run's commit, its origin the repository, no tags fetched.
  const work = join(dir, 'work');
  git(dir, 'clone', '-q', '--no-tags', origin, work);
  git(work, 'checkout', '-q', '--detach', sha);
  return { dir, origin, work, sha, previous };
}

/** `npm` and `gh` as recorders: what they were asked, with HEAD and the npm config file at the time. */
function recorders(dir: string, npmExit: number): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const record = (tool: string, exit: number) =>
    [
      '#!/usr/bin/env bash',
      `{ printf '%s\\n' "${tool} $*"; printf 'HEAD %s\\n' "$(git rev-parse HEAD)";`,
      `  if [ -n "$NPM_CONFIG_USERCONFIG" ]; then printf 'npmrc %s\\n' "$(cat "$NPM_CONFIG_USERCONFIG")"; fi; } >> "${join(dir, 'calls.log')}"`,
      `exit ${exit}`,
      '',
    ].join('\n');
  writeFileSync(join(bin, 'npm'), record('npm', npmExit));
  writeFileSync(join(bin, 'gh'), record('gh', 0));
  chmodSync(join(bin, 'npm'), 0o755);
  chmodSync(join(bin, 'gh'), 0o755);
  return bin;
}

/** Runs the job's shell steps in order as the runner would, stopping at the first that fails. */
function runJob(s: ReturnType<typeof scratch>, npmExit = 0) {
  const bin = recorders(s.dir, npmExit);
  const runnerTemp = join(s.dir, 'runner-temp');
  mkdirSync(runnerTemp, { recursive: true });
  const outputs: Record<string, string> = {};
  const ran: { name: string; code: number | null; out: string }[] = [];
  for (const step of steps) {
    if (!step.run) continue; // the checkout: done by scratch()
    const output = join(runnerTemp, `output-${ran.length}`);
    writeFileSync(output, '');
    const context = contextFor(s.sha, outputs);
    const env = Object.fromEntries(
      Object.entries(step.env).map(([k, v]) => [k, evaluate(String(v), context)]),
    );
    const r = spawnSync(
      'bash',
      ['--noprofile', '--norc', '-eo', 'pipefail', '-c', evaluate(step.run, context)],
      {
        cwd: s.work,
        encoding: 'utf8',
        env: {
          PATH: `${bin}:${process.env.PATH ?? ''}`,
          HOME: join(s.dir, 'home'),
          GIT_CONFIG_NOSYSTEM: '1',
          RUNNER_TEMP: runnerTemp,
          GITHUB_OUTPUT: output,
          ...env,
        },
      },
    );
    ran.push({ name: step.name, code: r.status, out: r.stdout + r.stderr });
    if (step.id)
      for (const line of readFileSync(output, 'utf8').split('\n').filter(Boolean)) {
        const eq = line.indexOf('=');
        outputs[`${line.slice(0, eq)}`] = line.slice(eq + 1);
      }
    if (r.status !== 0) break;
  }
  const log = join(s.dir, 'calls.log');
  return { ran, calls: existsSync(log) ? readFileSync(log, 'utf8') : '' };
}

const tagCommit = (origin: string, tag: string) => {
  const r = spawnSync('git', ['rev-parse', '--verify', '-q', `refs/tags/${tag}^{commit}`], {
    cwd: origin,
    encoding: 'utf8',
  });
  return r.status === 0 ? r.stdout.trim() : undefined;
};

describe('release.yml, its steps run against a scratch origin', () => {
  it('tags vX.Y.Z, moves vX and publishes with provenance, all at the run commit', () => {
    const s = scratch('release');
    expect(tagCommit(s.origin, 'v1')).toBe(s.previous);
    const { ran, calls } = runJob(s);
    expect(
      ran.map((r) => [r.name, r.code]).filter(([, c]) => c !== 0),
      JSON.stringify(ran),
    ).toEqual([]);
    expect(tagCommit(s.origin, 'v1.2.0')).toBe(s.sha);
    expect(tagCommit(s.origin, 'v1')).toBe(s.sha); // moved from 1.1.0's commit
    expect(tagCommit(s.origin, 'v1.1.0')).toBe(s.previous);
    // npm published from the run commit, before gh made the release; the token only through the env.
    expect(calls.split('\n').filter((l) => /^(npm|gh) /.test(l))).toEqual([
      'npm publish --provenance --access public --ignore-scripts',
      'gh release create v1.2.0 --verify-tag --title v1.2.0 --notes-file ' +
        join(s.dir, 'runner-temp/notes.md'),
    ]);
    expect(calls).toContain(`npm publish --provenance --access public --ignore-scripts\nHEAD ${s.sha}\n`);
    expect(calls).toContain('npmrc //registry.npmjs.org/:_authToken=${NODE_AUTH_TOKEN}');
    expect(calls).not.toContain(SECRET);
    expect(readFileSync(join(s.dir, 'runner-temp/notes.md'), 'utf8')).toBe('- What 1.2.0 brings.\n');
  }, 60_000);

  it('a failed publish pushes no tag: v1 stays on the last release', () => {
    const s = scratch('failed-publish');
    const { ran } = runJob(s, 1);
    expect(ran.at(-1)!.name).toMatch(/^Publish the package to npm/);
    expect(ran.at(-1)!.code).not.toBe(0);
    expect(tagCommit(s.origin, 'v1.2.0')).toBeUndefined();
    expect(tagCommit(s.origin, 'v1')).toBe(s.previous);
  }, 60_000);

  it('a version already tagged on GitHub is refused before anything is published', () => {
    const s = scratch('tagged');
    git(s.origin, 'tag', 'v1.2.0', s.previous);
    const { ran, calls } = runJob(s);
    const last = ran.at(-1)!;
    expect(last.name).toBe('Refuse a version already tagged');
    expect(last.code).toBe(1);
    expect(last.out).toMatch(/::error::v1\.2\.0 is already a tag on GitHub .*release a new version/);
    expect(calls).toBe('');
    expect(tagCommit(s.origin, 'v1')).toBe(s.previous);
  }, 60_000);
});

describe("release.yml's publish, dry-run on this repository", () => {
  it("the workflow's own npm publish command packs school-core at package.json's version, offline", () => {
    const publish = steps[at(/^Publish the package/)]!;
    const line = publish.run!.split('\n').find((l) => /\bnpm publish /.test(l))!;
    const argv = line
      .slice(line.indexOf('npm publish ') + 'npm '.length)
      .trim()
      .split(/\s+/);
    expect(argv).toEqual(['publish', '--provenance', '--access', 'public', '--ignore-scripts']);
    // --dry-run: everything but the upload (and the provenance statement, which needs the runner's OIDC token).
    const r = spawnSync('npm', [...argv, '--dry-run', '--offline', '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        HOME: join(tmp.path, 'npm-home'),
        npm_config_cache: join(tmp.path, 'npm-cache'),
        npm_config_update_notifier: 'false',
      },
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    // npm 11 keys the answer by package name; npm 10 gives the package itself.
    const pkg = (out['school-core'] ?? out) as { id: string; files: { path: string }[] };
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
    expect(pkg.id).toBe(`school-core@${version}`);
    expect(pkg.files.map((f) => f.path)).toEqual(
      expect.arrayContaining(['package.json', 'dist/cli/index.js']),
    );
  }, 120_000);
});
