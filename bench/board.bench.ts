/**
 * The board at scale: `school status` builds its view (src/board/view.ts) over a state directory
 * with 10,000 curriculum issues and 62,000 events — 8,000 crews (planned, lease acquired,
 * started, lease released, finished: 40,000 events), 6,000 grading jobs (enqueued, claimed,
 * graded: 18,000) and 4,000 scores — written once with the real event shapes.
 *
 * Each round restores those logs to their written size and times these builds of the view:
 * - cold: no persisted fold (views/board-fold.json removed): every log folded from the start,
 *   and the persisted fold written;
 * - warm: the persisted fold of the cold build, then APPENDED crews run their whole life (planned,
 *   started, finished, graded, scored: 900 events, about 190 KiB) appended to the logs: only those
 *   are parsed and folded. Goal: ≤ 200 ms;
 * - the cold and the warm build again, each in a new Node process (bench/board-build.ts), as the
 *   CLI runs it: no JIT warm-up, a fresh heap (only the build is timed); the warm one twice: the
 *   whole view (`school status --json`, `school report`) and the abridged view `school status`
 *   builds (LISTED_ITEMS per lane, no timeline bars). Goal for the abridged one: ≤ 200 ms;
 * - warm past the limit: more than TAIL_LIMIT bytes appended since the persisted fold was written:
 *   the appended part is folded and the persisted fold rewritten.
 * After each warm build the same logs are folded from scratch (not timed) and the two views must be
 * byte-for-byte equal, or the round fails. Baseline, same round: reading and JSON-parsing the logs
 * and nothing else, the floor any view folded from scratch pays.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { TAIL_LIMIT } from '../src/board/board-fold.js';
import { LISTED_ITEMS } from '../src/board/model.js';
import { buildView, type SchoolView } from '../src/board/view.js';
import { parseConfig } from '../src/config/load.js';
import { event, type StateEvent } from '../src/state/event-log.js';
import { StateLayout, STATE_FILES, VIEW_FILES } from '../src/state/layout.js';
import type { Bench, BenchFigure } from './types.js';

const ISSUES = 10_000;
const CREWS = 8_000;
const JOBS = 6_000;
const SCORES = 4_000;
const NOW = new Date('2026-06-01T12:00:00.000Z');
const AGENTS = ['ada', 'bob', 'cy', 'dee'];
const DAEMONS = ['alpha', 'beta', 'gamma'];
const at = (minutesAgo: number) => new Date(NOW.getTime() - minutesAgo * 60_000);

/** The school's configuration (also used by bench/board-build.ts in its own process). */
export function benchConfig(stateDir: string) {
  return parseConfig({
    stateDir,
    fleet: { daemons: DAEMONS.map((id) => ({ id, worktrees: 8 })) },
    agents: AGENTS.map((id) => ({ id, command: ['node', `${id}.mjs`] })),
  });
}

export const BENCH_NOW = NOW;

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
  const { crews, grading, scores } = crewLives(0, CREWS, (i) => 1 + ((i * 7) % ISSUES));
  writeFileSync(join(dir, STATE_FILES.crews), jsonl(crews));
  writeFileSync(join(dir, STATE_FILES.grading), jsonl(grading));
  writeFileSync(join(dir, STATE_FILES.scores), jsonl(scores));
  return crews.length + grading.length + scores.length;
}

/**
 * Crews `from`..`to`-1, each on `issueOf(i)`: planned, leased, started, released, finished; the
 * first JOBS of all crews graded (enqueued, claimed, graded) and the first SCORES scored.
 */
