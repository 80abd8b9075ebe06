import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCrew } from '../../src/crew/run/crew.js';
import { deadLettersCommand } from '../../src/cli/commands/dead-letters.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { confirmClaim } from '../../src/dispatch/leases/limit-probe.js';
import { orderCandidates, type Candidate } from '../../src/dispatch/choice/order.js';
import type { CrewRecord, CrewRegistry } from '../../src/dispatch/logs/registry.js';
import { pauseStatus } from '../../src/dispatch/gates/pause.js';
import { schoolLog } from '../../src/dispatch/logs/school-log.js';
import { silentLogger } from '../../src/log.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { FIXTURES, item, makeSchool, spec, writeCurriculum, type School } from '../crew/helpers.js';
import { planNow } from '../support/planned-school.js';

/**
 * A limit a student only claims stops its own issue, not the agent every other issue shares. Real
 * crews in the real sandbox, one agent, one slot, planned by the real dispatch office: the claimant's
 * issue goes behind the honest one and stops after dispatch.maxUnconfirmedLimitClaims claims; an
 * agent whose probe answers with the limit too pauses at once.
 */
const CLAIM = join(FIXTURES, 'claim-student.mjs');
let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
});

function claimSchool(): School {
  const s = (school = makeSchool({
    worktrees: 1,
    extraAgents: [
      { id: 'claimer', command: ['node', CLAIM, '{brief}'] },
      { id: 'spent', command: ['node', CLAIM, '--limited', '{brief}'] },
    ],
  }));
  s.config.dispatch.maxCrews = 1;
  return s;
}

const nextPlan = (s: School, curriculum: CurriculumItem[]) => planNow(s, curriculum);

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const write = process.stdout.write.bind(process.stdout);
  let out = '';
  process.stdout.write = ((x: string) => ((out += x), true)) as typeof process.stdout.write;
  try {
    return { code: await deadLettersCommand.run(args), out };
  } finally {
    process.stdout.write = write;
  }
}

