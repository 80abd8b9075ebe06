import { statSync, readFileSync, existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { createGitHubClient } from '../../src/github/client.js';
import { githubSource } from '../../src/github/issues-source.js';
import { GitHubAuthError } from '../../src/errors.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { GitHubFake } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';

let dir: ReturnType<typeof tempDir>;
let fake: GitHubFake;
let layout: StateLayout;
const config = parseConfig({});

beforeEach(() => {
  dir = tempDir();
  fake = new GitHubFake();
  layout = new StateLayout(dir.path);
});
afterEach(() => dir.cleanup());

function client(token = 'test-token', logger?: ReturnType<typeof memoryLogger>) {
  return createGitHubClient({
    token,
    fetch: fake.fetch,
    retryAfterBaseValue: 5,
    rateLimitRetries: 3,
    logger,
  });
}

function fetch(extra: { labels?: string[]; token?: string; logger?: ReturnType<typeof memoryLogger> } = {}) {
  return fetchCurriculum({
    layout,
    config,
    labels: extra.labels,
    logger: extra.logger,
    source: githubSource(client(extra.token, extra.logger), { owner: fake.owner, repo: fake.repo }),
  });
}

function stored(): number[] {
  return readFileSync(layout.file('curriculum'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { number: number }).number);
}

describe('fetch-curriculum from GitHub', () => {
  it('follows link pagination over 3+ pages, drops pull requests and passes the labels filter', async () => {
    for (let i = 0; i < 250; i++) fake.addIssue({ labels: ['school'] });
    for (let i = 0; i < 5; i++) fake.addPullRequest({ labels: ['school'] });
    for (let i = 0; i < 7; i++) fake.addIssue({ labels: ['other'] });
    const r = await fetch({ labels: ['school'] });

    const listing = fake.requestsTo('/issues').filter((q) => q.query.state === 'open');
    expect(listing.length).toBe(3);
    expect(listing.map((q) => q.query.page ?? '1')).toEqual(['1', '2', '3']);
    for (const q of listing) {
      expect(q.query.labels).toBe('school');
      expect(q.query.per_page).toBe('100');
    }
    expect(r.mode).toBe('full');
    expect(r.count).toBe(250);
    expect(r.added).toBe(250);
    const numbers = stored();
    expect(numbers.length).toBe(250);
    expect(numbers.some((n) => fake.issues.get(n)?.pull_request)).toBe(false);
    expect(numbers.every((n) => fake.issues.get(n)?.labels.includes('school'))).toBe(true);
  });

  it('an unchanged re-poll is exactly one request answered 304 and writes nothing', async () => {
    for (let i = 0; i < 120; i++) fake.addIssue();
    await fetch();
    const cur = statSync(layout.file('curriculum'));
    const meta = statSync(layout.file('curriculumMeta'));
    const audit = readFileSync(layout.file('audit'), 'utf8');
    const before = readFileSync(layout.file('curriculum'), 'utf8');
    fake.resetLog();
    const remaining = fake.rateLimit.remaining;

    const r = await fetch();
    expect(fake.requests.length).toBe(1);
    expect(fake.requests[0]!.status).toBe(304);
    expect(fake.requests[0]!.ifNoneMatch).toMatch(/^W\/"/);
    expect(fake.rateLimit.remaining).toBe(remaining);
    expect(r).toMatchObject({
      mode: 'not-modified',
      count: 120,
      added: 0,
      changed: 0,
      removed: 0,
      requests: 1,
    });
    for (const [path, was] of [
      [layout.file('curriculum'), cur],
      [layout.file('curriculumMeta'), meta],
    ] as const) {
      const now = statSync(path);
      expect(now.ino).toBe(was.ino);
      expect(now.mtimeMs).toBe(was.mtimeMs);
    }
    expect(readFileSync(layout.file('curriculum'), 'utf8')).toBe(before);
    expect(readFileSync(layout.file('audit'), 'utf8')).toBe(audit);
  });

  it('merges edits, new issues, closed issues and lost labels incrementally', async () => {
    const a = fake.addIssue({ title: 'first', labels: ['school'] });
    const b = fake.addIssue({ title: 'second', labels: ['school'] });
    const c = fake.addIssue({ title: 'third', labels: ['school'] });
    const d = fake.addIssue({ title: 'fourth', labels: ['school'] });
    await fetch({ labels: ['school'] });
    fake.updateIssue(a.number, { title: 'first, edited' });
    fake.closeIssue(b.number);
    fake.updateIssue(c.number, { labels: [] });
    fake.addComment(d.number, 'a comment bumps updated_at only');
    const e = fake.addIssue({ title: 'fifth', labels: ['school'] });
    fake.resetLog();

    const r = await fetch({ labels: ['school'] });
    expect(r.mode).toBe('incremental');
    expect(r).toMatchObject({ added: 1, changed: 1, removed: 2, count: 3 });
    expect(stored()).toEqual([a.number, d.number, e.number]);
    expect(fake.requests.length).toBe(1);
    expect(fake.requests[0]!.query).toMatchObject({ state: 'all' });
    expect(fake.requests[0]!.query.since).toBeDefined();

    // And the next poll is a 304 again: the cursor kept its ETag.
    fake.resetLog();
    expect((await fetch({ labels: ['school'] })).mode).toBe('not-modified');
    expect(fake.requests.length).toBe(1);
  });

  it('the cursor overlaps the listing: an issue edited while the first listing paged is not missed', async () => {
    for (let i = 0; i < 150; i++) fake.addIssue({ title: `t${i}` });
    // Edit issue 1 between page 1 and page 2 of the first listing: by the time page 2 is served it
    // has moved to the front (sorted by update), so only the cursor request can see the new title.
    let pages = 0;
    const origFetch = fake.fetch;
    const spy = async (input: string | URL | Request, init?: RequestInit) => {
      const res = await origFetch(input, init);
      if (String(input instanceof Request ? input.url : input).includes('state=open') && ++pages === 1) {
        fake.updateIssue(1, { title: 'edited mid-listing' });
      }
      return res;
    };
    const r = await fetchCurriculum({
      layout,
      config,
      source: githubSource(createGitHubClient({ token: 'test-token', fetch: spy }), {
        owner: fake.owner,
        repo: fake.repo,
      }),
    });
    expect(r.items.find((i) => i.number === 1)?.title).toBe('edited mid-listing');
  });

  it('waits out a 403 secondary rate limit with retry-after and retries', async () => {
    fake.addIssue({ title: 'x' });
    fake.injectFault({ path: '/issues', kind: 'secondary-403', retryAfter: 2, times: 1 });
    const logger = memoryLogger();
    const r = await fetch({ logger });
    expect(r.count).toBe(1);
    const statuses = fake.requestsTo('/issues').map((q) => q.status);
    expect(statuses.slice(0, 2)).toEqual([403, 200]);
    expect(
      logger.lines.some((l) => l.level === 'warning' && /secondary rate limit.*waiting 2s/.test(l.message)),
    ).toBe(true);
  });

  it('waits out a 429 and a 502 too', async () => {
    fake.addIssue();
    fake.injectFault({ path: '/issues', kind: 'secondary-429', retryAfter: 1 });
    fake.injectFault({ path: '/issues', kind: 502 });
    const r = await fetch();
    expect(r.count).toBe(1);
    expect(
      fake
        .requestsTo('/issues')
        .map((q) => q.status)
        .slice(0, 3),
    ).toEqual([429, 502, 200]);
  });

  it('a bad token fails with a message naming the token and writes nothing', async () => {
    fake.addIssue();
    const err = await fetch({ token: 'wrong' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitHubAuthError);
    expect((err as Error).message).toMatch(/401/);
    expect((err as Error).message).toMatch(/GITHUB_TOKEN|`token` input/);
    expect((err as Error).message).not.toContain('wrong');
    expect(existsSync(layout.file('curriculum'))).toBe(false);
    expect(fake.requests.length).toBe(1);
  });

  it('a token without issue access names the permission `issues: read`', async () => {
    fake.tokens.set('no-issues', 'none');
    const err = await fetch({ token: 'no-issues' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitHubAuthError);
    expect((err as Error).message).toMatch(/403/);
    expect((err as Error).message).toContain('issues: read');
  });

  it('sanitizes at the edge and records what was removed', async () => {
    fake.addIssue({
      title: 'Fix \u202Eevil\u202C title\u200B',
      body: 'run `; rm -rf ~` and $(curl x) \u0000 with token ghp_' + 'a'.repeat(36),
    });
    const r = await fetch();
    const item = r.items[0]!;
    expect(item.title).toBe('Fix evil title');
    expect(item.sanitized.title).toMatchObject({ bidi: 2, zeroWidth: 1 });
    expect(item.sanitized.body.nul).toBe(1);
    expect(item.body).toContain('; rm -rf ~');
    expect(item.body).toContain('[REDACTED]');
    expect(readFileSync(layout.file('curriculum'), 'utf8')).not.toContain('ghp_aaaa');
  });
});
