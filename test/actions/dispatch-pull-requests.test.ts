import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseDispatchInputs } from '../../src/actions/dispatch-crew/inputs.js';
import {
  dispatchNotices,
  dispatchOutputs,
  dispatchSummary,
} from '../../src/actions/dispatch-crew/summary.js';
import { silentLogger } from '../../src/log.js';
import { dispatchJob, type PlanInput } from '../../src/loop/dispatch-job.js';
import { planScope } from '../../src/loop/event-scope.js';
import { StateLayout } from '../../src/state/layout.js';
import { item } from '../crew/helpers.js';
import { recordDelivered } from '../support/deliveries.js';
import { tempDir } from '../support/tmp.js';

/**
 * dispatch-crew's `only-pull-requests` (the loop's `event-pull-request`): a pull request the school
 * delivered narrows the plan to its issue; any other plans nothing, with a notice and no failure;
 * a value that is not numbers is refused, naming the input.
 */

const tmp = tempDir('school-only-prs-');
afterAll(() => tmp.cleanup());
let n = 0;

/** A school with issues 3, 5 and 8 in its curriculum, one daemon with a fresh heartbeat. */
async function school() {
  const root = join(tmp.path, `s${++n}`);
  mkdirSync(root, { recursive: true });
  const config = join(root, 'school.yml');
  writeFileSync(
    config,
    stringify({
      stateDir: join(root, 'state'),
      repoPath: root,
      fleet: { daemons: [{ id: 'd1', worktrees: 4 }] },
      agents: [{ id: 'alpha', command: ['node', 'a.mjs'], roles: ['coding'] }],
      dispatch: { maxCrews: 10, minFreeDiskGiB: 0 },
    }),
  );
  const layout = new StateLayout(join(root, 'state'));
  mkdirSync(layout.root, { recursive: true });
  writeFileSync(layout.file('curriculum'), [3, 5, 8].map((i) => JSON.stringify(item(i))).join('\n') + '\n');
  const base = { config, dryRun: false } as const;
  await dispatchJob({ ...base, mode: 'heartbeat', daemon: 'd1' }, silentLogger);
  const plan = (more: Partial<PlanInput>) =>
    dispatchJob({ ...base, mode: 'plan', ...more }, silentLogger).then((j) => j.result);
  return { layout, plan };
}

describe('only-pull-requests: the input', () => {
  it('is pull request numbers separated by commas, or nothing', () => {
    expect(parseDispatchInputs({ mode: 'plan', onlyPullRequests: '42, 7' }).only?.pullRequests).toEqual([
      42, 7,
    ]);
    expect(parseDispatchInputs({ mode: 'plan', onlyPullRequests: '' }).only).toBeUndefined();
    expect(parseDispatchInputs({ mode: 'plan' }).only).toBeUndefined();
  });

  it('anything else is a clear error naming the input (never a comment text passed by mistake)', () => {
    for (const bad of ['42; rm -rf ~', '/school add a test', '0', '-3', '4.2', '#42']) {
      expect(() => parseDispatchInputs({ mode: 'plan', onlyPullRequests: bad }), bad).toThrow(
        /^dispatch-crew inputs: only-pull-requests: expected pull request numbers separated by commas \(e\.g\. 12,14\), found "/,
      );
    }
    // The sibling input keeps its own name in its message.
    expect(() => parseDispatchInputs({ mode: 'plan', onlyIssues: 'x' })).toThrow(
      /only-issues: expected issue numbers/,
    );
  });
});

describe('only-pull-requests: the mapping through the deliveries', () => {
  it('maps a delivered pull request to its issue and reports the others as not the school’s', async () => {
    const { layout } = await school();
    await recordDelivered(layout, { issue: 5, crewId: 'c5-aaaaaaaa', pr: 42 });
    expect(planScope(layout, undefined, [42])).toEqual({
      issues: new Set([5]),
      pullRequests: [{ pr: 42, issue: 5 }],
      unknown: [],
    });
    // Nothing the school delivered: the plan is narrowed to nothing, never widened to everything.
    expect(planScope(layout, undefined, [99])).toEqual({
      issues: new Set(),
      pullRequests: [],
      unknown: [99],
    });
    expect(planScope(layout, [8], [42, 99])).toEqual({
      issues: new Set([8, 5]),
      pullRequests: [{ pr: 42, issue: 5 }],
      unknown: [99],
    });
    // No event: the whole curriculum.
    expect(planScope(layout, undefined, undefined).issues).toBeUndefined();
    expect(planScope(layout, [3], undefined).issues).toEqual(new Set([3]));
  });

  it('the plan considers only the issue of a delivered pull request', async () => {
    const { layout, plan } = await school();
    await recordDelivered(layout, { issue: 5, crewId: 'c5-aaaaaaaa', pr: 42 });
    const r = await plan({ only: { pullRequests: [42] } });
    if (r.mode !== 'plan') throw new Error(r.mode);
    expect(r.plan.assignments.map((a) => a.issueNumber)).toEqual([5]);
    expect(r.plan.refused).toEqual([]);
    expect(dispatchNotices(r).notices).toBeUndefined();
    expect(dispatchOutputs(r)).toMatchObject({ admitted: '1', revisions: 'false' });
    expect(JSON.stringify(dispatchSummary(r))).toContain(
      "Pull request #42 is the school's delivery for issue #5: only that issue is planned.",
    );
  });

  it('a pull request the school did not deliver plans nothing: a notice, not a failure', async () => {
    const { layout, plan } = await school();
    await recordDelivered(layout, { issue: 5, crewId: 'c5-aaaaaaaa', pr: 42 });
    const r = await plan({ only: { pullRequests: [99] } });
    if (r.mode !== 'plan') throw new Error(r.mode);
    expect(r.plan.assignments).toEqual([]);
    expect(r.plan.refused).toEqual([]);
    const notices = dispatchNotices(r);
    expect(notices.notices).toEqual(['pull request #99 is not one the school delivered; nothing to plan']);
    expect(notices.errors).toEqual([]);
    expect(notices.failure).toBeUndefined();
    expect(dispatchOutputs(r)).toMatchObject({ admitted: '0', matrix: '[]', revisions: 'false' });
    expect(JSON.stringify(dispatchSummary(r))).toContain(
      'Pull request #99 is not one the school delivered; nothing to plan.',
    );
    // Without an event the same state plans the whole curriculum.
    const all = await plan({});
    if (all.mode !== 'plan') throw new Error(all.mode);
    expect(all.plan.assignments.map((a) => a.issueNumber).sort()).toEqual([3, 5, 8]);
  });
});
