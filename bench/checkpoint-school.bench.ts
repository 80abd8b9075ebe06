/**
 * checkpoint-state over a whole school's year, not only its grading log: every event log the
 * school keeps, written with the real event shapes and folded by the real folds.
 *
 * Per crew (CREWS over a year, newest last): `crew.planned`, `lease.acquired`, `crew.started`,
 * BEATS `lease.heartbeat`s (a half-hour crew on a 15-minute lease beats every 5 minutes),
 * `lease.released`, `crew.finished`; a `spend.recorded` per agent turn (a correction turn for one
 * crew in five); its grading job (`job.enqueued`, `job.claimed`, `job.graded`), its score, and its
 * outbox entries (labels and comment, and a delivery when accepted) recorded and delivered. The
 * roster: a heartbeat per daemon every 10 minutes all year (`school.jsonl`). Saved once (which
 * compacts it); each round restores into an empty directory, saves unchanged, appends one more
 * crew's life and saves. The figure: checkpoint size ÷ (active set + window) over all logs, and
 * how much of the checkpoint is dedup keys.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { BranchSource } from '../src/checkpoint/branch-source.js';
import { parseLog } from '../src/checkpoint/logs.js';
import { restoreCheckpoint } from '../src/checkpoint/restore.js';
import { saveCheckpoint } from '../src/checkpoint/save.js';
import '../src/checkpoint/folds.js';
import { EventLog, event, type StateEvent } from '../src/state/event-log.js';
import { STATE_FILES, type StateFile } from '../src/state/layout.js';
import { job as gradingJob } from '../test/grading/helpers.js';
import { initBareRemote, tempDir } from '../test/support/tmp.js';
import type { Bench, BenchFigure } from './types.js';

const DAY = 86_400_000;
const CREWS = Number(process.env.SCHOOL_BENCH_SCHOOL_CREWS ?? 10_000);
const BEATS = 6;
const DAEMONS = ['alpha', 'beta'];
const AGENTS = ['ada', 'bob', 'cy'];
const COMPACT_AFTER_DAYS = 14;
const LOGS = [
  'crews',
  'grading',
  'scores',
  'spend',
  'outbox',
  'school',
] as const satisfies readonly StateFile[];
type Logs = Record<(typeof LOGS)[number], StateEvent[]>;

/** The life of crew `i`, starting at `t` (ms). */
function crewLife(out: Logs, i: number, t: number): void {
  const crewId = `crew-${i}-${(i * 2654435761) % 1e6}`;
  const issueNumber = 1 + (i % 2000);
  const daemon = DAEMONS[i % DAEMONS.length]!;
  const agent = AGENTS[i % AGENTS.length]!;
  const slot = i % 4;
  const at = (minutes: number) => new Date(t + minutes * 60_000);
  const owner = { kind: 'actions', host: `runner-${daemon}`, pid: 4000 + slot };
  const lease = (minutes: number) => at(minutes + 15).toISOString();
  out.crews.push(
    event(
      'crew.planned',
      `planned:${crewId}`,
      { crewId, issueNumber, daemon, agent, weight: 'standard', fences: [], repair: false, attempt: 1 },
      at(0),
    ),
    event(
      'lease.acquired',
      `lease:${daemon}/${slot}:${crewId}`,
      { crewId, daemon, slot, owner, expiresAt: lease(1) },
      at(1),
    ),
    event(
      'crew.started',
      `started:${crewId}`,
      { crewId, daemon, slot, worktree: `/w/${crewId}`, owner },
      at(1),
    ),
  );
  for (let n = 1; n <= BEATS; n++) {
    out.crews.push(
      event(
        'lease.heartbeat',
        `heartbeat:${crewId}:${n}`,
        { crewId, expiresAt: lease(1 + 5 * n) },
        at(1 + 5 * n),
      ),
    );
  }
  const accepted = i % 3 !== 0;
  out.crews.push(
    event('lease.released', `released:${crewId}`, { crewId, reason: 'done' }, at(32)),
    event(
      'crew.finished',
      `finished:${crewId}`,
      { crewId, issueNumber, outcome: 'succeeded', reason: '' },
      at(32),
    ),
  );
  const who = { crewId, issueNumber, agent };
  const spend = (key: string, minutes: number) =>
    event(
      'spend.recorded',
      `spend:${key}`,
      { ...who, costUsd: 0.42, tokens: { input: 120_000, output: 9_000 } },
      at(minutes),
    );
  out.spend.push(spend(crewId, 31));
  if (i % 5 === 0) out.spend.push(spend(`${crewId}:turn-1`, 31));
  const verdict = {
    accepted,
    decidedBy: 'reviewer',
    code: accepted ? 'reviewer_approved' : 'reviewer_rejected',
    reasons: [accepted ? 'the change does what the issue asks' : 'the tests miss the edge case'],
    score: accepted ? 0.9 : 0.2,
    findings: [],
  };
  const job = gradingJob(issueNumber, crewId, { agent });
  const { jobKey } = job;
  out.grading.push(
    event('job.enqueued', jobKey, job, at(33)),
    event(
      'job.claimed',
      `claim:${jobKey}:1`,
      { jobKey, worker: 'w', attempt: 1, leaseUntil: at(43).toISOString() },
      at(34),
    ),
    event('job.graded', `graded:${jobKey}`, { jobKey, worker: 'w', verdict }, at(35)),
  );
  out.scores.push(
    event(
      'score.applied',
      `score:${crewId}`,
      { crewId, jobKey, agent, domain: 'general', difficulty: 2, accepted, score: verdict.score, alpha: 0.3 },
      at(35),
    ),
  );
  const entries = [
    {
      id: `outbox:${jobKey}:labels`,
      jobKey,
      issueNumber,
      kind: 'labels',
      labels: [accepted ? 'school:accepted' : 'school:rejected'],
    },
    {
      id: `outbox:${jobKey}:comment`,
      jobKey,
      issueNumber,
      kind: 'comment',
      body: `<!-- school-core:${jobKey} -->\n**school-core grade**`,
    },
    ...(accepted
      ? [{ id: `outbox:${jobKey}:delivery`, jobKey, issueNumber, kind: 'delivery', crewId, verdict }]
      : []),
  ];
  for (const e of entries) {
    out.outbox.push(event('outbox.recorded', e.id, e, at(35)));
    const result =
      e.kind === 'delivery'
        ? { result: { branch: `school/${issueNumber}`, sha: 'a'.repeat(40), updated: true } }
        : {};
    out.outbox.push(event('outbox.delivered', `delivered:${e.id}`, { id: e.id, ...result }, at(36)));
  }
}

