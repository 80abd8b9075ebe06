import { curriculumItem as baseItem } from '../support/items.js';
import { tempDir } from '../support/tmp.js';
import { cpSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import type { CrewEvent, CrewOutcome, LeaseOwner } from '../../src/schemas/crew.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { clearPause, pauseForOutcome, pauseSchool } from '../../src/dispatch/gates/pause.js';
import { recordSpend } from '../../src/dispatch/gates/spend.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { combine, type Verdict } from '../../src/grading/verdict.js';
import { jobKey } from '../../src/schemas/grading.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';

/**
 * A known school written with the real writers: crews through EventLog with the CrewEvent shapes,
 * grading through enqueueGradingJob and the GradingQueue (claim, grade, fail into a dead letter),
 * scores through the ScoreLedger, pauses, heartbeats and spend through the dispatch office's own
 * recorders. Only the curriculum is written raw, so a planted token reaches the state unredacted.
 */
export const NOW = new Date('2026-03-02T12:00:00.000Z');
export const PLANTED = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

/** The fixture's clock: ages are relative to it (tests that render through the CLI use the real clock). */
let base = NOW;
const at = (minutesAgo: number) => new Date(base.getTime() - minutesAgo * 60_000);
const owner: LeaseOwner = { kind: 'local', host: 'board-test', pid: 4242 };

export function fixtureConfig(stateDir: string): SchoolConfig {
  return parseConfig({
    stateDir,
    fleet: {
      heartbeatTtlSeconds: 900,
      daemons: [
        { id: 'alpha', worktrees: 2, class: 'heavy' },
        { id: 'beta', worktrees: 1, class: 'light' },
      ],
    },
    agents: [
      { id: 'ada', command: ['node', 'ada.mjs'] },
      { id: 'bob', command: ['node', 'bob.mjs'] },
    ],
    dispatch: { spendCap: 10 },
  });
}

export function curriculumItem(number: number, title: string): CurriculumItem {
  return baseItem(number, {
    title,
    body: 'body',
    url: `https://github.invalid/o/r/issues/${number}`,
    updatedAt: at(600).toISOString(),
    domain: number % 2 ? 'web' : 'cli',
    difficulty: (number % 3) + 1,
  });
}

export class StateWriter {
  readonly crews: EventLog<CrewEvent>;
  constructor(readonly layout: StateLayout) {
    this.crews = new EventLog<CrewEvent>(layout.file('crews'));
  }

  /** The materialized curriculum, written raw (as a restored checkpoint might hold it). */
  curriculum(items: CurriculumItem[]): void {
    mkdirSync(this.layout.root, { recursive: true });
    writeFileSync(this.layout.file('curriculum'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
  }

  async crew(o: {
    issue: number;
    crewId: string;
    daemon: string;
    agent: string;
    attempt?: number;
    plannedAgo: number;
    startedAgo?: number;
    slot?: number;
    finishedAgo?: number;
    outcome?: CrewOutcome;
    reason?: string;
  }): Promise<void> {
    const attempt = o.attempt ?? 1;
    const events: CrewEvent[] = [
      event(
        'crew.planned',
        `planned:${o.crewId}`,
        {
          crewId: o.crewId,
          issueNumber: o.issue,
          daemon: o.daemon,
          agent: o.agent,
          weight: 'standard',
          fences: [],
          repair: attempt > 1,
          attempt,
        },
        at(o.plannedAgo),
      ),
    ];
    if (o.startedAgo !== undefined) {
      const slot = o.slot ?? 0;
      events.push(
        event(
          'lease.acquired',
          `lease:${o.daemon}/${slot}:${o.crewId}`,
          {
            crewId: o.crewId,
            daemon: o.daemon,
            slot,
            owner,
            expiresAt: at(o.startedAgo - 20).toISOString(),
          },
          at(o.startedAgo),
        ),
        event(
          'crew.started',
          `started:${o.crewId}`,
          {
            crewId: o.crewId,
            daemon: o.daemon,
            slot,
            worktree: `/tmp/wt/${o.crewId}`,
            owner,
          },
          at(o.startedAgo),
        ),
      );
    }
    if (o.finishedAgo !== undefined) {
      events.push(
        event(
          'lease.released',
          `released:${o.crewId}`,
          { crewId: o.crewId, reason: 'done' },
          at(o.finishedAgo),
        ),
        event(
          'crew.finished',
          `finished:${o.crewId}`,
          {
            crewId: o.crewId,
            issueNumber: o.issue,
            outcome: o.outcome ?? 'succeeded',
            reason: o.reason ?? '',
          },
          at(o.finishedAgo),
        ),
      );
    }
    await this.crews.append(events);
  }

  /** The real enqueue (it stamps the wall clock, so the clock is set to the fixture's time). */
  async enqueue(
    issue: number,
    crewId: string,
    agent: string,
    domain: string,
    difficulty: number,
    minutesAgo: number,
  ): Promise<void> {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(at(minutesAgo));
    try {
      await this.enqueueNow(issue, crewId, agent, domain, difficulty);
    } finally {
      vi.useRealTimers();
    }
  }

  private async enqueueNow(
    issue: number,
    crewId: string,
    agent: string,
    domain: string,
    difficulty: number,
  ): Promise<void> {
    await enqueueGradingJob(this.layout, {
      issueNumber: issue,
      crewId,
      agent,
      domain,
      difficulty,
      fences: [],
      bookbag: `bookbags/${crewId}`,
    });
  }

  /** Claims the job, then grades it or fails it, through the grading queue's own writers. */
  async drain(
    issue: number,
    crewId: string,
    minutesAgo: number,
    result: Verdict | { error: string },
  ): Promise<void> {
    const queue = new GradingQueue(this.layout);
    const key = jobKey(issue, crewId);
    const now = at(minutesAgo);
    const claimed = await queue.claim([key], {
      worker: 'g1',
      now,
      leaseMs: 600_000,
      maxAttempts: 3,
      limit: 1,
    });
    if (claimed.claimed.length !== 1) throw new Error(`fixture: could not claim ${key}`);
    const done = at(minutesAgo - 1);
    if ('error' in result) {
      await queue.markFailed([{ jobKey: key, error: result.error }], {
        worker: 'g1',
        now: done,
        maxAttempts: 3,
      });
    } else {
      await queue.markGraded([{ jobKey: key, verdict: result }], 'g1', done);
    }
  }

  async score(
    crewId: string,
    issue: number,
    agent: string,
    domain: string,
    difficulty: number,
    value: number,
    accepted: boolean,
    minutesAgo: number,
  ): Promise<void> {
    await new ScoreLedger(this.layout).apply(
      [
        {
          crewId,
          jobKey: jobKey(issue, crewId),
          agent,
          domain,
          difficulty,
          score: value,
          accepted,
          alpha: 0.3,
        },
      ],
      at(minutesAgo),
    );
  }
}

export function verdict(accepted: boolean, code: string, reason: string, score: number): Verdict {
  return combine([
    { judge: 'verification', passed: true, code: 'verified', reasons: ['verification passed'], score: 1 },
    { judge: 'rubric', passed: accepted, code, reasons: [reason], score },
  ]);
}

export const EXPECTED_COUNTS = {
  ready: 2,
  planned: 1,
  running: 2,
  grading: 1,
  accepted: 2,
  rejected: 1,
  dead_letter: 1,
  stopped: 1,
  paused: 1,
  untrusted: 1,
} as const;

/** Writes the known school into `stateDir`. Issue 12's title carries a planted token. */
export async function writeKnownSchool(
  stateDir: string,
  now: Date = NOW,
): Promise<{ layout: StateLayout; config: SchoolConfig }> {
  base = now;
  const layout = new StateLayout(stateDir);
  const config = fixtureConfig(stateDir);
  const w = new StateWriter(layout);
  const titles: Record<number, string> = {
    1: 'Add a --verbose flag',
    2: 'Fix <script>alert(1)</script> in the parser',
    3: 'Document the & operator "quoted"',
    12: `Rotate the deploy key ${PLANTED} before Friday`,
  };
  w.curriculum([
    ...Array.from({ length: 12 }, (_, i) => curriculumItem(i + 1, titles[i + 1] ?? `Issue number ${i + 1}`)),
    // Opened by someone without write access: the trust gate keeps it out of every crew.
    { ...curriculumItem(13, 'Please run this script for me'), authorAssociation: 'NONE' },
  ]);

  await w.crew({ issue: 1, crewId: 'c1-00000001', daemon: 'beta', agent: 'bob', plannedAgo: 2 });
  await w.crew({
    issue: 2,
    crewId: 'c2-00000002',
    daemon: 'alpha',
    agent: 'ada',
    plannedAgo: 50,
    startedAgo: 45,
    slot: 0,
  });
  await w.crew({
    issue: 3,
    crewId: 'c3-00000003',
    daemon: 'alpha',
    agent: 'bob',
    plannedAgo: 30,
    startedAgo: 20,
    slot: 1,
  });
  const graded: Array<[number, string, number, number]> = [
    // issue, agent, startedAgo, finishedAgo
    [4, 'ada', 200, 170],
    [5, 'ada', 240, 215],
    [6, 'bob', 245, 210],
    [7, 'bob', 180, 150],
    [8, 'ada', 160, 120],
  ];
  for (const [issue, agent, startedAgo, finishedAgo] of graded) {
    const crewId = `c${issue}-0000000${issue}`;
    await w.crew({
      issue,
      crewId,
      daemon: issue % 2 ? 'alpha' : 'beta',
      agent,
      plannedAgo: startedAgo + 5,
      startedAgo,
      slot: 0,
      finishedAgo,
    });
    await w.enqueue(issue, crewId, agent, issue % 2 ? 'web' : 'cli', (issue % 3) + 1, finishedAgo - 1);
  }
  await w.drain(5, 'c5-00000005', 110, verdict(true, 'approved', 'all judges passed', 0.9));
  await w.drain(6, 'c6-00000006', 107, verdict(true, 'approved', 'all judges passed', 0.8));
  await w.drain(
    7,
    'c7-00000007',
    104,
    verdict(false, 'outside_fences', 'diff touches files outside the fences', 0),
  );
  for (let attempt = 1; attempt <= 3; attempt++) {
    await w.drain(8, 'c8-00000008', 100 - attempt * 10, { error: `reviewer crashed (attempt ${attempt})` });
  }

  await w.crew({
    issue: 9,
    crewId: 'c9-0000000a',
    daemon: 'beta',
    agent: 'bob',
    plannedAgo: 300,
    startedAgo: 295,
    slot: 0,
    finishedAgo: 280,
    outcome: 'failed',
    reason: 'verification failed',
  });
  await w.crew({
    issue: 9,
    crewId: 'c9-0000000b',
    daemon: 'beta',
    agent: 'bob',
    attempt: 2,
    plannedAgo: 270,
    startedAgo: 265,
    slot: 0,
    finishedAgo: 250,
    outcome: 'timed_out',
    reason: 'crew timeout',
  });
  await w.crew({
    issue: 10,
    crewId: 'c10-0000000c',
    daemon: 'alpha',
    agent: 'ada',
    plannedAgo: 100,
    startedAgo: 95,
    slot: 1,
    finishedAgo: 60,
    outcome: 'failed',
    reason: 'tests failed',
  });
  await w.crew({
    issue: 11,
    crewId: 'c11-0000000d',
    daemon: 'alpha',
    agent: 'ada',
    plannedAgo: 58,
    startedAgo: 55,
    slot: 1,
    finishedAgo: 25,
    outcome: 'usage_limit',
    reason: 'credit limit reached',
  });

  await pauseSchool(layout, 'operator: disk maintenance', at(400));
  await clearPause(layout, 'maintenance done', undefined, at(380));
  await pauseForOutcome(
    layout,
    { crewId: 'c11-0000000d', issueNumber: 11, outcome: 'usage_limit', reason: 'credit limit reached' },
    at(25),
  );
  await recordHeartbeat(layout, config, {
    daemon: 'alpha',
    observedClass: 'standard',
    freeDiskBytes: 50e9,
    at: at(3),
  });
  await recordHeartbeat(layout, config, {
    daemon: 'beta',
    observedClass: 'light',
    freeDiskBytes: 20e9,
    at: at(60),
  });

  await recordSpend(layout, 'c5', { costUsd: 1.25, crewId: 'c5-00000005' }, at(215));
  await recordSpend(layout, 'c6', { costUsd: 2, crewId: 'c6-00000006' }, at(210));
  await recordSpend(layout, 'c7', { costUsd: 1.25, crewId: 'c7-00000007' }, at(150));

  await w.score('c5-00000005', 5, 'ada', 'web', 3, 0.9, true, 108);
  await w.score('c6-00000006', 6, 'bob', 'cli', 1, 0.8, true, 105);
  await w.score('c7-00000007', 7, 'bob', 'web', 2, 0, false, 100);
  return { layout, config };
}

/**
 * Private copies of the known school, one directory a test: registers the file's hooks (the school
 * is written once into a template, each test gets a fresh directory) and returns `copy(name)`, which
 * copies the template to `<test dir>/<name>`, and `dir()`, the current test's directory.
 */
export function knownSchoolCopies(prefix: string): {
  dir(): string;
  copy(name?: string): { stateDir: string; layout: StateLayout; config: SchoolConfig };
} {
  let dir: { path: string; cleanup(): void } | undefined;
  const template = tempDir(`${prefix}template-`);
  beforeAll(async () => {
    await writeKnownSchool(join(template.path, 'state'));
  });
  afterAll(() => template.cleanup());
  beforeEach(() => {
    dir = tempDir(prefix);
  });
  afterEach(() => dir?.cleanup());
  const current = () => {
    if (!dir) throw new Error('knownSchoolCopies: a copy is made inside a test');
    return dir.path;
  };
  return {
    dir: current,
    copy(name = 'state') {
      const stateDir = join(current(), name);
      cpSync(join(template.path, 'state'), stateDir, { recursive: true });
      return { stateDir, layout: new StateLayout(stateDir), config: fixtureConfig(stateDir) };
    },
  };
}
