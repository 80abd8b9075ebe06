import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog, event, SNAPSHOT_TYPE, type StateEvent } from '../../src/state/event-log.js';
import { appendJsonl } from '../../src/state/jsonl.js';
import { useChildren, exited, runNode } from './child-bundle.js';

const { dir, children } = useChildren();

describe('EventLog', () => {
  it('appending an event whose key exists is a no-op, in one batch and across calls', async () => {
    const log = new EventLog<StateEvent>(join(dir.path, 'dedup.jsonl'));
    const a = event('x', 'k1', { n: 1 });
    expect((await log.append([a, a, event('x', 'k2', {})])).map((e) => e.key)).toEqual(['k1', 'k2']);
    expect(await log.append([event('x', 'k1', { n: 'replayed' })])).toEqual([]);
    const read = log.read();
    expect(read.events.map((e) => e.key)).toEqual(['k1', 'k2']);
    expect(read.events[0]!.data).toEqual({ n: 1 });
  });

  it('keys folded into a $snapshot stay deduplicated', async () => {
    const path = join(dir.path, 'snap.jsonl');
    appendJsonl(path, [
      {
        key: '$snapshot',
        type: SNAPSHOT_TYPE,
        at: new Date().toISOString(),
        data: { keys: ['old1', 'old2'], state: { n: 2 }, events: 2 },
      },
    ]);
    const log = new EventLog<StateEvent, { n: number }>(path);
    expect(await log.append([event('x', 'old1', {}), event('x', 'new', {})])).toHaveLength(1);
    const read = log.read();
    expect(read.snapshot?.data.state).toEqual({ n: 2 });
    expect([...read.keys].sort()).toEqual(['new', 'old1', 'old2']);
    expect(read.events.map((e) => e.key)).toEqual(['new']);
  });

  it('transact is read-decide-append under one lock across real OS processes', async () => {
    const path = join(dir.path, 'contended.jsonl');
    const procs = 4;
    const each = 25;
    const kids = Array.from({ length: procs }, (_, i) =>
      runNode(children.transactor, [path, `p${i}`, String(each)]),
    );
    const stderr: string[] = [];
    for (const k of kids) k.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
    const results = await Promise.all(kids.map(exited));
    expect(stderr.join('')).toBe('');
    expect(results.every((r) => r.code === 0)).toBe(true);
    const events = new EventLog<StateEvent<'claim', { by: string }>>(path).read().events;
    // Every transaction saw every earlier one: sequence numbers are dense and none was claimed
    // twice (a lost race would show as a deduplicated key and fewer events).
    expect(events.map((e) => e.key)).toEqual(Array.from({ length: procs * each }, (_, i) => `seq:${i}`));
    const by = new Map<string, number>();
    for (const e of events) by.set(e.data.by, (by.get(e.data.by) ?? 0) + 1);
    expect([...by.values()]).toEqual(Array(procs).fill(each));
  });
});
