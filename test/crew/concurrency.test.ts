import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonl } from '../../src/state/jsonl.js';
import {
  item,
  makeSchool,
  nodeFixture,
  plan,
  registry,
  spec,
  writeCurriculum,
  type School,
} from './helpers.js';

let school: School | undefined;
afterEach(() => school?.cleanup());

type Ev = { key: string; type: string; data: { crewId: string; daemon?: string; slot?: number } };

describe('concurrent dispatcher processes (N6.2, N2.1)', () => {
  it('5 processes racing over 8 crews on K=2 slots never share a slot nor run an issue twice', async () => {
    const t = (school = makeSchool({ worktrees: 2, ledger: true }));
    const ledger = t.ledger;
    writeFileSync(ledger, '');
    const issues = [1, 2, 3, 4, 5, 6];
    writeCurriculum(
      t,
      issues.map((n) => item(n)),
    );
    // Issues 1 and 2 were planned twice (as if two planners raced): only one crew of each may run.
    const crews = [
      ...issues.map((n) => ({ crewId: `c${n}-a`, issue: n })),
      { crewId: 'c1-b', issue: 1 },
      { crewId: 'c2-b', issue: 2 },
    ];
    await plan(t, crews);
    const template = join(t.root, 'template.json');
    writeFileSync(template, JSON.stringify({ ...(await spec(t, 'x')), crewId: undefined }));
    const argv = await nodeFixture('dispatcher.ts');
    const procs = Array.from({ length: 5 }, () => {
      const child = spawn(argv[0]!, [...argv.slice(1), template, ...crews.map((c) => c.crewId)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      return new Promise<{ code: number | null; ran: string[] }>((resolve) =>
        child.once('exit', (code) => resolve({ code, ran: out ? JSON.parse(out).ran : [] })),
      );
    });
    const results = await Promise.all(procs);
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
    // Every issue ran exactly once, whoever ran it.
    const runs = readFileSync(ledger, 'utf8')
      .trim()
      .split('\n')
      .map((l) => Number(l.split(' ')[0]));
    expect(runs.sort((a, b) => a - b)).toEqual(issues);
    // Replay the log: a slot is acquired only when free, and never by two crews at once.
    const held = new Map<string, string>();
    for (const e of readJsonl<Ev>(t.layout.file('crews')).records) {
      if (e.type === 'lease.acquired') {
        const id = `${e.data.daemon}/${e.data.slot}`;
        expect(held.get(id), `slot ${id} taken by ${e.data.crewId} while held`).toBeUndefined();
        held.set(id, e.data.crewId);
      }
      if (e.type === 'lease.released') for (const [id, c] of held) if (c === e.data.crewId) held.delete(id);
    }
    expect(held.size).toBe(0);
    const reg = registry(t);
    const started = Object.values(reg.crews).filter((c) => c.outcome === 'succeeded');
    expect(started).toHaveLength(6);
    expect(new Set(started.map((c) => c.issueNumber)).size).toBe(6);
    // One of each pair of twins was cancelled without ever starting.
    const cancelled = Object.values(reg.crews).filter((c) => c.outcome === 'cancelled');
    expect(cancelled.map((c) => c.issueNumber).sort()).toEqual([1, 2]);
    expect(cancelled.every((c) => c.startedAt === undefined)).toBe(true);
    expect(results.flatMap((r) => r.ran).sort()).toEqual(started.map((c) => c.crewId).sort());
  });
});
