import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { classify } from '../../src/curriculum/classify.js';
import { globMatcher } from '../../src/curriculum/glob.js';
import { FenceSet, literalPrefix } from '../../src/dispatch/gates/fences.js';
import { insideFences } from '../../src/grading/rubric.js';

/**
 * One glob syntax for classification rules, fences and the rubric: each syntax case below is
 * checked through all three, and a property test proves the fences' cheap overlap check never
 * misses two globs that match a common path.
 */

const CASES: { glob: string; yes: string[]; no: string[] }[] = [
  { glob: 'src/*.ts', yes: ['src/a.ts', 'src/.hidden.ts'], no: ['src/a/b.ts', 'lib/a.ts', 'src/a.tsx'] },
  { glob: 'src/**/*.ts', yes: ['src/a.ts', 'src/a/b/c.ts'], no: ['src/a.tsx', 'a.ts'] },
  { glob: 'src/**/*.{ts,tsx}', yes: ['src/a.ts', 'src/x/b.tsx'], no: ['src/a.js', 'lib/a.ts'] },
  { glob: '{src,lib}/index.ts', yes: ['src/index.ts', 'lib/index.ts'], no: ['test/index.ts'] },
  { glob: 'src/[ab].ts', yes: ['src/a.ts', 'src/b.ts'], no: ['src/c.ts', 'src/ab.ts'] },
  { glob: 'src/file-[0-9].md', yes: ['src/file-3.md'], no: ['src/file-x.md'] },
  { glob: 'src/a?.ts', yes: ['src/ab.ts'], no: ['src/a.ts', 'src/a/b.ts'] },
  // A wildcard without a slash is a file name at any depth.
  { glob: '*.md', yes: ['README.md', 'docs/a.md', 'docs/deep/b.md'], no: ['docs/a.mdx', 'md'] },
  { glob: '*.{yml,yaml}', yes: ['.github/workflows/ci.yml', 'a.yaml'], no: ['a.json'] },
  // A plain path matches itself and everything below it; a plain name is a root path.
  { glob: 'src/state', yes: ['src/state', 'src/state/lock.ts'], no: ['src/stateful.ts', 'x/src/state'] },
  { glob: 'README.md', yes: ['README.md'], no: ['docs/README.md'] },
  { glob: './docs/', yes: ['docs/a.md', './docs/a.md'], no: ['doc/a.md'] },
  // Extglob and negation are literal text, never syntax.
  { glob: 'src/@(a|b).ts', yes: ['src/@(a|b).ts'], no: ['src/a.ts'] },
  { glob: '!src/a.ts', yes: ['!src/a.ts'], no: ['src/a.ts', 'src/b.ts'] },
];

describe('one glob syntax everywhere', () => {
  it.each(CASES)('$glob: the matcher', ({ glob, yes, no }) => {
    const m = globMatcher(glob);
    for (const p of yes) expect(m(p), `${glob} should match ${p}`).toBe(true);
    for (const p of no) expect(m(p), `${glob} should not match ${p}`).toBe(false);
  });

  it.each(CASES)('$glob: a classification rule', ({ glob, yes, no }) => {
    const config = parseConfig({
      curriculum: { rules: [{ match: { paths: [glob] }, set: { domain: 'hit' } }] },
    }).curriculum;
    const domain = (p: string) =>
      classify({ title: 't', body: `touches ${p} only`, labels: [] }, config).domain;
    // Only paths the body scanner recognises as paths can reach a rule.
    for (const p of yes.filter((x) => /^[\w./-]+$/.test(x) && /[./]/.test(x)))
      expect(domain(p), p).toBe('hit');
    for (const p of no.filter((x) => /^[\w./-]+$/.test(x) && /[./]/.test(x)))
      expect(domain(p), p).not.toBe('hit');
  });

  it.each(CASES)('$glob: the rubric fence check, and a fence claim', ({ glob, yes, no }) => {
    for (const p of yes) expect(insideFences(p, [glob]), p).toBe(true);
    for (const p of no) expect(insideFences(p, [glob]), p).toBe(false);
    // The fence of this glob conflicts with a fence on any path it matches.
    for (const p of yes) {
      const held = new FenceSet();
      held.claim([p.replace(/^\.\//, '')], 'other');
      expect(held.conflict([glob]), `${glob} vs held ${p}`).toBeDefined();
    }
  });

  it('a basename fence conflicts with a fence on any directory', () => {
    const held = new FenceSet();
    held.claim(['docs/**'], 'crew 1');
    expect(held.conflict(['*.md'])).toEqual({ fence: '*.md', heldBy: 'crew 1' });
    expect(literalPrefix('*.md')).toBe('');
    expect(literalPrefix('src/**/*.{ts,tsx}')).toBe('src/');
  });
});

describe('fence overlap check is sound for the matcher (property)', () => {
  const segment = fc.constantFrom('src', 'a', 'b', 'docs', 'x.ts', 'a.md', 'c.tsx', 'ab', '.env');
  const globPart = fc.constantFrom(
    'src',
    'a',
    'docs',
    '*',
    '**',
    '?',
    'a?',
    '*.md',
    '*.{ts,tsx}',
    '[ab]',
    '{a,b}',
    '{src,docs}',
    'x.ts',
  );
  const glob = fc.array(globPart, { minLength: 1, maxLength: 3 }).map((p) => p.join('/'));
  const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((p) => p.join('/'));

  it('two globs that match one path always overlap by literal prefix', () => {
    fc.assert(
      fc.property(glob, glob, fc.array(path, { minLength: 1, maxLength: 8 }), (g1, g2, paths) => {
        const both = paths.some((p) => globMatcher(g1)(p) && globMatcher(g2)(p));
        if (!both) return;
        const a = literalPrefix(g1);
        const b = literalPrefix(g2);
        expect(a.startsWith(b) || b.startsWith(a), `${g1} (${a}) vs ${g2} (${b})`).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
