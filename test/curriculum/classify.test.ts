import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildItem, classify } from '../../src/curriculum/classify.js';
import { globMatcher, mentionedPaths } from '../../src/curriculum/glob.js';
import { rawIssueSchema } from '../../src/curriculum/issue-shape.js';
import { parseOverride } from '../../src/curriculum/override.js';
import { curriculumItemSchema } from '../../src/schemas/curriculum.js';

const config = parseConfig({
  curriculum: {
    rules: [
      { match: { labels: ['docs'] }, set: { role: 'docs', domain: 'docs', difficulty: 1 } },
      { match: { keywords: ['race', 'deadlock'] }, set: { difficulty: 4, weight: 'heavy' } },
      { match: { paths: ['src/state/**'] }, set: { domain: 'state', fences: ['src/state/**'] } },
      { match: { labels: ['bug'], keywords: ['crash'] }, set: { priority: 0 } },
      { match: { paths: ['*.md'] }, set: { fences: ['docs/**'] } },
    ],
  },
}).curriculum;

const raw = (fields: Record<string, unknown>) =>
  rawIssueSchema.parse({ number: 1, title: '', body: '', ...fields });

describe('classify', () => {
  it('defaults when no rule matches', () => {
    expect(classify({ title: 'x', body: '', labels: [] }, config)).toEqual({
      domain: 'general',
      difficulty: 2,
      role: 'coding',
      fences: [],
      priority: 2,
      size: 30,
      weight: 'standard',
    });
  });

  it('matches labels case-insensitively, keywords as whole words, and paths mentioned in the body', () => {
    expect(classify({ title: 'x', body: '', labels: ['Docs'] }, config)).toMatchObject({
      role: 'docs',
      difficulty: 1,
    });
    expect(classify({ title: 'A Race in the lock', body: '', labels: [] }, config)).toMatchObject({
      difficulty: 4,
      weight: 'heavy',
    });
    expect(classify({ title: 'embraced', body: 'racecar', labels: [] }, config).difficulty).toBe(2);
    const c = classify(
      { title: 'x', body: 'The bug is in `src/state/lock.ts` and README.md', labels: [] },
      config,
    );
    expect(c.domain).toBe('state');
    expect(c.fences).toEqual(['src/state/**', 'docs/**']);
  });

  it('needs every criterion a rule lists; later rules override earlier ones', () => {
    expect(classify({ title: 'crash', body: '', labels: [] }, config).priority).toBe(2);
    expect(classify({ title: 'crash on start', body: '', labels: ['bug'] }, config).priority).toBe(0);
    const both = classify({ title: 'deadlock', body: '', labels: ['docs'] }, config);
    expect(both).toMatchObject({ role: 'docs', difficulty: 4 });
  });
});

