import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitHubClient } from '../../src/github/client.js';
import { GitHubFake, startGitHubServer } from '../support/github-fake.js';

/** The fake must behave like GitHub where other tests rely on it: this pins that behaviour. */
const auth = { authorization: 'token test-token' };

async function get(fake: GitHubFake, path: string, headers: Record<string, string> = auth) {
  const res = await fake.fetch(`https://api.github.com${path}`, { headers });
  const text = await res.text();
  return { res, body: text ? (JSON.parse(text) as unknown) : undefined };
}

describe('GitHubFake', () => {
  it('paginates with link headers and GitHub defaults (30 per page, newest first)', async () => {
    const fake = new GitHubFake();
    for (let i = 0; i < 65; i++) fake.addIssue();
    const first = await get(fake, '/repos/octo/school/issues');
    expect((first.body as unknown[]).length).toBe(30);
    expect((first.body as Array<{ number: number }>)[0]!.number).toBe(65);
    const link = first.res.headers.get('link')!;
    expect(link).toContain('page=2>; rel="next"');
    expect(link).toContain('page=3>; rel="last"');
    const last = await get(fake, '/repos/octo/school/issues?page=3');
    expect((last.body as unknown[]).length).toBe(5);
    expect(last.res.headers.get('link')).not.toContain('rel="next"');
    const big = await get(fake, '/repos/octo/school/issues?per_page=500');
    expect((big.body as unknown[]).length).toBe(65);
  });

  it('filters by state, labels (all, case-insensitive) and since; lists pull requests too', async () => {
    const fake = new GitHubFake();
    fake.addIssue({ labels: ['Bug', 'school'] });
    fake.addIssue({ labels: ['bug'] });
    fake.addPullRequest({ labels: ['bug', 'school'] });
    const closed = fake.addIssue({ labels: ['bug', 'school'] });
    fake.closeIssue(closed.number);
    const numbers = async (q: string) =>
      ((await get(fake, `/repos/octo/school/issues?${q}`)).body as Array<{ number: number }>)
        .map((i) => i.number)
        .sort();
    expect(await numbers('labels=bug,SCHOOL')).toEqual([1, 3]);
    expect(await numbers('state=all&labels=school')).toEqual([1, 3, 4]);
    expect(await numbers('state=closed')).toEqual([4]);
    const since = fake.issues.get(3)!.updated_at;
    expect(await numbers(`state=all&since=${since}`)).toEqual([3, 4]);
    expect((await get(fake, '/repos/octo/school/issues?state=bogus')).res.status).toBe(422);
  });

  it('answers a matching If-None-Match with 304 that does not count against the rate limit', async () => {
    const fake = new GitHubFake();
    fake.addIssue();
    const first = await get(fake, '/repos/octo/school/issues');
    const etag = first.res.headers.get('etag')!;
    const left = Number(first.res.headers.get('x-ratelimit-remaining'));
    const again = await get(fake, '/repos/octo/school/issues', { ...auth, 'if-none-match': etag });
    expect(again.res.status).toBe(304);
    expect(Number(again.res.headers.get('x-ratelimit-remaining'))).toBe(left);
    fake.updateIssue(1, { title: 'changed' });
    expect(
      (await get(fake, '/repos/octo/school/issues', { ...auth, 'if-none-match': etag })).res.status,
    ).toBe(200);
  });

  it('401 without or with a bad token, 403 without permission, 404 for another repository', async () => {
    const fake = new GitHubFake({ tokens: { reader: 'read' } });
    expect((await get(fake, '/repos/octo/school/issues', {})).res.status).toBe(401);
    expect(
      (await get(fake, '/repos/octo/school/issues', { authorization: 'token nope' })).body,
    ).toMatchObject({
      message: 'Bad credentials',
    });
    fake.addIssue();
    const denied = await fake.fetch('https://api.github.com/repos/octo/school/issues/1/comments', {
      method: 'POST',
      headers: { authorization: 'Bearer reader', 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'hi' }),
    });
    expect(denied.status).toBe(403);
    expect((await get(fake, '/repos/other/repo/issues', { authorization: 'token reader' })).res.status).toBe(
      404,
    );
  });

  it('injected faults: secondary 403 and 429 with retry-after, 5xx, limited to matching requests', async () => {
    const fake = new GitHubFake();
    fake.injectFault({ path: '/issues', kind: 'secondary-403', retryAfter: 7 });
    fake.injectFault({ path: '/issues', kind: 'secondary-429', retryAfter: 3 });
    fake.injectFault({ method: 'POST', kind: 503, times: 2 });
    const a = await get(fake, '/repos/octo/school/issues');
    expect(a.res.status).toBe(403);
    expect(a.res.headers.get('retry-after')).toBe('7');
    expect((a.body as { message: string }).message).toMatch(/secondary rate limit/);
    const b = await get(fake, '/repos/octo/school/issues');
    expect([b.res.status, b.res.headers.get('retry-after')]).toEqual([429, '3']);
    expect((await get(fake, '/repos/octo/school/issues')).res.status).toBe(200);
    expect(fake.faults).toHaveLength(1);
    expect(fake.requests.map((r) => r.status)).toEqual([403, 429, 200]);
  });

  it('labels and comments through a real client, with the request log', async () => {
    const fake = new GitHubFake();
    const issue = fake.addIssue({ labels: ['school'] });
    const octokit = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
    fake.injectFault({ method: 'POST', path: '/comments', kind: 502 });
    await octokit.rest.issues.addLabels({
      owner: 'octo',
      repo: 'school',
      issue_number: issue.number,
      labels: ['school:accepted'],
    });
    await octokit.rest.issues.createComment({
      owner: 'octo',
      repo: 'school',
      issue_number: issue.number,
      body: 'Accepted.',
    });
    const { data } = await octokit.rest.issues.listComments({
      owner: 'octo',
      repo: 'school',
      issue_number: issue.number,
    });
    expect(data.map((c) => c.body)).toEqual(['Accepted.']);
    expect(fake.issues.get(issue.number)!.labels).toEqual(['school', 'school:accepted']);
    await octokit.rest.issues.removeLabel({
      owner: 'octo',
      repo: 'school',
      issue_number: issue.number,
      name: 'school',
    });
    expect(fake.issues.get(issue.number)!.labels).toEqual(['school:accepted']);
    const posts = fake.requestsTo('/comments', 'POST');
    expect(posts.map((p) => p.status)).toEqual([502, 201]);
    expect(posts[1]!.body).toEqual({ body: 'Accepted.' });
  });

  it('refs: create, read, move', async () => {
    const fake = new GitHubFake();
    const octokit = createGitHubClient({ token: 'test-token', fetch: fake.fetch });
    await octokit.rest.git.createRef({
      owner: 'octo',
      repo: 'school',
      ref: 'refs/heads/school-state',
      sha: 'a'.repeat(40),
    });
    await octokit.rest.git.updateRef({
      owner: 'octo',
      repo: 'school',
      ref: 'heads/school-state',
      sha: 'b'.repeat(40),
    });
    const { data } = await octokit.rest.git.getRef({
      owner: 'octo',
      repo: 'school',
      ref: 'heads/school-state',
    });
    expect(data.object.sha).toBe('b'.repeat(40));
    await expect(
      octokit.rest.git.getRef({ owner: 'octo', repo: 'school', ref: 'heads/none' }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe('startGitHubServer', () => {
  const fake = new GitHubFake();
  let server: Awaited<ReturnType<typeof startGitHubServer>>;
  beforeAll(async () => {
    server = await startGitHubServer(fake);
  });
  afterAll(() => server.close());

  it('serves the same handlers over loopback HTTP, bodies and headers intact', async () => {
    fake.addIssue({ title: 'over the wire' });
    const octokit = createGitHubClient({ token: 'test-token', baseUrl: server.url });
    const { data, headers } = await octokit.rest.issues.listForRepo({ owner: 'octo', repo: 'school' });
    expect(data[0]!.title).toBe('over the wire');
    expect(headers.etag).toMatch(/^W\/"/);
    const res = await fetch(`${server.url}/repos/octo/school/issues`, {
      headers: { authorization: 'token test-token', 'if-none-match': headers.etag! },
    });
    expect(res.status).toBe(304);
    const created = await octokit.rest.issues.createComment({
      owner: 'octo',
      repo: 'school',
      issue_number: 1,
      body: 'via http',
    });
    expect(created.status).toBe(201);
    expect(fake.issues.get(1)!.comments[0]!.body).toBe('via http');
  });
});
