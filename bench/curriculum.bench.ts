import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config/load.js';
import { buildItem } from '../src/curriculum/classify.js';
import { fetchCurriculum } from '../src/curriculum/fetch.js';
import { rawIssueSchema, type RawIssue } from '../src/curriculum/issue-shape.js';
import { createGitHubClient } from '../src/github/client.js';
import { githubSource } from '../src/github/issues-source.js';
import { StateLayout } from '../src/state/layout.js';
import { GitHubFake } from '../test/support/github-fake.js';
import type { Bench } from './types.js';

/**
 * Curriculum figures (docs/benchmarks.md; the fetch itself in docs/fetch-curriculum.md): sanitize +
 * classify throughput on 10,000 issues of 4 KB against a plain JSON.stringify pass over the same
 * issues, and GitHub requests per fetch of 1,000 open issues against the fake (first fetch,
 * unchanged re-poll, re-poll after a few edits).
 */
const config = parseConfig({
  curriculum: {
    rules: [
      { match: { labels: ['docs'] }, set: { role: 'docs', domain: 'docs' } },
      { match: { keywords: ['race', 'deadlock', 'corrupt'] }, set: { difficulty: 4, weight: 'heavy' } },
      { match: { paths: ['src/state/**'] }, set: { domain: 'state', fences: ['src/state/**'] } },
      { match: { labels: ['bug'], keywords: ['crash'] }, set: { priority: 0 } },
    ],
  },
}).curriculum;

function issues(n: number): RawIssue[] {
  const filler = 'The lock in src/state/lock.ts is held across an await; see `npm test`. '.repeat(64);
  return Array.from({ length: n }, (_, i) =>
    rawIssueSchema.parse({
      number: i + 1,
      title: `Issue ${i}: ${i % 10 === 0 ? 'race \u202Ein\u202C parser' : 'improve the docs'}`,
      body:
        (i % 5 === 0 ? '```school\ndifficulty: 3\nrole: coding\n```\n' : '') +
        (i % 7 === 0 ? 'zero\u200Bwidth and NUL\u0000 ' : '') +
        filler.slice(0, 4096 - 120),
      labels: i % 3 === 0 ? [{ name: 'bug' }, { name: 'docs' }] : [{ name: 'school' }],
      state: 'open',
      html_url: `https://github.com/o/r/issues/${i + 1}`,
      updated_at: '2026-01-01T00:00:00Z',
    }),
  );
}

const corpus = issues(10_000);

const throughput: Bench = {
  name: 'curriculum: sanitize + classify 10,000 × 4 KB issues',
  async run() {
    let t = performance.now();
    let bytes = 0;
    for (const raw of corpus) bytes += JSON.stringify(raw).length;
    const baselineMs = performance.now() - t;
    t = performance.now();
    const cpu = process.cpuUsage();
    let n = 0;
    for (const raw of corpus) n += buildItem(raw, config).item.difficulty;
    const ms = performance.now() - t;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    if (!n || !bytes) throw new Error('nothing measured');
    const rate = corpus.length / (ms / 1000);
    return [
      {
        figure: 'sanitize+classify 10k×4KB issues',
        value: rate,
        unit: 'issues/s',
        baseline: { label: 'JSON.stringify pass', value: corpus.length / (baselineMs / 1000) },
      },
      // Per CPU-second: steadier than wall time on a shared machine.
      { figure: 'sanitize+classify per CPU-second', value: corpus.length / cpuSeconds, unit: 'issues/cpu-s' },
    ];
  },
};

const requests: Bench = {
  name: 'curriculum: GitHub requests per fetch of 1,000 open issues',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'school-bench-'));
    try {
      const fake = new GitHubFake();
      for (let i = 0; i < 1000; i++) fake.addIssue({ title: `issue ${i}`, body: 'x'.repeat(200) });
      fake.advance(3_600_000); // the issues existed for an hour before the first fetch
      const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch });
      const layout = new StateLayout(dir);
      const source = githubSource(client, { owner: fake.owner, repo: fake.repo });
      const fetch = () => fetchCurriculum({ layout, config: parseConfig({}), source });

      const first = await fetch();
      const firstRequests = fake.requests.length;
      fake.resetLog();
      const again = await fetch();
      const repoll = fake.requests.length;
      const repollStatus = fake.requests[0]?.status;
      for (let i = 1; i <= 5; i++) fake.updateIssue(i * 100, { title: `edited ${i}` });
      fake.resetLog();
      const edited = await fetch();
      const afterEdits = fake.requests.length;
      if (first.count !== 1000 || again.mode !== 'not-modified' || edited.changed !== 5) {
        throw new Error(`unexpected fetch results: ${first.count}, ${again.mode}, ${edited.changed}`);
      }
      return [
        {
          figure: 'requests: first fetch of 1,000 issues',
          value: firstRequests,
          unit: 'requests',
          goal: '≤ 10',
          met: firstRequests <= 10,
        },
        {
          figure: 'requests: unchanged re-poll (304)',
          value: repoll,
          unit: 'requests',
          goal: 'exactly 1, answered 304',
          met: repoll === 1 && repollStatus === 304,
        },
        {
          figure: 'requests: re-poll after 5 edits',
          value: afterEdits,
          unit: 'requests',
          goal: '1',
          met: afterEdits === 1,
        },
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const benchmarks: Bench[] = [throughput, requests];
