import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { drainCommand } from '../../src/cli/commands/drain.js';
import { readFeedback } from '../../src/feedback/log.js';
import { startGitHubServer } from '../support/github-fake.js';
import { mergeSchool } from '../support/merge-school.js';
import { tempDir } from '../support/tmp.js';

/**
 * `school drain` runs the step after grading as `school loop` does, the guarded merge included
 * (docs/delivery.md, "Merging"): the command itself, reading its configuration file, GITHUB_TOKEN
 * and GITHUB_API_URL, against the GitHub fake served on a loopback port.
 */
const tmp = tempDir('school-merge-drain-');
afterAll(() => tmp.cleanup());

/** Runs `fn` with these environment variables set, and puts the old values back. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const old = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(old))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

describe('school drain and the guarded merge', () => {
  it(
    'with delivery.merge: when-green, school drain merges the delivered pull request with the judged commit as sha',
    { timeout: 300_000 },
    async () => {
      // `school drain` delivers local branches unless told: pull requests, as a merge needs.
      const s = mergeSchool(join(tmp.path, 'drain'), { mode: 'pull-request' });
      // A loop cycle without a merge port runs the crew, grades it and opens the pull request.
      await s.cycle({ merge: false });
      const pr = s.fake.pulls[0]!;
      const judged = s.head();
      expect(s.merges()).toEqual([]);
      s.green(judged);
      const file = join(s.root, 'school.yml');
      writeFileSync(file, JSON.stringify(s.input, null, 2));
      const server = await startGitHubServer(s.fake);
      try {
        await withEnv({ GITHUB_TOKEN: 'test-token', GITHUB_API_URL: server.url }, async () => {
          // The first read after the pull request opened: GitHub still computing, nothing merged.
          expect(await drainCommand.run(['--config', file])).toBe(0);
          expect(s.merges()).toEqual([]);
          expect(s.fake.requestsTo(`/pulls/${pr.number}`, 'GET').length).toBeGreaterThan(0);
          // The next drain: computed, the check green — merged with the judged commit.
          expect(await drainCommand.run(['--config', file])).toBe(0);
        });
      } finally {
        await server.close();
      }
      expect(s.merges()).toHaveLength(1);
      expect(s.merges()[0]!.body).toMatchObject({ sha: judged, merge_method: 'squash' });
      expect(s.fake.merges).toEqual([{ pr: pr.number, sha: judged, method: 'squash' }]);
      expect(readFeedback(s.layout).merges?.[pr.number]).toMatchObject({ outcome: 'merged', sha: judged });
    },
  );
});
