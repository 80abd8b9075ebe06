import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { EventLog, event } from '../../src/state/event-log.js';
import { LOCK_OPTIONS, withLock } from '../../src/state/lock.js';
import { tempDir } from '../support/tmp.js';
import { exited, runNode, useChildren } from './child-bundle.js';

const { children } = useChildren();

const tmp = tempDir('school-lock-tail-');
afterAll(() => tmp.cleanup());

describe('withLock', () => {
  it('serializes holders of one process and leaves nothing behind', async () => {
    const target = join(tmp.path, 'a', 'log.jsonl');
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = withLock(target, async () => {
      order.push('first in');
      await held;
      order.push('first out');
    });
    await new Promise((r) => setTimeout(r, 20));
    const second = withLock(target, () => order.push('second'));
    await new Promise((r) => setTimeout(r, 50));
    expect(order).toEqual(['first in']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second']);
    expect(readdirSync(join(tmp.path, 'a'))).toEqual([]);
  });

  it('takes over at once a lock whose holder was SIGKILLed, without waiting for a timeout', async () => {
    const target = join(tmp.path, 'k', 'log.jsonl');
    const child = runNode(children.holder, [target]);
    await new Promise<void>((resolve) =>
      child.stdout!.on('data', (d: Buffer) => d.includes('held') && resolve()),
    );
    let got = false;
    const waiting = withLock(target, () => (got = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toBe(false); // a live holder is never taken over
    child.kill('SIGKILL');
    await exited(child);
    // The lock directory dated an hour ahead can never be stale: only the dead owner lets the waiter
    // in, so it cannot be waiting out LOCK_OPTIONS.stale. (A wall-clock bound here failed under load.)
    const ahead = new Date(Date.now() + 3_600_000);
    try {
      utimesSync(`${target}.lock`, ahead, ahead);
    } catch (e) {
      // Already taken over and released: the waiter did not wait at all.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    await waiting;
    expect(got).toBe(true);
    expect(readdirSync(join(tmp.path, 'k'))).toEqual([]);
  });

  it('processes racing to take over a dead holder’s lock still hold it one at a time', async () => {
    const path = join(tmp.path, 'race', 'log.jsonl');
    const holder = runNode(children.holder, [path]);
    await new Promise<void>((resolve) =>
      holder.stdout!.on('data', (d: Buffer) => d.includes('held') && resolve()),
    );
    // Four processes wait for it; when the holder dies they all find its owner gone at once.
    const procs = 4;
    const each = 10;
    const kids = Array.from({ length: procs }, (_, i) =>
      runNode(children.transactor, [path, `p${i}`, String(each)]),
    );
    await new Promise((r) => setTimeout(r, 300));
    holder.kill('SIGKILL');
    const results = await Promise.all(kids.map(exited));
    expect(results.every((r) => r.code === 0)).toBe(true);
    const events = new EventLog(path).read().events;
    // Dense sequence numbers: no two transactions ran at once (a lost race shows as a duplicate key).
    expect(events.map((e) => e.key)).toEqual(Array.from({ length: procs * each }, (_, i) => `seq:${i}`));
    expect(readdirSync(join(tmp.path, 'race'))).toEqual(['log.jsonl']);
  });

  it('takes over a lock whose pid now belongs to another process (pid reuse)', async () => {
    const target = join(tmp.path, 'r', 'log.jsonl');
    let mine: Record<string, unknown> = {};
    await withLock(target, () => {
      mine = JSON.parse(readFileSync(join(`${target}.lock`, 'owner'), 'utf8')) as Record<string, unknown>;
    });
    if (mine.start === undefined) return; // no /proc here: a start time cannot be read
    // This process's pid with another start time: the recorded process is gone, its pid reused.
    mkdirSync(`${target}.lock`);
    writeFileSync(join(`${target}.lock`, 'owner'), JSON.stringify({ ...mine, start: '1', token: 'old' }));
    await expect(withLock(target, () => 'taken')).resolves.toBe('taken');
  });

  it('waits for a lock without an owner record until it is stale, then takes it over', async () => {
    const target = join(tmp.path, 's', 'log.jsonl');
    mkdirSync(`${target}.lock`, { recursive: true }); // its maker died before writing the record
    let got = false;
    const waiting = withLock(target, () => (got = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toBe(false);
    const old = new Date(Date.now() - LOCK_OPTIONS.stale - 1_000);
    utimesSync(`${target}.lock`, old, old);
    await waiting;
    expect(got).toBe(true);
    expect(existsSync(`${target}.lock`)).toBe(false);
  });

  it('never takes over the lock of a process it cannot look at (another host), and says which lock to remove', async () => {
    const target = join(tmp.path, 'h', 'log.jsonl');
    mkdirSync(`${target}.lock`, { recursive: true });
    const foreign = { host: 'elsewhere', pid: 1, token: 't', since: '2026-01-01T00:00:00.000Z' };
    writeFileSync(join(`${target}.lock`, 'owner'), JSON.stringify(foreign));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(`${target}.lock`, old, old);
    vi.useFakeTimers({ toFake: ['setTimeout', 'hrtime'] });
    try {
      const waiting = withLock(target, () => 'taken');
      const failed = expect(waiting).rejects.toThrow(/pid 1 on elsewhere.*remove .*log\.jsonl\.lock/);
      await vi.advanceTimersByTimeAsync(LOCK_OPTIONS.waitMs + 1_000);
      await failed;
    } finally {
      vi.useRealTimers();
    }
    expect(JSON.parse(readFileSync(join(`${target}.lock`, 'owner'), 'utf8'))).toEqual(foreign);
  });
});

describe('incremental reads under the lock', () => {
  const e = (n: number) => event('x', `k${n}`, { n }, new Date(Date.UTC(2026, 0, 1, 0, 0, n)));

  it('reads what was appended since, and re-reads a file replaced or rewritten in place', async () => {
    const path = join(tmp.path, 'c', 'log.jsonl');
    const log = new EventLog(path, undefined, { incremental: true });
    const other = new EventLog(path);
    await other.append([e(1), e(2)]);
    expect(log.readLatest().events.map((x) => x.key)).toEqual(['k1', 'k2']);
    await other.append([e(3)]);
    const grown = log.readLatest();
    expect(grown.events.map((x) => x.key)).toEqual(['k1', 'k2', 'k3']);
    expect(log.readLatest()).toBe(grown);

    // Replaced by rename (a restore, a quarantine): a new file, read whole.
    const next = `${path}.next`;
    writeFileSync(next, [e(7), e(8)].map((x) => JSON.stringify(x)).join('\n') + '\n');
    renameSync(next, path);
    expect(log.readLatest().events.map((x) => x.key)).toEqual(['k7', 'k8']);

    // Rewritten in place with longer content: the bytes before the old end changed, read whole.
    writeFileSync(path, [e(4), e(5), e(6)].map((x) => JSON.stringify(x)).join('\n') + '\n');
    expect(log.readLatest().events.map((x) => x.key)).toEqual(['k4', 'k5', 'k6']);

    // Transactions see other writers' appends and never apply a key twice.
    await other.append([e(9)]);
    const { appended } = await log.transact(() => ({ append: [e(9), e(10), e(10)], result: undefined }));
    expect(appended.map((x) => x.key)).toEqual(['k10']);
    expect(log.readLatest().events.map((x) => x.key)).toEqual(['k4', 'k5', 'k6', 'k9', 'k10']);
    expect(new EventLog(path).read().events.map((x) => x.key)).toEqual(['k4', 'k5', 'k6', 'k9', 'k10']);

    // Its own redacted appends are taken in without reading them back; others' are read after them.
    await log.transact(() => ({ append: [e(11), e(12)], result: undefined }), { redacted: true });
    await other.append([e(13)]);
    const after = log.readLatest();
    expect(after.events.map((x) => x.key)).toEqual(['k4', 'k5', 'k6', 'k9', 'k10', 'k11', 'k12', 'k13']);
    expect(after.events).toEqual(new EventLog(path).read().events);
  });
});
