import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookbagSchema } from '../../src/bookbag/schema.js';
import { git, tempDir } from '../support/tmp.js';
import { fakeOnOrigin } from './fake.js';
import { LoopRunner, type LoopRun } from './loop.js';
import { ROOT } from './runner.js';
import { bundleLoop, requireBundles, seedOrigin } from '../support/e2e-school.js';

/**
 * A revision through the committed bundles, following the workflow's data flow (docs/delivery.md,
 * "Revisions"): a first cycle delivers a pull request from a real bare origin; a maintainer requests
 * changes with a line comment; the next cycle's plan (with its token) scans the feedback and plans a
 * revision for the same agent, the crew job (its checkout with every branch, `fetch-depth: 0`)
 * starts from the pull request's head, the judge re-runs verification on a clean checkout of that
 * head, and grade delivers one fast-forward commit on the same branch and pull request.
 */

const TOKEN = 'ghs_' + 'e2eRevisionTokenNeverPrinted0123456789'.slice(0, 36);
const SLOW = 240_000;
const tmp = tempDir('school-e2e-revision-');
let origin = '';
const fake = fakeOnOrigin(TOKEN, () => origin);
let server: { url: string; close(): Promise<void> };
let loop: LoopRunner;
const runs: LoopRun[] = [];
let issue = 0;

const schoolYml = stringify({
  stateDir: '.school/state',
  fleet: { daemons: [{ id: 'alpha', worktrees: 1 }] },
  agents: [
    { id: 'student', command: ['node', join(ROOT, 'test/e2e/fixtures/revision-student.mjs'), '{brief}'] },
  ],
  dispatch: {
    crewTimeoutSeconds: 60,
    gradingReserveSeconds: 60,
    jobTimeoutMinutes: 30,
    minFreeDiskGiB: 0.5,
    verify: ['node', '--test'],
  },
  grading: { maxWorkers: 1 },
});

beforeAll(async () => {
  requireBundles();
  origin = seedOrigin(tmp.path, { 'README.md': '# project\n', 'school.yml': schoolYml });
  issue = fake.addIssue({ title: 'Add helper31', body: 'A helper that returns 31.', user: 'octo' }).number;
  ({ server, loop } = await bundleLoop(fake, { origin, root: tmp.path, token: TOKEN }));
}, SLOW);

afterAll(async () => {
  await server?.close();
  if (!process.env.SCHOOL_E2E_KEEP) tmp.cleanup();
});

const branch = () => `refs/heads/school/issue-${issue}`;
const head = () => git(origin, 'rev-parse', branch());
const crewEvents = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"key"'))
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });

