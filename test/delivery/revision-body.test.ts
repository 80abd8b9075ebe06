import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import { deliveryMarker } from '../../src/delivery/body.js';
import { createDeliverer } from '../../src/delivery/deliver.js';
import { createGitHubClient } from '../../src/github/client.js';
import { octokitPulls } from '../../src/github/pulls-port.js';
import { StateLayout } from '../../src/state/layout.js';
import { GitHubFake } from '../support/github-fake.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { bookbag, gitOut, newFilePatch } from './helpers.js';

/**
 * The pull request's body after a revision (docs/delivery.md, "Revisions"): delivering a revision
 * onto the pull request edits its body to name the round and describe it — once (a retried delivery
 * writes nothing), and never over a description a person rewrote. Real git with a bare origin, the
 * pulls API answered by the GitHub fake.
 */
const tmp = tempDir('school-revision-body-');
afterAll(() => tmp.cleanup());

const verdict = (score: number) => ({ decidedBy: 'rubric', code: 'rubric_passed', score, reasons: [] });

describe('the pull request body after a revision', () => {
  it('names the latest round and its verdict, edited once, and leaves a body a person rewrote', async () => {
    const { bare } = initBareRemote(tmp.path, { 'README.md': '# project\n' });
    const work = join(tmp.path, 'work');
    git(tmp.path, 'clone', '-q', bare, work);
    const base = git(work, 'rev-parse', 'HEAD');
    const config = configSchema.parse({
      repository: 'octo/school',
      repoPath: work,
      stateDir: join(tmp.path, 'state'),
      delivery: { author: { name: 'School Bot', email: 'bot@school.test' } },
    });
    const layout = new StateLayout(config.stateDir);
    const fake = new GitHubFake({
      branchHead: (b) => gitOut(bare, 'rev-parse', '-q', '--verify', `refs/heads/${b}`).out || undefined,
    });
    const n = fake.addIssue({ title: 'Add a thing' }).number;
    const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
    const deliverer = createDeliverer({
      config,
      layout,
      mode: 'pull-request',
      pulls: octokitPulls(client, 'octo/school'),
    });
    const patches = () => fake.requestsTo('/pulls/', 'PATCH').length;

    bookbag(layout, { crewId: 'c-first', issue: n, baseSha: base, diff: newFilePatch('a.txt', 'a\n') });
    const first = await deliverer.deliver({ crewId: 'c-first', issueNumber: n, verdict: verdict(0.8) });
    const pr = fake.pulls[0]!;
    expect(pr.number).toBe(first.pullRequest!.number);
    expect(pr.body).toContain('by crew `c-first`');
    expect(patches()).toBe(0);

    const revision = (crewId: string, round: number, from: string) =>
      bookbag(layout, {
        crewId,
        issue: n,
        baseSha: from,
        diff: newFilePatch(`r${round}.txt`, `${round}\n`),
        finishedAt: `2026-01-01T00:0${round + 1}:00.000Z`,
        revision: { revises: 'c-first', round, pr: pr.number, session: 'fresh' },
      });
    revision('c-round1', 1, first.sha);
    const r1 = await deliverer.deliver({ crewId: 'c-round1', issueNumber: n, verdict: verdict(0.95) });
    expect(r1).toMatchObject({ updated: true, pullRequest: { number: pr.number } });
    expect(fake.pulls).toHaveLength(1);
    expect(patches()).toBe(1);
    expect(pr.body.startsWith(deliveryMarker(n))).toBe(true);
    expect(pr.body).toContain('revision 1 of this pull request: crew `c-round1`');
    expect(pr.body).toContain('score 0.95');
    expect(pr.body).toContain('| Revises | crew `c-first` |');
    expect(pr.body).toContain(`| Base | \`${first.sha.slice(0, 12)}\` |`);
    expect(pr.body).not.toContain('c-first` (agent');
    // The issue a pull request is shows the same body (GitHub keeps one).
    expect(fake.issues.get(pr.number)!.body).toBe(pr.body);

    // Delivered again (a retried outbox entry): nothing to edit.
    await deliverer.deliver({ crewId: 'c-round1', issueNumber: n, verdict: verdict(0.95) });
    expect(patches()).toBe(1);

    // A person rewrites the description: the next round leaves it as they wrote it.
    pr.body = 'My own description of this change.';
    revision('c-round2', 2, r1.sha);
    const r2 = await deliverer.deliver({ crewId: 'c-round2', issueNumber: n, verdict: verdict(0.9) });
    expect(r2.updated).toBe(true);
    expect(patches()).toBe(1);
    expect(pr.body).toBe('My own description of this change.');
  });
});
