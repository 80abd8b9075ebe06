import { describe, expect, it } from 'vitest';
import { parseCheckpointInputs } from '../../src/checkpoint/run.js';
import { fileRows, textReport } from '../../src/checkpoint/summary.js';
import { ConfigError } from '../../src/errors.js';

describe('checkpoint inputs', () => {
  it('coerces retention-days from the runner’s string and names the field when it is wrong', () => {
    expect(
      parseCheckpointInputs({ mode: 'save', retentionDays: '30' as unknown as number }).retentionDays,
    ).toBe(30);
    for (const bad of ['0', '91', '2.5', 'week']) {
      expect(() => parseCheckpointInputs({ mode: 'save', retentionDays: bad as unknown as number })).toThrow(
        /retention-days: (at least 1|at most 90|a whole number of days from 1 to 90)/,
      );
    }
    expect(() => parseCheckpointInputs({ mode: 'save', cacheKeyPrefix: 'a b' })).toThrow(ConfigError);
    expect(() => parseCheckpointInputs({ mode: 'pull' as 'save' })).toThrow(/mode: use "restore" or "save"/);
  });

  it('reports bookbags as one line and lists what was redacted and compacted', () => {
    const files = [
      { path: 'grading.jsonl', size: 2048 },
      { path: 'bookbags/c1/bookbag.json', size: 100 },
      { path: 'bookbags/c1/diff.patch', size: 100 },
      { path: 'bookbags/c2/bookbag.json', size: 100 },
    ];
    expect(fileRows(files)).toEqual([
      ['grading.jsonl', '2.0 KiB'],
      ['bookbags/ (2 crews, 3 files)', '300 B'],
    ]);
    const text = textReport({
      mode: 'save',
      dryRun: true,
      sources: [],
      generation: 4,
      files,
      redacted: { 'curriculum.jsonl': 2 },
      compacted: { 'grading.jsonl': { folded: 10, dropped: 0 } },
      warnings: [],
      notes: [],
    });
    expect(text).toMatch(/dry run: nothing written/);
    expect(text).toMatch(/redacted: curriculum.jsonl \(2\)/);
    expect(text).toMatch(
      /compacted: grading.jsonl \(10 folded into the snapshot, 0 dropped past the window\)/,
    );
  });
});
