import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { FeedbackPort } from '../../src/feedback/port.js';
import { createGitHubClient } from '../../src/github/client.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';
import { octokitPort } from '../../src/github/issues-port.js';
import { drain } from '../../src/grading/drain.js';
import { memoryLogger } from '../../src/log.js';
import { afterGrading } from '../../src/loop/after-grading.js';
import { Outbox, statusMarkerOf, type IssuesPort } from '../../src/outbox/outbox.js';
import { StateLayout } from '../../src/state/layout.js';
import { config as gradingConfig, enqueueMany, fastGrade, job } from '../grading/helpers.js';
import { recordDelivered } from '../support/deliveries.js';
import { GitHubFake } from '../support/github-fake.js';
import { crewAt } from '../support/crew-events.js';
import { tempDir } from '../support/tmp.js';
import { fakeClient, headOnOrigin, loopConfig, loopCycle, loopRepo } from '../support/loop-on-github.js';

/**
 * Grading ends at the ledger (docs/architecture.md, "One cycle"): a drain records and delivers
 * nothing on GitHub; the step after grading reads the feedback, delivers the outbox and refreshes
 * the status comments, once per cycle. Counted through the ports a cycle is given.
 */
const tmp = tempDir('school-after-grading-');
afterAll(() => tmp.cleanup());

/** The feedback port, counting its scans (each scan starts with one conditional issues listing). */
function countingFeedback(port: FeedbackPort): { port: FeedbackPort; scans: () => number } {
  let scans = 0;
  const counted = Object.create(port) as FeedbackPort;
  counted.listChanged = (q) => {
    scans++;
    return port.listChanged(q);
  };
  return { port: counted, scans: () => scans };
}

/** The issues port, keeping every status comment body it writes, by issue. */
function countingIssues(port: IssuesPort): { port: IssuesPort; statusWrites: Map<number, string[]> } {
  const statusWrites = new Map<number, string[]>();
  const bodyIssues = new Map<number, number>(); // comment id → issue
  const note = (issue: number | undefined, body: string) => {
    const m = /school-core:status:issue-(\d+)/.exec(body);
    if (!m) return;
    const n = issue ?? Number(m[1]);
    statusWrites.set(n, [...(statusWrites.get(n) ?? []), body]);
  };
  const counted: IssuesPort = {
    addLabels: (issue, labels) => port.addLabels(issue, labels),
    listComments: (issue) => port.listComments(issue),
    createComment: async (issue, body) => {
      const r = await port.createComment(issue, body);
      if (r?.id !== undefined) bodyIssues.set(r.id, issue);
      note(issue, body);
      return r;
    },
    updateComment: async (id, body) => {
      await port.updateComment!(id, body);
      note(bodyIssues.get(id), body);
    },
  };
  return { port: counted, statusWrites };
}

/** A crew that ran for `issue` and succeeded, as the crew log records it. */
async function ranCrew(layout: StateLayout, crewId: string, issue: number): Promise<void> {
  for (const step of ['planned', 'started', 'finished'] as const) await crewAt(layout, step, crewId, issue);
}

