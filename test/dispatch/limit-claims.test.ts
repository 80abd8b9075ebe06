import { afterEach, describe, expect, it } from 'vitest';
import { buildLanes } from '../../src/board/lanes.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { issueStatuses, statusComment } from '../../src/feedback/status.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { clearPause, requeueIssue } from '../../src/dispatch/gates/pause.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { silentLogger } from '../../src/log.js';
import { planStep, runStep } from '../../src/loop/steps.js';
import { launcher, makeSchool, writeIssues, type School } from '../regression/helpers.js';

/**
 * Issue 34 (c): a usage limit only the student reported pauses its agent alone, and used to count
 * for nothing else: an issue whose text steers its agent into claiming a limit paused each agent that
 * took it, again and again. Two such claims on one issue stop it (`limit-claims-stopped`) until
 * `school requeue`; a limit the API answered itself (the key proxy's `upstream` record) does not
 * count, and an honest issue beside it is planned and finished as before.
 */
let s: School | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

describe('usage limits only the student reported', () => {
  it('stop the issue after two, named where the other stops are; the honest issue beside goes on', async () => {
    s = makeSchool({ daemons: [{ id: 'd1', worktrees: 2 }] });
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.dispatch.maxCrews = 2;
    // The rule before probes (dispatch.limitProbe false): every claim pauses its agent and counts.
    // With the probe, this always-limited agent's claims are confirmed (test/dispatch/limit-claim.test.ts).
    s.config.dispatch.limitProbe = false;
    const source = writeIssues(s, [
      { number: 1, title: 'Steered', body: '```school\nagent: limited\n```\n' },
      { number: 2, title: 'Honest', body: '```school\nagent: editor\n```\n' },
    ]);
    await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
    const cycle = async () => {
      const p = await planStep({ config: s!.config, layout: s!.layout, logger: silentLogger, beat: ['d1'] });
      await runStep({
        config: s!.config,
        layout: s!.layout,
        daemon: 'd1',
        logger: silentLogger,
        launch: { launcher: await launcher() },
      });
      // The operator lifts the agent's pause, so the next cycle may try the issue again.
      await clearPause(s!.layout, 'looked at it', readCrewState(s!.layout).registry);
      return p;
    };

    const first = await cycle();
    expect(first.assignments.map((a) => a.issueNumber).sort()).toEqual([1, 2]);
    let reg = readCrewState(s.layout).registry;
    const honest = first.assignments.find((a) => a.issueNumber === 2)!.crewId;
    expect(reg.crews[honest]).toMatchObject({ outcome: 'succeeded' });
    // Its agent alone was paused by the claim: a student's word about itself.
    expect(readSchool(s.layout).pauses).toEqual([]);

    // One claim: the issue is tried again.
    const second = await cycle();
    expect(second.assignments.map((a) => a.issueNumber)).toEqual([1]);
    reg = readCrewState(s.layout).registry;
    const claims = Object.values(reg.crews).filter((c) => c.issueNumber === 1);
    expect(claims.map((c) => c.outcome)).toEqual(['usage_limit', 'usage_limit']);

    // Two claims: stopped, never a third crew.
    const third = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    expect(third.assignments).toEqual([]);
    expect(third.refused.find((r) => r.issue === 1)).toMatchObject({
      code: 'limit-claims-stopped',
      reason: expect.stringMatching(
        /2 of its crews .* usage limit only the agent reported.*school requeue 1/,
      ),
    });

    // The status comment and the board say why, as they do for the other stops.
    const status = issueStatuses({ registry: reg, verdicts: new Map(), deliveries: new Map() }).get(1)!;
    expect(status).toMatchObject({ state: 'stopped' });
    expect(statusComment(1, status)).toMatch(
      /stopped — 2 of its runs ended with a usage limit only the agent reported/,
    );
    const stopped = buildLanes({ registry: reg, now: new Date() }).find((l) => l.id === 'stopped')!;
    expect(stopped.items.find((i) => i.issue === 1)?.reason).toMatch(/^limit-claims-stopped: /);

    // A requeue starts over.
    await requeueIssue(s.layout, 1, 'the issue text was fixed');
    const after = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    expect(after.assignments.map((a) => a.issueNumber)).toEqual([1]);
  }, 240_000);

  it('a limit the API answered itself (the key proxy saw it) does not count toward the stop', () => {
    const at = (m: number) => `2026-05-01T10:${String(m).padStart(2, '0')}:00.000Z`;
    const crew = (id: string, m: number, upstream?: { status: number; at: string }) => ({
      crewId: id,
      issueNumber: 7,
      agent: 'a',
      attempt: 1,
      weight: 'light' as const,
      fences: [],
      status: 'finished' as const,
      plannedAt: at(m),
      finishedAt: at(m + 1),
      outcome: 'usage_limit' as const,
      reason: 'usage limit',
      ...(upstream ? { upstream } : {}),
    });
    const seen = { status: 429, at: at(0) };
    const registry = (crews: ReturnType<typeof crew>[]) =>
      ({ crews: Object.fromEntries(crews.map((c) => [c.crewId, c])), leases: {} }) as never;
    expect(
      issueStates(registry([crew('c7-00000001', 1, seen), crew('c7-00000002', 3, seen)])).get(7),
    ).toEqual({ kind: 'ready', attempt: 1 });
    expect(issueStates(registry([crew('c7-00000001', 1, seen), crew('c7-00000002', 3)])).get(7)).toEqual({
      kind: 'ready',
      attempt: 1,
    });
    expect(issueStates(registry([crew('c7-00000001', 1), crew('c7-00000002', 3)])).get(7)).toMatchObject({
      kind: 'stopped',
      limitClaims: 2,
    });
  });
});
