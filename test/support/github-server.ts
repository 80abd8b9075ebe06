import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { startGitHubServer, type GitHubFake } from './github-fake.js';

/**
 * The GitHub fake behind a loopback server for one test file, as the actions see GitHub (through
 * GITHUB_API_URL): started before the file's tests, closed after them, `tmp` removed then too.
 * `unstubEnv`: environment stubs (`vi.stubEnv`) are undone after each test.
 */
export function serveForFile(
  fake: GitHubFake,
  o: { tmp?: { cleanup(): void }; unstubEnv?: boolean } = {},
): { readonly url: string } {
  let server: Awaited<ReturnType<typeof startGitHubServer>> | undefined;
  beforeAll(async () => {
    server = await startGitHubServer(fake);
  });
  afterAll(async () => {
    await server?.close();
    o.tmp?.cleanup();
  });
  if (o.unstubEnv) afterEach(() => vi.unstubAllEnvs());
  return {
    get url() {
      if (!server) throw new Error('the GitHub server starts before the tests of its file');
      return server.url;
    },
  };
}
