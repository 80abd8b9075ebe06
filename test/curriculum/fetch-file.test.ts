import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

let dir: ReturnType<typeof tempDir>;
let layout: StateLayout;
let file: string;
beforeEach(() => {
  dir = tempDir();
  layout = new StateLayout(join(dir.path, 'state'));
  file = join(dir.path, 'issues.json');
});
afterEach(() => dir.cleanup());

const config = parseConfig({});
const run = (labels?: string[]) =>
  fetchCurriculum({ layout, config, labels, source: { kind: 'file', path: file } });
const issues = (list: unknown[]) => writeFileSync(file, JSON.stringify(list));

describe('fetch-curriculum from an issues file', () => {
  it('adds, changes and removes by issue number; an unchanged file writes nothing', async () => {
    issues([
      { number: 1, title: 'one', labels: [{ name: 'school' }] },
      { number: 2, title: 'two', labels: ['school'] },
      { number: 3, title: 'pr', pull_request: {}, labels: ['school'] },
    ]);
    expect(await run(['school'])).toMatchObject({ mode: 'file', count: 2, added: 2 });
    const before = statSync(layout.file('curriculum'));
    expect(await run(['school'])).toMatchObject({ mode: 'file-unchanged', count: 2, added: 0 });
    expect(statSync(layout.file('curriculum')).mtimeMs).toBe(before.mtimeMs);

    issues([
      { number: 1, title: 'one, edited', labels: ['school'] },
      { number: 2, title: 'two', labels: ['school'], state: 'closed' },
      { number: 4, title: 'four', labels: ['school'] },
    ]);
    expect(await run(['school'])).toMatchObject({ mode: 'file', count: 2, added: 1, changed: 1, removed: 1 });
    const lines = readFileSync(layout.file('curriculum'), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { number: number }).number)).toEqual([1, 4]);
  });

  it('a corrupt curriculum is quarantined and rebuilt, with a warning', async () => {
    issues([{ number: 1, title: 'one' }]);
    await run();
    writeFileSync(layout.file('curriculum'), '{"number":1}\n{broken\n');
    const logger = memoryLogger();
    const r = await fetchCurriculum({ layout, config, logger, source: { kind: 'file', path: file } });
    expect(r.count).toBe(1);
    expect(logger.lines.some((l) => l.level === 'warning' && /corrupt.*rebuilt/s.test(l.message))).toBe(true);
  });
});
