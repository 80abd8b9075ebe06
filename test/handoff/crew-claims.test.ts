import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { pauseStatus } from '../../src/dispatch/gates/pause.js';
import { totalSpend, type SpendEvent } from '../../src/dispatch/gates/spend.js';
import { EventLog } from '../../src/state/event-log.js';
import { importHandoffs } from '../../src/handoff/import.js';
import { silentLogger } from '../../src/log.js';
import { planStep } from '../../src/loop/steps.js';
import { StateLayout } from '../../src/state/layout.js';
import { crewJobHandoff, makeSchool, writeIssues, type School } from '../regression/helpers.js';
import { rewriteHandoff } from '../support/handoff.js';

/**
 * Issue 34 (b): the grade job takes a crew job's handoff as data, and a runner the student took over
 * can write any spend or pause row into it. A crew's spend is held to its own budget
 * (`dispatch.crewBudgetUsd`) and its pause to its own agent for at most
 * `dispatch.agentPauseMaxMinutes`, each cut alerted; an honest crew beside it is imported unchanged.
 */
let s: School | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

/** Edits one events file of a handoff and its digest in the manifest, as a runner could. */
const rewrite = (out: string, file: string, edit: (lines: string[]) => string[]) =>
  rewriteHandoff(out, file, edit, { orEmpty: true });

function spentBy(layout: StateLayout, crewId: string): number {
  return new EventLog<SpendEvent>(layout.file('spend'))
    .read()
    .events.filter((e) => e.data.crewId === crewId)
    .reduce((n, e) => n + e.data.costUsd, 0);
}

