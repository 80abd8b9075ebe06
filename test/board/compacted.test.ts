import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compact } from '../../src/checkpoint/compact.js';
import { buildView } from '../../src/board/view.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { verdicts } from '../../src/board/lanes.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { writeFileAtomic } from '../../src/state/atomic.js';
import { StateLayout } from '../../src/state/layout.js';
import { EXPECTED_COUNTS, NOW, fixtureConfig, knownSchoolCopies } from './fixture.js';

/**
 * A checkpoint compacts history away; what the school knows about its open issues must survive.
 * The known school is compacted with a horizon after every event (as a restore weeks later brings
 * it back): the board places every issue in the same lane, and the dispatch office judges each
 * issue the same (its repair rule reads the verdicts of the issue's last runs). A closed issue
 * (no longer in the curriculum) leaves with its history.
 */
const { copy: knownSchool } = knownSchoolCopies('board-compacted-');

/** Compacts every file of the state directory at `horizon` and writes back what changed. */
function compactAll(layout: StateLayout, horizon: Date): void {
  const files = new Map<string, Buffer>();
  for (const name of readdirSync(layout.root)) {
    if (name.endsWith('.jsonl')) files.set(name, readFileSync(join(layout.root, name)));
  }
  const out = compact(files, { horizon }).files;
  for (const [name, data] of out)
    if (data !== files.get(name)) writeFileAtomic(join(layout.root, name), data);
}

const lanesOf = (layout: StateLayout, config: ReturnType<typeof fixtureConfig>) =>
  Object.fromEntries(
    buildView(layout, config, NOW).lanes.map((l) => [l.id, l.items.map((i) => [i.issue, i.reason ?? ''])]),
  );

const statesOf = (layout: StateLayout) => {
  const { lookup } = verdicts(new GradingQueue(layout).state());
  return Object.fromEntries(
    [...issueStates(readRegistry(layout), lookup)].map(([issue, s]) => [issue, s.kind]),
  );
};

describe('the board and the dispatch office after compaction', () => {
  it('place every open issue as before: accepted and rejected keep their verdicts', () => {
    const { layout, config } = knownSchool();
    const lanes = lanesOf(layout, config);
    const states = statesOf(layout);
    expect(buildView(layout, config, NOW).counts).toEqual(EXPECTED_COUNTS);

    compactAll(layout, new Date(NOW.getTime() + 86_400_000));
    expect(readFileSync(layout.file('grading'), 'utf8')).toMatch(/^\{"key":"\$snapshot"/);
    expect(lanesOf(layout, config)).toEqual(lanes);
    expect(statesOf(layout)).toEqual(states);
  });

  it('lets a closed issue go with its crews, verdicts and delivery', () => {
    const { layout, config } = knownSchool();
    const accepted = buildView(layout, config, NOW).lanes.find((l) => l.id === 'accepted')!.items;
    const closed = accepted[0]!.issue;
    const curriculum = readFileSync(layout.file('curriculum'), 'utf8')
      .split('\n')
      .filter((l) => l && (JSON.parse(l) as { number: number }).number !== closed);
    writeFileSync(layout.file('curriculum'), curriculum.join('\n') + '\n');

    compactAll(layout, new Date(NOW.getTime() + 86_400_000));
    const view = buildView(layout, config, NOW);
    expect(view.lanes.flatMap((l) => l.items.map((i) => i.issue))).not.toContain(closed);
    expect(Object.values(readRegistry(layout).crews).some((c) => c.issueNumber === closed)).toBe(false);
    const jobs = Object.values(new GradingQueue(layout).state().jobs);
    expect(jobs.some((j) => j.job.issueNumber === closed)).toBe(false);
    expect(existsSync(layout.file('grading'))).toBe(true);
  });
});
