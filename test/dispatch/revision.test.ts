import { afterEach, describe, expect, it } from 'vitest';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { planDispatch, type PlanInput } from '../../src/dispatch/plan.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { decideRevision, type RevisionRequest } from '../../src/dispatch/revision.js';
import { memoryLogger } from '../../src/log.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { crewRecord } from '../support/crew-record.js';
import { GiB, config, finishCrew, item } from './helpers.js';

/**
 * Planning revision crews (docs/delivery.md, "Revisions"): an issue done by a delivered crew whose
 * pull request got trusted feedback gets one crew for the same agent, round by round up to
 * `delivery.revisions`, under the usual admission; failed revisions are bounded by the rounds, not
 * by the two-failure stop of first attempts.
 */
const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

const NOW = new Date('2026-03-01T12:00:00Z');
const SHA = (c: string) => c.repeat(40);

async function school(raw: Record<string, unknown> = {}) {
  const d = tempDir('school-revision-plan-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({
    agents: [
      { id: 'alpha', command: ['node', 'a.mjs'] },
      { id: 'beta', command: ['node', 'b.mjs'] },
    ],
    fleet: { daemons: [{ id: 'd1', worktrees: 2 }] },
    ...raw,
  });
  await recordHeartbeat(layout, cfg, { daemon: 'd1', observedClass: 'xl', freeDiskBytes: 50 * GiB, at: NOW });
  const logger = memoryLogger();
  const plan = (curriculum: CurriculumItem[], over: Partial<PlanInput> = {}) =>
    planDispatch({ config: cfg, layout, curriculum, logger, ...over, clock: { now: NOW, ...over.clock } });
  return { layout, cfg, plan };
}

function request(revises: string, feedback: Array<[string, string]>, over: Partial<RevisionRequest> = {}) {
  return {
    issue: 1,
    pr: 9,
    branch: 'school/issue-1',
    revises,
    deliveredSha: SHA('d'),
    feedback: feedback.map(([id, at]) => ({ id, at, headSha: SHA('e') })),
    ...over,
  };
}

