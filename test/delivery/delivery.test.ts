import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { join } from 'node:path';
import { configSchema, type SchoolConfig } from '../../src/config/schema.js';
import { createDeliverer } from '../../src/delivery/deliver.js';
import { deliveryFor } from '../../src/delivery/setup.js';
import { createGitHubClient } from '../../src/github/client.js';
import { octokitPulls } from '../../src/github/pulls-port.js';
import { drainAndDeliver, drainFast } from '../support/drain-and-deliver.js';
import { Outbox } from '../../src/outbox/outbox.js';
import { buildView } from '../../src/board/view.js';
import { enqueueMany, fastGrade } from '../grading/helpers.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { bookbag, gitOut, newFilePatch, tamper } from './helpers.js';

const API = 'https://api.github.test';

interface Pull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
  state: 'open' | 'closed';
}

/** The pulls API of one repository, backed by the bare repository the pushes land in. */
const gh = {
  bare: '',
  pulls: [] as Pull[],
  /** Creates stored but answered 502 (the acknowledgement is lost). */
  lostAcks: 0,
  /** List calls that miss open pull requests (a stale read), so the create meets the 422. */
  staleLists: 0,
  creates: 0,
};
const html = (n: number) => `https://github.test/o/r/pull/${n}`;
const server = setupServer(
  http.get(`${API}/repos/o/r`, () => HttpResponse.json({ full_name: 'o/r', default_branch: 'main' })),
  http.get(`${API}/repos/o/r/pulls`, ({ request }) => {
    const u = new URL(request.url);
    const head = u.searchParams.get('head');
    const state = u.searchParams.get('state') ?? 'open';
    if (gh.staleLists > 0) {
      gh.staleLists--;
      return HttpResponse.json([]);
    }
    const list = gh.pulls.filter(
      (p) => (!head || `o:${p.head}` === head) && (state === 'all' || p.state === state),
    );
    return HttpResponse.json(
      list.map((p) => ({ number: p.number, html_url: html(p.number), head: { ref: p.head } })),
    );
  }),
  http.post(`${API}/repos/o/r/pulls`, async ({ request }) => {
    gh.creates++;
    const b = (await request.json()) as Omit<Pull, 'number' | 'state'>;
    // GitHub validates that the head branch exists and that no open PR has the same head and base.
    if (!gitOut(gh.bare, 'rev-parse', '--verify', `refs/heads/${b.head}`).ok) {
      return HttpResponse.json(
        {
          message: 'Validation Failed',
          errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }],
        },
        { status: 422 },
      );
    }
    if (gh.pulls.some((p) => p.state === 'open' && p.head === b.head && p.base === b.base)) {
      return HttpResponse.json(
        {
          message: 'Validation Failed',
          errors: [
            {
              resource: 'PullRequest',
              code: 'custom',
              message: `A pull request already exists for o:${b.head}.`,
            },
          ],
          documentation_url: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request',
        },
        { status: 422 },
      );
    }
    const pr: Pull = { ...b, number: gh.pulls.length + 100, state: 'open', draft: b.draft ?? false };
    gh.pulls.push(pr);
    if (gh.lostAcks > 0) {
      gh.lostAcks--;
      return HttpResponse.json({ message: 'Bad Gateway' }, { status: 502 });
    }
    return HttpResponse.json(
      { number: pr.number, html_url: html(pr.number), draft: pr.draft },
      { status: 201 },
    );
  }),
);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const tmp = tempDir('school-delivery-');
afterAll(() => tmp.cleanup());

function setup(name: string, raw: Record<string, unknown> = {}) {
  const root = join(tmp.path, name);
  const { bare } = initBareRemote(root, { 'README.md': '# project\n' });
  const work = join(root, 'work');
  git(root, 'clone', '-q', bare, work);
  const baseSha = git(work, 'rev-parse', 'HEAD');
  const config: SchoolConfig = configSchema.parse({
    repository: 'o/r',
    repoPath: work,
    stateDir: join(root, 'state'),
    delivery: { author: { name: 'School Bot', email: 'bot@school.test' } },
    ...raw,
  });
  return { root, bare, work, baseSha, config, layout: new StateLayout(config.stateDir) };
}

