import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeSanitized, finiteOr, sanitizeText, wasSanitized } from '../../src/security/sanitize.js';
import { tempDir } from '../support/tmp.js';

const BIDI = [
  '\u202A',
  '\u202B',
  '\u202C',
  '\u202D',
  '\u202E',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200E',
  '\u200F',
  '\u061C',
];
const TAGS = ['\u{E0000}', '\u{E0001}', '\u{E0041}', '\u{E007F}'];
const ZERO_WIDTH = ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF'];
// Every code point sanitized output must never contain (\r is folded into \n).
const FORBIDDEN =
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069\u200B-\u200F\u061C\u2060\uFEFF]|[\u{E0000}-\u{E007F}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;

describe('sanitizeText', () => {
  it('removes and counts bidi controls', () => {
    const r = sanitizeText(`a${BIDI.join('b')}c`, 1000);
    expect(r.text).toBe(`a${'b'.repeat(BIDI.length - 1)}c`);
    expect(r.report.bidi).toBe(BIDI.length);
  });

  it('removes tag characters (invisible ASCII smuggling)', () => {
    const smuggled = 'ignore previous'
      .split('')
      .map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0)))
      .join('');
    const r = sanitizeText(`title${smuggled}${TAGS.join('')}`, 1000);
    expect(r.text).toBe('title');
    expect(r.report.tag).toBe('ignore previous'.length + TAGS.length);
  });

  it('removes zero-width characters and NUL, keeps tabs and newlines, folds CRLF', () => {
    const r = sanitizeText(`a${ZERO_WIDTH.join('')}b\u0000c\td\r\ne\rf\u0007`, 1000);
    expect(r.text).toBe('abc\td\ne\nf');
    expect(r.report).toMatchObject({ zeroWidth: ZERO_WIDTH.length, nul: 1, control: 1 });
    expect(describeSanitized(r.report)).toBe('5 zero-width, 1 NUL, 1 control');
  });

  it('caps a 2 MB body with a visible marker and records the original length', () => {
    const body = 'A'.repeat(2 * 1024 * 1024);
    const r = sanitizeText(body, 65_536);
    expect(r.text.length).toBeLessThanOrEqual(65_536);
    expect(r.text).toMatch(/\n\[… \d+ characters cut by school-core\]$/);
    expect(r.report.truncatedFrom).toBe(body.length);
    expect(wasSanitized(r.report)).toBe(true);
    expect(sanitizeText(r.text, 65_536).text).toBe(r.text);
  });

  it('never cuts a surrogate pair in half at the cap', () => {
    const text = '😀'.repeat(1000);
    for (let cap = 60; cap < 70; cap++) {
      const r = sanitizeText(text, cap);
      expect(r.text.length).toBeLessThanOrEqual(cap);
      expect(FORBIDDEN.test(r.text)).toBe(false);
    }
  });

  it('leaves shell metacharacters as text, and as argv they stay inert (N1.2)', () => {
    const dir = tempDir();
    try {
      const hostile = 'Fix; rm -rf ~ && touch PWNED1 | $(touch PWNED2) `touch PWNED3` > PWNED4 \'"\\ %s';
      const r = sanitizeText(hostile, 1000);
      expect(r.text).toBe(hostile);
      expect(wasSanitized(r.report)).toBe(false);
      // Handed to a real process as one argv element (never a shell string), nothing runs.
      const p = spawnSync('printf', ['%s', r.text], { cwd: dir.path, encoding: 'utf8' });
      expect(p.stdout).toBe(hostile);
      expect(readdirSync(dir.path)).toEqual([]);
    } finally {
      dir.cleanup();
    }
  });

  it('removes lone surrogates and keeps valid pairs', () => {
    const r = sanitizeText('a\uD800b\uDC00c😀', 100);
    expect(r.text).toBe('abc😀');
    expect(r.report.surrogate).toBe(2);
  });
});

describe('sanitizeText properties', () => {
  const hostileChar = fc.oneof(
    fc.constantFrom(
      ...BIDI,
      ...TAGS,
      ...ZERO_WIDTH,
      '\u0000',
      '\r',
      '\r\n',
      '\uD800',
      '\uDFFF',
      '\u0085',
      '\u007F',
      '😀',
      '\t',
      '\n',
    ),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.string({ maxLength: 8 }),
  );
  const hostile = fc.array(hostileChar, { maxLength: 60 }).map((parts) => parts.join(''));
  const cap = fc.integer({ min: 1, max: 400 });

  it('is idempotent', () => {
    fc.assert(
      fc.property(hostile, cap, (text, max) => {
        const once = sanitizeText(text, max).text;
        expect(sanitizeText(once, max).text).toBe(once);
      }),
      { numRuns: 1500 },
    );
  });

  it('never leaves a forbidden code point', () => {
    fc.assert(
      fc.property(hostile, cap, (text, max) => {
        expect(FORBIDDEN.test(sanitizeText(text, max).text)).toBe(false);
      }),
      { numRuns: 1500 },
    );
  });

  it('respects the cap, and only cuts what is over it', () => {
    fc.assert(
      fc.property(hostile, cap, (text, max) => {
        const r = sanitizeText(text, max);
        expect(r.text.length).toBeLessThanOrEqual(max);
        if (r.report.truncatedFrom === undefined) expect(r.text.length).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 1500 },
    );
  });
});

describe('finiteOr (N1.3)', () => {
  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    // A literal 1e309 parses to Infinity: that is what a JSON/YAML reader hands over.
    ['1e309 as a number', Number('1e309')],
    ['"1e309" as text', '1e309'],
    ['"NaN" as text', 'NaN'],
    ['empty text', ''],
    ['blank text', '   '],
    ['a word', 'three'],
    ['null', null],
    ['undefined', undefined],
    ['true', true],
    ['an object', { valueOf: () => 3 }],
    ['an array', [3]],
  ])('%s falls back to the default', (_name, value) => {
    expect(finiteOr(value, 7)).toBe(7);
  });

  it('accepts finite numbers and numeric text, turns -0 into 0', () => {
    expect(finiteOr(3, 7)).toBe(3);
    expect(finiteOr(' 4.5 ', 7)).toBe(4.5);
    expect(Object.is(finiteOr(-0, 7), 0)).toBe(true);
    expect(Object.is(finiteOr('-0', 7), 0)).toBe(true);
  });

  it('falls back when outside the allowed range', () => {
    expect(finiteOr(6, 2, { min: 1, max: 5 })).toBe(2);
    expect(finiteOr(0, 2, { min: 1, max: 5 })).toBe(2);
    expect(finiteOr(5, 2, { min: 1, max: 5 })).toBe(5);
    expect(finiteOr(1e308, 2, { min: 1, max: 5 })).toBe(2);
  });
});
