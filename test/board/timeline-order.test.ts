import { describe, expect, it } from 'vitest';
import type { SlotBar } from '../../src/board/model.js';
import { timelineOrder } from '../../src/board/view.js';

/** The slot timeline's order is localeCompare's (daemon, then slot, then start), however computed. */
const reference = (a: SlotBar, b: SlotBar) =>
  a.daemon.localeCompare(b.daemon) || a.slot - b.slot || a.start.localeCompare(b.start);

function bars(n: number, seed: number, start: (t: number, i: number) => string): SlotBar[] {
  let x = seed;
  const rand = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
  // 'émile' twice: precomposed and decomposed, equal for the collator though not as strings.
  const daemons = [
    'alpha',
    'Alpha',
    'beta',
    'Beta',
    '\u00e9mile',
    'e\u0301mile',
    'emile',
    'zed',
    'a-1',
    'A1',
  ];
  return Array.from({ length: n }, (_, i) => ({
    crewId: `c${i}`,
    issue: i,
    daemon: daemons[Math.floor(rand() * daemons.length)]!,
    slot: Math.floor(rand() * 4),
    agent: 'ada',
    start: start(Date.parse('2026-01-01T00:00:00.000Z') + Math.floor(rand() * 50) * 1000, i),
    status: 'finished' as const,
  }));
}

describe('timeline order', () => {
  it('is localeCompare order for ISO starts, for other starts and for daemons equal but for case or accents', () => {
    const shapes: Array<(t: number, i: number) => string> = [
      (t) => new Date(t).toISOString(),
      // Not all in toISOString's shape: the collator decides.
      (t, i) => (i % 7 ? new Date(t).toISOString() : new Date(t).toISOString().replace('.000Z', 'Z')),
      (t, i) => (i % 5 ? `t${t % 97}` : `T${t % 89}`),
    ];
    for (const [k, shape] of shapes.entries()) {
      for (const seed of [1, 2, 3]) {
        const input = bars(400, seed + k * 10, shape);
        expect([...input].sort(timelineOrder(input))).toEqual([...input].sort(reference));
      }
    }
  });
});
