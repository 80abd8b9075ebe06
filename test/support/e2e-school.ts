import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { examplePaths, prepareExampleRepo } from '../../src/examples/prepare.js';
import { LoopRunner } from '../e2e/loop.js';
import { bundle, type RunContext } from '../e2e/runner.js';
import type { ActionsFake } from '../e2e/fake.js';
import { startGitHubServer } from './github-fake.js';
import { git, initRepo } from './tmp.js';

/**
 * What the end-to-end tests of the committed bundles share: the bundles checked, the repository the
 * school works on as a bare origin (the example's, or a seed of the test's own), and the loop of the
 * workflow's jobs against the GitHub fake behind a loopback server. Repositories are real git.
 */

/** The bundles the workflow's jobs run; throws naming the first missing one. */
export function requireBundles(
  names: readonly string[] = ['checkpoint-state', 'fetch-curriculum', 'dispatch-crew', 'drain-grading'],
): void {
  for (const name of names)
    if (!existsSync(bundle(name))) throw new Error(`${bundle(name)} is missing: run npm run build`);
}

export type ExampleConfig = Record<string, unknown> & {
  curriculum: Record<string, unknown>;
  agents: Array<{ command: string[] }>;
  dispatch: Record<string, unknown>;
  fleet?: unknown;
};

/**
 * The example's school.yml as a repository using the reusable workflow would have it: the workspace
 * is the repository (no repoPath), issues come from the (fake) GitHub API, the example's student runs.
 */
export function exampleConfig(): ExampleConfig {
  const config = parseYaml(readFileSync(examplePaths().config, 'utf8')) as ExampleConfig;
  delete config.repoPath;
  delete config.curriculum.issuesFile;
  config.agents[0]!.command = ['node', examplePaths().student, '{brief}'];
  return config;
}

/** `seed` cloned bare as `root/origin.git`; returns its path. */
export function bareOrigin(root: string, seed: string): string {
  const origin = join(root, 'origin.git');
  git(root, 'clone', '-q', '--bare', seed, origin);
  return origin;
}

/** The example repository (in `root/example`) with `schoolYml` committed, as a bare origin. */
export function exampleOrigin(root: string, schoolYml: string): string {
  const example = prepareExampleRepo(join(root, 'example'));
  writeFileSync(join(example.path, 'school.yml'), schoolYml);
  const id = ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid'];
  git(example.path, ...id, 'add', 'school.yml');
  git(example.path, ...id, 'commit', '-qm', 'school');
  return bareOrigin(root, example.path);
}

/** A repository of `files` (one commit, in `root/seed`) as a bare origin. */
export function seedOrigin(root: string, files: Record<string, string>): string {
  return bareOrigin(root, initRepo(join(root, 'seed'), files));
}

/**
 * The workflow's jobs against `fake` served on loopback, over `origin`, in `root`. `api`: the API
 * path below the server (GHES: `/api/v3`); `serverUrl`: GITHUB_SERVER_URL when not github.com.
 */
export async function bundleLoop(
  fake: ActionsFake,
  o: { origin: string; root: string; token: string; api?: string; serverUrl?: string },
): Promise<{
  server: Awaited<ReturnType<typeof startGitHubServer>>;
  base: Omit<RunContext, 'runId'>;
  loop: LoopRunner;
}> {
  const server = await startGitHubServer(fake);
  const base: Omit<RunContext, 'runId'> = {
    apiUrl: `${server.url}${o.api ?? ''}`,
    ...(o.serverUrl ? { serverUrl: o.serverUrl } : {}),
    token: o.token,
    repository: `${fake.owner}/${fake.repo}`,
    origin: o.origin,
    root: o.root,
  };
  return { server, base, loop: new LoopRunner(base, fake) };
}
