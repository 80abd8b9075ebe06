import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compact } from '../../src/checkpoint/compact.js';
import { parseLog, serializeLog, unionLogs, type ParsedLog } from '../../src/checkpoint/logs.js';
import { EventLog, event, type StateEvent } from '../../src/state/event-log.js';
import { foldLog, type LogFold } from '../../src/state/fold.js';

/** A queue fold with the grading queue's contract: graded jobs are history, others are live. */
interface Q {
  jobs: Record<string, { status: string; crewId: string; attempts: number }>;
}
const queue: LogFold<Q, StateEvent> = {
  file: 'grading',
  empty: () => ({ jobs: {} }),
  apply(s, e) {
    const d = e.data as { jobKey: string; crewId?: string };
    const j = s.jobs[d.jobKey];
    if (e.type === 'job.enqueued' && !j)
      s.jobs[d.jobKey] = { status: 'pending', crewId: d.crewId ?? '', attempts: 0 };
    else if (j && e.type === 'job.failed') j.attempts++;
    else if (j && e.type === 'job.dead_lettered') j.status = 'dead_letter';
    else if (j && e.type === 'job.graded') j.status = 'graded';
    return s;
  },
  prune: (s) => ({
    jobs: Object.fromEntries(Object.entries(s.jobs).filter(([, j]) => j.status !== 'graded')),
  }),
};
const folds = new Map([['grading.jsonl', queue as LogFold<unknown, StateEvent>]]);
const NOW = new Date('2026-06-01T00:00:00.000Z');
const HORIZON = new Date(NOW.getTime() - 14 * 86_400_000);
const daysAgo = (d: number, ms = 0) => new Date(NOW.getTime() - d * 86_400_000 + ms);
const jsonl = (records: unknown[]) => Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');

