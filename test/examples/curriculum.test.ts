import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { curriculumItemSchema } from '../../src/schemas/curriculum.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * examples/issues.json through the real offline curriculum source, once fetch-curriculum's core is
 * in the tree (it lands separately; until then issues.test.ts checks the file's shape on its own).
 */
const FETCH = resolve('src/curriculum/fetch.ts');
const tmp = tempDir('school-example-curriculum-');
afterAll(() => tmp.cleanup());

describe('examples/issues.json through the offline curriculum source', () => {
  it.skipIf(!existsSync(FETCH))('becomes 7 sanitized, classified curriculum items', async () => {
    const { fetchCurriculum } = (await import(/* @vite-ignore */ FETCH)) as {
      fetchCurriculum(o: unknown): Promise<{ count: number; path: string; items: CurriculumItem[] }>;
    };
    const config = loadConfig('examples/school.yml');
    const layout = new StateLayout(join(tmp.path, 'state'));
    const result = await fetchCurriculum({
      layout,
      config,
      source: { kind: 'file', path: 'examples/issues.json' },
    });
    expect(result.count).toBe(7);
    const written = readFileSync(result.path, 'utf8');
    const items = written
      .split('\n')
      .filter(Boolean)
      .map((l) => curriculumItemSchema.parse(JSON.parse(l)));
    const byNumber = new Map(items.map((i) => [i.number, i]));
    expect([...byNumber.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 5, 6, 7, 8]);

    // The director's override wins and fences each issue to its own directory.
    expect(byNumber.get(2)).toMatchObject({
      difficulty: 3,
      priority: 0,
      size: 20,
      fences: ['solutions/issue-2/**'],
    });
    expect(byNumber.get(7)).toMatchObject({ difficulty: 1, priority: 3, fences: ['solutions/issue-7/**'] });
    // Non-finite override numbers fall back to finite values in range (N1.3).
    const eight = byNumber.get(8)!;
    for (const v of [eight.difficulty, eight.priority, eight.size]) expect(Number.isFinite(v)).toBe(true);
    // The hostile issue is inert: bidi and zero-width removed and recorded, shell text kept as text.
    const three = byNumber.get(3)!;
    expect(three.title).toBe('Show user names like ; rm -rf ~ $(id) safely');
    expect(three.sanitized.title.bidi).toBe(1);
    expect(three.sanitized.body.zeroWidth).toBeGreaterThan(0);
    expect(three.body).not.toMatch(/[\u202a-\u202e\u200b]/);
    // The documentation AWS key never reaches the state directory.
    expect(written).not.toContain('AKIAIOSFODNN7EXAMPLE');
  });
});
