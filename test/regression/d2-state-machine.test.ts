import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planStep } from '../../src/loop/steps.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain } from '../../src/grading/drain.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { sha256 } from '../../src/bookbag/schema.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { crewsOnly, loop, makeSchool, writeIssues, type School } from './helpers.js';

/**
 * Dimension 2 — state machine torture on the wired system: the loop runs twice over the same
 * issues, a second planner races the first, a job is delivered again after a drainer died between
 * scoring and marking it graded, and a crew dies between its bookbag data and its done flag.
 */
describe('D2 state machine (wired queue, bookbags, ledger)', () => {
  let s: School;
  let first: Awaited<ReturnType<typeof loop>>;
  let second: Awaited<ReturnType<typeof loop>>;

  beforeAll(async () => {
    // A crew's timeout far above what its student and verification take on a loaded machine (20 s
    // left it little room): these tests are about state, not about timeouts.
    s = makeSchool({ worktrees: 2, timeout: 120 });
    s.config.dispatch.maxCrews = 2;
    s.config.dispatch.minFreeDiskGiB = 0;
    const source = writeIssues(s, [
      { number: 11, title: 'first', body: 'solve it' },
      { number: 12, title: 'second', body: 'solve it too' },
    ]);
    first = await loop(s, source);
    second = await loop(s, source);
  }, 90_000);
  afterAll(() => s?.cleanup());

  it('N2.1 re-dispatch of an issue with a crew is a no-op: one crew, one grading job per (issue, crew)', async () => {
    expect(first.plan.assignments).toHaveLength(2);
    expect(second.plan.assignments).toHaveLength(0);
    const reg = readCrewState(s.layout).registry;
    const byIssue = (n: number) => Object.values(reg.crews).filter((c) => c.issueNumber === n);
    expect(byIssue(11)).toHaveLength(1);
    expect(byIssue(12)).toHaveLength(1);
    const jobs = Object.values(new GradingQueue(s.layout).state().jobs);
    expect(jobs).toHaveLength(2);
    // A retrying dispatcher enqueues the same (issue, crew) again: dropped before the queue.
    const c = byIssue(11)[0]!;
    const again = await enqueueGradingJob(s.layout, {
      issueNumber: 11,
      crewId: c.crewId,
      agent: c.agent,
      domain: 'general',
      difficulty: 2,
      fences: [],
      bookbag: `bookbags/${c.crewId}`,
    });
    expect(again).toBe(false);
    expect(Object.values(new GradingQueue(s.layout).state().jobs)).toHaveLength(2);
  });

  it('N2.1 two planners racing over the same curriculum place each issue at most once', async () => {
    const t = makeSchool({ worktrees: 4 });
    try {
      t.config.dispatch.maxCrews = 8;
      t.config.dispatch.minFreeDiskGiB = 0;
      const src = writeIssues(
        t,
        [1, 2, 3, 4, 5, 6].map((n) => ({ number: n, title: `t${n}`, body: 'b' })),
      );
      // Fetch once through the loop's first stage, then race two planners on the same state.
      const { fetchCurriculum } = await import('../../src/curriculum/fetch.js');
      await fetchCurriculum({ layout: t.layout, config: t.config, source: src, logger: silentLogger });
      const [a, b] = await Promise.all([
        planStep({ config: t.config, layout: t.layout, logger: silentLogger, beat: ['d1'] }),
        planStep({ config: t.config, layout: t.layout, logger: silentLogger, beat: ['d1'] }),
      ]);
      const planned = [...a.assignments, ...b.assignments].map((x) => x.issueNumber);
      expect(new Set(planned).size).toBe(planned.length);
      expect(planned.length).toBeLessThanOrEqual(4);
      const crews = Object.values(readCrewState(t.layout).registry.crews);
      expect(crews.length).toBe(planned.length);
    } finally {
      t.cleanup();
    }
  });

  it('N2.2 every bookbag a crew wrote is whole: done flag written last, hashes match, no temp files', () => {
    const bags = readdirSync(join(s.layout.root, 'bookbags'));
    expect(bags.length).toBe(2);
    for (const b of bags) {
      const dir = join(s.layout.root, 'bookbags', b);
      const names = readdirSync(dir);
      expect(names.filter((n) => /\.tmp|~$/.test(n))).toEqual([]);
      const flag = JSON.parse(readFileSync(join(dir, 'done.flag'), 'utf8'));
      expect(flag.recordSha).toBe(sha256(readFileSync(join(dir, 'bookbag.json'))));
      expect(JSON.parse(readFileSync(join(dir, 'bookbag.json'), 'utf8')).crewId).toBe(b);
    }
  });

  it('N2.2 a crew that died between its bookbag data and its done flag is never parsed half-written', async () => {
    const t = makeSchool({ worktrees: 1 });
    try {
      t.config.dispatch.minFreeDiskGiB = 0;
      const src = writeIssues(t, [{ number: 5, title: 't', body: 'b' }]);
      await crewsOnly(t, src);
      const crewId = Object.keys(readCrewState(t.layout).registry.crews)[0]!;
      // The crash point of N2.2: the data is there, the done flag is not.
      rmSync(join(t.layout.bookbag(crewId), 'done.flag'));
      const r = await drain({
        config: t.config,
        layout: t.layout,
        logger: silentLogger,
        judging: { verifyOnCleanCheckout },
      });
      const v = r.verdicts.find((x) => x.crewId === crewId)!;
      expect(v.accepted).toBe(false);
      expect(v.code).toBe('verification_unavailable');
      expect(r.fatal).toBeUndefined();
    } finally {
      t.cleanup();
    }
  }, 60_000);

  it('N2.3 a job delivered again after its drainer died between scoring and ACK is not scored twice', async () => {
    const t = makeSchool({ worktrees: 1 });
    try {
      t.config.dispatch.minFreeDiskGiB = 0;
      t.config.grading.leaseSeconds = 5;
      const src = writeIssues(t, [{ number: 7, title: 't', body: 'b' }]);
      await crewsOnly(t, src);
      const died = await drain({
        config: t.config,
        layout: t.layout,
        logger: silentLogger,
        judging: { verifyOnCleanCheckout },
        observe: {
          onStage: (stage) => {
            if (stage === 'scored') throw new Error('drainer killed after scoring');
          },
        },
      });
      expect(died.accepted + died.rejected).toBe(0);
      const log = memoryLogger();
      const later = new Date(Date.now() + 60_000);
      const redelivered = await drain({
        config: t.config,
        layout: t.layout,
        logger: log,
        now: () => later,
        judging: { verifyOnCleanCheckout },
      });
      expect(redelivered.accepted + redelivered.rejected).toBe(1);
      const again = await drain({
        config: t.config,
        layout: t.layout,
        logger: log,
        judging: { verifyOnCleanCheckout },
      });
      expect(again.snapshot).toBe(0);
      const scores = readJsonl<{ type: string; data: { crewId: string } }>(t.layout.file('scores')).records;
      const applied = scores.filter((e) => e.type === 'score.applied');
      expect(applied).toHaveLength(1);
      const state = new ScoreLedger(t.layout).state();
      expect(Object.values(state.agents).reduce((n, a) => n + a.count, 0)).toBe(1);
    } finally {
      t.cleanup();
    }
  }, 60_000);

  it('N2.3 the second loop drains nothing: graded jobs stay graded, scores keyed by crew id', () => {
    expect(second.drain.snapshot).toBe(0);
    const scores = readJsonl<{ type: string; data: { crewId: string } }>(s.layout.file('scores')).records;
    const ids = scores.filter((e) => e.type === 'score.applied').map((e) => e.data.crewId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(2);
    expect(existsSync(s.layout.file('scores'))).toBe(true);
  });
});
