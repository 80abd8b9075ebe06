import { describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { schoolAlerts } from '../../src/board/alerts.js';
import { loadView } from '../../src/board/load.js';
import { renderTerminal } from '../../src/board/terminal.js';
import { readFeedback } from '../../src/feedback/log.js';
import { memoryLogger } from '../../src/log.js';
import { dispatchJob } from '../../src/loop/dispatch-job.js';
import { GitHubFake } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';
import { deliveredIssue, schoolOnDisk } from '../support/planned-school.js';
import { serveForFile } from '../support/github-server.js';

/**
 * Failed CI through the plan job (dispatch-crew `mode: plan` with a token, as the action runs it):
 * the feedback scan before planning reruns a failed check once and compares it with the base, so a
 * check red on the base or green on its rerun plans no revision crew and is an alert on the board
 * (`school status`), while a check red on its rerun and green on the base plans one as before.
 * GitHub is the fake behind a loopback server named by GITHUB_API_URL.
 */
const tmp = tempDir('school-ci-plan-');
const fake = new GitHubFake({ now: () => new Date() });
const server = serveForFile(fake, { tmp, unstubEnv: true });

let schools = 0;
/** A school with one issue delivered as a pull request whose head is `head` and base `base`. */
async function school(head: string, base: string) {
  const { configPath, layout, config } = schoolOnDisk(join(tmp.path, `school-${++schools}`), [
    'fleet: { daemons: [{ id: d1, worktrees: 1 }] }',
    'agents: [{ id: alpha, command: [node, a.mjs] }]',
  ]);
  const n = fake.addIssue({ title: `Add helper ${schools}` }).number;
  const pr = fake.openPull({ head: `school/issue-${n}`, headSha: head, baseSha: base });
  fake.refs.set('heads/main', base); // the base branch's head: its checks are the base's
  const crewId = await deliveredIssue({ config, layout }, { issue: n, pr, sha: head });
  let warnings: string[] = [];
  const plan = async () => {
    vi.stubEnv('GITHUB_API_URL', server.url);
    const logger = memoryLogger();
    const r = await dispatchJob(
      { mode: 'plan', config: configPath, dryRun: false, token: 'test-token' },
      logger,
    );
    warnings = logger.lines.filter((l) => l.level === 'warning').map((l) => l.message);
    if (r.result.mode !== 'plan') throw new Error('expected a plan');
    return r.result;
  };
  const alerts = () => schoolAlerts(layout).map((a) => [a.kind, a.issue]);
  const status = () => renderTerminal(loadView({ config: configPath }).view);
  return { n, pr, crewId, layout, plan, alerts, status, warnings: () => warnings };
}

const failing = (sha: string, name: string, log?: string) =>
  fake.addCheckRun({
    name,
    head_sha: sha,
    status: 'completed',
    conclusion: 'failure',
    ...(log ? { log } : {}),
  });

describe('failed CI that is not the crew’s, through the plan job', () => {
  it('a check red on the base too plans no revision crew; the board says base-broken', async () => {
    const s = await school('1'.repeat(40), '2'.repeat(40));
    failing('1'.repeat(40), 'unit', 'FAIL: the fixture server is down');
    failing('2'.repeat(40), 'unit');
    const first = await s.plan(); // the rerun is asked; its attempt fails again
    expect(first.plan.assignments).toEqual([]);
    expect(fake.requestsTo('/actions/runs/1/rerun-failed-jobs', 'POST').at(-1)!.status).toBe(201);
    const second = await s.plan();
    expect(second.feedback?.received).toEqual([]);
    expect(second.plan.assignments).toEqual([]);
    expect(Object.values(readFeedback(s.layout).excused ?? {}).map((x) => [x.check, x.outcome])).toEqual([
      ['unit', 'base-broken'],
    ]);
    expect(s.alerts()).toEqual([['ci-base-broken', s.n]]);
    expect(s.status()).toContain(`check "unit" on pull request #${s.pr}`);
    expect(s.status()).toContain('red on the base');
    // Read to the end: later plans neither rerun nor plan.
    const third = await s.plan();
    expect(third.plan.assignments).toEqual([]);
  });

  it('a check green on its rerun plans no revision crew; the board says flaky', async () => {
    const s = await school('3'.repeat(40), '4'.repeat(40));
    const run = failing('3'.repeat(40), 'e2e');
    run.run_id = 7;
    fake.rerunResult = () => 'success';
    try {
      expect((await s.plan()).plan.assignments).toEqual([]);
      expect(fake.requestsTo('/actions/runs/7/rerun-failed-jobs', 'POST').map((q) => q.status)).toEqual([
        201,
      ]);
      const second = await s.plan();
      expect(second.feedback?.received).toEqual([]);
      expect(second.plan.assignments).toEqual([]);
      expect(s.alerts()).toEqual([['ci-flaky', s.n]]);
      expect(s.status()).toContain('flaky CI, not charged to the crew');
    } finally {
      fake.rerunResult = (r) => r.conclusion;
    }
  });

  it('a check red on its rerun and green on the base plans a revision crew, as before', async () => {
    const s = await school('5'.repeat(40), '6'.repeat(40));
    failing('5'.repeat(40), 'lint', 'helper.mjs:1 rename helper31 to helperThirtyOne');
    fake.addCheckRun({ name: 'lint', head_sha: '6'.repeat(40), status: 'completed', conclusion: 'success' });
    expect((await s.plan()).plan.assignments).toEqual([]); // the rerun first
    const second = await s.plan();
    expect(second.feedback?.received.map((f) => [f.kind, f.id])).toEqual([['ci', `ci:${'5'.repeat(40)}`]]);
    expect(second.plan.assignments).toMatchObject([
      {
        issueNumber: s.n,
        agent: 'alpha',
        revision: { round: 1, pr: s.pr, headSha: '5'.repeat(40), revises: s.crewId },
      },
    ]);
    expect(s.alerts()).toEqual([]);
  });

  it('a rerun refused for want of actions: write is reported once; the check is the crew’s as before', async () => {
    const s = await school('7'.repeat(40), '8'.repeat(40));
    failing('7'.repeat(40), 'build', 'error TS2304');
    fake.actionsPermission.set('test-token', 'read');
    try {
      fake.resetLog();
      const r = await s.plan();
      expect(fake.requestsTo('/rerun-failed-jobs', 'POST').map((q) => q.status)).toEqual([403]);
      expect(r.feedback?.received.map((f) => f.kind)).toEqual(['ci']);
      expect(r.plan.assignments).toMatchObject([{ issueNumber: s.n, revision: { round: 1, pr: s.pr } }]);
      expect(s.alerts()).toEqual([['ci-rerun-refused', s.n]]);
      expect(s.status()).toContain('`actions: write`');
      expect(s.warnings().filter((w) => w.includes('cannot be rerun'))).toHaveLength(1);
      fake.resetLog();
      await s.plan();
      expect(s.warnings().filter((w) => w.includes('cannot be rerun'))).toEqual([]);
      expect(fake.requestsTo('/rerun-failed-jobs', 'POST')).toEqual([]); // said once, not asked again
    } finally {
      fake.actionsPermission.delete('test-token');
    }
  });
});