describe('the step after grading, once per cycle', () => {
  it('a drain touches no GitHub port; the step scans once, delivers, and refreshes each status once', async () => {
    const fake = new GitHubFake({ owner: 'o', repo: 'r' });
    const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch, retryAfterBaseValue: 1 });
    const layout = new StateLayout(join(tmp.path, 'drain'));
    const cfg = gradingConfig({ repository: 'o/r' });
    const logger = memoryLogger();
    // A pull request delivered earlier: the feedback scan has one to look at.
    const delivered = fake.addIssue({ title: 'delivered before' });
    const pr = fake.openPull({ head: `school/issue-${delivered.number}`, headSha: 'a'.repeat(40) });
    await recordDelivered(layout, { issue: delivered.number, crewId: 'crew-a', pr, sha: 'a'.repeat(40) });
    const fresh = fake.addIssue({ title: 'graded now' });
    await ranCrew(layout, 'crew-b', fresh.number);
    await enqueueMany(layout, [job(fresh.number, 'crew-b')]);
    fake.resetLog();

    const drained = await drain({ config: cfg, layout, logger, judging: { grade: fastGrade } });
    expect(drained.accepted).toBe(1);
    // Grading ends at the ledger: nothing asked of GitHub, the label waits in the outbox.
    expect(fake.requests).toEqual([]);
    expect(new Outbox(layout).pending().map((i) => [i.entry.issueNumber, i.entry.kind])).toEqual([
      [fresh.number, 'labels'],
    ]);

    const feedback = countingFeedback(octokitFeedback(client, 'o/r'));
    const issues = countingIssues(octokitPort(client, 'o/r', { retries: 0 }));
    const after = await afterGrading({
      config: cfg,
      layout,
      logger,
      github: issues.port,
      feedback: feedback.port,
    });
    expect(feedback.scans()).toBe(1);
    expect(after.feedback?.requests).toBeGreaterThan(0);
    expect(fresh.labels).toEqual([cfg.grading.labels.accepted]);
    expect(after.statuses).toEqual([fresh.number]);
    expect(issues.statusWrites.get(fresh.number)).toHaveLength(1);
    expect(issues.statusWrites.get(fresh.number)![0]).toContain(statusMarkerOf(fresh.number));
    expect(issues.statusWrites.get(fresh.number)![0]).toContain('accepted');
    expect(fresh.comments).toHaveLength(1);
    expect(after).toMatchObject({ outboxDelivered: 2, outboxPending: 0 });

    // Run again with nothing new: one more scan, no status written again, nothing pending.
    const again = await afterGrading({
      config: cfg,
      layout,
      logger,
      github: issues.port,
      feedback: feedback.port,
    });
    expect(feedback.scans()).toBe(2);
    expect(again).toMatchObject({ outboxDelivered: 0, outboxPending: 0, statuses: [] });
    expect(issues.statusWrites.get(fresh.number)).toHaveLength(1);
  });

  it(
    'one school loop cycle: the feedback is scanned once, the pull request and the label are delivered, and the status says queued, then accepted',
    { timeout: 240_000 },
    async () => {
      const root = join(tmp.path, 'loop');
      // The work, and a test that fails without it (the evidence judge runs it at the base).
      const { bare, work, student } = loopRepo(root, {
        student: `import { writeFileSync } from 'node:fs';
const name = process.env.SCHOOL_CREW_ID.split('-')[0];
writeFileSync(process.env.SCHOOL_WORKTREE + '/' + name + '.txt', 'done\\n');
writeFileSync(
  process.env.SCHOOL_WORKTREE + '/' + name + '.test.mjs',
  "import { test } from 'node:test';\\nimport assert from 'node:assert';\\nimport { existsSync } from 'node:fs';\\n" +
    "test('the work is done', () => assert.ok(existsSync(new URL('./' + " + JSON.stringify(name) + " + '.txt', import.meta.url))));\\n",
);
writeFileSync(process.env.SCHOOL_USAGE_FILE, JSON.stringify({ inputTokens: 1, outputTokens: 1, costUsd: 0 }));
`,
      });
      const config = loopConfig(root, work, {
        fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
        agents: [{ id: 'student', command: [process.execPath, student] }],
        dispatch: { verify: [process.execPath, '--test'], crewTimeoutSeconds: 60 },
      });
      const layout = new StateLayout(config.stateDir);
      // GitHub reports a pull request's head from the repository: the branch on origin (a head
      // that is not the delivered commit would be someone's push, judged again).
      const fake = new GitHubFake({ now: () => new Date(), branchHead: headOnOrigin(bare) });
      const client = fakeClient(fake);
      const logger = memoryLogger();
      const feedback = countingFeedback(octokitFeedback(client, 'octo/school'));
      const issues = countingIssues(octokitPort(client, 'octo/school', { retries: 0 }));
      const cycle = loopCycle(
        { config, layout, logger, client },
        { over: { github: issues.port, feedback: feedback.port } },
      );

      // Cycle 1 delivers a pull request: from then on the scan has one to look at.
      const first = fake.addIssue({ title: 'First task' });
      await cycle();
      expect(fake.pulls).toHaveLength(1);

      // Cycle 2, measured: a new issue, a crew runs, its work is graded and delivered.
      const second = fake.addIssue({ title: 'Second task' });
      const scansBefore = feedback.scans();
      issues.statusWrites.clear();
      const r = await cycle();
      expect(r.runs.flatMap((x) => x.result.finished)).toHaveLength(1);
      expect(r.drain.accepted).toBe(1);
      expect(feedback.scans() - scansBefore).toBe(1);
      // Delivered in this cycle: the pull request, the label, and the status comment naming it.
      expect(fake.pulls).toHaveLength(2);
      const pr = fake.pulls.find((p) => p.head === `school/issue-${second.number}`)!;
      expect(second.labels).toEqual([config.grading.labels.accepted]);
      expect(r.drain).toMatchObject({ outboxPending: 0 });
      expect(r.drain.outboxDelivered).toBeGreaterThan(0);
      // The status: "queued" once after planning, then the verdict once after grading; the first
      // issue's did not change and was not written.
      const writes = issues.statusWrites.get(second.number) ?? [];
      expect(writes).toHaveLength(2);
      expect(writes[0]).toContain('queued');
      expect(writes[1]).toContain('accepted');
      expect(writes[1]).toContain(`#${pr.number}`);
      expect(issues.statusWrites.get(first.number)).toBeUndefined();
      expect(second.comments).toHaveLength(1);
    },
  );
});
