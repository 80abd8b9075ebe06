import { afterEach, describe, expect, it } from 'vitest';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { admit, type Admitted } from '../../src/dispatch/gates/admission.js';
import { sharedEligible } from '../../src/dispatch/gates/standby.js';
import { GiB, admission, candidate, config, daemon, item, heartbeats, standbyPlanner } from './helpers.js';

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

const NOW = new Date('2026-03-01T12:00:00Z');

/**
 * d1 (heavy) and d2 (standard) run worktree crews, d4 is a bot classroom, d3 never beats (offline):
 * only daemons that get a first-wave crew have a crew job this run.
 */
async function school() {
  const d = tempDir('school-shared-');
  dirs.push(d);
  const layout = new StateLayout(d.path);
  const cfg = config({
    fleet: {
      daemons: [
        { id: 'd1', worktrees: 1, class: 'heavy' },
        { id: 'd2', worktrees: 1, class: 'standard' },
        { id: 'd3', worktrees: 1, class: 'heavy' },
        { id: 'd4', worktrees: 1, class: 'heavy', classroom: 'bot' },
      ],
    },
    dispatch: { maxCrews: 3, crewTimeoutSeconds: 900, gradingReserveSeconds: 300, jobTimeoutMinutes: 360 },
  });
  await heartbeats(layout, cfg, NOW, ['d1', 'd2', 'd4']);
  const plan = standbyPlanner(cfg, layout, NOW);
  return { layout, plan };
}

/** First wave: #1 heavy (d1), #2 standard (d2), #3 research (bot d4); the rest waits on standby. */
const backlog = () => [
  item(1, { weight: 'heavy', priority: 1 }),
  item(2, { priority: 1 }),
  item(3, { role: 'research', priority: 1 }),
  item(4, { weight: 'heavy' }),
  item(5),
  item(6),
  item(7, { role: 'research' }),
];

describe('one queue per run: the plan lists who may run each standby crew', () => {
  it('lists every crew job that admission would accept for the crew, the planned daemon first', async () => {
    const s = await school();
    const r = await s.plan(backlog(), { mode: { sharedQueue: true } });
    const first = r.assignments.filter((a) => !a.queued);
    expect(first.map((a) => [a.issueNumber, a.daemon]).sort()).toEqual([
      [1, 'd1'],
      [2, 'd2'],
      [3, 'd4'],
    ]);
    expect(first.every((a) => a.eligible === undefined)).toBe(true);
    const standby = r.assignments.filter((a) => a.queued);
    expect(standby.map((a) => a.issueNumber).sort()).toEqual([4, 5, 6, 7]);
    for (const a of standby) {
      expect(a.eligible![0]).toBe(a.daemon);
      // d3 is offline: no crew job this run, never listed.
      expect(a.eligible).not.toContain('d3');
    }
    const by = new Map(standby.map((a) => [a.issueNumber, new Set(a.eligible)]));
    // Heavy: d2's class is too small. Coding: never on the bot classroom. Research: only the bot.
    expect(by.get(4)).toEqual(new Set(['d1']));
    expect(by.get(5)).toEqual(new Set(['d1', 'd2']));
    expect(by.get(6)).toEqual(new Set(['d1', 'd2']));
    expect(by.get(7)).toEqual(new Set(['d4']));
    // Recorded as planned: the crew jobs read it from the registry.
    const reg = readRegistry(s.layout);
    for (const a of standby) expect(reg.crews[a.crewId]!.eligible).toEqual(a.eligible);
  });

  it('leaves out a crew job whose daemon has fallen under the disk floor', () => {
    // A daemon's job exists (it got a first-wave crew) though its disk reads low by now: the
    // decision over one admission input, as the plan makes it.
    const input = admission({
      candidates: [candidate(1), candidate(2), candidate(3)],
      daemons: [daemon('d1'), daemon('d2', { freeDiskBytes: 1 * GiB }), daemon('d3')],
    });
    const first = admit(input);
    const on = (issue: number, d: string): Admitted => ({
      candidate: candidate(issue),
      agent: first.admitted[0]!.agent,
      daemon: d,
      classroom: 'worktree',
      fallback: false,
    });
    const firstWave = { ...first, admitted: [on(1, 'd1'), on(2, 'd2'), on(3, 'd3')] };
    expect(sharedEligible(input, firstWave, [on(4, 'd3'), on(5, 'd2')])).toEqual([
      ['d3', 'd1'],
      ['d2', 'd1', 'd3'],
    ]);
  });

  it('without sharedQueue, and for a refill, nothing is shared', async () => {
    const s = await school();
    const r = await s.plan(backlog());
    expect(r.assignments.some((a) => a.eligible !== undefined)).toBe(false);
    expect(Object.values(readRegistry(s.layout).crews).some((c) => c.eligible !== undefined)).toBe(false);
  });
});
