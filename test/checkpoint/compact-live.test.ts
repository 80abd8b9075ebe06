import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compact } from '../../src/checkpoint/compact.js';
import { compactLive } from '../../src/checkpoint/compact-live.js';
import { readRegistry } from '../../src/dispatch/logs/registry.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { totalSpend } from '../../src/dispatch/gates/spend.js';
import { leaderboard, ScoreLedger } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { EventLog, event, type StateEvent } from '../../src/state/event-log.js';
import { STATE_FILES, StateLayout, type StateFile } from '../../src/state/layout.js';
import { bundleFixture, job as gradingJob, spawnDrainer } from '../grading/helpers.js';
import { tempDir } from '../support/tmp.js';

/**
 * `school compact`: a school that runs on one machine compacts its live state directory as a
 * checkpoint compacts its copy — the same bytes — while what every reader folds stays the same,
 * and writers appending meanwhile lose nothing.
 */
const tmp = tempDir('school-compact-live-');
afterAll(() => tmp.cleanup());
const DAY = 86_400_000;
const NOW = Date.now();
const HORIZON = new Date(NOW - 14 * DAY);
const LOGS: StateFile[] = [
  'crews',
  'grading',
  'scores',
  'outbox',
  'spend',
  'school',
  'audit',
  'observations',
];

/** 60 days of a small school: 40 crews, their grades, scores, spend, outbox, beats and audit. */
async function school(root: string): Promise<StateLayout> {
  const layout = new StateLayout(root);
  const logs: Partial<Record<StateFile, StateEvent[]>> = {};
  const push = (f: StateFile, e: StateEvent) => (logs[f] ??= []).push(e);
  const audit: object[] = [];
  const observations: object[] = [];
  for (let i = 0; i < 40; i++) {
    const t = NOW - (60 - i * 1.5) * DAY;
    const at = (minutes: number) => new Date(t + minutes * 60_000);
    const crewId = `crew-${i}`;
    const issueNumber = 1 + (i % 5); // eight crews an issue: the registry keeps its last two
    const agent = ['ada', 'bob'][i % 2]!;
    push(
      'crews',
      event(
        'crew.planned',
        `planned:${crewId}`,
        {
          crewId,
          issueNumber,
          daemon: 'alpha',
          agent,
          weight: 'standard',
          fences: [],
          repair: false,
          attempt: 1,
        },
        at(0),
      ),
    );
    push(
      'crews',
      event(
        'lease.acquired',
        `lease:alpha/0:${crewId}`,
        {
          crewId,
          daemon: 'alpha',
          slot: 0,
          owner: { kind: 'local', host: 'h', pid: 1 },
          expiresAt: at(20).toISOString(),
        },
        at(1),
      ),
    );
    push(
      'crews',
      event(
        'crew.started',
        `started:${crewId}`,
        {
          crewId,
          daemon: 'alpha',
          slot: 0,
          worktree: `/w/${i}`,
          owner: { kind: 'local', host: 'h', pid: 1 },
        },
        at(1),
      ),
    );
    for (let n = 1; n <= 3; n++)
      push(
        'crews',
        event(
          'lease.heartbeat',
          `heartbeat:${crewId}:${n}`,
          { crewId, expiresAt: at(20 + n).toISOString() },
          at(n * 5),
        ),
      );
    push('crews', event('lease.released', `released:${crewId}`, { crewId, reason: 'done' }, at(30)));
    push(
      'crews',
      event(
        'crew.finished',
        `finished:${crewId}`,
        { crewId, issueNumber, outcome: 'succeeded', reason: '' },
        at(30),
      ),
    );
    push(
      'spend',
      event(
        'spend.recorded',
        `spend:${crewId}`,
        { crewId, issueNumber, agent, costUsd: 0.25, tokens: { input: 1000, output: 100 } },
        at(30),
      ),
    );
    const job = gradingJob(issueNumber, crewId, { agent });
    const { jobKey } = job;
    push('grading', event('job.enqueued', jobKey, job, at(31)));
    if (i % 10 === 9) continue; // still pending: its bookbag must stay
    const verdict = {
      accepted: i % 3 !== 0,
      decidedBy: 'reviewer',
      code: 'reviewer_approved',
      reasons: ['ok'],
      score: 0.8,
      findings: [],
    };
    push(
      'grading',
      event(
        'job.claimed',
        `claim:${jobKey}:1`,
        { jobKey, worker: 'w', attempt: 1, leaseUntil: at(40).toISOString() },
        at(32),
      ),
    );
    push('grading', event('job.graded', `graded:${jobKey}`, { jobKey, worker: 'w', verdict }, at(33)));
    push(
      'scores',
      event(
        'score.applied',
        `score:${crewId}`,
        {
          crewId,
          jobKey,
          agent,
          domain: 'general',
          difficulty: 2,
          accepted: verdict.accepted,
          score: 0.8,
          alpha: 0.3,
        },
        at(33),
      ),
    );
    const id = `outbox:${jobKey}:labels`;
    push(
      'outbox',
      event(
        'outbox.recorded',
        id,
        { id, jobKey, issueNumber, kind: 'labels', labels: ['school:accepted'] },
        at(33),
      ),
    );
    push('outbox', event('outbox.delivered', `delivered:${id}`, { id }, at(34)));
    push(
      'school',
      event(
        'roster.heartbeat',
        `heartbeat:alpha:${t}`,
        { daemon: 'alpha', observedClass: 'standard', freeDiskBytes: 1e10 },
        at(0),
      ),
    );
    audit.push({ type: 'dispatch.planned', at: at(0).toISOString(), planned: [crewId] });
    observations.push({ jobKey, at: at(33).toISOString(), accepted: verdict.accepted });
    mkdirSync(layout.bookbag(crewId), { recursive: true });
    writeFileSync(
      join(layout.bookbag(crewId), 'bookbag.json'),
      JSON.stringify({ crewId, timings: { finishedAt: at(30).toISOString() } }),
    );
  }
  mkdirSync(layout.bookbag('crew-9'), { recursive: true }); // pending job's bookbag (old)
  writeFileSync(
    join(layout.bookbag('crew-9'), 'bookbag.json'),
    JSON.stringify({ crewId: 'crew-9', timings: { finishedAt: new Date(NOW - 50 * DAY).toISOString() } }),
  );
  for (const [f, events] of Object.entries(logs))
    await new EventLog(layout.file(f as StateFile)).append(events);
  const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  // Issues 1–4 are open; issue 5 was closed: its history may go.
  writeFileSync(
    layout.file('curriculum'),
    jsonl([1, 2, 3, 4].map((number) => ({ number, title: `Issue ${number}` }))),
  );
  writeFileSync(layout.file('audit'), jsonl(audit));
  writeFileSync(layout.file('observations'), jsonl(observations));
  return layout;
}

