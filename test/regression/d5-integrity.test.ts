import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { drain } from '../../src/grading/drain.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { memoryLogger } from '../../src/log.js';
import { recoverQuarantined } from '../../src/checkpoint/recover.js';
import {
  crewsOnly,
  logText,
  loop,
  makeSchool,
  plainIssues,
  twoSlots,
  writeIssues,
  type School,
} from './helpers.js';

/**
 * Dimension 5 — data integrity cascade, the seed's sharpest day: a torn registry must not read as
 * "no crews", a torn ledger must not re-seed the leaderboard, and a crew without a persisted
 * verification must fail grading rather than be re-verified on the clean base.
 */
let s: School | undefined;
afterEach(() => s?.cleanup());

/** Replaces a complete line in the middle of a JSONL file with garbage (a crashed writer's bytes). */
function corruptMiddle(path: string): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  const i = Math.max(0, Math.floor((lines.length - 1) / 2) - 1);
  lines[i] = '{"key":"torn","type":"crew.pla\u0000\u0000';
  writeFileSync(path, lines.join('\n'));
}

const quarantined = (t: School, base: string) =>
  readdirSync(t.layout.root).filter((n) => n.startsWith(`${base}.corrupt-`));

describe('D5 data integrity', () => {
  it('N5.1 corrupt crew registry: quarantined, nothing admitted, reason printed, and it stays a stop sign', async () => {
    s = twoSlots();
    await loop(s, writeIssues(s, plainIssues(1)));
    corruptMiddle(s.layout.file('crews'));
    const src = writeIssues(s, plainIssues(3));
    const r = await loop(s, src);
    expect(r.plan.assignments).toHaveLength(0);
    expect(r.plan.blocked).toBeTruthy();
    expect(new Set(r.plan.refused.map((x) => x.code))).toEqual(new Set(['state-corrupt']));
    expect(quarantined(s, 'crews.jsonl')).toHaveLength(1);
    expect(logText(r.log)).toMatch(/N5\.1|corrupt|quarantin/i);
    // The registry is not silently empty on the next cycle either: over-admission never happens.
    const again = await loop(s, src);
    expect(again.plan.assignments).toHaveLength(0);
    expect(again.runs.every((x) => x.result.launched.length === 0)).toBe(true);
  }, 90_000);

  it('N5.1 recovery: the procedure the message gives merges what still parses back, and nothing done is planned again', async () => {
    s = twoSlots();
    const first = await loop(s, writeIssues(s, plainIssues(1)));
    expect(first.plan.assignments.map((a) => a.issueNumber)).toEqual([1]);
    const before = readCrewState(s.layout).registry.crews;
    corruptMiddle(s.layout.file('crews'));
    const src = writeIssues(s, plainIssues(2));
    const stopped = await loop(s, src);
    expect(stopped.plan.assignments).toHaveLength(0);
    // The message names the safe procedure, and never tells anyone to delete the copy.
    expect(logText(stopped.log)).toMatch(/school checkpoint recover/);
    expect(logText(stopped.log)).not.toMatch(/remove the quarantined copy|delete the \.corrupt/);
    const [recovered] = await recoverQuarantined(s.layout.root);
    expect(recovered!.file).toBe('crews.jsonl');
    expect(recovered!.dropped).toHaveLength(1);
    expect(quarantined(s, 'crews.jsonl')).toHaveLength(0);
    expect(readdirSync(s.layout.root).some((n) => n.startsWith('crews.jsonl.recovered-'))).toBe(true);
    // Every crew the registry knew before is known again, with its state.
    const after = readCrewState(s.layout).registry.crews;
    for (const [id, crew] of Object.entries(before)) expect(after[id]?.status, id).toBe(crew.status);
    // Dispatch resumes.
    const resumed = await loop(s, src);
    expect(resumed.plan.blocked).toBeFalsy();
    expect(resumed.plan.assignments.map((a) => a.issueNumber)).toContain(2);
    // Issue 1's crew is known again: it is planned, if at all, as its next attempt (a repair of a
    // rejected crew), never as a first crew of an issue nobody worked on.
    for (const a of resumed.plan.assignments.filter((x) => x.issueNumber === 1)) expect(a.attempt).toBe(2);
  }, 120_000);

  it('N5.2 torn score ledger: grading stops, the ledger is quarantined and never re-seeded', async () => {
    s = twoSlots();
    await loop(s, writeIssues(s, plainIssues(2)));
    const scores = s.layout.file('scores');
    const before = readFileSync(scores, 'utf8');
    expect(before.trim().split('\n')).toHaveLength(2);
    corruptMiddle(scores);
    await crewsOnly(s, writeIssues(s, [{ number: 3, title: 'e', body: 'f' }]));
    const r = await drain({ config: s.config, layout: s.layout, logger: memoryLogger() });
    expect(r.fatal).toMatch(/ledger/i);
    expect(r.accepted + r.rejected).toBe(0);
    expect(quarantined(s, 'scores.jsonl')).toHaveLength(1);
    // The new crew's job waits, unclaimed, for a person to restore the ledger.
    const job = Object.values(new GradingQueue(s.layout).state().jobs).find((j) => j.job.issueNumber === 3);
    expect(job?.status).toBe('pending');
    // A second drain still refuses: an absent ledger beside a quarantined one is not "empty".
    const second = await drain({ config: s.config, layout: s.layout, logger: memoryLogger() });
    expect(second.fatal).toMatch(/quarantined/);
    expect(existsSync(scores) ? readFileSync(scores, 'utf8').length : 0).toBe(0);
  }, 90_000);

  // runLoop once read the leaderboard after a drain that returned `fatal`, so the
  // LedgerCorruptError escaped the loop; it must report the drain's fatal result instead.
  it('N5.2 the whole loop reports a torn ledger as drain.fatal instead of throwing', async () => {
    s = makeSchool({ worktrees: 1 });
    s.config.dispatch.minFreeDiskGiB = 0;
    await loop(s, writeIssues(s, plainIssues(1)));
    corruptMiddle(s.layout.file('scores'));
    writeFileSync(s.layout.file('scores'), readFileSync(s.layout.file('scores'), 'utf8') + 'garbage\n{}\n');
    const r = await loop(s, writeIssues(s, [{ number: 2, title: 'c', body: 'd' }]));
    expect(r.drain.fatal).toMatch(/ledger/i);
  }, 90_000);

  it('N5.3 a crew without a persisted verification is graded FAIL verification_unavailable, never re-run on the base', async () => {
    s = makeSchool({ worktrees: 1, verify: false });
    s.config.dispatch.minFreeDiskGiB = 0;
    await crewsOnly(s, writeIssues(s, [{ number: 4, title: 'a', body: 'b' }]));
    const crew = Object.values(readCrewState(s.layout).registry.crews)[0]!;
    const bag = JSON.parse(readFileSync(join(s.layout.bookbag(crew.crewId), 'bookbag.json'), 'utf8'));
    expect(bag.verification).toBeNull();
    // Were the grader to re-verify, it would run this on the clean repository: it must not.
    s.config.dispatch.verify = [
      'node',
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(join(s.root, 'reran'))}, '1')`,
    ];
    const r = await drain({ config: s.config, layout: s.layout, logger: memoryLogger() });
    expect(r.verdicts).toEqual([
      expect.objectContaining({ crewId: crew.crewId, accepted: false, code: 'verification_unavailable' }),
    ]);
    expect(existsSync(join(s.root, 'reran'))).toBe(false);
  }, 60_000);
});