function schoolYear(now: number): Logs {
  const out: Logs = { crews: [], grading: [], scores: [], spend: [], outbox: [], school: [] };
  const start = now - 365 * DAY;
  for (let i = 0; i < CREWS; i++) crewLife(out, i, start + Math.floor((i / CREWS) * 365 * DAY));
  for (let t = start; t < now; t += 10 * 60_000) {
    for (const daemon of DAEMONS) {
      out.school.push(
        event(
          'roster.heartbeat',
          `heartbeat:${daemon}:${t}:${(t / 60_000) % 997}`,
          { daemon, observedClass: 'standard', freeDiskBytes: 80e9 },
          new Date(t),
        ),
      );
    }
  }
  return out;
}

interface Fixture {
  bare: string;
  root: string;
  rawBytes: number;
  round: number;
}
let fixture: Fixture | undefined;
const tmp = tempDir('school-bench-ckpt-school-');
process.on('exit', () => tmp.cleanup());

async function setup(): Promise<Fixture> {
  if (fixture) return fixture;
  const root = join(tmp.path, 'school');
  const { bare } = initBareRemote(root);
  const state = join(root, 'history');
  const logs = schoolYear(Date.now());
  let rawBytes = 0;
  for (const name of LOGS) {
    await new EventLog(join(state, STATE_FILES[name])).append(logs[name]);
    rawBytes += statSync(join(state, STATE_FILES[name])).size;
  }
  await saveCheckpoint({
    stateDir: state,
    sources: [new BranchSource({ remote: bare })],
    compactAfterDays: COMPACT_AFTER_DAYS,
  });
  fixture = { bare, root, rawBytes, round: 0 };
  return fixture;
}