/** What the readers fold, as the school sees it. */
function folded(layout: StateLayout) {
  const registry = readRegistry(layout);
  const queue = new GradingQueue(layout).state();
  return {
    active: Object.values(registry.crews).filter((c) => c.status !== 'finished'),
    latestPerIssue: Object.fromEntries(
      Object.values(registry.crews).map((c) => [c.issueNumber, registry.crews[c.crewId]!.status]),
    ),
    pending: Object.keys(queue.jobs)
      .filter((k) => queue.jobs[k]!.status === 'pending')
      .sort(),
    leaderboard: leaderboard(new ScoreLedger(layout).state()),
    spend: totalSpend(layout),
    roster: readSchool(layout).roster,
  };
}

describe('school compact: the live state directory compacted in place', () => {
  it('writes what a checkpoint would, keeps what the school folds, and removes only old unmentioned bookbags', async () => {
    const layout = await school(join(tmp.path, 'a'));
    const before = Object.fromEntries(
      LOGS.filter((f) => existsSync(layout.file(f))).map((f) => [f, readFileSync(layout.file(f))]),
    );
    const seen = folded(layout);
    const result = await compactLive(layout, HORIZON);
    expect(result.failed).toEqual([]);
    for (const f of LOGS) {
      const name = STATE_FILES[f];
      const files = new Map([
        [name, before[f]!],
        [STATE_FILES.curriculum, readFileSync(layout.file('curriculum'))],
      ]);
      const expected = compact(files, { horizon: HORIZON }).files.get(name)!;
      expect(readFileSync(layout.file(f)).equals(expected), name).toBe(true);
      expect(statSync(layout.file(f)).size, name).toBeLessThan(before[f]!.length);
    }
    expect(result.logs.map((l) => l.file).sort()).toEqual(LOGS.map((f) => STATE_FILES[f]).sort());
    const now = folded(layout);
    expect(now.active).toEqual(seen.active);
    expect(now.pending).toEqual(seen.pending);
    expect(now.leaderboard).toEqual(seen.leaderboard);
    expect(now.spend).toBeCloseTo(seen.spend, 9);
    expect(now.roster).toEqual(seen.roster);
    // Old bookbags go unless a kept event mentions their crew (crew-9's job is still pending,
    // though its issue was closed); an open issue keeps its last crews' (crew-35 of issue 1).
    expect(existsSync(layout.bookbag('crew-35'))).toBe(true);
    expect(result.bookbagsRemoved).toBeGreaterThan(0);
    expect(existsSync(layout.bookbag('crew-9'))).toBe(true);
    expect(existsSync(layout.bookbag('crew-38'))).toBe(true); // finished after the horizon
    expect(existsSync(layout.bookbag('crew-0'))).toBe(false);
    // A second run finds nothing more to fold.
    expect((await compactLive(layout, HORIZON)).logs).toEqual([]);
  });

  it('loses nothing a writer appends while it compacts (another OS process, under the log lock)', async () => {
    const layout = await school(join(tmp.path, 'b'));
    const script = await bundleFixture(tmp.path, join(import.meta.dirname, 'fixtures', 'appender.ts'));
    const child = spawnDrainer(script, { stateDir: layout.root, prefix: 'late', count: 150 });
    let rounds = 0;
    let finished = false;
    void child.done.then(() => (finished = true));
    while (!finished) {
      // Each round folds everything appended until now and replaces crews.jsonl, while the
      // appender's transactions wait for it or follow it (an append it missed would be lost).
      expect((await compactLive(layout, new Date())).failed).toEqual([]);
      rounds++;
      await new Promise((r) => setImmediate(r)); // let the child's exit be seen
    }
    const r = await child.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('DONE 150');
    expect(rounds).toBeGreaterThan(0);
    await compactLive(layout, new Date());
    const crews = readRegistry(layout).crews;
    for (let i = 0; i < 150; i++) expect(crews[`late-${i}`], `late-${i}`).toBeDefined();
  });
});