describe('spend and pause rows a crew job hands on', () => {
  it('are held to the crew budget and to its own agent; the honest crew beside is imported as it was', async () => {
    s = makeSchool({ daemons: [{ id: 'd1', worktrees: 2 }] });
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.dispatch.crewBudgetUsd = 5;
    s.config.dispatch.maxCrews = 2;
    s.config.dispatch.spendCap = 100;
    s.config.dispatch.agentPauseMaxMinutes = 60;
    const source = writeIssues(s, [
      { number: 1, title: 'Limited', body: '```school\nagent: limited\n```\n' },
      { number: 2, title: 'Honest', body: '```school\nagent: editor\n```\n' },
      { number: 3, title: 'Next', body: '```school\nagent: editor\n```\n' },
    ]);
    await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
    const first = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    expect(
      first.assignments.map((a) => a.issueNumber),
      JSON.stringify(first.refused),
    ).toEqual([1, 2]);
    const crewOf = (issue: number) => first.assignments.find((a) => a.issueNumber === issue)!.crewId;
    const limited = crewOf(1);
    const honest = crewOf(2);
    const saved = join(s.root, 'plan-job-state');
    cpSync(s.layout.root, saved, { recursive: true });
    const { root, out } = await crewJobHandoff(s);
    // What the crews themselves reported on their runner, the limited one's turn included.
    const honestOwn = spentBy(s.layout, honest);
    expect(spentBy(s.layout, limited)).toBeLessThan(5);

    const at = new Date().toISOString();
    // The runner's forgeries: a 1e9 row for the limited crew, and its pause made school-wide, forever.
    rewrite(out, 'spend.jsonl', (lines) => [
      ...lines,
      JSON.stringify({
        key: `spend:forged:${limited}`,
        type: 'spend.recorded',
        at,
        data: { costUsd: 1e9, crewId: limited, issueNumber: 1, agent: 'limited' },
      }),
      JSON.stringify({
        key: `spend:honest:${honest}`,
        type: 'spend.recorded',
        at,
        data: { costUsd: 0.5, crewId: honest, issueNumber: 2, agent: 'editor' },
      }),
    ]);
    rewrite(out, 'school.jsonl', (lines) => [
      ...lines.filter((l) => !l.includes('"school.paused"')),
      JSON.stringify({
        key: `paused:crew:${limited}`,
        type: 'school.paused',
        at: '2099-01-01T00:00:00.000Z',
        data: {
          reason: 'the whole school must stop',
          source: 'usage_limit',
          crewId: limited,
          issueNumber: 1,
        },
      }),
    ]);

    const grade = new StateLayout(join(s.root, 'grade-job'));
    cpSync(saved, grade.root, { recursive: true });
    const before = Date.now();
    const r = await importHandoffs(grade, root, { config: s.config, logger: silentLogger });

    // The crew's spend is its budget at most; the honest row is as it was.
    expect(spentBy(grade, limited)).toBeCloseTo(5, 6);
    expect(spentBy(grade, honest)).toBeCloseTo(honestOwn + 0.5, 6);
    expect(totalSpend(grade)).toBeCloseTo(5 + honestOwn + 0.5, 6);
    expect(r.alerts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'cost-over-budget', crewId: limited }),
        expect.objectContaining({ kind: 'pause-rescoped', crewId: limited }),
      ]),
    );
    expect(r.alerts.filter((a) => a.crewId === honest)).toEqual([]);
    const audit = readFileSync(grade.file('audit'), 'utf8');
    expect(audit).toMatch(/"type":"handoff\.alert".*"kind":"cost-over-budget"/);

    // The pause holds agent `limited` alone, for an hour at most after the import.
    const status = pauseStatus(grade);
    expect(status.paused).toBe(false);
    expect(status.agentPauses).toHaveLength(1);
    const held = status.agentPauses[0]!;
    expect(held.agent).toBe('limited');
    expect(Date.parse(held.until!)).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
    expect(Date.parse(held.until!)).toBeGreaterThanOrEqual(before + 59 * 60_000);

    // Both crews ended as they did; the next plan places the honest agent's next issue.
    const reg = readCrewState(grade).registry;
    expect(reg.crews[honest]).toMatchObject({ status: 'finished', outcome: 'succeeded' });
    expect(reg.crews[limited]).toMatchObject({ status: 'finished', outcome: 'usage_limit' });
    const next = await planStep({ config: s.config, layout: grade, logger: silentLogger, beat: ['d1'] });
    expect(next.assignments.map((a) => a.issueNumber)).toContain(3);

    // A replayed handoff adds nothing: the cut row is not counted twice.
    const again = await importHandoffs(grade, root, { config: s.config, logger: silentLogger });
    expect(again.dirs[0]!.accepted).toBe(0);
    expect(totalSpend(grade)).toBeCloseTo(5 + honestOwn + 0.5, 6);
  }, 180_000);

  it('refuses a spend row whose amount is no number, which would halt dispatch', async () => {
    s = makeSchool({ daemons: [{ id: 'd1', worktrees: 1 }] });
    s.config.dispatch.minFreeDiskGiB = 0;
    const source = writeIssues(s, [{ number: 1, title: 'One', body: '```school\nagent: editor\n```\n' }]);
    await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
    const first = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    const crewId = first.assignments[0]!.crewId;
    const saved = join(s.root, 'plan-job-state');
    cpSync(s.layout.root, saved, { recursive: true });
    const { root, out } = await crewJobHandoff(s);
    rewrite(out, 'spend.jsonl', (lines) => [
      ...lines,
      ...['"lots"', '-3', 'null'].map((v, i) =>
        JSON.stringify({
          key: `spend:odd-${i}:${crewId}`,
          type: 'spend.recorded',
          at: new Date().toISOString(),
          data: { costUsd: JSON.parse(v), crewId, issueNumber: 1, agent: 'editor' },
        }),
      ),
    ]);
    const grade = new StateLayout(join(s.root, 'grade-job'));
    cpSync(saved, grade.root, { recursive: true });
    const r = await importHandoffs(grade, root, { config: s.config, logger: silentLogger });
    expect(r.refused.filter((x) => /is not a number ≥ 0/.test(x.reason))).toHaveLength(3);
    expect(() => totalSpend(grade)).not.toThrow();
    expect(readCrewState(grade).registry.crews[crewId]).toMatchObject({ outcome: 'succeeded' });
  }, 180_000);
});
