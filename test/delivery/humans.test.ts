import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { octokitFeedback } from '../../src/github/feedback-port.js';
import { publishStatuses } from '../../src/feedback/refresh.js';
import { drainAndDeliver } from '../support/drain-and-deliver.js';
import { octokitPort } from '../../src/github/issues-port.js';
import { humanScoreOf, ScoreLedger } from '../../src/grading/ledger.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { enqueueMany, fastGrade } from '../grading/helpers.js';
import { GitHubFake } from '../support/github-fake.js';
import { git, tempDir } from '../support/tmp.js';
import { bookbag, gitOut, newFilePatch } from './helpers.js';
import { deliveryOn, fakeClient, headOnOrigin, loopConfig, loopRepo } from '../support/loop-on-github.js';
import { finishedEvent, plannedEvent } from '../support/crew-events.js';

/**
 * The school's conversation with a team on GitHub, end to end through the drain the grade job runs:
 * real git (a bare repository as origin), the GitHub fake behind msw handlers for the pulls API,
 * comments and the issues listing. One pull request, one status comment edited in place, an idle
 * cycle that costs one free conditional request, and a merge that moves the human-acceptance score.
 */
const tmp = tempDir('school-humans-');
afterAll(() => tmp.cleanup());

describe('humans in the loop: status comment, delivery, idle cycles, the merge as last judge', () => {
  it(
    'delivers once, edits one status comment in place, idles on 304, and learns from the merge',
    { timeout: 120_000 },
    async () => {
      const root = join(tmp.path, 'loop');
      const { bare, work } = loopRepo(root);
      const baseSha = git(work, 'rev-parse', 'HEAD');
      const config = loopConfig(root, work);
      const layout = new StateLayout(config.stateDir);
      // GitHub's clock is the real one here: the first scan asks from the first delivery's time.
      // A pull request's head is the branch on origin, as GitHub reads it.
      const fake = new GitHubFake({ now: () => new Date(), branchHead: headOnOrigin(bare) });
      const issue = fake.addIssue({ title: 'Rename helper31' });
      const client = fakeClient(fake);
      const logger = memoryLogger();
      const github = octokitPort(client, 'octo/school', { retries: 0 });
      const feedback = octokitFeedback(client, 'octo/school');
      const delivery = deliveryOn({ config, layout, logger, client });
      const n = issue.number;
      const crewId = `c${n}-00000001`;

      // Planned: the loop publishes "queued" before the crew runs.
      await crewLog(layout).append([plannedEvent(crewId, n, { daemon: 'local', weight: 'light' })]);
      await publishStatuses({ config, layout, logger, github });
      expect(issue.comments).toHaveLength(1);
      const statusId = issue.comments[0]!.id;
      expect(issue.comments[0]!.body).toContain('queued');

      // The crew finished; the drain grades, delivers the pull request and updates the status.
      await crewLog(layout).append([finishedEvent(crewId, n)]);
      await enqueueMany(layout, [
        bookbag(layout, { crewId, issue: n, baseSha, diff: newFilePatch('helper.txt', 'helperThirtyOne\n') }),
      ]);
      const cycle = () =>
        drainAndDeliver({
          config,
          layout,
          logger,
          github,
          delivery,
          feedback,
          judging: { grade: fastGrade },
        });
      const first = await cycle();
      expect(first.accepted).toBe(1);
      expect(fake.pulls).toHaveLength(1);
      const pr = fake.pulls[0]!;
      expect(gitOut(bare, 'rev-parse', '--verify', `refs/heads/school/issue-${n}`).ok).toBe(true);
      expect(issue.comments).toHaveLength(1);
      expect(issue.comments[0]!.id).toBe(statusId);
      expect(issue.comments[0]!.body).toContain(`pull request [#${pr.number}]`);

      // CI passes on the delivered commit (a fresh commit without any check run is asked about again
      // until CI had time to start).
      const head = gitOut(bare, 'rev-parse', `refs/heads/school/issue-${n}`).out;
      fake.addCheckRun({ name: 'ci', head_sha: head, status: 'completed', conclusion: 'success' });
      // Idle cycles: nothing is posted again, and once the listing's cursor settles a cycle costs one
      // conditional request answered 304.
      let settledAfter = 0;
      for (; settledAfter < 3; settledAfter++) {
        fake.resetLog();
        await cycle();
        if (fake.requests.every((q) => q.status === 304)) break;
        // While the cursor moves it reads the listing, and once what changed: the delivered commit's
        // checks and statuses, the pull request (state, reviews, line comments, comments) and the
        // issue's comments. The issue and its pull request come in the listing's order (most
        // recently updated first), which two updates in the same second do not fix: compared as a set.
        const r = '/repos/octo/school';
        const asked = fake.requests.map((q) => q.path).filter((p) => !p.endsWith('/issues'));
        expect(asked.sort()).toEqual(
          settledAfter === 0
            ? [
                `${r}/commits/${head}/check-runs`,
                `${r}/commits/${head}/status`,
                `${r}/pulls/${pr.number}`,
                `${r}/pulls/${pr.number}/reviews`,
                `${r}/pulls/${pr.number}/comments`,
                `${r}/issues/${pr.number}/comments`,
                `${r}/issues/${n}/comments`,
              ].sort()
            : [],
        );
      }
      expect(settledAfter).toBeLessThan(3);
      fake.resetLog();
      await cycle();
      expect(fake.requests.filter((q) => q.status !== 304)).toEqual([]);
      expect(fake.requests.map((q) => q.path)).toEqual(['/repos/octo/school/issues']);
      expect(fake.pulls).toHaveLength(1);
      expect(issue.comments).toHaveLength(1);

      // A maintainer merges: the next cycle records it, the ledger learns, the status says so.
      fake.settlePull(pr.number, 'merged');
      await cycle();
      expect(humanScoreOf(new ScoreLedger(layout).state(), 'alpha', 'general', 2)).toEqual({
        ema: 1,
        count: 1,
      });
      expect(issue.comments).toHaveLength(1);
      expect(issue.comments[0]!.body).toContain('merged');
      // The merge's status went out as one edit of the same comment.
      expect(fake.requestsTo('/issues/comments/', 'PATCH')).toHaveLength(1);
      expect(fake.requestsTo(`/issues/${n}/comments`, 'POST')).toHaveLength(0);
    },
  );
});
