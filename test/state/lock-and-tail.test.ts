import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventLog, event } from '../../src/state/event-log.js';
import { LOCK_OPTIONS, tryLock, withLock } from '../../src/state/lock.js';
import { tempDir } from '../support/tmp.js';

const tmp = tempDir('school-lock-tail-');
afterAll(() => tmp.cleanup());

describe('withLock waiters', () => {
  it('serializes holders, and a waiter leaves no place in line behind', async () => {
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
    expect(readdirSync(`${target}.queue.lock`)).toEqual([]);
    expect(existsSync(`${target}.lock`)).toBe(false);
  });

  it('is not blocked forever by the place in line of a waiter that died', async () => {
    const target = join(tmp.path, 'b', 'log.jsonl');
    mkdirSync(`${target}.queue.lock`, { recursive: true });
    // A stale ticket (removed by whoever sees it) and a fresh one whose process is gone.
    writeFileSync(join(`${target}.queue.lock`, `${'0'.padStart(15, '0')}-1-dead`), '');
    writeFileSync(join(`${target}.queue.lock`, `${String(Date.now()).padStart(15, '0')}-2-gone`), '');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = withLock(target, () => held);
    await new Promise((r) => setTimeout(r, 20));
    const second = withLock(target, () => 'got it');
    setTimeout(release, 30);
    await first;
    await expect(second).resolves.toBe('got it');
    expect(readdirSync(`${target}.queue.lock`).some((n) => n.endsWith('-dead'))).toBe(false);
  });
});

describe('tryLock', () => {
  it('takes a free lock at once, refuses a held one, and takes over one left stale by a dead holder', async () => {
    const target = join(tmp.path, 't', 'log.jsonl');
    const first = tryLock(target)!;
    expect(first).toBeDefined();
    expect(tryLock(target)).toBeUndefined();
    // withLock and tryLock exclude each other: the waiter gets it once the holder releases.
    let got = false;
    const waiting = withLock(target, () => (got = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(got).toBe(false);
    first.release();
    await waiting;
    expect(got).toBe(true);
    expect(existsSync(`${target}.lock`)).toBe(false);

    // A lock directory whose mtime stopped moving (its holder was SIGKILLed) is stale after LOCK_OPTIONS.stale.
    mkdirSync(`${target}.lock`);
    expect(tryLock(target)).toBeUndefined();
    const old = new Date(Date.now() - LOCK_OPTIONS.stale - 1_000);
    utimesSync(`${target}.lock`, old, old);
    const taken = tryLock(target)!;
    expect(taken).toBeDefined();
    expect(taken.compromised()).toBeUndefined();
    taken.release();
    expect(existsSync(`${target}.lock`)).toBe(false);
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
