import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { remoteOf, TOOLKIT_REPOSITORY } from '../../src/cli/commands/init.js';
import { VERSION } from '../../src/cli/version.js';
import { git, tempDir } from '../support/tmp.js';

/**
 * `school init` sets a repository up: school.yml, the caller workflow pinned to this release, the
 * secrets and the runner commands; it refuses to overwrite and says what to do on bad input. Runs
 * the CLI as a process, in real git repositories.
 */

const tmp = tempDir('school-init-');
afterAll(() => tmp.cleanup());
const CLI = resolve('src/cli/index.ts');
// tsx from this checkout: the scratch repositories have no node_modules.
const TSX = pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href;
let n = 0;

/** A bin directory with a `claude` that answers --version as Claude Code does. */
const bin = join(tmp.path, 'bin');
mkdirSync(bin);
writeFileSync(join(bin, 'claude'), '#!/bin/sh\necho "2.1.12 (Claude Code)"\n');
chmodSync(join(bin, 'claude'), 0o755);

function school(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', TSX, CLI, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: tmp.path, NODE_PATH: '' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function repo(o: { origin?: string; test?: boolean; git?: boolean } = {}): string {
  const dir = join(tmp.path, `repo${++n}`);
  mkdirSync(dir);
  if (o.git !== false) git(dir, 'init', '-q', '-b', 'main');
  if (o.origin) git(dir, 'remote', 'add', 'origin', o.origin);
  if (o.test !== false)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ scripts: { test: 'node --test' } }));
  return dir;
}

async function parserErrors(file: string): Promise<string[]> {
  const parsed = parseWorkflow(
    { name: file, content: readFileSync(file, 'utf8') },
    new NoOperationTraceWriter(),
  );
  await convertWorkflowTemplate(parsed.context, parsed.value!);
  return parsed.context.errors.getErrors().map((e) => e.message);
}