const client = () =>
  createGitHubClient({ token: 'test-delivery-token-0123456789', baseUrl: API, retryAfterBaseValue: 1 });

describe('delivery as pull requests (bare origin, pulls API over msw)', () => {
  it(
    'three accepted issues → three branches and three PRs; rerun, crash between push and create, and 422 leave three; rejected and tampered open nothing',
    { timeout: 120_000 },
    async () => {
      const s = setup('pr');
      gh.bare = s.bare;
      gh.pulls = [];
      const jobs = [1, 2, 3].map((n) =>
        bookbag(s.layout, {
          crewId: `c${n}-0000000${n}`,
          issue: n,
          baseSha: s.baseSha,
          diff: newFilePatch(`fix-${n}.txt`, `fixed ${n}\n`),
        }),
      );
      // Issue 4: graded rejected (agent beta). Issue 5: accepted, but its diff was changed after the
      // crew sealed the bookbag.
      jobs.push(
        bookbag(s.layout, {
          crewId: 'c4-00000004',
          issue: 4,
          baseSha: s.baseSha,
          diff: newFilePatch('fix-4.txt', 'x\n'),
          agent: 'beta',
        }),
        bookbag(s.layout, {
          crewId: 'c5-00000005',
          issue: 5,
          baseSha: s.baseSha,
          diff: newFilePatch('fix-5.txt', 'fixed 5\n'),
        }),
      );
      tamper(s.layout, 'c5-00000005', newFilePatch('fix-5.txt', 'rm -rf /\n'));
      await enqueueMany(s.layout, jobs);
      const logger = memoryLogger();
      const delivery = deliveryFor({
        config: s.config,
        layout: s.layout,
        logger,
        actions: true,
        pulls: (r) => octokitPulls(client(), r),
        token: 'test-delivery-token-0123456789',
      });
      expect(delivery?.mode).toBe('pull-request');

      // First drain: issue 2's create never reaches GitHub (after its branch was pushed); issue 3's
      // create is stored but its answer is lost.
      let dropped = false;
      server.use(
        http.post(`${API}/repos/o/r/pulls`, async ({ request }) => {
          const b = (await request.clone().json()) as { head: string };
          if (b.head === 'school/issue-2' && !dropped) {
            dropped = true;
            gh.creates++;
            return HttpResponse.error();
          }
          if (b.head === 'school/issue-3') gh.lostAcks = gh.pulls.some((p) => p.head === b.head) ? 0 : 1;
          return undefined as never; // fall through to the default handler
        }),
      );
      const first = await drainAndDeliver({
        config: s.config,
        layout: s.layout,
        logger,
        delivery,
        limits: { maxWorkers: 8 },
        judging: { grade: fastGrade },
      });
      expect(first.accepted).toBe(4);
      expect(first.rejected).toBe(1);
      const branches = () =>
        gitOut(s.bare, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/school/')
          .out.split('\n')
          .filter(Boolean)
          .sort();
      expect(branches()).toEqual(['school/issue-1', 'school/issue-2', 'school/issue-3']);
      // #2 was pushed; its create failed once and the outbox's second try opened it — or it waits.
      const outbox = new Outbox(s.layout);
      const refused = Object.values(outbox.state().items).filter((i) => i.status === 'refused');
      expect(refused.map((i) => i.entry.issueNumber)).toEqual([5]);
      expect(logger.lines.some((l) => l.level === 'error' && l.message.includes('issue #5 refused'))).toBe(
        true,
      );

      // Rerun drains until nothing is pending, then deliver every accepted crew again from scratch.
      await drainFast({ config: s.config, layout: s.layout, delivery });
      expect(outbox.pending().filter((i) => i.entry.kind === 'delivery')).toEqual([]);
      expect(dropped).toBe(true);
      expect(gh.pulls.map((p) => p.head).sort()).toEqual([
        'school/issue-1',
        'school/issue-2',
        'school/issue-3',
      ]);
      const again = createDeliverer({
        config: s.config,
        layout: s.layout,
        mode: 'pull-request',
        pulls: octokitPulls(client(), 'o/r'),
      });
      gh.staleLists = 1; // the first find misses: the create meets GitHub's 422 and finds it again
      for (const n of [1, 2, 3]) {
        const r = await again.deliver({
          crewId: `c${n}-0000000${n}`,
          issueNumber: n,
          verdict: { decidedBy: 'reviewer', code: 'reviewer_approved', score: 1, reasons: [] },
        });
        expect(r.pullRequest?.url).toBe(html(gh.pulls.find((p) => p.head === `school/issue-${n}`)!.number));
      }
      expect(gh.pulls).toHaveLength(3);
      expect(branches()).toEqual(['school/issue-1', 'school/issue-2', 'school/issue-3']);
      // The refs used to compare with origin's branches are gone from the user's repository.
      expect(gitOut(s.work, 'for-each-ref', 'refs/school-delivery/').out).toBe('');

      // What was delivered: one commit on the crew's base with its patch, by the configured author.
      const head = gitOut(s.bare, 'rev-parse', 'refs/heads/school/issue-1').out;
      expect(gitOut(s.bare, 'rev-parse', `${head}^`).out).toBe(s.baseSha);
      expect(gitOut(s.bare, 'show', `${head}:fix-1.txt`).out).toBe('fixed 1');
      expect(gitOut(s.bare, 'log', '-1', '--format=%an <%ae>', head).out).toBe(
        'School Bot <bot@school.test>',
      );
      const msg = gitOut(s.bare, 'log', '-1', '--format=%B', head).out;
      expect(msg).toContain('#1');
      expect(msg).toContain('c1-00000001');
      const pr = gh.pulls.find((p) => p.head === 'school/issue-1')!;
      expect(pr).toMatchObject({ base: 'main', draft: true });
      expect(pr.body).toContain('Issue: #1');
      expect(pr.body).not.toContain('Closes #1');
      expect(pr.body).toMatch(/node --test` passed/);
      expect(pr.body).toContain('$0.42');
      expect(pr.body).not.toContain('test-delivery-token');
      // Rejected (#4) and tampered (#5): no branch, no pull request.
      expect(gh.pulls.some((p) => /issue-[45]$/.test(p.head))).toBe(false);
      // The board and summaries read the links from the outbox.
      const links = new Outbox(s.layout).deliveries();
      expect([...links.keys()].sort()).toEqual([1, 2, 3]);
      expect(links.get(2)!.pullRequest!.url).toMatch(/\/pull\/\d+$/);
      const accepted = buildView(s.layout, s.config).lanes.find((l) => l.id === 'accepted')!.items;
      const linked = accepted.filter((i) => i.delivery).sort((a, b) => a.issue - b.issue);
      expect(linked.map((i) => [i.issue, i.delivery!.url])).toEqual(
        [1, 2, 3].map((n) => [n, html(gh.pulls.find((p) => p.head === `school/issue-${n}`)!.number)]),
      );
      expect(accepted.find((i) => i.issue === 5)!.delivery).toBeUndefined();
      // The working tree of the repository was never touched.
      expect(gitOut(s.work, 'status', '--porcelain').out).toBe('');
      expect(gitOut(s.work, 'rev-parse', 'HEAD').out).toBe(s.baseSha);
    },
  );

  it('closeIssue writes Closes #N; a configured base is used', { timeout: 60_000 }, async () => {
    const s = setup('close', { delivery: { closeIssue: true, base: 'release', draft: false } });
    gh.bare = s.bare;
    gh.pulls = [];
    git(s.work, 'push', '-q', 'origin', 'HEAD:refs/heads/release');
    const job = bookbag(s.layout, {
      crewId: 'c9-00000009',
      issue: 9,
      baseSha: s.baseSha,
      diff: newFilePatch('nine.txt', '9\n'),
    });
    await enqueueMany(s.layout, [job]);
    const delivery = deliveryFor({
      config: s.config,
      layout: s.layout,
      logger: memoryLogger(),
      actions: true,
      pulls: (r) => octokitPulls(client(), r),
    });
    await drainFast({ config: s.config, layout: s.layout, delivery });
    expect(gh.pulls).toHaveLength(1);
    expect(gh.pulls[0]).toMatchObject({ base: 'release', draft: false });
    expect(gh.pulls[0]!.body).toContain('Closes #9');
  });
});

describe('delivery as local branches', () => {
  it(
    'a later accepted repair updates school/issue-N; a retried older crew never moves it back',
    { timeout: 60_000 },
    async () => {
      const s = setup('branch');
      const logger = memoryLogger();
      const delivery = deliveryFor({ config: s.config, layout: s.layout, logger, actions: false });
      expect(delivery?.mode).toBe('branch');
      const first = bookbag(s.layout, {
        crewId: 'c7-00000001',
        issue: 7,
        baseSha: s.baseSha,
        diff: newFilePatch('seven.txt', 'first\n'),
      });
      await enqueueMany(s.layout, [first]);
      await drainFast({ config: s.config, layout: s.layout, logger, delivery });
      const one = gitOut(s.work, 'rev-parse', 'refs/heads/school/issue-7').out;
      expect(gitOut(s.work, 'show', `${one}:seven.txt`).out).toBe('first');

      const repair = bookbag(s.layout, {
        crewId: 'c7-00000002',
        issue: 7,
        baseSha: s.baseSha,
        diff: newFilePatch('seven.txt', 'second\n'),
        finishedAt: '2026-01-02T00:00:00.000Z',
      });
      await enqueueMany(s.layout, [repair]);
      await drainFast({ config: s.config, layout: s.layout, logger, delivery });
      const two = gitOut(s.work, 'rev-parse', 'refs/heads/school/issue-7').out;
      expect(two).not.toBe(one);
      expect(gitOut(s.work, 'show', `${two}:seven.txt`).out).toBe('second');
      expect(gitOut(s.work, 'rev-parse', `${two}^`).out).toBe(s.baseSha);

      // The older crew delivered again (a retry after a crash): the branch keeps the repair.
      const r = await delivery!.deliver({
        crewId: 'c7-00000001',
        issueNumber: 7,
        verdict: { decidedBy: 'reviewer', code: 'reviewer_approved', score: 1, reasons: [] },
      });
      expect(r).toMatchObject({ sha: one, updated: false });
      expect(gitOut(s.work, 'rev-parse', 'refs/heads/school/issue-7').out).toBe(two);
      expect(new Outbox(s.layout).deliveries().get(7)!.sha).toBe(two);
      expect(gitOut(s.work, 'status', '--porcelain').out).toBe('');

      // Someone builds on the branch; a later accepted crew never moves it from under them.
      const tree = gitOut(s.work, 'rev-parse', `${two}^{tree}`).out;
      const theirs = git(s.work, 'commit-tree', tree, '-p', two, '-m', 'reviewer fixup');
      git(s.work, 'update-ref', 'refs/heads/school/issue-7', theirs);
      bookbag(s.layout, {
        crewId: 'c7-00000003',
        issue: 7,
        baseSha: s.baseSha,
        diff: newFilePatch('seven.txt', 'third\n'),
        finishedAt: '2026-02-01T00:00:00.000Z',
      });
      const kept = await delivery!.deliver({
        crewId: 'c7-00000003',
        issueNumber: 7,
        verdict: { decidedBy: 'reviewer', code: 'reviewer_approved', score: 1, reasons: [] },
      });
      expect(kept.updated).toBe(false);
      expect(gitOut(s.work, 'rev-parse', 'refs/heads/school/issue-7').out).toBe(theirs);
    },
  );

  it('delivery: none records nothing to deliver', async () => {
    const s = setup('none', { delivery: { mode: 'none' } });
    expect(
      deliveryFor({ config: s.config, layout: s.layout, logger: memoryLogger(), actions: true }),
    ).toBeUndefined();
  });
});
