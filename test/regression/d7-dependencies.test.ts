import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planStep } from '../../src/loop/steps.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { MAX_ORPHANINGS } from '../../src/dispatch/logs/history.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { createGitHubClient } from '../../src/github/client.js';
import { drainAndDeliver } from '../support/drain-and-deliver.js';
import { octokitPort } from '../../src/github/issues-port.js';
import { silentLogger } from '../../src/log.js';
import { git } from '../support/tmp.js';
import { GitHubFake } from '../support/github-fake.js';
import { crewsOnly, loop, makeSchool, writeIssues, type School } from './helpers.js';
import { FAKE_ORCA, orcaDaemon } from '../crew/orca-helpers.js';

/**
 * Dimension 7 — external dependencies fail: the Orca daemon dies under a crew, GitHub times out
 * while labels are written, and the worktree fleet is down so crews fall back to bots.
 */
let s: School | undefined;
afterEach(() => s?.cleanup());

describe('D7 external dependency failure', () => {
  it('N7.1 an Orca daemon that crashes under its crews: orphaned cleanly, worktree reset, never a student attempt, retries capped', async () => {
    s = makeSchool({ worktrees: 1 });
    // The fake Orca (test/fixtures/orca) dies with SIGKILL the moment it is asked to open a student's
    // terminal; an operator starts it again before each run.
    const userData = join(s.root, 'orca-ud');
    mkdirSync(userData);
    writeFileSync(join(userData, 'fake-faults.json'), JSON.stringify({ crashOn: 'terminal.create' }));
    const fake = (verb: string) =>
      execFileSync(process.execPath, [FAKE_ORCA, '__fake', verb], {
        env: { ...process.env, ORCA_USER_DATA_PATH: userData },
      });
    s.config.fleet.daemons = [
      orcaDaemon({
        binary: FAKE_ORCA,
        userDataPath: userData,
        callTimeoutSeconds: 20,
        waitSliceSeconds: 1,
        startTimeoutSeconds: 20,
      }),
    ];
    s.config.dispatch.minFreeDiskGiB = 0;
    const src = writeIssues(s, [{ number: 9, title: 'a', body: 'b' }]);
    const outcomes: string[] = [];
    try {
      for (let round = 0; round <= MAX_ORPHANINGS; round++) {
        fake('start');
        const r = await loop(s, src);
        outcomes.push(...r.runs.flatMap((x) => x.result.finished.map((f) => f.outcome)));
        // Each run is the student's first attempt again: an orphaning is not its failed run.
        expect(r.plan.assignments.every((a) => a.attempt === 1 && !a.repair)).toBe(true);
        if (round === MAX_ORPHANINGS) {
          expect(r.plan.assignments).toHaveLength(0);
          expect(r.plan.refused).toEqual([
            expect.objectContaining({ issue: 9, code: 'stopped-after-orphanings' }),
          ]);
        }
      }
    } finally {
      fake('stop');
    }
    // MAX_ORPHANINGS runs, all orphaned (nothing graded), then no more (the dead daemon does not loop the issue).
    expect(outcomes).toEqual(Array(MAX_ORPHANINGS).fill('aborted'));
    const reg = readCrewState(s.layout).registry;
    expect(Object.keys(reg.leases)).toEqual([]);
    expect(Object.values(reg.crews).every((c) => c.status === 'finished')).toBe(true);
    for (const c of Object.values(reg.crews)) {
      expect(c.reason).toMatch(/^interrupted: .*Orca/);
      expect(c.orphaned).toBe(true);
    }
    const slot = join(s.layout.root, '..', 'worktrees', 'd1', 'slot-0');
    expect(git(slot, 'status', '--porcelain', '--ignored')).toBe('');
  }, 120_000);

  it('N7.2 GitHub failing during label writes never blocks a grade; the label is delivered once later', async () => {
    s = makeSchool({ worktrees: 1 });
    s.config.dispatch.minFreeDiskGiB = 0;
    await crewsOnly(s, writeIssues(s, [{ number: 1, title: 'a', body: 'b' }]));
    const fake = new GitHubFake();
    fake.addIssue({ title: 'a' });
    fake.faults.push({ path: /labels/, kind: 502, times: 1000 });
    const client = createGitHubClient({
      token: 'test-token',
      fetch: fake.fetch,
      retryAfterBaseValue: 1,
      rateLimitRetries: 1,
    });
    const github = octokitPort(client, `${fake.owner}/${fake.repo}`);
    const down = await drainAndDeliver({ config: s.config, layout: s.layout, logger: silentLogger, github });
    expect(down.accepted).toBe(1);
    expect(down.outboxPending).toBeGreaterThan(0);
    expect(fake.issues.get(1)!.labels).toEqual([]);
    fake.faults.length = 0;
    const up = await drainAndDeliver({ config: s.config, layout: s.layout, logger: silentLogger, github });
    expect(up.snapshot).toBe(0); // nothing re-graded
    expect(up.outboxPending).toBe(0);
    expect(fake.issues.get(1)!.labels).toEqual([s.config.grading.labels.accepted]);
    const again = await drainAndDeliver({ config: s.config, layout: s.layout, logger: silentLogger, github });
    expect(again.outboxDelivered).toBe(0);
    expect(
      fake.requests.filter((r) => r.method === 'POST' && /labels/.test(r.path) && r.status < 300),
    ).toHaveLength(1);
  }, 90_000);

  it('N7.3 with the worktree fleet offline, coding crews fall back to bots only up to maxFallbacks per cycle', async () => {
    s = makeSchool({
      daemons: [
        { id: 'w1', worktrees: 4 },
        { id: 'b1', worktrees: 4, classroom: 'bot' },
      ],
    });
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.dispatch.maxCrews = 8;
    s.config.dispatch.maxFallbacks = 2;
    const src = writeIssues(
      s,
      [1, 2, 3, 4, 5].map((n) => ({ number: n, title: `t${n}`, body: 'b' })),
    );
    await fetchCurriculum({ layout: s.layout, config: s.config, source: src, logger: silentLogger });
    // Only the bot daemon reports in: w1 (the worktree daemon) is down.
    const r = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['b1'] });
    expect(r.assignments).toHaveLength(2);
    expect(r.assignments.every((a) => a.daemon === 'b1')).toBe(true);
    expect(r.refused.filter((x) => x.code === 'fallback-limit')).toHaveLength(3);
    expect(existsSync(s.layout.file('crews'))).toBe(true);
  });
});
