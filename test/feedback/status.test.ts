import { afterAll, describe, expect, it } from 'vitest';
import { drainAndDeliver, drainFast } from '../support/drain-and-deliver.js';
import { Outbox, outboxFold, statusMarkerOf } from '../../src/outbox/outbox.js';
import { publishStatuses, refreshStatuses } from '../../src/feedback/refresh.js';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { event } from '../../src/state/event-log.js';
import { crewAt as crew, plannedEvent } from '../support/crew-events.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { statusIssue } from '../support/status-issue.js';
import { config, enqueueMany, fastGrade, job } from '../grading/helpers.js';

const tmp = tempDir('school-status-comment-');
afterAll(() => tmp.cleanup());

function setup(name: string) {
  return statusIssue(`${tmp.path}/${name}`);
}

describe('one status comment per issue, edited in place (item 4, N7.2)', () => {
  it('queued → running (with the run link) → accepted: one comment, PATCHed, never a second', async () => {
    const { fake, issue, github, layout } = setup('lifecycle');
    const cfg = config({ repository: 'o/r' });
    const logger = memoryLogger();
    const n = issue.number;
    const crewId = `crew-${n}`;

    await crew(layout, 'planned', crewId, n);
    await publishStatuses({ config: cfg, layout, logger, github });
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments[0]!.body).toContain(statusMarkerOf(n));
    expect(issue.comments[0]!.body).toContain('queued');
    const id = issue.comments[0]!.id;

    await crew(layout, 'started', crewId, n);
    await publishStatuses({
      config: cfg,
      layout,
      logger,
      github,
      runUrl: 'https://github.com/o/r/actions/runs/77',
    });
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments[0]!.id).toBe(id);
    expect(issue.comments[0]!.body).toContain('running');
    expect(issue.comments[0]!.body).toContain('https://github.com/o/r/actions/runs/77');
    // Known id: an edit costs one PATCH and no listing.
    expect(fake.requestsTo('/issues/comments/', 'PATCH')).toHaveLength(1);
    expect(fake.requestsTo(`/issues/${n}/comments`, 'GET')).toHaveLength(1);

    // A refresh that changes nothing records and sends nothing.
    fake.resetLog();
    expect(
      await publishStatuses({
        config: cfg,
        layout,
        logger,
        github,
        runUrl: 'https://github.com/o/r/actions/runs/77',
      }),
    ).toEqual({ recorded: [], delivered: 0 });
    expect(fake.requests).toHaveLength(0);

    await crew(layout, 'finished', crewId, n);
    await enqueueMany(layout, [job(n, crewId)]);
    const r = await drainAndDeliver({ config: cfg, layout, logger, github, judging: { grade: fastGrade } });
    expect(r.accepted).toBe(1);
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments[0]!.id).toBe(id);
    expect(issue.comments[0]!.body).toContain('accepted');
    expect(new Outbox(layout).pending()).toEqual([]);
  });

  it('a failed post stays pending; a comment whose id was lost is found by its marker; a deleted one is written again', async () => {
    const { fake, issue, github, layout } = setup('lost-ack');
    const cfg = config({ repository: 'o/r' });
    const logger = memoryLogger();
    await crew(layout, 'planned', 'c1', issue.number);
    fake.injectFault({ method: 'POST', path: `/issues/${issue.number}/comments`, kind: 502, times: 2 });
    const first = await publishStatuses({ config: cfg, layout, logger, github });
    expect(first.delivered).toBe(0);
    expect(new Outbox(layout).pending()).toHaveLength(1);
    await drainAndDeliver({ config: cfg, layout, logger, github, judging: { grade: fastGrade } });
    expect(issue.comments).toHaveLength(1);
    const id = issue.comments[0]!.id;

    // Another state directory (the id lost with it) finds the comment by its marker and edits it.
    const other = new StateLayout(`${tmp.path}/lost-ack-other`);
    await crew(other, 'planned', 'c1', issue.number);
    await crew(other, 'started', 'c1', issue.number);
    await publishStatuses({ config: cfg, layout: other, logger, github });
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments[0]!.id).toBe(id);
    expect(issue.comments[0]!.body).toContain('running');

    // A person deletes it: the next edit gets 404, the marker is looked for, and it is written again.
    issue.comments.length = 0;
    await crew(layout, 'started', 'c1', issue.number);
    await publishStatuses({ config: cfg, layout, logger, github });
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments[0]!.body).toContain('running');
    expect(fake.requestsTo('/issues/comments/', 'PATCH').map((q) => q.status)).toContain(404);
  });

  it('a superseded status is never sent; only the latest goes out', async () => {
    const { fake, issue, layout, github } = setup('superseded');
    const cfg = config({ repository: 'o/r' });
    const logger = memoryLogger();
    await crew(layout, 'planned', 'c2', issue.number);
    await refreshStatuses({ config: cfg, layout, logger }); // no GitHub now: recorded only
    await crew(layout, 'started', 'c2', issue.number);
    await refreshStatuses({ config: cfg, layout, logger });
    expect(new Outbox(layout).pending()).toHaveLength(2);
    await new Outbox(layout).deliver(github, { logger, now: () => new Date() });
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments[0]!.body).toContain('running');
    expect(fake.requestsTo(`/issues/${issue.number}/comments`, 'POST')).toHaveLength(1);
  });

  it('a crew planned on GitHub Actions links to the run that planned it, not the one rendering', async () => {
    const { issue, github, layout } = setup('run-link');
    const cfg = config({ repository: 'o/r' });
    await crewLog(layout).append([
      plannedEvent('c5', issue.number, {
        daemon: 'local',
        weight: 'light',
        plannedBy: { kind: 'actions', runId: '4242', runAttempt: '1', job: 'crew', daemon: 'local' },
      }),
    ]);
    await crew(layout, 'started', 'c5', issue.number);
    await publishStatuses({
      config: cfg,
      layout,
      logger: memoryLogger(),
      github,
      runUrl: 'https://github.com/o/r/actions/runs/9999',
      repoUrl: 'https://github.com/o/r',
    });
    expect(issue.comments[0]!.body).toContain('https://github.com/o/r/actions/runs/4242');
    expect(issue.comments[0]!.body).not.toContain('9999');
  });

  it('grading.comment: false posts nothing', async () => {
    const { fake, issue, github, layout } = setup('off');
    const cfg = config({ repository: 'o/r', grading: { comment: false } });
    await crew(layout, 'planned', 'c3', issue.number);
    await publishStatuses({ config: cfg, layout, logger: memoryLogger(), github });
    await enqueueMany(layout, [job(issue.number, 'c3')]);
    await drainFast({ config: cfg, layout, github });
    expect(issue.comments).toHaveLength(0);
    expect(fake.requestsTo('/comments')).toHaveLength(0);
  });

  it('a GitHub failure never blocks the grade: the status waits in the outbox', async () => {
    const { fake, issue, github, layout } = setup('failing');
    const cfg = config({ repository: 'o/r' });
    await crew(layout, 'planned', 'c4', issue.number);
    await crew(layout, 'started', 'c4', issue.number);
    await crew(layout, 'finished', 'c4', issue.number);
    await enqueueMany(layout, [job(issue.number, 'c4')]);
    fake.injectFault({ path: '/comments', kind: 500, times: 10 });
    const r = await drainFast({ config: cfg, layout, github });
    expect(r.fatal).toBeUndefined();
    expect(r.accepted).toBe(1);
    expect(new Outbox(layout).pending().map((p) => p.entry.kind)).toEqual(['status']);
    fake.faults.length = 0;
    await drainFast({ config: cfg, layout, github });
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments[0]!.body).toContain('accepted');
  });
});

describe('status entries under compaction', () => {
  it("keep each open issue's latest status (body and comment id); drop superseded ones and closed issues'", () => {
    let state = outboxFold.empty();
    const rec = (id: string, issue: number, body: string) =>
      (state = outboxFold.apply(
        state,
        event('outbox.recorded', id, {
          id,
          jobKey: `status:${issue}`,
          issueNumber: issue,
          kind: 'status' as const,
          body,
        }),
      ));
    const done = (id: string, commentId?: number) =>
      (state = outboxFold.apply(
        state,
        event('outbox.delivered', `delivered:${id}`, { id, ...(commentId ? { commentId } : {}) }),
      ));
    rec('s1', 1, 'queued');
    done('s1', 11);
    rec('s2', 1, 'accepted');
    done('s2', 11);
    rec('s3', 2, 'queued');
    done('s3', 22);
    const pruned = outboxFold.prune(state, new Date(), { openIssues: new Set([1]) });
    expect(Object.keys(pruned.items)).toEqual(['s2']);
    expect(pruned.items.s2).toMatchObject({ commentId: 11, entry: { body: 'accepted' } });
  });
});
