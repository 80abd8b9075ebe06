import { describe, expect, it } from 'vitest';
import {
  controlEvents,
  controlFold,
  pendingSteers,
  stopFor,
  type ControlState,
} from '../../src/dispatch/logs/control-log.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import type { CrewRecord, CrewRegistry } from '../../src/dispatch/logs/registry.js';
import { issueStatuses, statusComment } from '../../src/feedback/status.js';
import { controlLine } from '../../src/dispatch/logs/control-lines.js';
import { event } from '../../src/state/event-log.js';

/**
 * What a person's stop leaves behind, as the plan, the status comment and the control log's fold
 * read it: the issue waits for a requeue (never planned again by itself), the status names who
 * stopped it without mentioning them, and each command is recorded once against the crews that
 * were active when it came.
 */
function crew(over: Partial<CrewRecord> & Pick<CrewRecord, 'crewId' | 'issueNumber'>): CrewRecord {
  return {
    daemon: 'd1',
    agent: 'alpha',
    weight: 'standard',
    fences: [],
    repair: false,
    attempt: 1,
    status: 'finished',
    plannedAt: '2026-12-01T10:00:00.000Z',
    ...over,
  };
}

const at = new Date('2026-12-01T10:05:00.000Z');

describe("a person's stop", () => {
  it('holds the issue until a requeue, and the status comment says who stopped it', () => {
    const stopped = crew({
      crewId: 'c3-00000001',
      issueNumber: 3,
      outcome: 'cancelled',
      reason: 'stopped by @ann: wrong approach; …',
      stoppedBy: '@ann',
      finishedAt: '2026-12-01T10:06:00.000Z',
    });
    // A cancellation nobody asked for (a runner told to stop) is an interruption: ready again.
    const interrupted = crew({
      crewId: 'c4-00000001',
      issueNumber: 4,
      outcome: 'cancelled',
      reason: 'stopped: the crew runner received SIGTERM',
      finishedAt: '2026-12-01T10:06:00.000Z',
    });
    const registry: CrewRegistry = {
      crews: { [stopped.crewId]: stopped, [interrupted.crewId]: interrupted },
      leases: {},
    };
    const states = issueStates(registry);
    expect(states.get(3)).toEqual({
      kind: 'stopped',
      crewIds: [stopped.crewId, stopped.crewId],
      stoppedBy: '@ann',
    });
    expect(states.get(4)?.kind).toBe('ready');
    // A requeue after the stop forgets it.
    expect(issueStates(registry, undefined, { 3: '2026-12-01T11:00:00.000Z' }).get(3)?.kind).toBe('ready');

    const status = issueStatuses({ registry, verdicts: new Map(), deliveries: new Map() }).get(3)!;
    const body = statusComment(3, status);
    expect(body).toContain('stopped — its crew was stopped by `@ann`');
    expect(body).toContain('`school requeue` starts over');
  });

  it('is recorded against the crews active when it came, once per comment; a steer waits for its crew', () => {
    const running = crew({ crewId: 'c5-00000002', issueNumber: 5, status: 'running' });
    const done = crew({ crewId: 'c5-00000001', issueNumber: 5, outcome: 'failed' });
    const registry: CrewRegistry = { crews: { [running.crewId]: running, [done.crewId]: done }, leases: {} };
    const by = { login: 'ann', source: 'github' as const, ref: 'comment:77', on: 5 };
    const stop = controlEvents(registry, 5, { verb: 'stop', reason: 'enough' }, by, at);
    expect(stop.crews).toEqual([running.crewId]);
    const steerBy = { ...by, ref: 'comment:78' };
    const steer = controlEvents(registry, 5, { verb: 'steer', text: 'smaller diff' }, steerBy, at);
    const none = controlEvents(
      registry,
      6,
      { verb: 'steer', text: 'hello' },
      { ...by, ref: 'comment:79' },
      at,
    );
    expect(none.refused).toBe('no crew is planned or running for issue #6');
    let state: ControlState = controlFold.empty();
    // The same comment read twice folds into one entry (the log's keys make the append a no-op too).
    for (const e of [...stop.events, ...stop.events, ...steer.events, ...none.events])
      state = controlFold.apply(state, e);
    expect(Object.keys(state.entries)).toHaveLength(3);
    expect(stopFor(state, running.crewId)).toMatchObject({
      verb: 'stop',
      text: 'enough',
      by: { login: 'ann' },
    });
    expect(stopFor(state, done.crewId)).toBeUndefined();
    const [pending] = pendingSteers(state, running.crewId);
    expect(pending?.text).toBe('smaller diff');
    state = controlFold.apply(
      state,
      event(
        'crew.steer-delivered',
        `steer-delivered:${pending!.key}`,
        { steer: pending!.key, crewId: running.crewId, turn: 2 },
        at,
      ),
    );
    expect(pendingSteers(state, running.crewId)).toEqual([]);
    expect(
      controlLine({
        at: at.toISOString(),
        issue: 5,
        verb: 'steer',
        by: '@ann',
        crewId: running.crewId,
        text: 'smaller diff',
        status: 'delivered to turn 2',
      }),
    ).toBe(
      `${at.toISOString()} #5 steer by @ann (crew ${running.crewId}): "smaller diff" — delivered to turn 2`,
    );
  });
});
