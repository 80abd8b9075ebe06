import { createGitHubClient } from '../../src/github/client.js';
import { octokitPort } from '../../src/github/issues-port.js';
import { StateLayout } from '../../src/state/layout.js';
import { GitHubFake } from './github-fake.js';

/**
 * One issue ("Rename helper") of repository o/r on the GitHub fake, the issues port the status
 * comment is written through (no retries), and a school's state in `stateDir`.
 */
export function statusIssue(stateDir: string) {
  const fake = new GitHubFake({ owner: 'o', repo: 'r' });
  const issue = fake.addIssue({ title: 'Rename helper' });
  const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
  const github = octokitPort(client, 'o/r', { retries: 0 });
  return { fake, issue, github, layout: new StateLayout(stateDir) };
}
