import { describe, expect, it } from 'vitest';
import { LISTED_ITEMS } from '../../src/board/model.js';
import { actionSummaryMarkdown } from '../../src/board/summary.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { buildView } from '../../src/board/view.js';
import { NOW, PLANTED, knownSchoolCopies } from './fixture.js';

const { copy: knownSchool } = knownSchoolCopies('board-abridged-');

describe('an abridged view (school status, job summaries)', () => {
  it('is the full view with each lane cut to its oldest items, the same counts, and no timeline bars', () => {
    const { layout, config } = knownSchool();
    const full = buildView(layout, config, NOW);
    expect(full.abridged).toBeUndefined();
    expect(full.timeline.bars.length).toBeGreaterThan(0);
    for (const n of [0, 1, 2, LISTED_ITEMS]) {
      const short = buildView(layout, config, NOW, { itemsPerLane: n });
      expect(short.abridged).toEqual({ itemsPerLane: n });
      expect(short.timeline.bars).toEqual([]);
      expect(short.counts).toEqual(full.counts);
      expect(short.lanes).toEqual(full.lanes.map((l) => ({ ...l, items: l.items.slice(0, n) })));
      // Everything else is the full view's.
      const rest = (v: typeof full) => {
        const { lanes: _l, timeline: _t, abridged: _a, ...others } = v;
        return others;
      };
      expect(rest(short)).toEqual(rest(full));
    }
    // The known school has a lane with more than one item, so the cut above was exercised.
    expect(full.lanes.some((l) => l.items.length > 1)).toBe(true);
  });

  it('renders the same terminal board and job summaries as the full view', () => {
    const { layout, config } = knownSchool();
    const full = buildView(layout, config, NOW);
    const short = buildView(layout, config, NOW, { itemsPerLane: LISTED_ITEMS });
    expect(renderTerminal(short)).toBe(renderTerminal(full));
    for (const action of ['fetch-curriculum', 'dispatch-crew', 'drain-grading', 'checkpoint-state']) {
      expect(actionSummaryMarkdown(action, short, 'school-board')).toBe(
        actionSummaryMarkdown(action, full, 'school-board'),
      );
    }
  });

  it('writes titles and reasons of the items it lists sanitized and redacted', () => {
    const { layout, config } = knownSchool();
    const short = buildView(layout, config, NOW, { itemsPerLane: LISTED_ITEMS });
    expect(JSON.stringify(short)).not.toContain(PLANTED);
    const ready = short.lanes.find((l) => l.id === 'ready')!.items.find((i) => i.issue === 12)!;
    expect(ready.title).toBe('Rotate the deploy key [REDACTED] before Friday');
    for (const item of short.lanes.flatMap((l) => l.items)) expect(item.title).not.toBe('');
  });
});