export const benchmarks: Bench[] = [
  {
    name: `checkpoint, a school's year (${CREWS / 1000}k crews, every log)`,
    async run(): Promise<BenchFigure[]> {
      const f = await setup();
      const stateDir = join(f.root, `round-${f.round++}`);
      const sources = [new BranchSource({ remote: f.bare })];
      let t = performance.now();
      await restoreCheckpoint({ stateDir, sources });
      const restoreMs = performance.now() - t;
      t = performance.now();
      const same = await saveCheckpoint({ stateDir, sources, compactAfterDays: COMPACT_AFTER_DAYS });
      const unchangedMs = performance.now() - t;
      const one: Logs = { crews: [], grading: [], scores: [], spend: [], outbox: [], school: [] };
      crewLife(one, CREWS + f.round, Date.now() - 40 * 60_000);
      for (const name of LOGS) await new EventLog(join(stateDir, STATE_FILES[name])).append(one[name]);
      t = performance.now();
      const saved = await saveCheckpoint({ stateDir, sources, compactAfterDays: COMPACT_AFTER_DAYS });
      const saveMs = performance.now() - t;

      let keys = 0;
      let active = 0;
      let window = 0;
      const perLog: string[] = [];
      for (const name of LOGS) {
        const data = saved.snapshot.files.get(STATE_FILES[name]);
        if (!data) continue;
        const parsed = parseLog(data, 'bench');
        const k = Buffer.byteLength(JSON.stringify(parsed.snapshot?.data.keys ?? []));
        keys += k;
        active += Buffer.byteLength(JSON.stringify(parsed.snapshot?.data.state ?? {}));
        window += parsed.records.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)) + 1, 0);
        perLog.push(`${name} ${Math.round(data.length / 1024)} KiB (keys ${Math.round(k / 1024)})`);
      }
      const total = [...saved.snapshot.files.values()].reduce((n, b) => n + b.length, 0);
      const ratio = total / (active + window);
      const kib = (n: number) => n / 1024;
      const label = `${CREWS / 1000}k crews`;
      return [
        {
          figure: `school year ${label}: restore`,
          value: restoreMs,
          unit: 'ms',
          goal: '≤ 2000 ms',
          met: restoreMs <= 2000,
        },
        {
          figure: `school year ${label}: save after one crew's life`,
          value: saveMs,
          unit: 'ms',
          goal: '≤ 2000 ms',
          met: saveMs <= 2000,
        },
        {
          figure: `school year ${label}: save of an unchanged state`,
          value: unchangedMs,
          unit: 'ms',
          goal: '≤ 500 ms',
          met: unchangedMs <= 500,
          ...(same.unchanged ? {} : { note: 'the save after the restore was a full save' }),
        },
        {
          figure: `school year ${label}: checkpoint size (raw logs ${(f.rawBytes / 1048576).toFixed(1)} MiB)`,
          value: kib(total),
          unit: 'KiB',
          baseline: { label: 'active set + window', value: kib(active + window) },
          note: perLog.join('; '),
        },
        { figure: `  of which dedup keys, ${label}`, value: kib(keys), unit: 'KiB' },
        {
          figure: `school year ${label}: checkpoint ÷ (active set + window)`,
          value: ratio,
          unit: '×',
          goal: '≤ 2×',
          met: ratio <= 2,
        },
      ];
    },
  },
];