describe('a revision through the committed bundles (docs/delivery.md, "Revisions")', () => {
  let delivered = '';
  let revised = '';
  let statusId = 0;

  it(
    'cycle 1 delivers a pull request',
    async () => {
      runs.push(await loop.run(2001)); // a fresh school: the roster brings the daemon online
      const r = await loop.run(2002);
      runs.push(r);
      expect(r.plan.outputs).toMatchObject({ crews: '1', 'has-work': 'true', revisions: 'false' });
      expect(r.grade.drain.outputs).toMatchObject({ accepted: '1', 'outbox-pending': '0' });
      expect(fake.pulls).toHaveLength(1);
      expect(fake.pulls[0]!.head).toBe(`school/issue-${issue}`);
      expect(fake.pulls[0]!.body).toContain('accepted by grading');
      delivered = head();
      expect(git(origin, 'show', `${delivered}:helper.mjs`)).toContain('helper31');
      const comments = fake.issues.get(issue)!.comments;
      expect(comments).toHaveLength(1);
      statusId = comments[0]!.id;
    },
    SLOW,
  );

  it(
    'a review requesting changes becomes a revision: one new commit on the branch, the same pull request',
    async () => {
      const pr = fake.pulls[0]!;
      fake.addReview(pr.number, {
        user: 'maintainer',
        association: 'MEMBER',
        state: 'CHANGES_REQUESTED',
        body: 'Almost: the name.',
        comments: [{ path: 'helper.mjs', line: 1, body: 'rename helper31 to helperThirtyOne' }],
      });
      fake.resetLog();
      // A short cycle, as the review relay starts it: only the pull request's number reaches the loop.
      const r = await loop.run(2003, { onlyPullRequests: String(pr.number) });
      runs.push(r);

      // The plan scanned the feedback with its token and planned a revision for the same agent.
      const scanned = fake.requests.map((q) => `${q.method} ${q.path}`);
      expect(scanned).toContain(`GET /repos/octo/school/pulls/${pr.number}/reviews`);
      expect(scanned).toContain(`GET /repos/octo/school/pulls/${pr.number}/comments`);
      expect(r.plan.outputs).toMatchObject({ crews: '1', 'has-work': 'true', revisions: 'true' });
      const planned = crewEvents(r.plan.job.path('.school/state/crews.jsonl')).filter(
        (e) => e.type === 'crew.planned' && e.data.revision,
      );
      expect(planned).toHaveLength(1);
      const crewId = String(planned[0]!.data.crewId);
      expect(planned[0]!.data.revision).toMatchObject({ round: 1, pr: pr.number, headSha: delivered });

      // The crew ran from the pull request's head, and the judge accepted it on a clean checkout.
      expect(r.crews.get('alpha')!.run.outputs).toMatchObject({ finished: '1', lost: '0' });
      expect(r.judge.judged.outputs).toMatchObject({ accepted: '1', rejected: '0', failed: '0' });
      expect(r.grade.drain.outputs).toMatchObject({ accepted: '1', 'outbox-pending': '0' });

      // Delivered as a fast-forward: a new commit whose parent is the delivered one.
      revised = head();
      expect(revised).not.toBe(delivered);
      expect(git(origin, 'rev-parse', `${revised}^`)).toBe(delivered);
      expect(git(origin, 'show', `${revised}:helper.mjs`)).toBe('export const helperThirtyOne = () => 31;');
      expect(git(origin, 'log', '-1', '--format=%B', revised)).toContain(
        `Revision 1 of pull request #${pr.number}`,
      );
      // Still one pull request; the status comment edited in place.
      expect(fake.pulls).toHaveLength(1);
      const comments = fake.issues.get(issue)!.comments;
      expect(comments).toHaveLength(1);
      expect(comments[0]!.id).toBe(statusId);
      expect(comments[0]!.body).toContain(`revision 1 of 3 on pull request #${pr.number}`);
      // The pull request's body names the round and describes it, no longer the first delivery.
      expect(pr.body).toContain(`revision 1 of this pull request: crew \`${crewId}\``);
      expect(pr.body).toContain(`| Base | \`${delivered.slice(0, 12)}\` |`);

      // The bookbag on the state branch records the revision.
      const bag = r.grade.job.path('.school/state/bookbags', crewId);
      expect(readdirSync(bag)).toContain('bookbag.json');
      const record = bookbagSchema.parse(JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8')));
      expect(record.baseSha).toBe(delivered);
      expect(record.revision).toMatchObject({ round: 1, pr: pr.number });
      expect(git(origin, 'show', `school-state:bookbags/${crewId}/bookbag.json`)).toContain('"revision"');
    },
    SLOW,
  );

  it(
    'a trusted `/school` comment revises again from the new head, also from a shallow checkout',
    async () => {
      const pr = fake.pulls[0]!;
      fake.addCommentAs(pr.number, '/school rename helperThirtyOne to helperXXXI', 'octo', 'OWNER');
      fake.resetLog();
      // A caller whose crew job checks out one commit: the revision fetches its head from origin.
      const r = await loop.run(2004, { crewFetchDepth: 1 });
      runs.push(r);
      const planned = crewEvents(r.plan.job.path('.school/state/crews.jsonl')).filter(
        (e) => e.type === 'crew.planned' && e.data.revision,
      );
      expect(planned.map((e) => e.data.revision)).toMatchObject([
        { round: 1 },
        { round: 2, pr: pr.number, headSha: revised },
      ]);
      expect(r.grade.drain.outputs).toMatchObject({ accepted: '1', 'outbox-pending': '0' });
      const again = head();
      expect(git(origin, 'rev-parse', `${again}^`)).toBe(revised);
      expect(git(origin, 'show', `${again}:helper.mjs`)).toBe('export const helperXXXI = () => 31;');
      expect(fake.pulls).toHaveLength(1);
      const comments = fake.issues.get(issue)!.comments.filter((c) => c.user === 'github-actions[bot]');
      expect(comments.map((c) => c.id)).toEqual([statusId]);
      expect(comments[0]!.body).toContain(`revision 2 of 3 on pull request #${pr.number}`);
      expect(pr.body).toContain('revision 2 of this pull request');
      expect(fake.requestsTo(`/pulls/${pr.number}`, 'PATCH')).toHaveLength(1);
      revised = again;
    },
    SLOW,
  );

  it(
    'failed CI on the head revises a last time, its log read as GitHub serves it; feedback after the last round stops',
    async () => {
      const pr = fake.pulls[0]!;
      fake.addCheckRun({
        head_sha: revised,
        name: 'lint',
        status: 'completed',
        conclusion: 'failure',
        log: '2026-12-01T00:00:00Z lint: helper.mjs:1 identifier helperXXXI: rename helperXXXI to helperTrenteEtUn\n##[error]Process completed with exit code 1.\n',
      });
      fake.resetLog();
      // Failed CI is rerun once before it is the crew's (docs/delivery.md, "Failed CI"): the plan
      // asks for the rerun and plans nothing; its attempt fails again, and the grade's scan reads it.
      const rerun = await loop.run(2005);
      runs.push(rerun);
      expect(rerun.plan.outputs).toMatchObject({ crews: '0' });
      expect(fake.requestsTo('/rerun-failed-jobs', 'POST').map((q) => q.status)).toEqual([201]);
      // The rerun's job log: a 302 to a download URL, followed.
      expect(
        fake.requests.filter((q) => q.path.includes('/logs') || q.path.includes('/_blobs/')),
      ).toMatchObject([
        { path: expect.stringMatching(/\/actions\/jobs\/\d+\/logs$/), status: 302 },
        { path: expect.stringMatching(/^\/_blobs\/job-logs\//), status: 200 },
      ]);
      const r = await loop.run(2006);
      runs.push(r);
      const planned = crewEvents(r.plan.job.path('.school/state/crews.jsonl')).filter(
        (e) => e.type === 'crew.planned' && e.data.revision,
      );
      expect(planned.at(-1)!.data.revision).toMatchObject({
        round: 3,
        of: 3,
        headSha: revised,
        feedback: [`ci:${revised}`],
      });
      expect(r.grade.drain.outputs).toMatchObject({ accepted: '1' });
      const again = head();
      expect(git(origin, 'rev-parse', `${again}^`)).toBe(revised);
      expect(git(origin, 'show', `${again}:helper.mjs`)).toBe('export const helperTrenteEtUn = () => 31;');
      revised = again;

      // Three rounds ran (delivery.revisions: 3): a further request plans nothing, and the status says so.
      fake.addCommentAs(pr.number, '/school rename helperTrenteEtUn to helperFinal', 'octo', 'OWNER');
      const stopped = await loop.run(2007);
      runs.push(stopped);
      expect(stopped.plan.outputs).toMatchObject({ crews: '0', 'has-work': 'false' });
      expect(head()).toBe(revised);
      const status = fake.issues.get(issue)!.comments.find((c) => c.id === statusId)!;
      expect(status.body).toContain(`stopped — 3 revision round(s) of pull request #${pr.number} ran`);
    },
    SLOW,
  );

  it(
    'an idle cycle plans nothing and writes nothing to GitHub; the merge settles the pull request',
    async () => {
      fake.resetLog();
      const idle = await loop.run(2008);
      runs.push(idle);
      expect(idle.plan.outputs).toMatchObject({ crews: '0', 'has-work': 'false' });
      expect(fake.requests.filter((q) => q.method !== 'GET')).toEqual([]);

      const pr = fake.pulls[0]!;
      fake.settlePull(pr.number, 'merged');
      const r = await loop.run(2009);
      runs.push(r);
      expect(r.plan.outputs).toMatchObject({ crews: '0' });
      expect(fake.issues.get(issue)!.comments.find((c) => c.id === statusId)!.body).toContain('merged');
      expect(head()).toBe(revised);
    },
    SLOW,
  );
});