function history(jobs: number): StateEvent[] {
  const out: StateEvent[] = [];
  for (let i = 0; i < jobs; i++) {
    const jobKey = `grade:${i}:crew-${i}`;
    const age = 40 - (i % 40);
    out.push(event('job.enqueued', jobKey, { jobKey, crewId: `crew-${i}` }, daysAgo(age, i)));
    if (i % 3 === 0) out.push(event('job.graded', `graded:${jobKey}`, { jobKey }, daysAgo(age, i + 1)));
    if (i % 3 === 1) {
      out.push(event('job.failed', `failed:${jobKey}:1`, { jobKey }, daysAgo(age, i + 2)));
      out.push(event('job.dead_lettered', `dead:${jobKey}:0`, { jobKey }, daysAgo(age, i + 3)));
    }
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

describe('compaction (docs/architecture.md: the checkpoint grows with the active set)', () => {
  it('folds old events into $snapshot, keeps every key, keeps live jobs, keeps recent events verbatim', () => {
    const events = history(120);
    const { files, compacted } = compact(new Map([['grading.jsonl', jsonl(events)]]), {
      horizon: HORIZON,
      folds,
    });
    const log = parseLog(files.get('grading.jsonl')!, 'test');
    const old = events.filter((e) => e.at < HORIZON.toISOString());
    expect(compacted['grading.jsonl']).toEqual({ folded: old.length, dropped: 0 });
    expect(log.snapshot!.data.keys).toEqual(old.map((e) => e.key));
    expect(log.records).toEqual(events.filter((e) => e.at >= HORIZON.toISOString()));
    const state = log.snapshot!.data.state as Q;
    expect(Object.values(state.jobs).some((j) => j.status === 'graded')).toBe(false);
    expect(Object.values(state.jobs).some((j) => j.status === 'dead_letter')).toBe(true);

    // The live set is exactly what a full fold keeps after pruning.
    const full = queue.prune(foldLog(queue, { events }), HORIZON);
    const fromCompacted = queue.prune(
      foldLog(queue, { snapshot: log.snapshot, events: log.records as unknown as StateEvent[] }),
      HORIZON,
    );
    expect(fromCompacted).toEqual(full);
  });

  it('a replayed old event stays a no-op after compaction and restore', async () => {
    const events = history(30);
    const { files } = compact(new Map([['grading.jsonl', jsonl(events)]]), { horizon: HORIZON, folds });
    const path = join(mkdtempSync(join(tmpdir(), 'school-ckpt-cmp-')), 'grading.jsonl');
    writeFileSync(path, files.get('grading.jsonl')!);
    const log = new EventLog(path);
    expect(await log.append([events[0]!])).toEqual([]);
    expect(
      await log.append([event('job.enqueued', 'grade:999:crew-999', { jobKey: 'grade:999:crew-999' })]),
    ).toHaveLength(1);
  });

  it('compacting again extends the snapshot instead of starting over', () => {
    const first = compact(new Map([['grading.jsonl', jsonl(history(60))]]), { horizon: HORIZON, folds });
    const later = new Date(HORIZON.getTime() + 7 * 86_400_000);
    const second = compact(first.files, { horizon: later, folds });
    const a = parseLog(first.files.get('grading.jsonl')!, 'a');
    const b = parseLog(second.files.get('grading.jsonl')!, 'b');
    expect(b.snapshot!.data.keys.slice(0, a.snapshot!.data.keys.length)).toEqual(a.snapshot!.data.keys);
    expect(b.snapshot!.data.events).toBe(a.snapshot!.data.events + second.compacted['grading.jsonl']!.folded);
  });

  it('keeps only the window of the audit log, and keeps unfolded event logs whole', () => {
    const audit = [
      { at: daysAgo(30).toISOString(), type: 'run', actor: 'x' },
      { at: daysAgo(1).toISOString(), type: 'run', actor: 'y' },
      { type: 'undated', actor: 'z' },
    ];
    const spend = [event('spend.recorded', 's1', { costUsd: 1 }, daysAgo(90))];
    const r = compact(
      new Map([
        ['events.jsonl', jsonl(audit)],
        ['spend.jsonl', jsonl(spend)],
      ]),
      { horizon: HORIZON, folds },
    );
    expect(parseLog(r.files.get('events.jsonl')!, 'a').records).toEqual(audit.slice(1));
    expect(r.compacted['events.jsonl']).toEqual({ folded: 0, dropped: 1 });
    expect(r.files.get('spend.jsonl')!.equals(jsonl(spend))).toBe(true);
    expect(r.unfolded).toEqual(['spend.jsonl']);
  });

  it('drops old bookbags nothing refers to, keeps those of live jobs and recent ones', () => {
    const bag = (crew: string, days: number) =>
      Buffer.from(JSON.stringify({ crewId: crew, timings: { finishedAt: daysAgo(days).toISOString() } }));
    const events = [
      event(
        'job.enqueued',
        'grade:1:crew-live',
        { jobKey: 'grade:1:crew-live', crewId: 'crew-live' },
        daysAgo(30),
      ),
      event(
        'job.enqueued',
        'grade:2:crew-done',
        { jobKey: 'grade:2:crew-done', crewId: 'crew-done' },
        daysAgo(30),
      ),
      event('job.graded', 'graded:grade:2:crew-done', { jobKey: 'grade:2:crew-done' }, daysAgo(29)),
    ];
    const files = new Map([
      ['grading.jsonl', jsonl(events)],
      ['bookbags/crew-live/bookbag.json', bag('crew-live', 30)],
      ['bookbags/crew-done/bookbag.json', bag('crew-done', 29)],
      ['bookbags/crew-done/diff.patch', Buffer.from('+x\n')],
      ['bookbags/crew-new/bookbag.json', bag('crew-new', 1)],
      ['bookbags/crew-odd/report.md', Buffer.from('no record: age unknown')],
    ]);
    const r = compact(files, { horizon: HORIZON, folds });
    expect([...r.files.keys()].filter((p) => p.startsWith('bookbags/')).sort()).toEqual([
      'bookbags/crew-live/bookbag.json',
      'bookbags/crew-new/bookbag.json',
      'bookbags/crew-odd/report.md',
    ]);
    expect(r.compacted['bookbags/']).toEqual({ folded: 0, dropped: 1 });
  });
});

describe('union of two writers’ logs', () => {
  it('dedups by key, orders by at then key, and merges $snapshot keys', () => {
    const e = (key: string, at: string) => ({ key, type: 't', at, data: {} });
    const a: ParsedLog = {
      snapshot: {
        key: '$snapshot',
        type: '$snapshot',
        at: 'x',
        data: { keys: ['k0', 'k1'], state: { n: 2 }, events: 2 },
      },
      records: [e('k2', '2026-01-02'), e('a3', '2026-01-03')],
    };
    const b: ParsedLog = {
      snapshot: {
        key: '$snapshot',
        type: '$snapshot',
        at: 'x',
        data: { keys: ['k0'], state: { n: 1 }, events: 1 },
      },
      records: [e('k1', '2026-01-01'), e('k2', '2026-01-02'), e('b3', '2026-01-03'), e('b4', '2026-01-04')],
    };
    const report = { divergentKeys: 0 };
    const u = unionLogs(a, b, report);
    expect(u.snapshot!.data).toEqual({ keys: ['k0', 'k1'], state: { n: 2 }, events: 2 });
    expect(u.records.map((r) => r.key)).toEqual(['k2', 'a3', 'b3', 'b4']);
    expect(report.divergentKeys).toBe(0);
    expect(serializeLog(unionLogs(u, u)).equals(serializeLog(u))).toBe(true);
  });

  it('never loses a key either side holds, never duplicates one, whatever the interleaving', () => {
    const rec = fc.record({
      key: fc.constantFrom(...'abcdefghij'.split('')),
      day: fc.integer({ min: 1, max: 9 }),
    });
    fc.assert(
      fc.property(fc.array(rec, { maxLength: 15 }), fc.array(rec, { maxLength: 15 }), (xs, ys) => {
        const toLog = (rs: typeof xs): ParsedLog => ({
          records: rs.map((r) => ({ key: r.key, type: 't', at: `2026-01-0${r.day}`, data: {} })),
        });
        const u = unionLogs(toLog(xs), toLog(ys));
        const keys = u.records.map((r) => r.key);
        expect(new Set(keys)).toEqual(new Set([...xs, ...ys].map((r) => r.key)));
        expect(keys.length).toBe(new Set(keys).size);
      }),
      { numRuns: 300 },
    );
  });
});
