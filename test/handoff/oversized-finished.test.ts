import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { importHandoffs } from '../../src/handoff/import.js';
import { silentLogger } from '../../src/log.js';
import { planStep } from '../../src/loop/steps.js';
import { StateLayout } from '../../src/state/layout.js';
import { crewJobHandoff, makeSchool, writeIssues, type School } from '../regression/helpers.js';
import { rewriteHandoff } from '../support/handoff.js';

/**
 * A crew's end is never refused without an end being recorded for it: a crew job's handoff whose
 * `crew.finished` line the import refuses (over the line bound, not an event, an outcome that is no
 * outcome) while its `lease.released` is accepted used to leave the crew running with no lease, its
 * slot taken forever. The import records `crew.finished` outcome `aborted` with the refusal instead.
 */
let s: School | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

describe('a refused crew.finished in a handoff', () => {
  it('is recorded as aborted with the refusal, and the slot is free for the next plan', async () => {
    s = makeSchool({ daemons: [{ id: 'd1', worktrees: 1 }] });
    s.config.dispatch.minFreeDiskGiB = 0;
    const source = writeIssues(s, [
      { number: 1, title: 'One', body: '```school\nagent: editor\n```\n' },
      { number: 2, title: 'Two', body: '```school\nagent: editor\n```\n' },
    ]);
    await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
    const first = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    const crewId = first.assignments[0]!.crewId;
    const saved = join(s.root, 'plan-job-state');
    cpSync(s.layout.root, saved, { recursive: true });
    const { root, out } = await crewJobHandoff(s);
    const original = readFileSync(join(out, 'events', 'crews.jsonl'), 'utf8');
    const finishedLine = (l: string) => l.includes('"crew.finished"');

    const cases: Array<[string, (line: string) => string, RegExp]> = [
      // What an egress alert of ten 30,000-character host names made of the line.
      [
        'too long',
        (l) => {
          const e = JSON.parse(l);
          e.data.reason = `${e.data.reason}; alerts: egress-refused: ${'x'.repeat(300_000)}`;
          return JSON.stringify(e);
        },
        /line over 262144 bytes/,
      ],
      ['not JSON', (l) => l.slice(0, -20), /not JSON/],
      [
        'no outcome',
        (l) => {
          const e = JSON.parse(l);
          e.data.outcome = 'graduated';
          return JSON.stringify(e);
        },
        /not a crew outcome/,
      ],
    ];
    for (const [name, spoil, why] of cases) {
      writeFileSync(join(out, 'events', 'crews.jsonl'), original);
      rewriteHandoff(out, 'crews.jsonl', (lines) => lines.map((l) => (finishedLine(l) ? spoil(l) : l)));
      const restored = new StateLayout(join(s.root, `grade-job-${name.replace(/ /g, '-')}`));
      cpSync(saved, restored.root, { recursive: true });
      const r = await importHandoffs(restored, root, { config: s.config, logger: silentLogger });
      expect(r.refused.map((x) => x.reason).join('\n'), name).toMatch(why);
      const reg = readCrewState(restored).registry;
      expect(reg.crews[crewId], name).toMatchObject({ status: 'finished', outcome: 'aborted' });
      expect(reg.crews[crewId]!.reason, name).toMatch(/its crew\.finished was refused at import/);
      expect(reg.leases, name).toEqual({});
      // The next cycle has the daemon's one slot to give.
      const next = await planStep({ config: s.config, layout: restored, logger: silentLogger, beat: ['d1'] });
      expect(next.assignments.length, name).toBe(1);
      // A replayed handoff adds nothing.
      const again = await importHandoffs(restored, root, { config: s.config, logger: silentLogger });
      expect(again.dirs[0]!.accepted, name).toBe(0);
    }
  }, 180_000);
});