function crewLives(from: number, to: number, issueOf: (i: number) => number) {
  const crews: StateEvent[] = [];
  const grading: StateEvent[] = [];
  const scores: StateEvent[] = [];
  const owner = { kind: 'local', host: 'bench', pid: 1 };
  for (let i = from; i < to; i++) {
    const issue = issueOf(i);
    const crewId = `crew-${i}`;
    const daemon = DAEMONS[i % 3]!;
    const agent = AGENTS[i % 4]!;
    // Crews past CREWS are the ones appended in a round: recent, on issues no crew has had yet.
    const t = i < CREWS ? CREWS - i : 1 + ((i - CREWS) % 20);
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
    if (i < JOBS || i >= CREWS) {
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
      if (i < SCORES || i >= CREWS) {
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
  return { crews, grading, scores };
}

let events = 0;
let written: Record<'crews' | 'grading' | 'scores', number>;
/** Crews whose whole life is appended before the warm build (9 events each). */
const APPENDED = 100;
/** Crews appended before the build past TAIL_LIMIT. */
const PAST_LIMIT = 600;

/** Appends the lives of crews `from`..`to`-1 to the logs; returns the bytes appended. */
function append(from: number, to: number): number {
  const lives = crewLives(from, to, (i) => 1 + ((i * 7) % ISSUES));
  let bytes = 0;
  for (const f of ['crews', 'grading', 'scores'] as const) {
    const text = jsonl(lives[f]);
    appendFileSync(layout.file(f), text);
    bytes += Buffer.byteLength(text);
  }
  return bytes;
}

function timed<T>(fn: () => T): { value: T; ms: number } {
  const t = performance.now();
  const value = fn();
  return { value, ms: performance.now() - t };
}

/**
 * buildView in a new Node process, as `school status` runs it: no JIT warm-up, a fresh heap. Only
 * the build is timed (bench/board-build.ts), not starting Node or loading modules.
 */
function buildInNewProcess(stateDir: string, abridged = false): number {
  const script = fileURLToPath(new URL('./board-build.ts', import.meta.url));
  const args = ['--import', 'tsx', script, stateDir, ...(abridged ? ['abridged'] : [])];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench/board-build.ts failed: ${r.stderr}`);
  const { ms, placed } = JSON.parse(r.stdout) as { ms: number; placed: number };
  if (placed !== ISSUES) throw new Error(`the board placed ${placed} issues in a new process`);
  return ms;
}

/** Times `fn` alone; its result is kept as JSON only (not timed). */
function timedJson(fn: () => unknown): { value: string; ms: number } {
  const { value, ms } = timed(fn);
  return { value: JSON.stringify(value), ms };
}

export const benchmarks: Bench[] = [
  {
    name: 'board view, 10k issues',
    async setup() {
      root = mkdtempSync(join(tmpdir(), 'school-bench-board-'));
      layout = new StateLayout(join(root, 'state'));
      events = writeSchool(layout.root);
      written = {
        crews: statSync(layout.file('crews')).size,
        grading: statSync(layout.file('grading')).size,
        scores: statSync(layout.file('scores')).size,
      };
    },
    async teardown() {
      if (root) rmSync(root, { recursive: true, force: true });
    },
    async run(): Promise<BenchFigure[]> {
      const config = benchConfig(layout.root);
      const persisted = layout.view(VIEW_FILES.boardFold);
      const build = () => buildView(layout, config, NOW);
      /** The view folded from scratch (not timed) must equal `view` byte for byte. */
      const sameAsScratch = (view: string, what: string) => {
        rmSync(persisted, { force: true });
        if (JSON.stringify(build()) !== view) {
          throw new Error(`the ${what} view differs from the view folded from scratch`);
        }
      };
      for (const [f, size] of Object.entries(written)) truncateSync(layout.file(f as 'crews'), size);

      const t = performance.now();
      for (const f of ['curriculum', 'crews', 'grading', 'scores'] as const) {
        const text = readFileSync(layout.file(f), 'utf8');
        for (const line of text.split('\n')) if (line) JSON.parse(line);
      }
      const parseMs = performance.now() - t;

      rmSync(persisted, { force: true });
      const freshCold = buildInNewProcess(layout.root);
      rmSync(persisted, { force: true });
      // Each view is checked and dropped before the next build: a `school status` holds one.
      const cold = timed(() => {
        const view = build();
        const placed = view.lanes.reduce((n, l) => n + l.count, 0);
        if (placed !== ISSUES) throw new Error(`the board placed ${placed} issues, expected ${ISSUES}`);
      });

      const appendedBytes = append(CREWS, CREWS + APPENDED);
      // Below TAIL_LIMIT nothing is rewritten: the new process and this one fold the same tail.
      const fresh = buildInNewProcess(layout.root);
      const freshAbridged = buildInNewProcess(layout.root, true);
      const warm = timedJson(build);
      sameAsScratch(warm.value, 'warm');
      const appendedCrews = (JSON.parse(warm.value) as SchoolView).lanes
        .flatMap((l) => l.items)
        .filter((i) => Number(i.crewId?.slice('crew-'.length)) >= CREWS).length;
      if (appendedCrews !== APPENDED) {
        throw new Error('the warm view does not show the appended crews');
      }

      const pastBytes = append(CREWS + APPENDED, CREWS + APPENDED + PAST_LIMIT);
      if (pastBytes < TAIL_LIMIT) throw new Error(`appended ${pastBytes} bytes, not past ${TAIL_LIMIT}`);
      const past = timedJson(build);
      sameAsScratch(past.value, 'past-the-limit');

      const scale = `${ISSUES / 1000}k issues, ${Math.round(events / 1000)}k events`;
      const baseline = { label: 'read + JSON.parse of the logs', value: parseMs };
      return [
        {
          figure: `board view cold (no persisted fold): ${scale}`,
          value: cold.ms,
          unit: 'ms',
          baseline,
          goal: 'honest: folds every log, writes the persisted fold',
        },
        {
          figure: `board view warm: persisted fold + ${APPENDED * 9} events (${Math.round(appendedBytes / 1024)} KiB) appended`,
          value: warm.ms,
          unit: 'ms',
          baseline,
          goal: '≤ 200 ms',
          target: { op: '<=', value: 200 },
        },
        {
          figure: 'board view cold, in a new process',
          value: freshCold,
          unit: 'ms',
          baseline,
        },
        {
          figure: 'board view warm, in a new process, whole view (`school status --json`, the report)',
          value: fresh,
          unit: 'ms',
          baseline,
        },
        {
          figure: `board view warm, in a new process, abridged to ${LISTED_ITEMS} items per lane (as \`school status\` runs it)`,
          value: freshAbridged,
          unit: 'ms',
          baseline,
          goal: '≤ 200 ms',
          target: { op: '<=', value: 200 },
        },
        {
          figure: `board view warm past the limit: ${PAST_LIMIT * 9} events (${Math.round(pastBytes / 1024)} KiB) appended, persisted fold rewritten`,
          value: past.ms,
          unit: 'ms',
          baseline,
        },
      ];
    },
  },
];