describe('school init', () => {
  it('writes school.yml and the caller workflow pinned to this release; both pass their checks', async () => {
    const dir = repo({ origin: 'git@github.com:acme/app.git' });
    const r = school(dir, 'init');
    expect(r.code, r.err).toBe(0);
    const workflow = join(dir, '.github/workflows/school.yml');

    const check = school(dir, 'config', 'check');
    expect(check.code, check.err).toBe(0);
    expect(check.out).toMatch(/school\.yml: valid\. 1 daemon\(s\), 1 agent\(s\)/);
    expect(await parserErrors(workflow)).toEqual([]);

    const caller = parseYaml(readFileSync(workflow, 'utf8')) as {
      on: Record<string, unknown>;
      jobs: { school: { uses: string; with: Record<string, unknown>; secrets: string; permissions: object } };
    };
    expect(Object.keys(caller.on)).toEqual([
      'schedule',
      'workflow_dispatch',
      'issues',
      'issue_comment',
      'check_suite',
      'workflow_run',
    ]);
    // The review relay beside it (its conditions: test/workflows/events.test.ts).
    const relay = join(dir, '.github/workflows/school-review.yml');
    expect(await parserErrors(relay)).toEqual([]);
    expect(Object.keys((parseYaml(readFileSync(relay, 'utf8')) as { on: object }).on)).toEqual([
      'pull_request_review',
    ]);
    expect(caller.jobs.school.uses).toBe(
      `${TOOLKIT_REPOSITORY}/.github/workflows/school-loop.yml@v${VERSION}`,
    );
    expect(caller.jobs.school.with).toMatchObject({
      'toolkit-repository': TOOLKIT_REPOSITORY,
      'toolkit-ref': `v${VERSION}`,
      'runner-label-prefix': 'school',
    });
    expect(Object.keys(caller.jobs.school.with).sort()).toEqual([
      // The one daemon runs on GitHub's ubuntu-latest: its crew job ends within the hosted 6 hours.
      'crew-timeout-minutes',
      'event-issue',
      'event-pull-request',
      // A manual run's dead letters to retry (Actions tab → Run workflow → requeue).
      'requeue-dead-letter',
      'runner-label-prefix',
      'toolkit-ref',
      'toolkit-repository',
    ]);
    expect(caller.jobs.school.secrets).toBe('inherit');
    // Every input it sets is one the loop declares.
    const loop = parseYaml(readFileSync('.github/workflows/school-loop.yml', 'utf8')) as {
      on: { workflow_call: { inputs: Record<string, unknown> } };
    };
    for (const k of Object.keys(caller.jobs.school.with))
      expect(Object.keys(loop.on.workflow_call.inputs)).toContain(k);
    // …and the permissions the README's caller grants.
    expect(caller.jobs.school.permissions).toEqual({
      contents: 'write',
      issues: 'write',
      'pull-requests': 'write',
      checks: 'read',
      statuses: 'read',
      actions: 'write',
    });

    expect(caller.jobs.school.with['crew-timeout-minutes']).toBe(360);
    const config = parseYaml(readFileSync(join(dir, 'school.yml'), 'utf8')) as {
      fleet: { daemons: Array<{ id: string; hosted?: string }> };
    };
    expect(config.fleet.daemons).toEqual([expect.objectContaining({ id: 'local', hosted: 'ubuntu-latest' })]);

    // What to do next, exactly: the secret its agent needs, no runner to register, the first run.
    expect(r.out).toContain('gh secret set ANTHROPIC_API_KEY --repo acme/app');
    expect(r.out).toContain('gh secret set SCHOOL_DELIVERY_TOKEN --repo acme/app');
    expect(r.out).not.toContain('OPENAI_API_KEY --repo');
    expect(r.out).toContain("Daemon local runs on GitHub's ubuntu-latest runner: nothing to register.");
    expect(r.out).not.toContain('./config.sh');
    expect(r.out).toContain('2. Commit and add the secrets:');
    expect(r.out).toContain('gh workflow run school.yml --repo acme/app');
    expect(r.out).toMatch(/Step 1 of 3 done/);
    expect(r.out).toContain('verification: npm test');
  });

  it('--self-hosted: the daemon runs on a runner you register, and init says how', async () => {
    const dir = repo({ origin: 'git@github.com:acme/app.git' });
    const r = school(dir, 'init', '--self-hosted');
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(dir, 'school.yml'), 'utf8')).not.toMatch(/hosted:/);
    const workflow = join(dir, '.github/workflows/school.yml');
    expect(await parserErrors(workflow)).toEqual([]);
    expect(readFileSync(workflow, 'utf8')).not.toContain('crew-timeout-minutes');
    expect(r.out).toContain(
      './config.sh --url https://github.com/acme/app --token <registration token> --name school-local --labels school-local --unattended',
    );
    expect(r.out).toContain('gh api -X POST repos/acme/app/actions/runners/registration-token --jq .token');
    expect(r.out).toContain('npx school-core doctor');
  });

  it('refuses to overwrite either file without --force, and writes neither; --force replaces both', () => {
    const dir = repo({ origin: 'https://github.com/acme/app.git' });
    const workflow = join(dir, '.github/workflows/school.yml');
    mkdirSync(join(dir, '.github/workflows'), { recursive: true });
    writeFileSync(workflow, 'name: mine\n');
    const r = school(dir, 'init');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/\.github\/workflows\/school\.yml exists; edit it, or run with --force/);
    expect(existsSync(join(dir, 'school.yml'))).toBe(false); // nothing half set up
    expect(readFileSync(workflow, 'utf8')).toBe('name: mine\n');

    writeFileSync(join(dir, 'school.yml'), 'agents: []\n');
    const both = school(dir, 'init');
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/school\.yml and .*school\.yml exist; edit them, or run with --force/);

    const forced = school(dir, 'init', '--force');
    expect(forced.code, forced.err).toBe(0);
    expect(readFileSync(workflow, 'utf8')).toContain('school-loop.yml@v');
    expect(readFileSync(join(dir, 'school.yml'), 'utf8')).toContain('kind: claude-code');
  });

  it('outside a git repository: says to clone or git init, and writes nothing', () => {
    const dir = repo({ git: false });
    const r = school(dir, 'init');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/is not in a git repository.*git clone.*git init/);
    expect(existsSync(join(dir, 'school.yml'))).toBe(false);
    expect(existsSync(join(dir, '.github'))).toBe(false);
  });

  it('with no test command: writes the files and says to set dispatch.verify', () => {
    const dir = repo({ test: false });
    const r = school(dir, 'init');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/No test command was found[\s\S]*Set dispatch\.verify in school\.yml/);
    // What grades the work without it, said plainly: nothing, so code changes are rejected.
    expect(r.out).toMatch(/every code change is rejected \(verification_unavailable\)/);
    expect(r.out).not.toMatch(/graded on the reviewer alone/);
    expect(r.out).toContain('replace <owner>/<repo> below'); // no origin: placeholders, said so
    const check = school(dir, 'config', 'check');
    expect(check.code).toBe(0);
    // Only when an agent takes coding work (init writes the agents it finds on PATH: claude here).
    expect(check.out).toMatch(/warning: dispatch\.verify is not set.*every coding crew is rejected/);
  });

  it('a subdirectory of the repository: the workflow goes to the top and names the config path', async () => {
    const dir = repo({ origin: 'https://ghes.example.com/acme/app' });
    mkdirSync(join(dir, 'svc'));
    writeFileSync(join(dir, 'svc/Cargo.toml'), '[package]\nname = "x"\n');
    const r = school(dir, 'init', '--dir', 'svc', '--toolkit', 'tools/school-core');
    expect(r.code, r.err).toBe(0);
    const workflow = join(dir, '.github/workflows/school.yml');
    expect(await parserErrors(workflow)).toEqual([]);
    const text = readFileSync(workflow, 'utf8');
    expect(text).toContain(`uses: tools/school-core/.github/workflows/school-loop.yml@v${VERSION}`);
    expect(text).toContain('config: svc/school.yml');
    expect(r.out).toContain('verification: cargo test');
    // GitHub Enterprise Server has no GitHub-hosted runners: the runner registers there, gh talks to that host.
    expect(r.out).toContain('./config.sh --url https://ghes.example.com/acme/app --token');
    expect(r.out).toContain('gh workflow run school.yml --repo acme/app --hostname ghes.example.com');
    expect(school(dir, 'init', '--dir', 'svc', '--toolkit', 'not a repo').err).toMatch(
      /--toolkit: expected "owner\/name", found "not a repo"/,
    );
  });

  it('reads origin in the forms git accepts; the toolkit repository is package.json’s', () => {
    expect(remoteOf('https://github.com/acme/app.git')).toEqual({
      server: 'https://github.com',
      repo: 'acme/app',
    });
    expect(remoteOf('git@github.com:acme/app.git')).toEqual({
      server: 'https://github.com',
      repo: 'acme/app',
    });
    expect(remoteOf('ssh://git@ghes.example.com:22/acme/app')).toEqual({
      server: 'https://ghes.example.com',
      repo: 'acme/app',
    });
    expect(remoteOf('/srv/git/app.git')).toBeUndefined();
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { repository: { url: string } };
    expect(pkg.repository.url).toBe(`git+https://github.com/${TOOLKIT_REPOSITORY}.git`);
  });
});
