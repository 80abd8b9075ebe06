import { describe, expect, it } from 'vitest';
import { foldQueueSeries, queuePoints, replayQueue, startQueueReplay } from '../../src/board/domains.js';
import type { QueueEvent } from '../../src/grading/queue.js';
import { splitLog } from '../../src/state/event-log.js';

/**
 * The queue-depth series must not depend on how the grading log was replayed: the board's
 * persisted fold replays the folded part once and the appended part later, and must draw what one
 * replay of the whole log draws.
 */
function gradingLog(jobs: number, seed: number): QueueEvent[] {
  let x = seed;
  const rand = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const events: QueueEvent[] = [];
  let t = Date.parse('2026-03-01T00:00:00.000Z');
  // Clocks move forward mostly, sometimes stand still or step back (merged writers).
  const at = () => new Date((t += Math.floor(rand() * 3 - 0.5) * 1000)).toISOString();
  for (let j = 0; j < jobs; j++) {
    const jobKey = `grade:${j}:c${j}`;
    events.push({
      key: jobKey,
      type: 'job.enqueued',
      at: at(),
      data: {
        jobKey,
        issueNumber: j,
        crewId: `c${j}`,
        agent: 'ada',
        domain: 'web',
        difficulty: 1,
        fences: [],
        bookbag: `bookbags/c${j}`,
      },
    } as QueueEvent);
    if (rand() < 0.8) {
      events.push({
        key: `claim:${jobKey}:1`,
        type: 'job.claimed',
        at: at(),
        data: { jobKey, worker: 'w', attempt: 1, leaseUntil: at() },
      } as QueueEvent);
      // Half of the claimed jobs are graded: the depth goes down as well as up.
      if (rand() < 0.5) {
        events.push({
          key: `graded:${jobKey}`,
          type: 'job.graded',
          at: at(),
          data: { jobKey, worker: 'w', verdict: { accepted: true } },
        } as QueueEvent);
      }
    }
  }
  return events;
}

describe('queue depth series', () => {
  it('is the same for one replay and for a replay split at any points, past several step doublings', () => {
    for (const [jobs, seed] of [
      [10, 1],
      [300, 2],
      [2_000, 3],
    ] as const) {
      const events = gradingLog(jobs, seed);
      const whole = foldQueueSeries(splitLog<QueueEvent, unknown>(events));
      expect(whole.series.length).toBeLessThanOrEqual(241);
      for (const cuts of [
        [1],
        [events.length >> 1],
        [7, 240, 241, 480, 1_000].filter((c) => c < events.length),
      ]) {
        const replay = startQueueReplay({});
        let from = 0;
        for (const cut of [...cuts, events.length]) {
          replayQueue(replay, events.slice(from, cut));
          // The persisted fold is JSON: the replay must continue from a parsed copy.
          Object.assign(replay, JSON.parse(JSON.stringify(replay)));
          from = cut;
        }
        expect(queuePoints(replay.series)).toEqual(whole.series);
        expect(replay.state).toEqual(whole.state);
      }
    }
  });

  it('keeps the last event and one point per time, with the depth after it', () => {
    const events = gradingLog(50, 9);
    const { state, series } = foldQueueSeries(splitLog<QueueEvent, unknown>(events));
    const times = series.map((p) => p.at);
    expect(new Set(times).size).toBe(times.length);
    const live = Object.values(state.jobs).filter((j) => j.status !== 'graded').length;
    expect(live).toBeLessThan(50);
    expect(series.at(-1)!.depth).toBe(live);
  });
});
