import type { CurriculumItem } from '../../src/schemas/curriculum.js';

/**
 * A curriculum item as fetch-curriculum stores it: sanitized, classified with the defaults, by a
 * trusted author. Tests override what they care about.
 */
export function curriculumItem(number: number, over: Partial<CurriculumItem> = {}): CurriculumItem {
  const clean = { bidi: 0, tag: 0, zeroWidth: 0, nul: 0, control: 0, surrogate: 0 };
  return {
    number,
    title: `issue ${number}`,
    body: '',
    labels: [],
    url: `https://github.com/o/r/issues/${number}`,
    updatedAt: '2026-01-01T00:00:00Z',
    domain: 'general',
    difficulty: 2,
    role: 'coding',
    fences: [],
    priority: 2,
    size: 30,
    weight: 'standard',
    authorAssociation: 'OWNER',
    sanitized: { title: clean, body: clean },
    fingerprint: `fp${number}`,
    ...over,
  };
}
