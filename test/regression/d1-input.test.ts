import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { filesUnder, forbiddenCodePoints, loop, makeSchool, writeIssues, type School } from './helpers.js';

/**
 * Dimension 1 — input boundary, through the whole loop: hostile issue text goes in at the
 * curriculum edge, crews run on it, the grader grades them, and we read every byte the school wrote.
 */

const CANARY = (s: School, n: string) => join(s.root, `pwned-${n}`);

describe('D1 input boundary (whole loop)', () => {
  let s: School;
  let result: Awaited<ReturnType<typeof loop>>;

  beforeAll(async () => {
    // A crew's timeout far above what its student and verification take on a loaded machine (20 s
    // left it little room): these tests are about state, not about timeouts.
    s = makeSchool({ worktrees: 2, timeout: 120, verify: true });
    s.config.dispatch.maxCrews = 3;
    s.config.dispatch.minFreeDiskGiB = 0;
    const bidi = '\u202eexe.txt\u202c \u2066hidden\u2069 \u200f';
    const tag = '\u{E0049}\u{E0047}\u{E004E}\u{E004F}\u{E0052}\u{E0045}'; // "IGNORE" in tag characters
    const source = writeIssues(s, [
      {
        number: 1,
        title: `Fix ${bidi}\u0000 title ; touch ${CANARY(s, 'title')} && rm -rf ~ $(touch ${CANARY(s, 'subst')})`,
        body: `Body with ${tag} and zero\u200bwidth\u200c\u200d\ufeff and NUL\u0000.\n\n\`touch ${CANARY(s, 'body')}\``,
      },
      {
        number: 2,
        title: 'Numeric override torture',
        body: '```school\ndifficulty: .nan\npriority: .inf\nsize: 1e309\n```\n',
      },
      {
        number: 3,
        title: 'Huge body',
        body: '\u202e'.repeat(1000) + 'A'.repeat(2 * 1024 * 1024),
      },
    ]);
    result = await loop(s, source);
  }, 60_000);
  afterAll(() => s?.cleanup());

  it('N1.1 bidi, tag, zero-width and NUL are stripped at the curriculum edge and recorded as removed', () => {
    const items = readJsonl<{
      number: number;
      title: string;
      body: string;
      sanitized: Record<'title' | 'body', Record<string, number>>;
    }>(s.layout.file('curriculum')).records;
    const one = items.find((i) => i.number === 1)!;
    expect(one.sanitized.title.bidi).toBeGreaterThan(0);
    expect(one.sanitized.title.nul).toBe(1);
    expect(one.sanitized.body.tag).toBe(6);
    expect(one.sanitized.body.zeroWidth).toBeGreaterThanOrEqual(3);
    expect(forbiddenCodePoints(s.layout.root)).toEqual([]);
    // Crews ran on the sanitized text: every brief the students received is clean too.
    expect(result.plan.assignments.length).toBeGreaterThan(0);
  });

  it('N1.1 a 2 MB body is capped with a visible marker before any crew sees it', () => {
    const three = readJsonl<{ number: number; body: string }>(s.layout.file('curriculum')).records.find(
      (i) => i.number === 3,
    )!;
    expect(three.body.length).toBeLessThanOrEqual(s.config.curriculum.maxBodyLength + 200);
    // Never hand a 2 MB string to an assertion message: test the marker as a boolean.
    expect(/\[… \d+ characters cut by school-core\]$/.test(three.body)).toBe(true);
    for (const f of filesUnder(s.layout.root)) expect(readFileSync(f).length).toBeLessThan(1024 * 1024);
  });

  it('N1.2 shell metacharacters in title and body reach the student as data: nothing is executed', () => {
    const reg = readCrewState(s.layout).registry;
    const crew = Object.values(reg.crews).find((c) => c.issueNumber === 1);
    expect(crew, 'issue 1 was dispatched through the full brief path').toBeDefined();
    expect(['succeeded', 'failed']).toContain(crew!.outcome);
    for (const n of ['title', 'subst', 'body']) expect(existsSync(CANARY(s, n))).toBe(false);
  });

  it('N1.3 NaN, Infinity and 1e309 in the override block fall back to defaults, never reach arithmetic', () => {
    const two = readJsonl<{ number: number; difficulty: number; priority: number; size: number }>(
      s.layout.file('curriculum'),
    ).records.find((i) => i.number === 2)!;
    expect(
      Number.isFinite(two.difficulty) && Number.isFinite(two.priority) && Number.isFinite(two.size),
    ).toBe(true);
    expect(two.difficulty).toBe(s.config.curriculum.defaults.difficulty);
    expect(two.size).toBe(s.config.curriculum.defaults.size);
    // The planner ordered and admitted with those numbers: no NaN anywhere in the plan or scores.
    expect(JSON.stringify(result.plan)).not.toMatch(/NaN|Infinity|null,"size"/);
    for (const row of result.leaderboard) expect(Number.isFinite(row.ema)).toBe(true);
  });
});
