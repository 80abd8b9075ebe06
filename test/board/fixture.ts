import { writeFileSync, mkdirSync } from 'node:fs';
import { vi } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import type { CrewEvent, CrewOutcome, LeaseOwner } from '../../src/schemas/crew.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { jobKey, type GradingEvent } from '../../src/schemas/grading.js';
import { EventLog, event, type StateEvent } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';

/**
 * A known school written with the real event writers and shapes: crews through EventLog with the
 * CrewEvent types, grading jobs through enqueueGradingJob, the rest as the events their logs hold.
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
  const clean = { bidi: 0, tag: 0, zeroWidth: 0, nul: 0, control: 0, surrogate: 0 };
  return {
    number,
    title,
    body: 'body',
    labels: [],
    url: `https://github.invalid/o/r/issues/${number}`,
    updatedAt: at(600).toISOString(),
    domain: number % 2 ? 'web' : 'cli',
    difficulty: (number % 3) + 1,
    role: 'coding',
    fences: [],
    priority: 2,
    size: 30,
    weight: 'standard',
    sanitized: { title: clean, body: clean },
    fingerprint: `fp${number}`,
  };
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

  async grading(
    type: string,
    issue: number,
    crewId: string,
    minutesAgo: number,
    data: Record<string, unknown>,
  ): Promise<void> {
    const key = jobKey(issue, crewId);
    await new EventLog<GradingEvent>(this.layout.file('grading')).append([
      event(type, `${type}:${key}:${minutesAgo}`, { jobKey: key, ...data }, at(minutesAgo)),
    ]);
  }

  async score(
    crewId: string,
    agent: string,
    domain: string,
    difficulty: number,
    value: number,
    accepted: boolean,
    minutesAgo: number,
  ): Promise<void> {
    await new EventLog<StateEvent>(this.layout.file('scores')).append([
      event(
        'score.applied',
        `score:${crewId}`,
        { crewId, agent, domain, difficulty, score: value, accepted },
        at(minutesAgo),
      ),
    ]);
  }

  async school(type: string, key: string, data: Record<string, unknown>, minutesAgo: number): Promise<void> {
    await new EventLog<StateEvent>(this.layout.file('school')).append([
      event(type, key, data, at(minutesAgo)),
    ]);
  }

  async spend(key: string, costUsd: number, minutesAgo: number): Promise<void> {
    await new EventLog<StateEvent>(this.layout.file('spend')).append([
      event('spend.recorded', key, { costUsd }, at(minutesAgo)),
    ]);
  }
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
  w.curriculum(
    Array.from({ length: 12 }, (_, i) => curriculumItem(i + 1, titles[i + 1] ?? `Issue number ${i + 1}`)),
  );

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
  await w.grading('job.claimed', 5, 'c5-00000005', 110, {
    worker: 'g1',
    attempt: 1,
    leaseUntil: at(100).toISOString(),
  });
  await w.grading('job.graded', 5, 'c5-00000005', 108, {
    verdict: { accepted: true, reasons: ['all judges passed'] },
  });
  await w.grading('job.claimed', 6, 'c6-00000006', 107, {
    worker: 'g1',
    attempt: 1,
    leaseUntil: at(100).toISOString(),
  });
  await w.grading('job.graded', 6, 'c6-00000006', 105, {
    verdict: { accepted: true, reasons: ['all judges passed'] },
  });
  await w.grading('job.claimed', 7, 'c7-00000007', 104, {
    worker: 'g1',
    attempt: 1,
    leaseUntil: at(90).toISOString(),
  });
  await w.grading('job.graded', 7, 'c7-00000007', 100, {
    verdict: { accepted: false, reasons: ['diff touches files outside the fences'] },
  });
  for (let attempt = 1; attempt <= 3; attempt++) {
    await w.grading('job.claimed', 8, 'c8-00000008', 100 - attempt * 10, {
      worker: 'g2',
      attempt,
      leaseUntil: at(50).toISOString(),
    });
    await w.grading('job.failed', 8, 'c8-00000008', 98 - attempt * 10, {
      attempt,
      error: `reviewer crashed (attempt ${attempt})`,
    });
  }
  await w.grading('job.dead_lettered', 8, 'c8-00000008', 67, { error: 'reviewer crashed (attempt 3)' });

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

  await w.school('school.paused', 'paused:1', { reason: 'usage limit reported by crew c11-0000000d' }, 25);
  await w.school('school.paused', 'paused:0', { reason: 'operator: disk maintenance' }, 400);
  await w.school('school.pause-cleared', 'cleared:0', {}, 380);
  await w.school(
    'roster.heartbeat',
    'hb:alpha:1',
    { daemon: 'alpha', observedClass: 'standard', freeDiskBytes: 50e9 },
    3,
  );
  await w.school(
    'roster.heartbeat',
    'hb:beta:1',
    { daemon: 'beta', observedClass: 'light', freeDiskBytes: 20e9 },
    60,
  );

  await w.spend('spend:c5', 1.25, 215);
  await w.spend('spend:c6', 2, 190);
  await w.spend('spend:c7', 1.25, 150);

  await w.score('c5-00000005', 'ada', 'web', 3, 0.9, true, 108);
  await w.score('c6-00000006', 'bob', 'cli', 1, 0.8, true, 105);
  await w.score('c7-00000007', 'bob', 'web', 2, 0.2, false, 100);
  return { layout, config };
}
