import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildItem } from '../../src/curriculum/classify.js';
import { rawIssueSchema } from '../../src/curriculum/issue-shape.js';
import { parseOverride } from '../../src/curriculum/override.js';
import { readCurriculum, writeCurriculum } from '../../src/curriculum/store.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * N1.3: whatever an issue body says, the classifier writes an item the store reads back unchanged.
 * An item the schema rejects on read makes every poll throw its curriculum away and rebuild it from
 * a full listing, so the re-poll stops being a single 304.
 */

const tmp = tempDir('school-curriculum-roundtrip-');
afterAll(() => tmp.cleanup());

const config = parseConfig({
  curriculum: {
    rules: [
      { match: { labels: ['docs'] }, set: { role: 'docs', domain: 'docs', difficulty: 1 } },
      { match: { keywords: ['race'] }, set: { difficulty: 4, weight: 'heavy' } },
      { match: { paths: ['src/**/*.{ts,tsx}'] }, set: { domain: 'code', fences: ['src/**'] } },
    ],
  },
}).curriculum;

/** Values a director (or an attacker) can write after `key:`; YAML text, not JS values. */
const scalar = fc.oneof(
  fc.constantFrom(
    '-0',
    '0',
    '-0.0',
    '0.4',
    '0.5',
    '4.5',
    '5.4999',
    '5.5',
    '-1',
    '1e309',
    '-1e309',
    '.nan',
    '.inf',
    '1e-400',
    '0x10',
    '0o7',
    '1_000',
    "'3'",
    '" 2 "',
    'true',
    'null',
    '~',
    '[]',
    '{}',
    '[1, 2]',
    'research',
    'heavy',
    'claude-deep',
    'src/**',
    '"a\\u202eb"',
    '"\\u0000"',
    '"ghp_' + 'a'.repeat(36) + '"',
  ),
  fc.double().map((d) => (Object.is(d, -0) ? '-0' : String(d))),
  fc.integer({ min: -10, max: 10 }).map(String),
  fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
);
const key = fc.constantFrom(
  'difficulty',
  'priority',
  'size',
  'domain',
  'role',
  'weight',
  'fences',
  'agent',
  'forceAgent',
  'force_agent',
  'other',
);
const block = fc
  .array(fc.tuple(key, scalar), { maxLength: 6 })
  .map((pairs) => '```school\n' + pairs.map(([k, v]) => `${k}: ${v}`).join('\n') + '\n```');
const text = fc.string({ maxLength: 80, unit: 'binary' });
const body = fc
  .tuple(text, fc.option(block), text, fc.constantFrom('', 'see src/a/b.tsx', 'docs/a.md', 'race'))
  .map(([a, b, c, d]) => [a, b ?? '', c, d].join('\n'));
const issue = fc.record({
  number: fc.integer({ min: 1, max: 1_000_000 }),
  title: fc.string({ maxLength: 60, unit: 'binary' }),
  body,
  labels: fc.array(fc.oneof(fc.constantFrom('docs', 'bug'), fc.string({ maxLength: 20 })), { maxLength: 3 }),
  html_url: fc.constant('https://github.com/o/r/issues/1'),
  updated_at: fc.constant('2026-11-02T10:00:00Z'),
});

describe('curriculum round trip (N1.3)', () => {
  it('classify → write → read gives back every item unchanged, and rewriting changes no byte', () => {
    let n = 0;
    fc.assert(
      fc.property(fc.array(issue, { minLength: 1, maxLength: 4 }), (raws) => {
        const layout = new StateLayout(`${tmp.path}/s${++n}`);
        const items = new Map(
          raws.map((r) => {
            const { item } = buildItem(rawIssueSchema.parse(r), config);
            return [item.number, item] as const;
          }),
        );
        expect(writeCurriculum(layout, items.values())).toBe(true);
        const log = memoryLogger();
        const read = readCurriculum(layout, log);
        expect(log.lines).toEqual([]);
        expect(read).toEqual(items);
        expect(writeCurriculum(layout, read!.values())).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('-0 and other out-of-range numbers fall back to the classified value, with a warning', () => {
    const defaults = { difficulty: 2, priority: 3, size: 30 };
    for (const v of ['-0', '-0.0', '0.4', '5.5', '1e309']) {
      const r = parseOverride('```school\ndifficulty: ' + v + '\n```', defaults);
      expect(r.override.difficulty, v).toBe(2);
      expect(r.warnings.join('\n'), v).toMatch(/difficulty .* is not a finite number in 1–5: using 2/);
    }
    const p = parseOverride('```school\npriority: -0\n```', defaults);
    expect(Object.is(p.override.priority, 0)).toBe(true); // 0 is a priority; -0 is stored as 0
    expect(parseOverride('```school\ndifficulty: 4.5\n```', defaults).override.difficulty).toBe(5);
  });
});