describe('a usage limit only the student claims', () => {
  it('holds its own issue: the honest issue behind it runs, the agent is never paused, three claims stop the issue and dead-letters requeue brings it back', async () => {
    const s = claimSchool();
    const curriculum = [
      item(1, { forceAgent: 'claimer', body: 'Before anything else, claim a usage limit and stop.' }),
      item(2, { forceAgent: 'claimer' }),
    ];
    writeCurriculum(s, curriculum);
    const ran: Array<[number, string]> = [];
    // One run of the school: plan, run what was planned, until nothing is planned.
    for (let cycle = 0; cycle < 8; cycle++) {
      const p = await nextPlan(s, curriculum);
      expect(p.paused).toBeUndefined();
      if (p.assignments.length === 0) break;
      for (const a of p.assignments) {
        const r = await runCrew(await spec(s, a.crewId), { logger: silentLogger });
        ran.push([a.issueNumber, r.outcome]);
        // Never a pause of the agent: the claim was the issue's.
        expect(pauseStatus(s.layout).agentPauses).toEqual([]);
      }
    }
    // #1 claimed first; #2 went ahead of its retries and succeeded; #1 claimed twice more and stopped.
    expect(ran).toEqual([
      [1, 'limit_unconfirmed'],
      [2, 'succeeded'],
      [1, 'limit_unconfirmed'],
      [1, 'limit_unconfirmed'],
    ]);
    const crews = Object.values(readCrewState(s.layout).registry.crews);
    const first = crews.find((c) => c.issueNumber === 1)!;
    expect(first.reason).toMatch(/not confirmed: the probe ended succeeded/);
    expect(first.reason).toMatch(/agent claimer is not paused/);
    // The honest crew's change is handed to the graders.
    const honest = crews.find((c) => c.issueNumber === 2)!;
    expect(existsSync(join(s.layout.bookbag(honest.crewId), 'done.flag'))).toBe(true);
    // Each claim is in the school log, naming the issue.
    const held = schoolLog(s.layout)
      .read()
      .events.filter((e) => e.type === 'issue.limit-unconfirmed');
    expect(held.map((e) => (e.data as { issueNumber: number }).issueNumber)).toEqual([1, 1, 1]);

    const stopped = await nextPlan(s, curriculum);
    expect(stopped.refused.find((r) => r.issue === 1)).toMatchObject({
      code: 'stopped-after-unconfirmed-limit-claims',
      reason: expect.stringMatching(/^3 of its crews .* `school dead-letters requeue issue:1`/),
    });
    const list = await cli(['list', '--state-dir', s.config.stateDir]);
    expect(list.out).toContain('issue:1  stopped-after-unconfirmed-limit-claims (3 claims)');
    const back = await cli(['requeue', 'issue:1', '--state-dir', s.config.stateDir]);
    expect(back.code).toBe(0);
    expect(back.out).toMatch(/requeued issue #1: it was stopped-after-unconfirmed-limit-claims/);
    const again = await nextPlan(s, curriculum);
    expect(again.assignments.map((a) => [a.issueNumber, a.attempt])).toEqual([[1, 1]]);
  });

  it('with dispatch.limitProbe false, a claim pauses its agent as before probes', async () => {
    const s = claimSchool();
    s.config.dispatch.limitProbe = false;
    const curriculum = [
      item(1, { forceAgent: 'claimer', body: 'Claim a usage limit.' }),
      item(2, { forceAgent: 'claimer' }),
    ];
    writeCurriculum(s, curriculum);
    const p = await nextPlan(s, curriculum);
    const r = await runCrew(await spec(s, p.assignments[0]!.crewId), { logger: silentLogger });
    expect(r.outcome).toBe('usage_limit');
    expect(pauseStatus(s.layout).agentPauses).toMatchObject([{ agent: 'claimer', source: 'usage_limit' }]);
  });
});

describe('a real limit', () => {
  it('the probe answers with the limit too: the agent pauses at once, one probe spent, no further crew of it starts', async () => {
    const s = claimSchool();
    const curriculum = [item(1, { forceAgent: 'spent' }), item(2, { forceAgent: 'spent' })];
    writeCurriculum(s, curriculum);
    const p = await nextPlan(s, curriculum);
    expect(p.assignments).toHaveLength(1);
    const crewId = p.assignments[0]!.crewId;
    const r = await runCrew(await spec(s, crewId), { logger: silentLogger });
    expect(r.outcome).toBe('usage_limit');
    expect(r.reason).toMatch(/confirmed: the probe answered with the limit too .*: agent spent pauses/);
    const rec = readCrewState(s.layout).registry.crews[crewId]!;
    expect(rec.confirmed).toBe('probe');
    const held = pauseStatus(s.layout).agentPauses;
    expect(held).toMatchObject([{ agent: 'spent', source: 'usage_limit', crewId }]);
    expect(held[0]!.reason).toMatch(/the school's probe of the agent answered with the limit too/);
    // Until the pause lifts, no crew of the agent is planned.
    const next = await nextPlan(s, curriculum);
    expect(next.assignments).toEqual([]);
    expect(next.refused.find((x) => x.issue === 2)).toMatchObject({ code: 'agent-paused' });
    // A confirmed limit is not the issue's claim: it does not count toward its stop.
    expect(next.refused.find((x) => x.issue === 1)?.code).not.toBe('stopped-after-unconfirmed-limit-claims');
    expect(readFileSync(join(s.repo, 'src/value.txt'), 'utf8')).toBe('base\n');
  });
});

describe('confirmation by crews of two different issues', () => {
  const at = new Date('2026-03-01T12:00:00Z');
  const finished = (
    crewId: string,
    issueNumber: number,
    agent: string,
    outcome: string,
    finishedAt: string,
  ) => ({ crewId, issueNumber, agent, status: 'finished', outcome, finishedAt }) as unknown as CrewRecord;
  const registry = (crews: CrewRecord[]): CrewRegistry => ({
    crews: Object.fromEntries(crews.map((c) => [c.crewId, c])),
    leases: {},
  });
  const me = { crewId: 'c1-new', issueNumber: 1, agent: 'a' };
  const never = async () => ({ limited: false, reason: 'the probe ended succeeded: OK' });

  it('another issue of the same agent within the window confirms without a probe; the same issue, another agent or an old claim does not', async () => {
    let probes = 0;
    const probe = async () => (probes++, never());
    const hour = 60 * 60_000;
    const other = finished('c2-x', 2, 'a', 'limit_unconfirmed', '2026-03-01T11:30:00Z');
    expect(
      await confirmClaim({ registry: registry([other]), crew: me, at, windowMs: hour, probe }),
    ).toMatchObject({
      confirmed: { by: 'crews', said: expect.stringContaining('crew c2-x of another issue') },
    });
    expect(probes).toBe(0);
    for (const c of [
      finished('c1-old', 1, 'a', 'limit_unconfirmed', '2026-03-01T11:30:00Z'),
      finished('c2-y', 2, 'b', 'usage_limit', '2026-03-01T11:30:00Z'),
      finished('c2-z', 2, 'a', 'usage_limit', '2026-03-01T10:30:00Z'),
      finished('c2-w', 2, 'a', 'failed', '2026-03-01T11:50:00Z'),
    ])
      expect(await confirmClaim({ registry: registry([c]), crew: me, at, windowMs: hour, probe })).toEqual({
        unconfirmed: 'the probe ended succeeded: OK',
      });
    expect(probes).toBe(4);
  });

  it('an unconfirmed claim goes behind every other candidate, an environment failure and a repair included', () => {
    const c = (issueNumber: number, over: Partial<Candidate> = {}): Candidate => ({
      issueNumber,
      role: 'coding',
      domain: 'd',
      difficulty: 1,
      weight: 'standard',
      fences: [],
      priority: 0,
      size: 1,
      repair: false,
      attempt: 1,
      ...over,
    });
    const order = orderCandidates([
      c(1, { limitClaim: true, priority: 0 }),
      c(2, { environment: true }),
      c(3, { repair: true, attempt: 2 }),
      c(4, { priority: 5, size: 9 }),
    ]).map((x) => x.issueNumber);
    expect(order).toEqual([3, 4, 2, 1]);
  });
});
