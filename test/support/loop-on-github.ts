import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema, type SchoolConfig } from '../../src/config/schema.js';
import { deliveryFor } from '../../src/delivery/setup.js';
import { createGitHubClient, type GitHubClient } from '../../src/github/client.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';
import { githubSource } from '../../src/github/issues-source.js';
import { octokitPort } from '../../src/github/issues-port.js';
import { octokitMerge, octokitPulls } from '../../src/github/pulls-port.js';
import type { Logger } from '../../src/log.js';
import { runLoop, type LoopPorts, type LoopResult } from '../../src/loop/loop.js';
import type { StateLayout } from '../../src/state/layout.js';
import { launcher } from '../crew/helpers.js';
import type { GitHubFake } from './github-fake.js';
import { git, initBareRemote } from './tmp.js';

/**
 * What the tests that run the school against the GitHub fake share, as `school loop --repo` and the
 * drain wire it: a bare origin with a clone to work in, a command student beside it, the school's
 * config, the client on the fake, the ports and one loop cycle. Repositories are real git.
 */

const AUTHOR = { name: 'School Bot', email: 'bot@school.test' };

/**
 * A bare origin under `root` holding `files` (one commit), `root/work`, a clone of it, and with
 * `student` (its source) a command student at `root/student.mjs`.
 */
export function loopRepo(
  root: string,
  o: { files?: Record<string, string>; student?: string } = {},
): { bare: string; work: string; student: string } {
  const { bare } = initBareRemote(root, o.files ?? { 'README.md': '# project\n' });
  const work = join(root, 'work');
  git(root, 'clone', '-q', bare, work);
  const student = join(root, 'student.mjs');
  if (o.student !== undefined) writeFileSync(student, o.student);
  return { bare, work, student };
}

/** A bare origin under `root` holding `files` (one commit), and `root/work`, a clone of it. */
export function originAndWork(root: string, files?: Record<string, string>): { bare: string; work: string } {
  const { bare, work } = loopRepo(root, { files });
  return { bare, work };
}

/** `source` written as `root/student.mjs`; returns its path. */
export function studentFile(root: string, source: string): string {
  const student = join(root, 'student.mjs');
  writeFileSync(student, source);
  return student;
}

/**
 * The school of repository octo/school working in `work`, its state in `root/state`, delivering
 * as School Bot; `over` adds the rest (its `delivery` is merged over the author).
 */
export function loopConfig(
  root: string,
  work: string,
  over: Record<string, unknown> & { delivery?: Record<string, unknown> } = {},
): SchoolConfig {
  return configSchema.parse({
    repository: 'octo/school',
    repoPath: work,
    stateDir: join(root, 'state'),
    ...over,
    delivery: { author: AUTHOR, ...over.delivery },
  });
}

/** GitHub reads a pull request's head from the repository: the branch's commit on the bare origin. */
export function headOnOrigin(bare: string): (branch: string) => string | undefined {
  return (branch) => {
    const r = spawnSync('git', ['rev-parse', '--verify', '-q', `refs/heads/${branch}`], {
      cwd: bare,
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
    });
    return r.status === 0 ? r.stdout.trim() || undefined : undefined;
  };
}

/** The client of the school on the fake, with the test token and retries after 1 second. */
export function fakeClient(fake: GitHubFake): GitHubClient {
  return createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
}

export interface OnGitHub {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  client: GitHubClient;
}

/** The deliverer `school loop --repo` makes: pull requests through the client, pushed with the token. */
export function deliveryOn(s: OnGitHub) {
  const { config, layout, logger, client } = s;
  return deliveryFor({
    config,
    layout,
    logger,
    actions: true,
    pulls: (r) => octokitPulls(client, r),
    token: 'test-token',
  })!;
}

/**
 * The loop's ports on octo/school: issues, delivery and (unless `feedback: false`) the feedback
 * scan; the guarded merge with `merge: true`. `over` replaces any of them.
 */
export function portsOn(
  s: OnGitHub,
  o: { feedback?: boolean; merge?: boolean; over?: LoopPorts } = {},
): LoopPorts {
  return {
    github: octokitPort(s.client, 'octo/school', { retries: 0 }),
    ...(o.feedback === false ? {} : { feedback: octokitFeedback(s.client, 'octo/school') }),
    delivery: deliveryOn(s),
    ...(o.merge ? { merge: octokitMerge(s.client, 'octo/school') } : {}),
    ...o.over,
  };
}

/** One `school loop` cycle over the fake's issues, crews run by the real crew runner. */
export function loopCycle(
  s: OnGitHub,
  o: { feedback?: boolean; merge?: boolean; over?: LoopPorts } = {},
): () => Promise<LoopResult> {
  return async () =>
    runLoop({
      config: s.config,
      layout: s.layout,
      logger: s.logger,
      source: githubSource(s.client, { owner: 'octo', repo: 'school' }),
      launcher: await launcher(),
      ports: portsOn(s, o),
    });
}