describe('planning revision crews', () => {
  it('plans round 1 for the delivering agent from the pull request head, even when another agent scores better', async () => {
    const { layout, plan } = await school();
    // beta delivered issue 1; alpha scores far better (it would win a first attempt).
    const first = await plan([item(1)], { record: { scores: (a) => (a === 'alpha' ? 0.99 : 0.1) } });
    expect(first.assignments[0]!.agent).toBe('alpha');
    const delivered = first.assignments[0]!.crewId;
    await finishCrew(layout, delivered, 1, 'succeeded', new Date('2026-03-01T12:05:00Z'));
    const revisions = [request(delivered, [['review:1', '2026-03-01T12:10:00Z']])];
    const r = await plan([item(1)], { record: { revisions, scores: (a) => (a === 'beta' ? 0.99 : 0.1) } });
    expect(r.assignments).toHaveLength(1);
    const a = r.assignments[0]!;
    expect(a.agent).toBe('alpha');
    expect(a.revision).toEqual({
      round: 1,
      of: 3,
      pr: 9,
      branch: 'school/issue-1',
      headSha: SHA('e'),
      revises: delivered,
      feedback: ['review:1'],
    });
    expect(readRegistry(layout).crews[a.crewId]!.revision).toEqual(a.revision);
    // Planned once: the feedback is answered while the crew runs and after it ends.
    expect((await plan([item(1)], { record: { revisions } })).assignments).toEqual([]);
    await finishCrew(layout, a.crewId, 1, 'succeeded');
    const again = await plan([item(1)], { record: { revisions } });
    expect(again.assignments).toEqual([]);
    expect(again.refused).toMatchObject([{ issue: 1, code: 'done' }]);
  });

  it('counts rounds up to delivery.revisions; failures are bounded by the rounds, interruptions use none', async () => {
    const { layout, plan } = await school({ delivery: { revisions: 2 } });
    const first = await plan([item(1)]);
    const delivered = first.assignments[0]!.crewId;
    await finishCrew(layout, delivered, 1, 'succeeded', new Date('2026-03-01T12:05:00Z'));
    const feedback: Array<[string, string]> = [['review:1', '2026-03-01T12:10:00Z']];
    // Round 1 is cancelled (an interruption): it used no round, and the feedback stays open.
    const r1 = (await plan([item(1)], { record: { revisions: [request(delivered, feedback)] } }))
      .assignments[0]!;
    await finishCrew(layout, r1.crewId, 1, 'cancelled');
    const r1b = (await plan([item(1)], { record: { revisions: [request(delivered, feedback)] } }))
      .assignments[0]!;
    expect(r1b.revision).toMatchObject({ round: 1, of: 2 });
    await finishCrew(layout, r1b.crewId, 1, 'failed');
    // New feedback: round 2, although two runs of the issue failed in a row (no two-failure stop).
    feedback.push(['comment:2', '2026-03-01T12:20:00Z']);
    const r2 = (await plan([item(1)], { record: { revisions: [request(delivered, feedback)] } }))
      .assignments[0]!;
    expect(r2.revision).toMatchObject({ round: 2, of: 2, feedback: ['comment:2'] });
    await finishCrew(layout, r2.crewId, 1, 'failed');
    // More feedback after the last round: nothing is planned, and the refusal says why.
    feedback.push(['comment:3', '2026-03-01T12:30:00Z']);
    const r3 = await plan([item(1)], { record: { revisions: [request(delivered, feedback)] } });
    expect(r3.assignments).toEqual([]);
    expect(r3.refused).toMatchObject([{ issue: 1, code: 'revisions-exhausted' }]);
    expect(r3.refused[0]!.reason).toContain('delivery.revisions: 2');
  });

  it('a revision goes before fresh work, like a repair', async () => {
    const { layout, plan } = await school({ fleet: { daemons: [{ id: 'd1', worktrees: 1 }] } });
    const d = (await plan([item(1)])).assignments[0]!.crewId;
    await finishCrew(layout, d, 1, 'succeeded');
    // Issue 2 is more urgent and smaller; one slot: the revision of issue 1 takes it.
    const r = await plan([item(1, { priority: 3, size: 90 }), item(2, { priority: 0, size: 5 })], {
      record: { revisions: [request(d, [['review:1', '2026-03-01T13:00:00Z']])] },
    });
    expect(r.assignments.map((a) => [a.issueNumber, a.revision?.round])).toEqual([[1, 1]]);
  });

  it('delivery.revisions: 0 turns revisions off; an untrusted issue gets none either', async () => {
    const off = await school({ delivery: { revisions: 0 } });
    const d = (await off.plan([item(1)])).assignments[0]!.crewId;
    await finishCrew(off.layout, d, 1, 'succeeded');
    const r = await off.plan([item(1)], {
      record: { revisions: [request(d, [['review:1', '2026-03-01T13:00:00Z']])] },
    });
    expect(r.assignments).toEqual([]);

    const on = await school();
    const e = (await on.plan([item(1)])).assignments[0]!.crewId;
    await finishCrew(on.layout, e, 1, 'succeeded');
    // The issue's author lost their standing (the curriculum refreshed it): the trust gate still holds.
    const untrusted = item(1, { authorAssociation: 'NONE' } as Partial<CurriculumItem>);
    const u = await on.plan([untrusted], {
      record: { revisions: [request(e, [['review:1', '2026-03-01T13:00:00Z']])] },
    });
    expect(u.assignments).toEqual([]);
    expect(u.refused).toMatchObject([{ issue: 1, code: 'untrusted-author' }]);
  });
});

describe('decideRevision: where a revision starts', () => {
  const registry = (finishedAt: string) => ({
    crews: {
      c1: crewRecord('c1', {
        status: 'finished',
        plannedAt: '2026-03-01T12:00:00Z',
        outcome: 'succeeded',
        finishedAt,
      }),
    },
    leases: {},
  });

  it('from the head the feedback saw, unless the delivered crew finished after it was read', () => {
    const req = request('c1', [['review:1', '2026-03-01T12:10:00Z']]);
    const after = decideRevision(registry('2026-03-01T12:05:00Z'), req, 3);
    expect(after).toMatchObject({ kind: 'plan', revision: { headSha: SHA('e') } });
    const before = decideRevision(registry('2026-03-01T12:20:00Z'), req, 3);
    expect(before).toMatchObject({ kind: 'plan', revision: { headSha: SHA('d') } });
  });

  it('nothing to do without open feedback or a known delivered crew', () => {
    expect(decideRevision(registry('2026-03-01T12:05:00Z'), request('c1', []), 3)).toEqual({ kind: 'none' });
    expect(
      decideRevision(
        registry('2026-03-01T12:05:00Z'),
        request('gone', [['review:1', '2026-03-01T13:00:00Z']]),
        3,
      ),
    ).toEqual({ kind: 'none' });
  });
});
