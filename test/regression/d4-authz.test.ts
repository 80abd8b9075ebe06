import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readBookbag as readScoped } from '../../src/bookbag/store.js';
import { BookbagAccessError } from '../../src/bookbag/store.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { defaultWorktreeRoot } from '../../src/crew/spec.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain } from '../../src/grading/drain.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { crewsOnly, loop, makeSchool, plainIssues, twoSlots, writeIssues, type School } from './helpers.js';

/**
 * Dimension 4 — authorization shadows: a slot still holding another crew's change, a grading job
 * that points at a sibling's bookbag, a crew reading a bookbag that is not its own, and a forced
 * agent outside the role's profile.
 */
let s: School | undefined;
afterEach(() => s?.cleanup());

const auditOf = (t: School) =>
  readJsonl<{ type: string; [k: string]: unknown }>(t.layout.file('audit')).records;

describe('D4 authN/Z shadow', () => {
  it('N4.1 a slot holding a foreign diff aborts the next crew before its student runs, with an alert', async () => {
    s = makeSchool({ worktrees: 1, ledger: true });
    s.config.dispatch.minFreeDiskGiB = 0;
    await loop(s, writeIssues(s, plainIssues(1)));
    const slot = join(defaultWorktreeRoot(s.layout.root), 'd1', 'slot-0');
    expect(existsSync(slot)).toBe(true);
    // Issue B's uncommitted diff left in the slot (an Orca reuse race).
    appendFileSync(join(slot, 'src/value.txt'), 'issue B was here\n');
    writeFileSync(join(slot, 'foreign.txt'), 'not yours\n');
    const ranBefore = readFileSync(s.ledger, 'utf8').trim().split('\n').length;
    const r = await loop(s, writeIssues(s, [{ number: 2, title: 'c', body: 'd' }]));
    const crew = Object.values(readCrewState(s.layout).registry.crews).find((c) => c.issueNumber === 2)!;
    expect(crew.outcome).toBe('aborted');
    expect(crew.reason).toMatch(/pre-verify: worktree not clean/);
    expect(readFileSync(s.ledger, 'utf8').trim().split('\n').length).toBe(ranBefore);
    expect(auditOf(s).some((e) => e.type === 'crew.alert' && e.kind === 'foreign-change')).toBe(true);
    // Nothing was graded from the contaminated slot.
    expect(r.drain.verdicts.filter((v) => v.issueNumber === 2)).toEqual([]);
  }, 60_000);

  it("N4.2 a grading job pointing at a sibling's bookbag is refused, never graded from it", async () => {
    s = twoSlots();
    await crewsOnly(s, writeIssues(s, plainIssues(2)));
    const crews = Object.values(readCrewState(s.layout).registry.crews);
    const [a, b] = [crews.find((c) => c.issueNumber === 1)!, crews.find((c) => c.issueNumber === 2)!];
    // A job derived from a wrong id: crew A's grading reads crew B's bookbag path.
    for (const [suffix, bookbag] of [
      ['x', `bookbags/${b.crewId}`],
      ['y', '../../..'],
    ] as const)
      await enqueueGradingJob(s.layout, {
        issueNumber: 1,
        crewId: `${a.crewId}-${suffix}`,
        agent: a.agent,
        domain: 'general',
        difficulty: 2,
        fences: [],
        bookbag,
      });
    const r = await drain({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      judging: { verifyOnCleanCheckout },
    });
    for (const forged of [`${a.crewId}-x`, `${a.crewId}-y`]) {
      const v = r.verdicts.find((x) => x.crewId === forged)!;
      expect(v.accepted).toBe(false);
      expect(v.code).toBe('verification_unavailable');
    }
    // The genuine jobs were graded from their own bookbags.
    expect(r.verdicts.find((x) => x.crewId === a.crewId)!.accepted).toBe(true);
    expect(r.verdicts.find((x) => x.crewId === b.crewId)!.accepted).toBe(true);

    // The scoped reader: a sibling crew is refused (403-equivalent) and the refusal is audited.
    await expect(readScoped(s.layout, b.crewId, { role: 'crew', crewId: a.crewId })).rejects.toBeInstanceOf(
      BookbagAccessError,
    );
    await expect(readScoped(s.layout, '../' + b.crewId, { role: 'grader' })).rejects.toBeInstanceOf(
      BookbagAccessError,
    );
    expect((await readScoped(s.layout, b.crewId, { role: 'grader' })).record.crewId).toBe(b.crewId);
    expect((await readScoped(s.layout, a.crewId, { role: 'crew', crewId: a.crewId })).record.crewId).toBe(
      a.crewId,
    );
    expect(auditOf(s).filter((e) => e.type === 'bookbag.refused')).toHaveLength(2);
  }, 60_000);

  it("N4.3 forceAgent outside the role's profile is refused at dispatch and the forced agent never runs", async () => {
    s = makeSchool({
      worktrees: 1,
      extraAgents: [
        {
          id: 'root',
          command: ['node', '-e', "require('fs').writeFileSync(process.argv[1], 'ran')", 'CANARY'],
          roles: ['coding'],
          trust: 'high',
        },
      ],
    });
    s.config.dispatch.minFreeDiskGiB = 0;
    const canary = join(s.root, 'root-ran');
    s.config.agents.find((a) => a.id === 'root')!.command![3] = canary;
    const r = await loop(
      s,
      writeIssues(s, [{ number: 3, title: 'docs task', body: '```school\nrole: docs\nagent: root\n```\n' }]),
    );
    expect(r.plan.assignments).toHaveLength(0);
    expect(r.plan.refused).toEqual([expect.objectContaining({ issue: 3, code: 'force-agent-not-allowed' })]);
    expect(r.plan.refused[0]!.reason).toMatch(/never widens what a role may do/);
    expect(existsSync(canary)).toBe(false);
  }, 60_000);
});