describe('director override block', () => {
  const defaults = { difficulty: 2, priority: 2, size: 30 };
  it('sets fields and forceAgent from a fenced `school` block (YAML or JSON)', () => {
    const body =
      'Text\n\n```school\ndifficulty: 5\nrole: research\nagent: deep-thinker\nfences: [src/a/**, src/b/**]\npriority: 1\nsize: 90\nweight: xl\ndomain: parsing\n```\n';
    expect(parseOverride(body, defaults)).toEqual({
      override: {
        difficulty: 5,
        role: 'research',
        forceAgent: 'deep-thinker',
        fences: ['src/a/**', 'src/b/**'],
        priority: 1,
        size: 90,
        weight: 'xl',
        domain: 'parsing',
      },
      warnings: [],
      found: true,
    });
    expect(parseOverride('~~~school\n{"difficulty": 3, "role": "triage"}\n~~~', defaults).override).toEqual({
      difficulty: 3,
      role: 'triage',
    });
  });

  it.each([
    ['.nan', 2],
    ['.inf', 2],
    ['-.inf', 2],
    ['1e309', 2],
    ['"NaN"', 2],
    ['"Infinity"', 2],
    ['9', 2],
    ['0', 2],
    ['3.6', 4],
    ['"3"', 3],
  ])('difficulty %s → %d (N1.3: non-finite or out of range falls back)', (value, expected) => {
    const r = parseOverride(
      `\`\`\`school\ndifficulty: ${value}\npriority: ${value}\nsize: ${value}\n\`\`\``,
      defaults,
    );
    expect(r.override.difficulty).toBe(expected);
    expect(Number.isFinite(r.override.priority)).toBe(true);
    expect(Number.isFinite(r.override.size)).toBe(true);
    expect(r.override.size).toBeGreaterThan(0);
  });

  it('ignores what it does not understand, with warnings, and never amplifies YAML aliases', () => {
    const r = parseOverride('```school\nrole: wizard\nweight: 9\nagent: "rm -rf /"\nfoo: 1\n```', defaults);
    expect(r.override).toEqual({});
    expect(r.warnings).toHaveLength(4);
    const bomb = parseOverride('```school\na: &a [x, x]\nb: [*a, *a]\n```', defaults);
    expect(bomb.override).toEqual({});
    expect(bomb.warnings[0]).toMatch(/not valid YAML/);
    expect(parseOverride('```school\n- a list\n```', defaults).warnings[0]).toMatch(/key: value/);
    expect(parseOverride('no block here', defaults)).toEqual({ override: {}, warnings: [], found: false });
  });

  it('an override falls back to the rule-classified value, not to nothing', () => {
    const { item, warnings } = buildItem(
      raw({
        title: 'deadlock',
        body: '```school\ndifficulty: .nan\nagent: solo\n```',
        labels: [{ name: 'x' }],
      }),
      config,
    );
    expect(item.difficulty).toBe(4);
    expect(item.forceAgent).toBe('solo');
    expect(warnings[0]).toMatch(/^#1: override difficulty NaN .* using 4/);
    expect(curriculumItemSchema.parse(item)).toEqual(item);
  });
});

describe('buildItem', () => {
  it('sanitizes, redacts and records per field what was removed; labels are sanitized too', () => {
    const { item } = buildItem(
      raw({
        title: 'a\u202Eb',
        body: 'x\u0000y AKIAIOSFODNN7EXAMPLE',
        labels: ['ok\u200B', { name: 'docs' }],
        html_url: 'u',
        updated_at: 't',
      }),
      config,
    );
    expect(item).toMatchObject({
      title: 'ab',
      body: 'xy [REDACTED]',
      labels: ['ok', 'docs'],
      url: 'u',
      updatedAt: 't',
      role: 'docs',
    });
    expect(item.sanitized.title.bidi).toBe(1);
    expect(item.sanitized.body.nul).toBe(1);
  });

  it('the fingerprint follows title, body and labels but not label order', () => {
    const a = buildItem(raw({ title: 't', body: 'b', labels: ['x', 'y'] }), config).item.fingerprint;
    expect(buildItem(raw({ title: 't', body: 'b', labels: ['y', 'x'] }), config).item.fingerprint).toBe(a);
    expect(buildItem(raw({ title: 't', body: 'b2', labels: ['x', 'y'] }), config).item.fingerprint).not.toBe(
      a,
    );
  });
});

describe('globs and mentioned paths', () => {
  it('translates * ** ? and directory prefixes', () => {
    expect(globMatcher('src/**/*.ts')('src/a/b/c.ts')).toBe(true);
    expect(globMatcher('src/**/*.ts')('src/c.ts')).toBe(true);
    expect(globMatcher('src/*.ts')('src/a/c.ts')).toBe(false);
    expect(globMatcher('src/state')('src/state/lock.ts')).toBe(true);
    expect(globMatcher('src/stat?')('src/state')).toBe(true);
    expect(globMatcher('a.b')('axb')).toBe(false);
  });

  it('finds paths in prose, backticks and lists, not in URLs', () => {
    expect(mentionedPaths('see `src/state/lock.ts`, README.md and ./docs/x.md. https://x.io/a/b')).toEqual([
      'src/state/lock.ts',
      'README.md',
      'docs/x.md',
    ]);
  });
});
