/**
 * The board at scale: `school status` builds its view (src/board/view.ts) over a state directory
 * with 10,000 curriculum issues and 62,000 events — 8,000 crews (planned, lease acquired,
 * started, lease released, finished: 40,000 events), 6,000 grading jobs (enqueued, claimed,
 * graded: 18,000) and 4,000 scores — written once with the real event shapes. Each round builds
 * the view from the files. Baseline, same round: reading and JSON-parsing those logs and nothing
 * else, the floor any view over them pays. Goal: ≤ 200 ms.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildView } from '../src/board/view.js';
import { parseConfig } from '../src/config/load.js';
import { event, type StateEvent } from '../src/state/event-log.js';
import { StateLayout, STATE_FILES } from '../src/state/layout.js';
import type { Bench, BenchFigure } from './types.js';

const ISSUES = 10_000;
const CREWS = 8_000;
const JOBS = 6_000;
const SCORES = 4_000;
const NOW = new Date('2026-06-01T12:00:00.000Z');
const AGENTS = ['ada', 'bob', 'cy', 'dee'];
const DAEMONS = ['alpha', 'beta', 'gamma'];
const at = (minutesAgo: number) => new Date(NOW.getTime() - minutesAgo * 60_000);

let root: string | undefined;
let layout: StateLayout;

function jsonl(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

function writeSchool(dir: string): number {
  mkdirSync(dir, { recursive: true });
  const clean = { bidi: 0, tag: 0, zeroWidth: 0, nul: 0, control: 0, surrogate: 0 };
  const curriculum = Array.from({ length: ISSUES }, (_, i) => ({
    number: i + 1,
    title: `Issue ${i + 1}: make the widget handle case ${i % 97}`,
    body: 'body',
    labels: [],
    url: `https://github.invalid/o/r/issues/${i + 1}`,
    updatedAt: at(100_000).toISOString(),
    domain: ['web', 'cli', 'api'][i % 3],
    difficulty: (i % 3) + 1,
    role: 'coding',
    fences: [],
    priority: 2,
    size: 30,
    weight: 'standard',
    sanitized: { title: clean, body: clean },
    fingerprint: `fp${i}`,
  }));
  writeFileSync(join(dir, STATE_FILES.curriculum), jsonl(curriculum));
  const crews: StateEvent[] = [];
  const grading: StateEvent[] = [];
  const scores: StateEvent[] = [];
  const owner = { kind: 'local', host: 'bench', pid: 1 };
  for (let i = 0; i < CREWS; i++) {
    const issue = 1 + ((i * 7) % ISSUES);
    const crewId = `crew-${i}`;
    const daemon = DAEMONS[i % 3]!;
    const agent = AGENTS[i % 4]!;
    const t = CREWS - i;
    const slot = i % 8;
    crews.push(
      event(
        'crew.planned',
        `planned:${crewId}`,
        {
          crewId,
          issueNumber: issue,
          daemon,
          agent,
          weight: 'standard',
          fences: [],
          repair: false,
          attempt: 1,
        },
        at(t + 30),
      ),
      event(
        'lease.acquired',
        `lease:${daemon}/${slot}:${crewId}`,
        {
          crewId,
          daemon,
          slot,
          owner,
          expiresAt: at(t).toISOString(),
        },
        at(t + 29),
      ),
      event(
        'crew.started',
        `started:${crewId}`,
        { crewId, daemon, slot, worktree: `/tmp/wt/${crewId}`, owner },
        at(t + 29),
      ),
      event('lease.released', `released:${crewId}`, { crewId, reason: 'done' }, at(t + 1)),
      event(
        'crew.finished',
        `finished:${crewId}`,
        {
          crewId,
          issueNumber: issue,
          outcome: i % 10 === 0 ? 'failed' : 'succeeded',
          reason: i % 10 === 0 ? 'tests failed' : '',
        },
        at(t + 1),
      ),
    );
    if (i < JOBS) {
      const jobKey = `grade:${issue}:${crewId}`;
      const accepted = i % 4 !== 0;
      grading.push(
        event(
          'job.enqueued',
          jobKey,
          {
            jobKey,
            issueNumber: issue,
            crewId,
            agent,
            domain: ['web', 'cli', 'api'][issue % 3],
            difficulty: (issue % 3) + 1,
            fences: [],
            bookbag: `bookbags/${crewId}`,
          },
          at(t),
        ),
        event(
          'job.claimed',
          `claim:${jobKey}:1`,
          { jobKey, worker: 'w', attempt: 1, leaseUntil: at(t - 5).toISOString() },
          at(t),
        ),
        event(
          'job.graded',
          `graded:${jobKey}`,
          {
            jobKey,
            worker: 'w',
            verdict: {
              accepted,
              decidedBy: 'reviewer',
              code: accepted ? 'reviewer_approved' : 'reviewer_rejected',
              reasons: [accepted ? 'looks right' : 'misses the edge case'],
              score: accepted ? 0.9 : 0.2,
              findings: [],
            },
          },
          at(t - 1),
        ),
      );
      if (i < SCORES) {
        scores.push(
          event(
            'score.applied',
            `score:${crewId}`,
            {
              crewId,
              jobKey,
              agent,
              domain: ['web', 'cli', 'api'][issue % 3],
              difficulty: (issue % 3) + 1,
              accepted,
              score: accepted ? 0.9 : 0.2,
              alpha: 0.3,
            },
            at(t - 1),
          ),
        );
      }
    }
  }
  writeFileSync(join(dir, STATE_FILES.crews), jsonl(crews));
  writeFileSync(join(dir, STATE_FILES.grading), jsonl(grading));
  writeFileSync(join(dir, STATE_FILES.scores), jsonl(scores));
  return crews.length + grading.length + scores.length;
}

let events = 0;

export const benchmarks: Bench[] = [
  {
    name: 'board view, 10k issues',
    async setup() {
      root = mkdtempSync(join(tmpdir(), 'school-bench-board-'));
      layout = new StateLayout(join(root, 'state'));
      events = writeSchool(layout.root);
    },
    async teardown() {
      if (root) rmSync(root, { recursive: true, force: true });
    },
    async run(): Promise<BenchFigure[]> {
      const config = parseConfig({
        stateDir: layout.root,
        fleet: { daemons: DAEMONS.map((id) => ({ id, worktrees: 8 })) },
        agents: AGENTS.map((id) => ({ id, command: ['node', `${id}.mjs`] })),
      });
      let t = performance.now();
      for (const f of ['curriculum', 'crews', 'grading', 'scores'] as const) {
        const text = readFileSync(layout.file(f), 'utf8');
        for (const line of text.split('\n')) if (line) JSON.parse(line);
      }
      const parseMs = performance.now() - t;
      t = performance.now();
      const view = buildView(layout, config, NOW);
      const ms = performance.now() - t;
      const placed = view.lanes.reduce((n, l) => n + l.count, 0);
      if (placed !== ISSUES) throw new Error(`the board placed ${placed} issues, expected ${ISSUES}`);
      return [
        {
          figure: `board view: ${ISSUES / 1000}k issues, ${Math.round(events / 1000)}k events`,
          value: ms,
          unit: 'ms',
          baseline: { label: 'read + JSON.parse of the logs', value: parseMs },
          goal: '≤ 200 ms',
          target: { op: '<=', value: 200 },
        },
      ];
    },
  },
];
