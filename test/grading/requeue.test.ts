import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drain } from '../../src/grading/drain.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { requeueDeadLetters, requeueSelectors } from '../../src/grading/requeue.js';
import { drainSummary } from '../../src/actions/drain-grading/summary.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { config, enqueueMany, fastGrade, job } from './helpers.js';

/**
 * Retrying dead letters (docs/grading.md, "Dead letters"): one selector language for the CLI, the
 * drain's `requeue-dead-letter` input and the caller workflow's `workflow_dispatch` input — a key,
 * every dead letter of an issue, or all of them — and a typo requeues nothing.
 */
const cfg = config({ grading: { leaseSeconds: 60, maxAttempts: 1 } });
let tmp: ReturnType<typeof tempDir>;
let layout: StateLayout;
beforeEach(async () => {
  tmp = tempDir('school-requeue-');
  layout = new StateLayout(tmp.path);
  await enqueueMany(layout, [job(3, 'crew-a'), job(3, 'crew-b'), job(5, 'crew-c')]);
  await drain({
    config: cfg,
    layout,
    logger: silentLogger,
    judging: {
      grade: () => {
        throw new Error('reviewer crashed');
      },
    },
  });
});
afterEach(() => tmp.cleanup());

const dead = () => new GradingQueue(layout).deadLetters().map((d) => d.job.jobKey);

describe('requeueing dead letters', () => {
  it('requeues one by its key, every one of an issue, or all', async () => {
    expect(dead()).toEqual(['grade:3:crew-a', 'grade:3:crew-b', 'grade:5:crew-c']);
    const queue = new GradingQueue(layout);
    expect((await requeueDeadLetters(queue, ['grade:5:crew-c'])).map((j) => j.jobKey)).toEqual([
      'grade:5:crew-c',
    ]);
    expect(dead()).toEqual(['grade:3:crew-a', 'grade:3:crew-b']);
    const issue = await requeueDeadLetters(queue, requeueSelectors('issue:3'));
    expect(issue.map((j) => [j.jobKey, j.issueNumber])).toEqual([
      ['grade:3:crew-a', 3],
      ['grade:3:crew-b', 3],
    ]);
    expect(issue[0]!.previousFailure).toContain('reviewer crashed');
    expect(dead()).toEqual([]);
  });

  it('all, or a list with #N, takes each dead letter once', async () => {
    const queue = new GradingQueue(layout);
    const r = await requeueDeadLetters(queue, requeueSelectors('all, #3 grade:5:crew-c'));
    expect(r.map((j) => j.jobKey)).toEqual(['grade:3:crew-a', 'grade:3:crew-b', 'grade:5:crew-c']);
  });

  it('a selector that matches nothing requeues nothing and says what there is', async () => {
    const queue = new GradingQueue(layout);
    await expect(requeueDeadLetters(queue, ['issue:3', 'issue:9'])).rejects.toThrow(
      /nothing matches "issue:9" — the dead letters are of issue\(s\) #3, #5/,
    );
    expect(dead()).toHaveLength(3);
    await expect(requeueDeadLetters(queue, ['grade:7:nope'])).rejects.toThrow(
      /no grading job "grade:7:nope"/,
    );
    expect(dead()).toHaveLength(3);
  });

  it("the drain's job summary lists what was requeued", async () => {
    const requeued = await requeueDeadLetters(new GradingQueue(layout), ['issue:5']);
    const drained = await drain({ config: cfg, layout, logger: silentLogger, judging: { grade: fastGrade } });
    expect(drained.accepted + drained.rejected).toBe(1); // the requeued job was graded again
    const blocks = drainSummary({
      mode: 'drain',
      drained: { ...drained, outboxDelivered: 0, outboxPending: 0 },
      pending: 0,
      dead: [],
      requeued,
    });
    const text = JSON.stringify(blocks);
    expect(text).toContain('Dead letters requeued');
    expect(text).toContain('grade:5:crew-c');
    expect(text).toContain('reviewer crashed');
  });
});
