import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most test time is spent waiting on real processes (git, bwrap, agent CLIs, crews): three
    // files at once on a two-core machine (vitest's default there is one).
    maxWorkers: 3,
    server: { deps: { inline: ['@actions/workflow-parser', '@actions/expressions'] } },
  },
});
