import { afterEach, describe, expect, it } from 'vitest';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { decideContest, NO_GRADING_JOB, type Entrant } from '../../src/grading/contest.js';
import { drain } from '../../src/grading/drain.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { combine, type JudgeFinding } from '../../src/grading/verdict.js';
import { memoryLogger } from '../../src/log.js';
import { Outbox } from '../../src/outbox/outbox.js';
import { event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { config, enqueueMany, fastGrade, job, writeBookbag } from './helpers.js';

/** Issue 36, deliverable 5: how the judges pick a contest's crew (src/grading/contest.ts). */
const AT = '2026-03-01T12:00:00.000Z';

function entrant(
  crewId: string,
  o: { sealed?: [number, number]; review?: number; accepted?: boolean; cost?: number; ended?: string },
): Entrant {
  const base = { crewId, agent: `agent-${crewId}`, domain: 'general', difficulty: 5 };
  const cost = o.cost !== undefined ? { costUsd: o.cost } : {};
  if (o.ended) return { ...base, ...cost, ended: o.ended };
  const findings: JudgeFinding[] = [
    { judge: 'verification', passed: true, code: 'verification_passed', reasons: [], score: 1 },
  ];
  if (o.sealed) {
    const [passed, failed] = o.sealed;
    findings.push({
      judge: 'sealed',
      passed: failed === 0,
      code: failed === 0 ? 'sealed_tests_passed' : 'sealed_tests_failed',
      reasons: [],
      score: failed === 0 ? 1 : 0,
      tests: { passed, failed },
    });
  }
  if (o.accepted !== false && (!o.sealed || o.sealed[1] === 0))
    findings.push({ judge: 'reviewer', passed: true, code: 'approved', reasons: [], score: o.review ?? 0.8 });
  else if (o.accepted === false)
    findings.push({ judge: 'reviewer', passed: false, code: 'changes_requested', reasons: [], score: 0 });
  return { ...base, ...cost, verdict: combine(findings) };
}

describe('decideContest', () => {
  it('more passed named sealed tests wins; a crew the sealed judge rejected is a loser with its counts', () => {
    const d = decideContest(
      'k7-1',
      7,
      [entrant('c7-b', { sealed: [2, 1] }), entrant('c7-a', { sealed: [3, 0] })],
      AT,
    );
    expect(d.winner).toEqual({ crewId: 'c7-a', agent: 'agent-c7-a', domain: 'general', difficulty: 5 });
    expect(d.why).toBe('c7-a (agent-c7-a) was the only crew of 2 the judges accepted');
    expect(d.losers).toEqual([
      expect.objectContaining({
        crewId: 'c7-b',
        reason: 'rejected by the sealed judge (sealed_tests_failed); 2 named sealed test(s) passed, 1 failed',
      }),
    ]);
    expect(d.decidedAt).toBe(AT);
  });

  it('among accepted crews: sealed tests, then the reviewer, then the lower cost, then the crew id', () => {
    const bySealed = decideContest(
      'k1',
      1,
      [entrant('c1-a', { sealed: [3, 0], review: 0.9 }), entrant('c1-b', { sealed: [4, 0], review: 0.5 })],
      AT,
    );
    expect(bySealed.winner?.crewId).toBe('c1-b');
    expect(bySealed.why).toContain('more named sealed tests passed (c1-b: 4, c1-a: 3)');
    expect(bySealed.losers[0]!.reason).toBe(
      'accepted, not chosen: c1-b had more named sealed tests passed (c1-b: 4, c1-a: 3)',
    );

    const byReviewer = decideContest(
      'k1',
      1,
      [entrant('c1-a', { sealed: [3, 0], review: 0.6 }), entrant('c1-b', { sealed: [3, 0], review: 0.9 })],
      AT,
    );
    expect(byReviewer.winner?.crewId).toBe('c1-b');
    expect(byReviewer.why).toContain("the higher reviewer's score (c1-b: 0.90, c1-a: 0.60)");

    const byCost = decideContest(
      'k1',
      1,
      [entrant('c1-a', { review: 0.9, cost: 0.4 }), entrant('c1-b', { review: 0.9, cost: 0.1 })],
      AT,
    );
    expect(byCost.winner?.crewId).toBe('c1-b');
    expect(byCost.why).toContain('the lower cost (c1-b: $0.10, c1-a: $0.40)');

    const byId = decideContest(
      'k1',
      1,
      [entrant('c1-b', { review: 0.9 }), entrant('c1-a', { review: 0.9 })],
      AT,
    );
    expect(byId.winner?.crewId).toBe('c1-a');
    expect(byId.why).toContain('the lower crew id');
  });

  it('a crew that ended without a grade is decided among the rest; no accepted crew means no winner', () => {
    const rest = decideContest(
      'k2',
      2,
      [entrant('c2-a', { ended: 'aborted (infra)' }), entrant('c2-b', { sealed: [1, 0] })],
      AT,
    );
    expect(rest.winner?.crewId).toBe('c2-b');
    expect(rest.losers).toEqual([
      expect.objectContaining({ crewId: 'c2-a', reason: 'ended without a grade: aborted (infra)' }),
    ]);

    const none = decideContest(
      'k3',
      3,
      [entrant('c3-a', { accepted: false }), entrant('c3-b', { sealed: [0, 2] })],
      AT,
    );
    expect(none.winner).toBeUndefined();
    expect(none.why).toBe('no crew of the 2 was accepted');
    expect(none.losers.map((l) => l.crewId)).toEqual(['c3-a', 'c3-b']);
  });
});

/**
 * Through a real drain over a state directory: a contest crew that succeeded, wrote its bookbag and
 * whose grading job never came (the process died between its end and the enqueue) holds the
 * contest only until its grading deadline; then the rest decide.
 */
describe('a contest crew whose grading job never comes', () => {
  const dirs: Array<{ cleanup(): void }> = [];
  afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));
  const ENDED = new Date('2026-03-01T12:00:00.000Z');
  const at = (seconds: number) => new Date(ENDED.getTime() + seconds * 1000);

  /**
   * Two crews of one contest on `issue`, planned, succeeded at ENDED with a finished bookbag each;
   * only the second one's grading job is enqueued.
   */
  async function contestOfTwo(issue: number, agents: [string, string]) {
    const d = tempDir('school-contest-nojob-');
    dirs.push(d);
    const layout = new StateLayout(d.path);
    const of = [`c${issue}-0000000a`, `c${issue}-0000000b`];
    const contest = { id: `k${issue}-0000000a`, of };
    for (const [i, crewId] of of.entries()) {
      const agent = agents[i]!;
      await crewLog(layout).append([
        event(
          'crew.planned',
          `planned:${crewId}`,
          {
            crewId,
            issueNumber: issue,
            daemon: 'local',
            agent,
            weight: 'm',
            fences: [] as string[],
            repair: false,
            attempt: 1,
            contest,
          },
          at(-600),
        ),
        event(
          'crew.finished',
          `finished:${crewId}`,
          { crewId, issueNumber: issue, outcome: 'succeeded' as const, reason: 'done' },
          ENDED,
        ),
      ]);
      writeBookbag(layout, { crewId, issueNumber: issue, diff: `diff of ${crewId}\n`, agent });
    }
    await enqueueMany(layout, [job(issue, of[1]!, { agent: agents[1] })]);
    return { layout, contest };
  }

  it('waits until its end plus dispatch.gradingReserveSeconds, then ends without a grade, named; the other crew wins and is released for delivery', async () => {
    // Alpha's crew died between its end and its enqueue; gamma's was enqueued.
    const { layout, contest } = await contestOfTwo(5, ['alpha', 'gamma']);
    const cfg = config({ dispatch: { gradingReserveSeconds: 120 } });
    const run = (now: Date) =>
      drain({
        config: cfg,
        layout,
        logger: memoryLogger(),
        deliver: true,
        now: () => now,
        judging: { grade: fastGrade },
      });
    const released = () =>
      Object.values(new Outbox(layout).current().items).map((i) => [i.entry.kind, i.entry.jobKey]);

    // Before the deadline: gamma's crew is graded (accepted), its entries held; nothing decided.
    const first = await run(at(100));
    expect(first.accepted).toBe(1);
    expect(new ScoreLedger(layout).state().contests).toBeUndefined();
    expect(released()).toEqual([]);

    // After it: the first transaction of the next drain decides.
    await run(at(121));
    const decided = new ScoreLedger(layout).state().contests!.decided[contest.id]!;
    expect(decided.winner).toMatchObject({ crewId: 'c5-0000000b', agent: 'gamma' });
    expect(decided.why).toBe('c5-0000000b (gamma) was the only crew of 2 the judges accepted');
    expect(decided.losers).toEqual([
      expect.objectContaining({
        crewId: 'c5-0000000a',
        agent: 'alpha',
        accepted: false,
        reason: `ended without a grade: succeeded, ${NO_GRADING_JOB} (2026-03-01T12:02:00.000Z)`,
      }),
    ]);
    const key = job(5, 'c5-0000000b').jobKey;
    expect(released()).toEqual([
      ['labels', key],
      ['delivery', key],
    ]);
  });

  it('waits at least a minute, whatever the reserve', async () => {
    const { layout, contest } = await contestOfTwo(6, ['gamma', 'gamma']);
    const cfg = config({ dispatch: { gradingReserveSeconds: 0 } });
    const run = (now: Date) =>
      drain({ config: cfg, layout, logger: memoryLogger(), now: () => now, judging: { grade: fastGrade } });
    await run(at(5));
    expect(new ScoreLedger(layout).state().contests).toBeUndefined();
    await run(at(61));
    expect(new ScoreLedger(layout).state().contests!.decided[contest.id]!.winner?.crewId).toBe('c6-0000000b');
  });
});
